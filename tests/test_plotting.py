"""Chinese text renders without missing glyphs; the heatmap checks its input."""

from __future__ import annotations

import io
import warnings

import matplotlib.pyplot as plt
import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.course.plotting import BUNDLED_FONT_NAME, attention_heatmap, setup_cjk_font


def _render_with_warnings(fig) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("prefer_system", [False, True])
def test_chinese_tick_labels_render_without_missing_glyphs(prefer_system):
    name = setup_cjk_font(prefer_system=prefer_system)
    if not prefer_system:
        assert name == BUNDLED_FONT_NAME
    weights = torch.softmax(torch.randn(4, 5, generator=torch.Generator().manual_seed(0)), -1)
    ax = attention_heatmap(weights, list("什么花生"), ["电脑", "怎么", "录像", "？", "[SEP]"],
                           title="注意力 QKᵀ/√d_k ≈ −1", annotate=True)
    messages = _render_with_warnings(ax.figure)
    assert not [m for m in messages if "missing from" in m], messages


def test_missing_glyphs_are_detected_without_the_setup():
    """Guard for the test above: with DejaVu alone, Chinese *does* warn."""
    import matplotlib

    with matplotlib.rc_context({"font.family": ["DejaVu Sans"]}):
        fig, ax = plt.subplots()
        ax.set_title("注意力")
        messages = _render_with_warnings(fig)
    assert any("missing from" in m for m in messages)


def test_heatmap_label_count_and_shape_errors():
    with pytest.raises(CourseInputError, match="query_labels.*3 labels for 2"):
        attention_heatmap(torch.zeros(2, 2), ["a", "b", "c"], None)
    with pytest.raises(CourseInputError, match="2-D"):
        attention_heatmap(torch.zeros(2, 2, 2))
    plt.close("all")
