"""Figures with Chinese text: CJK font set-up, attention heatmaps, category maps and dependency drawings.

Matplotlib's default font (DejaVu Sans) has no Chinese glyphs: labels would render as
empty boxes with a "Glyph ... missing from font" warning. :func:`setup_cjk_font` picks a
CJK font that is already on the system (macOS, Windows and many Linux desktops have one)
and otherwise registers Noto Sans CJK SC from the ``manimgx-fonts-cjk`` package, which
the course's setup installs from PyPI (SIL Open Font License 1.1).
"""

from __future__ import annotations

import base64
import dataclasses
import html
import logging
import math
import re
from typing import Mapping, Sequence
from urllib.parse import quote

import matplotlib
import matplotlib.pyplot as plt
import torch
from matplotlib import font_manager

from lessons_lib.course.fonts import BUNDLED_FACE_INDEX, BUNDLED_FONT_NAME, bundled_font_file, cjk_characters, font_subset
from lessons_lib.errors import FieldName, input_error

# System fonts with Simplified Chinese glyphs, most preferred first.
SYSTEM_CJK_FONTS = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Noto Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "PingFang SC",
    "Hiragino Sans GB",
    "Heiti SC",
    "Microsoft YaHei",
    "SimHei",
    "Droid Sans Fallback",
)
# The packaged font lives in lessons_lib.course.fonts (one home for it and its subsets).
_BUNDLED_FACE_INDEX = BUNDLED_FACE_INDEX
_bundled_font_file = bundled_font_file


def _register_bundled_font() -> str:
    """Register the SC face of the packaged Noto Sans CJK collection and return its name."""
    path = _bundled_font_file()
    if not path.is_file():
        raise FileNotFoundError(
            f"no CJK font on this system and the packaged one is missing at {path}; "
            "reinstall the course (`pip install -e .`) or install a CJK font such as Noto Sans CJK"
        )
    entry = font_manager.FontEntry(
        fname=str(path), index=_BUNDLED_FACE_INDEX, name=BUNDLED_FONT_NAME,
        # The variable font reports its lightest instance (100); declaring it "normal"
        # stops matplotlib from logging a weight-fallback message on every lookup.
        style="normal", variant="normal", weight=400, stretch="normal", size="scalable",
    )
    if not any(dataclasses.astuple(f) == dataclasses.astuple(entry) for f in font_manager.fontManager.ttflist):
        font_manager.fontManager.ttflist.insert(0, entry)
    return BUNDLED_FONT_NAME


def find_system_cjk_font() -> str | None:
    """Name of the first font of :data:`SYSTEM_CJK_FONTS` that matplotlib knows, or ``None``."""
    available = {f.name for f in font_manager.fontManager.ttflist if not f.fname.endswith(".otf.ttc")}
    return next((name for name in SYSTEM_CJK_FONTS if name in available), None)


def setup_cjk_font(prefer_system: bool = True) -> str:
    """Make matplotlib render Chinese text; return the font family now in use.

    Args:
        prefer_system: use a system CJK font when one exists (``False`` forces the
            packaged Noto Sans CJK SC, which is what the tests and notebooks use so that
            figures are the same on every machine).
    """
    name = find_system_cjk_font() if prefer_system else None
    if name is None:
        name = _register_bundled_font()
    # A list of families turns on matplotlib's per-glyph fallback: symbols the CJK font
    # lacks (ᵀ, ≈, …) come from DejaVu Sans instead of rendering as empty boxes.
    matplotlib.rcParams["font.family"] = [name, "DejaVu Sans"]
    matplotlib.rcParams["font.sans-serif"] = [name, "DejaVu Sans"]
    # A CJK font's own minus sign is fine, but the Unicode minus is missing from some.
    matplotlib.rcParams["axes.unicode_minus"] = False
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    return name


