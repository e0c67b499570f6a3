"""The lessons' diagrams say what the code does: shapes, head slices, step order, the bias path."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
import torch

from lessons_lib.attention.multihead import split_heads
from lessons_lib.course import diagrams
from lessons_lib.errors import CourseInputError


@pytest.fixture(scope="module")
def cjk_font():
    from lessons_lib.course.plotting import setup_cjk_font

    setup_cjk_font(prefer_system=False)


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


def test_drawing_puts_every_box_text_on_the_axes(cjk_font):
    d = diagrams.encoder_block(16, 2, 64, norm_first=True)
    ax = diagrams.draw_diagram(d)
    drawn = [t.get_text() for t in ax.texts]
    assert all(text in drawn for text in d.texts())
    plt.close(ax.figure)
    with pytest.raises(CourseInputError, match="no node"):
        d.node("missing")


# The diagrams as the lessons draw them (01, 03, 05) and the bias path.
LESSON_DIAGRAMS = {
    "qkv_flow": lambda: diagrams.qkv_flow((5, 8), (7, 8), (7, 3)),
    "multihead_split_merge": lambda: diagrams.multihead_split_merge(16, 4),
    "encoder_block_post_ln": lambda: diagrams.encoder_block(32, 4, 128, norm_first=False),
    "encoder_block_pre_ln": lambda: diagrams.encoder_block(32, 4, 128, norm_first=True),
    "bias_path": lambda: diagrams.bias_path(13, per_head=True, learn_scale=True),
}


@pytest.mark.parametrize("name", sorted(LESSON_DIAGRAMS))
def test_every_box_text_stays_inside_its_box_and_the_figure_fits_the_notebook(name, cjk_font):
    ax = diagrams.draw_diagram(LESSON_DIAGRAMS[name]())
    ax.figure.canvas.draw()
    assert diagrams.box_texts_fit(ax) == []
    assert ax.figure.get_size_inches()[0] <= diagrams.MAX_FIGURE_WIDTH
    plt.close(ax.figure)


def test_a_box_text_too_wide_for_its_row_is_reported(cjk_font):
    """Guard for the test above: a box whose text cannot fit (its neighbour is too close) is named."""
    d = diagrams.Diagram("t", (diagrams.Node("a", 0, 0, "一段放不进这个框的很长很长的说明文字"), diagrams.Node("b", 2.4, 0, "b")))
    ax = diagrams.draw_diagram(d)
    assert diagrams.box_texts_fit(ax) == ["一段放不进这个框的很长很长的说明文字"]
    plt.close(ax.figure)


def _points_of_line_inside(ax, annotation, box) -> int:
    """How many of 200 points along an arrow (its data-coordinate ends) fall inside ``box`` (display coordinates)."""
    (x0, y0), (x1, y1) = ax.transData.transform(annotation.xyann), ax.transData.transform(annotation.xy)
    return sum(box.contains(x0 + t / 199 * (x1 - x0), y0 + t / 199 * (y1 - y0)) for t in range(200))


def test_an_arrows_label_is_not_crossed_by_its_arrow(cjk_font):
    from matplotlib.text import Annotation

    ax = diagrams.draw_diagram(diagrams.qkv_flow((5, 8), (7, 8), (7, 3)))
    renderer = ax.figure.canvas.get_renderer()
    output, values = diagrams.qkv_flow((5, 8), (7, 8), (7, 3)).node("output"), diagrams.qkv_flow((5, 8), (7, 8), (7, 3)).node("V")
    arrow = next(a for a in ax.texts if isinstance(a, Annotation) and a.arrow_patch is not None
                 and a.xy[0] > output.x - 2 and a.xyann[0] < values.x + 2 and a.xyann[1] < values.y + 1)
    label = next(t for t in ax.texts if t.get_text() == "加权平均")
    assert _points_of_line_inside(ax, arrow, label.get_window_extent(renderer)) == 0
    # Guard: the label where it was drawn before, on the middle of the line, is crossed.
    middle = ((arrow.xy[0] + arrow.xyann[0]) / 2, (arrow.xy[1] + arrow.xyann[1]) / 2)
    on_line = ax.text(*middle, "加权平均", fontsize=diagrams.FONT_SIZE - 1, ha="center", va="bottom")
    assert _points_of_line_inside(ax, arrow, on_line.get_window_extent(renderer)) > 0
    plt.close(ax.figure)
