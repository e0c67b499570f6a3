"""The lessons' diagrams say what the code does: shapes, head slices, step order, the bias path."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
import torch

from lessons_lib.attention.multihead import split_heads
from lessons_lib.course import diagrams
from lessons_lib.errors import CourseInputError


def test_qkv_flow_prints_the_shapes_attention_computes():
    d = diagrams.qkv_flow((5, 8), (7, 8), (7, 3))
    assert "(5, 7)" in d.node("scores").text and "√8" in d.node("scores").text
    assert "(5, 3)" in d.node("output").text
    assert ("V", "output") in {(e.start, e.end) for e in d.edges}


@pytest.mark.parametrize("shapes, message", [
    (((5, 8), (7, 6), (7, 3)), "d_k=8 but keys have d_k=6"),
    (((5, 8), (7, 8), (6, 3)), "7 keys but 6 values"),
    (((5, 8, 1), (7, 8), (7, 3)), "2-D shape"),
])
def test_qkv_flow_refuses_what_attention_refuses(shapes, message):
    with pytest.raises(CourseInputError, match=message):
        diagrams.qkv_flow(*shapes)


def test_each_head_box_names_the_features_split_heads_gives_it():
    d_model, n_heads = 12, 3
    d = diagrams.multihead_split_merge(d_model, n_heads)
    features = split_heads(torch.arange(float(d_model)).reshape(1, 1, d_model), n_heads)[0, :, 0]   # (H, d)
    for h in range(n_heads):
        first, last = int(features[h, 0]), int(features[h, -1])
        assert f"特征 {first}–{last}" in d.node(f"head{h}").text
    assert f"{n_heads}×{d_model // n_heads} = {d_model}" in d.node("merge").text
    with pytest.raises(CourseInputError, match="`d_model`=10 must be divisible by `n_heads`=4"):
        diagrams.multihead_split_merge(10, 4)


def test_the_block_order_follows_norm_first():
    post, pre = diagrams.encoder_block_steps(False), diagrams.encoder_block_steps(True)
    assert post.index("多头自注意力") < post.index("⊕ 残差") < post.index("LN₁")
    assert pre.index("LN₁") < pre.index("多头自注意力") < pre.index("⊕ 残差")
    with pytest.raises(CourseInputError, match="norm_first"):
        diagrams.encoder_block_steps("yes")


@pytest.mark.parametrize("norm_first, skips", [(False, {("x", "s2"), ("s3", "s5")}), (True, {("x", "s3"), ("s3", "s6")})])
def test_the_residual_arrows_join_the_right_steps(norm_first, skips):
    d = diagrams.encoder_block(32, 4, 128, norm_first=norm_first)
    assert {(e.start, e.end) for e in d.edges if e.curve} == skips
    assert "32 → 128 → 32" in d.texts()[[n.key for n in d.nodes].index("s5" if norm_first else "s4")]


def test_the_bias_path_shows_the_table_shape_and_sharing():
    shared = diagrams.bias_path(13)
    assert "(13,)" in shared.node("table").text and "(B, 1, L, L)" in shared.node("bias").text
    per_head = diagrams.bias_path(13, per_head=True, learn_scale=True, n_heads=4)
    assert "(4, 13)" in per_head.node("table").text and "α" in per_head.node("bias").text
    assert "0 … 12" in shared.node("buckets").text


def test_drawing_puts_every_box_text_on_the_axes():
    d = diagrams.encoder_block(16, 2, 64, norm_first=True)
    ax = diagrams.draw_diagram(d)
    drawn = [t.get_text() for t in ax.texts]
    assert all(text in drawn for text in d.texts())
    plt.close(ax.figure)
    with pytest.raises(CourseInputError, match="no node"):
        d.node("missing")