def _as_2d(weights: torch.Tensor, name: str) -> torch.Tensor:
    weights = torch.as_tensor(weights).detach().cpu()
    if weights.dim() != 2:
        raise input_error(FieldName(name), f" must be a 2-D (L_q, L_k) matrix, got shape {tuple(weights.shape)}")
    return weights.float()


def _readable_text_colour(rgba: Sequence[float]) -> str:
    """``"black"`` or ``"white"``, whichever contrasts more with a cell of colour ``rgba``.

    Uses the WCAG relative luminance: black text contrasts more above 0.179.
    """
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgba[:3])
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 else "white"


def _format_cell(value: float, integers: bool) -> str:
    return f"{round(value)}" if integers else f"{value:.2f}"


def _turn_wide_tick_labels(ax: plt.Axes) -> None:
    """Turn by 90° the column labels that are wider than one column (the others stay upright).

    A single Chinese character fits a column; ``[SEP]``, ``[PAD]`` or a long word may not,
    and would run into its neighbours. Widths are measured with the figure's renderer.
    """
    ticks = ax.get_xticks()
    if len(ticks) < 2:
        return
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]  # Agg's canvas has one; the stubs' base class not
    column = abs(ax.transData.transform((ticks[1], 0))[0] - ax.transData.transform((ticks[0], 0))[0])
    for label in ax.get_xticklabels():
        if label.get_window_extent(renderer).width > 0.9 * column:
            label.set_rotation(90)


def attention_heatmap(
    weights: torch.Tensor,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    ax: plt.Axes | None = None,
    title: str | None = None,
    annotate: bool = False,
    cmap: str = "viridis",
    xlabel: str = "键",
    ylabel: str = "查询",
) -> plt.Axes:
    """Draw an attention matrix: rows are queries, columns are keys.

    Column labels wider than a column (``[SEP]``, ``[PAD]``) are turned by 90° so they do not
    overlap; the row axis label is written horizontally above the row labels.

    Args:
        weights: ``(L_q, L_k)`` attention weights (any real matrix works).
        query_labels: ``L_q`` tick labels for the rows (e.g. characters).
        key_labels: ``L_k`` tick labels for the columns.
        ax: axes to draw on; a new figure is made when ``None``.
        title: axes title.
        annotate: write each value in its cell (for small matrices): integers when every
            value is a whole number (tree distances), else two decimals; black or white
            text, whichever contrasts more with the cell's colour.
        cmap: matplotlib colour map.
        xlabel: label of the columns (default 键, the keys).
        ylabel: label of the rows (default 查询, the queries).

    Returns:
        The axes drawn on.
    """
    weights = _as_2d(weights, "weights")
    for labels, size, name in ((query_labels, weights.shape[0], "query_labels"),
                               (key_labels, weights.shape[1], "key_labels")):
        if labels is not None and len(labels) != size:
            raise input_error(FieldName(name), f" has {len(labels)} labels for {size} positions")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(3.0, 0.45 * weights.shape[1] + 1.5),
                                      max(2.5, 0.45 * weights.shape[0] + 1.0)))
    image = ax.imshow(weights.numpy(), cmap=cmap, aspect="auto")
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if query_labels is not None:
        ax.set_yticks(range(len(query_labels)), labels=list(query_labels))
    if key_labels is not None:
        ax.set_xticks(range(len(key_labels)), labels=list(key_labels))
        _turn_wide_tick_labels(ax)
    ax.set_xlabel(xlabel, labelpad=8)  # a gap, so it does not read as part of the middle column's label
    # Written horizontally above the row labels: turned by 90° a Chinese label reads sideways,
    # and beside the rows it reads as part of the nearest short row label.
    ax.set_ylabel(ylabel, rotation=0, ha="right", va="bottom")
    ax.yaxis.set_label_coords(-0.02, 1.01)
    if title:
        ax.set_title(title)
    if annotate:
        integers = bool(torch.equal(weights, weights.round()))
        for i in range(weights.shape[0]):
            for j in range(weights.shape[1]):
                value = float(weights[i, j])
                # matplotlib's stubs type norm and cmap for arrays; one float maps to one RGBA tuple
                colour = _readable_text_colour(image.cmap(image.norm(value)))  # type: ignore[arg-type]
                ax.text(j, i, _format_cell(value, integers), ha="center", va="center", fontsize=8, color=colour)
    return ax


