"""Chinese text renders without missing glyphs; the heatmap checks its input."""

from __future__ import annotations

import io
import warnings

import matplotlib.pyplot as plt
import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.course.plotting import BUNDLED_FONT_NAME, attention_heatmap, category_heatmap, setup_cjk_font


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


def _annotations(ax) -> dict[tuple[int, int], tuple[str, str]]:
    """Cell texts of an annotated heatmap by (row, column): (text, colour)."""
    return {(round(t.get_position()[1]), round(t.get_position()[0])): (t.get_text(), t.get_color()) for t in ax.texts}


def test_whole_number_cells_print_as_integers_and_others_with_two_decimals():
    setup_cjk_font(prefer_system=False)
    distances = attention_heatmap(torch.tensor([[0, 1], [3, 0]]), annotate=True)
    assert [text for text, _ in _annotations(distances).values()] == ["0", "1", "3", "0"]
    weights = attention_heatmap(torch.tensor([[1.0, 0.25], [0.5, 0.5]]), annotate=True)
    assert [text for text, _ in _annotations(weights).values()] == ["1.00", "0.25", "0.50", "0.50"]
    plt.close("all")


@pytest.mark.parametrize("cmap", ["Blues", "viridis", "Greys"])
def test_cell_text_is_white_on_dark_cells_and_black_on_light_ones(cmap):
    setup_cjk_font(prefer_system=False)
    ax = attention_heatmap(torch.tensor([[0.0, 1.0]]), annotate=True, cmap=cmap)
    image = ax.images[0]
    for (_, column), (_, colour) in _annotations(ax).items():
        r, g, b, _ = image.cmap(image.norm(float(column)))
        dark = 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.3  # plain (non-linear) luminance, a loose test
        assert colour == ("white" if dark else "black"), (cmap, column, colour)
    plt.close("all")


def test_axis_labels_default_to_the_glossary_terms_and_can_be_named():
    setup_cjk_font(prefer_system=False)
    ax = attention_heatmap(torch.zeros(2, 2))
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("键", "查询")
    ax = attention_heatmap(torch.zeros(2, 2), xlabel="词", ylabel="词")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("词", "词")
    assert ax.yaxis.label.get_rotation() == 0  # a Chinese label is not turned sideways
    plt.close("all")


def _overlapping_neighbours(ax) -> list[tuple[str, str]]:
    renderer = ax.figure.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.get_xticklabels()]
    return [(a, b) for (a, box_a), (b, box_b) in zip(boxes, boxes[1:]) if box_a.x1 > box_b.x0]


def test_wide_column_labels_are_turned_so_neighbours_do_not_overlap():
    setup_cjk_font(prefer_system=False)
    labels = ["[CLS]", "电", "脑", "[SEP]", "[PAD]", "[PAD]"]
    fig, ax = plt.subplots(figsize=(2.5, 2.5))
    attention_heatmap(torch.zeros(6, 6), labels, labels, ax=ax)
    turned = [t.get_text() for t in ax.get_xticklabels() if t.get_rotation() == 90]
    assert "电" not in turned and "脑" not in turned  # single characters stay upright
    assert {"[SEP]", "[PAD]"} <= set(turned)
    assert not _overlapping_neighbours(ax)
    # Guard: the same labels upright do overlap at this size.
    for label in ax.get_xticklabels():
        label.set_rotation(0)
    assert ("[SEP]", "[PAD]") in _overlapping_neighbours(ax)
    plt.close("all")


def _parsed_doc(words, heads, deps):
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    return Doc(Vocab(), words=words, heads=heads, deps=deps)


def _image_source_svg(drawing) -> str:
    import re
    from urllib.parse import unquote

    match = re.fullmatch(r'<img src="data:image/svg\+xml;charset=utf-8,([^"]*)" alt="([^"]*)">', drawing._repr_html_())
    assert match, drawing._repr_html_()[:200]
    return unquote(match.group(1))


def test_a_dependency_drawing_is_an_image_of_displacys_svg_with_its_chinese_glyphs():
    import base64
    import io
    import re

    from fontTools.ttLib import TTFont

    from lessons_lib.course.plotting import dependency_drawing

    doc = _parsed_doc(["电脑", "怎么", "录像", "？"], [2, 2, 2, 2], ["obl", "advmod", "ROOT", "punct"])
    drawing = dependency_drawing(doc, drawing_id="example")
    assert _image_source_svg(drawing) == drawing.svg  # the image shows exactly the SVG text
    assert drawing.svg.startswith("<svg") and 'class="displacy"' in drawing.svg and "advmod" in drawing.svg
    assert not re.search(r"[0-9a-f]{32}", drawing.svg) and 'id="example-0"' in drawing.svg  # no random id
    assert dependency_drawing(doc, drawing_id="example") == drawing  # the same output on every run
    assert repr(drawing) == "依存树：电脑 / 怎么 / 录像 / ？"
    font = re.search(r"data:font/otf;base64,([A-Za-z0-9+/=]+)", drawing.svg)
    assert font and "font-family: 'Course CJK'" in drawing.svg
    covered = set(TTFont(io.BytesIO(base64.b64decode(font.group(1)))).getBestCmap())
    assert {ord(c) for c in "电脑怎么录像？"} <= covered
    assert len(covered) < 50  # a subset, not the whole font