# Colours that a reader tells apart at a glance (tab10 without its grey), for category maps.
CATEGORY_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
                    "#17becf")


def category_heatmap(
    values: torch.Tensor,
    names: Mapping[int, str],
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    ax: plt.Axes | None = None,
    title: str | None = None,
    colours: Mapping[int, str] | None = None,
    xlabel: str = "键",
    ylabel: str = "查询",
    legend_title: str | None = None,
) -> plt.Axes:
    """Draw a matrix of category ids (bucket ids, say) with one colour per id and a legend naming each.

    A continuous colour bar would make neighbouring ids look alike and say nothing of what
    an id means; here each id that occurs gets its own colour and a legend entry
    ``"id：name"``, in the order of ``names``.

    Args:
        values: ``(L_q, L_k)`` integer ids; every id that occurs must be a key of ``names``.
        names: what each id means (ids that do not occur are left out of the legend).
        query_labels, key_labels, ax, title, xlabel, ylabel: as for :func:`attention_heatmap`.
        colours: a colour per id; ids without one take :data:`CATEGORY_COLOURS` in turn.
        legend_title: title of the legend.

    Returns:
        The axes drawn on.
    """
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch

    values = _as_2d(values, "values")
    if not torch.equal(values, values.round()):
        raise input_error(FieldName("values"), " must hold whole numbers (category ids)")
    present = sorted({int(v) for v in values.unique()})
    unnamed = [v for v in present if v not in names]
    if unnamed:
        raise input_error(FieldName("names"), f" has no name for the id(s) {unnamed} that occur in `values`")
    for labels, size, name in ((query_labels, values.shape[0], "query_labels"),
                               (key_labels, values.shape[1], "key_labels")):
        if labels is not None and len(labels) != size:
            raise input_error(FieldName(name), f" has {len(labels)} labels for {size} positions")
    shown = [v for v in names if v in present]
    given = dict(colours or {})
    spare = iter(c for c in CATEGORY_COLOURS if c not in given.values())
    palette = {v: given[v] if v in given else next(spare) for v in shown}
    index = {v: i for i, v in enumerate(shown)}
    codes = values.long().apply_(lambda v: index[v]) if values.numel() else values.long()
    if ax is None:
        _, ax = plt.subplots(figsize=(max(3.0, 0.4 * values.shape[1] + 3.0), max(2.5, 0.4 * values.shape[0] + 1.0)))
    cmap = ListedColormap([palette[v] for v in shown])
    ax.imshow(codes.numpy(), cmap=cmap, norm=BoundaryNorm([i - 0.5 for i in range(len(shown) + 1)], len(shown)),
              aspect="auto", interpolation="nearest")
    if query_labels is not None:
        ax.set_yticks(range(len(query_labels)), labels=list(query_labels))
    if key_labels is not None:
        ax.set_xticks(range(len(key_labels)), labels=list(key_labels))
        _turn_wide_tick_labels(ax)
    ax.set_xlabel(xlabel, labelpad=8)
    ax.set_ylabel(ylabel, rotation=0, ha="right", va="bottom")
    ax.yaxis.set_label_coords(-0.02, 1.01)
    if title:
        ax.set_title(title)
    handles = [Patch(facecolor=palette[v], edgecolor="0.3", label=f"{v}：{names[v]}") for v in shown]
    ax.legend(handles=handles, title=legend_title, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              frameon=False)
    return ax