def test_a_drawing_of_latin_words_embeds_no_font_and_bad_input_is_named():
    from lessons_lib.course.plotting import dependency_drawing

    drawing = dependency_drawing(_parsed_doc(["it", "works"], [1, 1], ["nsubj", "ROOT"]))
    assert "@font-face" not in drawing.svg and "works" in _image_source_svg(drawing)
    with pytest.raises(CourseInputError, match="`doc` must be a parsed spaCy Doc, got str"):
        dependency_drawing("电脑怎么录像？")
    from spacy.tokens import Doc
    from spacy.vocab import Vocab
    with pytest.raises(CourseInputError, match="parsed spaCy Doc"):
        dependency_drawing(Doc(Vocab(), words=["没有", "分析"]))


def test_a_category_map_names_each_id_that_occurs_with_a_colour_of_its_own():
    setup_cjk_font(prefer_system=False)
    ids = torch.tensor([[12, 12, 12], [12, 0, 1], [11, 11, -1]])
    names = {0: "同词", 1: "树距离 1", 2: "树距离 2", 11: "跨句", 12: "特殊符号", -1: "填充"}
    ax = category_heatmap(ids, names, list("abc"), list("xyz"), colours={-1: "#f2f2f2"})
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["0：同词", "1：树距离 1", "11：跨句", "12：特殊符号", "-1：填充"]
    colours = [tuple(p.get_facecolor()) for p in legend.get_patches()]
    assert len(set(colours)) == len(colours)  # 0, 11 and 12 no longer look alike
    image = ax.get_images()[0]
    shown = {int(v): tuple(image.cmap(image.norm(c))) for v, c in zip(ids.flatten().tolist(),
                                                                   image.get_array().flatten().tolist())}
    assert shown[-1] == tuple(float(c) for c in plt.matplotlib.colors.to_rgba("#f2f2f2"))
    assert {v: shown[v] for v in (0, 1, 11, 12, -1)} == dict(zip((0, 1, 11, 12, -1), colours))  # cell = legend
    assert not [m for m in _render_with_warnings(ax.figure) if "missing from" in m]


def test_a_category_map_refuses_an_unnamed_id_and_fractions():
    with pytest.raises(CourseInputError, match=r"no name for the id\(s\) \[7\]"):
        category_heatmap(torch.tensor([[0, 7]]), {0: "同词"})
    with pytest.raises(CourseInputError, match="whole numbers"):
        category_heatmap(torch.tensor([[0.5]]), {0: "同词"})
    with pytest.raises(CourseInputError, match="key_labels.*1 labels for 2"):
        category_heatmap(torch.tensor([[0, 0]]), {0: "同词"}, None, ["a"])
    plt.close("all")


# Trees whose labels displaCy's default spacing garbles: an adjacent arc shorter than its label
# (`discourse:sp`, as in lesson 08), a label under a nested arc's line (`acl:relcl` over `mark:rel`).
_CROWDED_TREES = [
    (["他", "打", "了", "那个", "人", "吗", "？"], [1, 1, 1, 4, 1, 4, 1],
     ["nsubj", "ROOT", "aux", "det", "obj", "discourse:sp", "punct"]),
    (["我", "想", "买", "你", "说", "的", "东西"], [1, 1, 1, 4, 6, 4, 2],
     ["nsubj", "ROOT", "xcomp", "nsubj", "acl:relcl", "mark:rel", "obj"]),
    (["电脑", "怎么", "录像", "？"], [2, 2, 2, 2], ["obl", "advmod", "ROOT", "punct"]),
]


def test_every_label_of_a_dependency_drawing_fits_its_arc_and_no_line_crosses_it():
    from spacy import displacy

    from lessons_lib.course.plotting import dependency_drawing, drawing_collisions

    planted = []
    for words, heads, deps in _CROWDED_TREES:
        doc = _parsed_doc(words, heads, deps)
        # displaCy's own spacing (95 px, the course's old default) is the planted failure the check must find.
        planted += drawing_collisions(displacy.render(doc, style="dep", jupyter=False,
                                                      options={"compact": True, "distance": 95}))
        assert drawing_collisions(dependency_drawing(doc).svg) == [], deps
    assert any(p.startswith("discourse:sp:") and "px wide" in p for p in planted), planted
    assert any(p.startswith("acl:relcl:") and "crossed" in p for p in planted), planted