@dataclasses.dataclass(frozen=True)
class DependencyDrawing:
    """A displaCy dependency drawing that a notebook shows as an image, trusted or not.

    JupyterLab does not show ``image/svg+xml`` outputs of a notebook it does not trust (it
    prints ``<IPython.core.display.SVG object>`` instead), but it shows HTML after
    sanitising it, and an ``<img>`` whose source is a ``data:`` URI survives that. The
    SVG carries the glyphs of its Chinese words as an embedded font subset, so the words
    render in a browser that has no CJK font.

    Attributes:
        svg: the SVG text (displaCy's drawing with a fixed id and the embedded font).
        words: the drawn words, for the plain-text form of the output.
    """

    svg: str
    words: tuple[str, ...]

    def _repr_html_(self) -> str:
        # Percent-encoded rather than base64, so the embedded font stays findable as
        # `data:font/otf;base64,…` (the notebook tests compare the drawing without it).
        source = "data:image/svg+xml;charset=utf-8," + quote(self.svg, safe=" =:;,/+'()!*-._~?&@$")
        return f'<img src="{source}" alt="依存树：{html.escape(" / ".join(self.words))}">'

    def __repr__(self) -> str:
        return "依存树：" + " / ".join(self.words)


def _font_subset_base64(text: str) -> str:
    """The packaged Noto Sans CJK SC face cut down to the characters of ``text``, base64-encoded OpenType."""
    return base64.b64encode(font_subset(text)).decode("ascii")


LABEL_FONT_PX = 12.8
"""displaCy writes arc labels at 0.8 em of the browser's 16 px, with 1 px between letters."""
_LABEL_ASCENT, _LABEL_DESCENT = 0.93, 0.24   # DejaVu Sans's ascender and descender, in em
_LABEL_CLEARANCE = 2.0                        # px of free line kept between a label and any line
_ARROW_SPACING = 12                           # displaCy's compact-mode gap between an arc's foot and its word


def label_width(label: str) -> float:
    """Width in px of an arc label: DejaVu Sans (wider than Arial, so an upper bound) plus the letter spacing."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width, _, _ = TextToPath().get_text_width_height_descent(
        label, FontProperties(family="DejaVu Sans", size=LABEL_FONT_PX), ismath=False)
    return width + len(label) * 1.0


def _svg_point(text: str) -> tuple[float, float]:
    """``"x,y"`` of an SVG path as two numbers."""
    x, y = text.split(",")
    return float(x), float(y)


def _label_box(x_mid: float, y_top: float, label: str) -> tuple[float, float, float, float]:
    """``(left, top, right, bottom)`` of a label displaCy centres under the horizontal line at ``y_top``
    (its baseline lies 1.25 em below the line)."""
    baseline = y_top + 1.25 * LABEL_FONT_PX
    half = label_width(label) / 2
    return x_mid - half, baseline - _LABEL_ASCENT * LABEL_FONT_PX, x_mid + half, baseline + _LABEL_DESCENT * LABEL_FONT_PX


def _fitting_distance(doc, distance: int) -> int:
    """The smallest word distance ≥ ``distance`` at which every arc's label fits its arc's top line, and
    a lower arc's top line (one level, ``distance / 6`` px, below) passes under the labels above it."""
    from spacy.displacy import parse_deps
    from spacy.displacy.render import DependencyRenderer

    arcs = parse_deps(doc)["arcs"]
    levels = DependencyRenderer({"compact": True}).get_levels(arcs)
    highest = max(levels.values(), default=0)
    # The label hangs (ascent + 1.25 em … + descent) below its line: the next level must start lower.
    needed = 6 * (1.25 + _LABEL_DESCENT) * LABEL_FONT_PX + 6 * _LABEL_CLEARANCE
    for arc in arcs:
        level = levels[(arc["start"], arc["end"], arc["label"])]
        # Top line: (end − start)·distance − spacing·(1 + (highest − level) / 4) px long (displaCy's render_arrow).
        feet = _ARROW_SPACING * (1 + (highest - level) / 4)
        needed = max(needed, (label_width(arc["label"]) + 2 * _LABEL_CLEARANCE + feet) / (arc["end"] - arc["start"]))
    return max(distance, math.ceil(needed))


def drawing_collisions(svg: str) -> list[str]:
    """What is wrong with a compact displaCy drawing's arc labels, one line each (empty: nothing).

    Each label's box (:func:`label_width` wide, its font's ascent and descent high, centred where
    displaCy's ``startOffset="50%"`` puts it) must lie on its arc's top line with
    ``_LABEL_CLEARANCE`` px to spare at both ends, and no line of any arc may pass through it.
    """
    arrows = re.findall(r'<path class="displacy-arc"[^>]* d="([^"]+)"[^>]*/>\s*<text[^>]*>\s*<textPath[^>]*>([^<]*)</textPath>',
                        svg)
    lines: list[tuple[float, float, float, float, str]] = []  # (x0, y0, x1, y1, label) of every straight piece of every arc
    for d, label in arrows:
        corners = [_svg_point(p) for p in d.lstrip("M").split()]
        lines += [(*a, *b, html.unescape(label)) for a, b in zip(corners, corners[1:])]
    problems = []
    for d, label in arrows:
        label = html.unescape(label)
        points = [tuple(float(v) for v in p.split(",")) for p in d.lstrip("M").split()]
        if len(points) != 4:
            problems.append(f"{label}: not a compact (square) arc: {d}")
            continue
        (x0, _), (_, top), (x1, _), _ = points
        left, upper, right, lower = _label_box((x0 + x1) / 2, top, label)
        if left < min(x0, x1) + _LABEL_CLEARANCE or right > max(x0, x1) - _LABEL_CLEARANCE:
            problems.append(f"{label}: {right - left:.0f} px wide, its arc's top line is {abs(x1 - x0):.0f} px")
        for lx0, ly0, lx1, ly1, other in lines:
            if (min(lx0, lx1) < right and max(lx0, lx1) > left and min(ly0, ly1) < lower and max(ly0, ly1) > upper):
                problems.append(f"{label}: crossed by a line of the arc {other!r}")
    return list(dict.fromkeys(problems))  # a line drawn in two pieces is named once


def dependency_drawing(doc, *, distance: int = 95, compact: bool = True, drawing_id: str = "tree") -> DependencyDrawing:
    """Draw a parsed spaCy ``Doc`` with displaCy (offline) as a :class:`DependencyDrawing`.

    In compact mode the words are spread further than ``distance`` where a label needs it, so that
    every label fits its arc and no line crosses it (:func:`drawing_collisions` is empty).

    Args:
        doc: a spaCy ``Doc`` with a dependency parse.
        distance: displaCy's distance between words, in pixels (the least one).
        compact: displaCy's compact mode (square arcs).
        drawing_id: replaces displaCy's random id, so the notebook's output is the same on every run.
    """
    from spacy import displacy

    if not hasattr(doc, "has_annotation") or not doc.has_annotation("DEP"):
        raise input_error(FieldName("doc"), f" must be a parsed spaCy Doc, got {type(doc).__name__}")
    if compact:
        distance = _fitting_distance(doc, distance)
    svg = displacy.render(doc, style="dep", jupyter=False, options={"compact": compact, "distance": distance})
    svg = re.sub(r"[0-9a-f]{32}", drawing_id, svg)
    characters = cjk_characters("".join(token.text for token in doc))  # CJK and full-width
    if characters:
        face = (f"<style>@font-face {{ font-family: 'Course CJK'; font-weight: 100 900; "
                f"src: url(data:font/otf;base64,{_font_subset_base64(characters)}) format('opentype'); }}</style>")
        svg = re.sub(r"(<svg[^>]*>)", lambda m: m.group(1) + face, svg, count=1)
        svg = svg.replace("font-family: Arial", "font-family: 'Course CJK', Arial, sans-serif", 1)
    return DependencyDrawing(svg=svg, words=tuple(token.text for token in doc))
