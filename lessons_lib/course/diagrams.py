"""Diagrams the lessons draw from their own sizes, so that a picture cannot drift from the code.

Each diagram is first built as a :class:`Diagram` — boxes (``Node``) and arrows (``Edge``)
whose labels are computed from the arguments (shapes, widths, head counts, the
``norm_first`` switch, the number of buckets) — and then drawn by :func:`draw_diagram`.
Building and drawing are separate so that the tests can read what a diagram says
without looking at pixels.

- :func:`qkv_flow` — queries, keys and values through scaled dot-product attention (lesson 01).
- :func:`multihead_split_merge` — which features each head gets, and the merge (lesson 03).
- :func:`encoder_block` — the block's steps in Post-LN or Pre-LN order (lesson 05).
- :func:`bias_path` — from tree-distance buckets to a bias on the attention scores (lesson 08).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import check_divisible, check_int

# Colours by role, the same in every diagram.
COLOURS = {"input": "#dbe9f6", "compute": "#fde9c9", "norm": "#e4f2dc", "output": "#f6dbe4", "note": "#eeeeee"}


@dataclass(frozen=True)
class Node:
    """A box: its key, its position (x, y) in diagram units, its text and its role (a key of :data:`COLOURS`)."""

    key: str
    x: float
    y: float
    text: str
    role: str = "compute"


@dataclass(frozen=True)
class Edge:
    """An arrow from node ``start`` to node ``end``, with an optional label and curvature (for skip arrows)."""

    start: str
    end: str
    label: str = ""
    curve: float = 0.0


@dataclass(frozen=True)
class Diagram:
    """Boxes and arrows; ``title`` is drawn above."""

    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...] = field(default_factory=tuple)

    def node(self, key: str) -> Node:
        """The node called ``key``."""
        for node in self.nodes:
            if node.key == key:
                return node
        raise CourseInputError(f"diagram {self.title!r} has no node {key!r}")

    def texts(self) -> list[str]:
        """The boxes' texts, in order."""
        return [n.text for n in self.nodes]


def _shape(shape: Sequence[int], name: str) -> tuple[int, int]:
    if len(shape) != 2:
        raise input_error(FieldName(name), f" must be a 2-D shape (length, width), got {tuple(shape)}")
    return check_int(shape[0], f"`{name}`[0]"), check_int(shape[1], f"`{name}`[1]")


def qkv_flow(query_shape: Sequence[int], key_shape: Sequence[int], value_shape: Sequence[int]) -> Diagram:
    """Scaled dot-product attention for one sequence: ``Q (L_q, d_k)``, ``K (L_k, d_k)``, ``V (L_k, d_v)``.

    The shapes printed in the boxes are computed the way the operation computes them, so a
    width or length mismatch is refused here as it would be by the attention itself.
    """
    (len_q, d_k), (len_k, d_k2), (len_v, d_v) = (_shape(query_shape, "query_shape"),
                                                _shape(key_shape, "key_shape"), _shape(value_shape, "value_shape"))
    if d_k != d_k2:
        raise CourseInputError(f"queries have d_k={d_k} but keys have d_k={d_k2}: no dot product")
    if len_v != len_k:
        raise CourseInputError(f"{len_k} keys but {len_v} values: every key needs its value")
    nodes = (
        Node("Q", 0, 1.2, f"查询 Q\n({len_q}, {d_k})", "input"),
        Node("K", 0, 0, f"键 K\n({len_k}, {d_k})", "input"),
        Node("V", 0, -1.2, f"值 V\n({len_k}, {d_v})", "input"),
        Node("scores", 2.4, 0.6, f"分数 QKᵀ/√{d_k}\n({len_q}, {len_k})"),
        Node("mask", 4.8, 0.6, "遮蔽：不可关注处\n置为 −∞"),
        Node("softmax", 7.2, 0.6, f"softmax（沿键）\n权重 ({len_q}, {len_k})\n每行和为 1"),
        Node("output", 9.6, -0.3, f"输出 = 权重 · V\n({len_q}, {d_v})", "output"),
    )
    edges = (Edge("Q", "scores"), Edge("K", "scores"), Edge("scores", "mask"), Edge("mask", "softmax"),
             Edge("softmax", "output"), Edge("V", "output", "加权平均"))
    return Diagram("缩放点积注意力：Q、K、V 的去向", nodes, edges)


def multihead_split_merge(d_model: int, n_heads: int, length: int = 6) -> Diagram:
    """Multi-head attention on ``(L, D)``: head ``h`` gets features ``h·d … (h+1)·d − 1``, ``d = D / H``."""
    check_int(d_model, FieldName("d_model"))
    check_int(n_heads, FieldName("n_heads"))
    check_int(length, FieldName("length"))
    check_divisible(d_model, FieldName("d_model"), n_heads, FieldName("n_heads"))
    d_head = d_model // n_heads
    top = (n_heads - 1) / 2
    nodes = [Node("x", 0, 0, f"X ({length}, {d_model})", "input"),
             Node("proj", 2.5, 0, f"投影\nXW_Q、XW_K、XW_V\n各 ({length}, {d_model})")]
    edges = [Edge("x", "proj")]
    for h in range(n_heads):
        y = top - h
        first, last = h * d_head, (h + 1) * d_head - 1
        # One box per head: its slice of the features, then attention inside the head.
        nodes.append(Node(f"head{h}", 5.3, y, f"头 {h + 1}：特征 {first}–{last} ({length}, {d_head})\n"
                                              f"softmax(QKᵀ/√{d_head})V"))
        edges += [Edge("proj", f"head{h}"), Edge(f"head{h}", "merge")]
    nodes.append(Node("merge", 8.1, 0, f"拼接 {n_heads} 个头\n({length}, {n_heads}×{d_head} = {d_model})"))
    nodes.append(Node("out", 10.6, 0, f"乘 W_O\n输出 ({length}, {d_model})", "output"))
    edges.append(Edge("merge", "out"))
    return Diagram(f"多头注意力：拆成 {n_heads} 个头，再合并（D = {d_model}）", tuple(nodes), tuple(edges))


def encoder_block_steps(norm_first: bool) -> list[str]:
    """The block's steps in order: Post-LN normalises after each residual sum, Pre-LN before each sub-layer."""
    if not isinstance(norm_first, bool):
        raise input_error(FieldName("norm_first"), f" must be True or False, got {norm_first!r}")
    if norm_first:
        return ["LN₁", "多头自注意力", "⊕ 残差", "LN₂", "逐位置前馈网络", "⊕ 残差"]
    return ["多头自注意力", "⊕ 残差", "LN₁", "逐位置前馈网络", "⊕ 残差", "LN₂"]


def encoder_block(d_model: int, n_heads: int, d_ff: int, norm_first: bool = False, activation: str = "gelu") -> Diagram:
    """One encoder block, bottom to top, with its two residual connections drawn as skip arrows."""
    for value, name in ((d_model, "`d_model`"), (n_heads, "`n_heads`"), (d_ff, "`d_ff`")):
        check_int(value, name)
    steps = encoder_block_steps(norm_first)
    details = {"多头自注意力": f"多头自注意力\n{n_heads} 个头，每头宽 {d_model // n_heads}",
               "逐位置前馈网络": f"逐位置前馈网络\n{d_model} → {d_ff} → {d_model}（{activation}）"}
    nodes = [Node("x", 0, 0, f"输入 ({d_model} 维/位置)", "input")]
    for index, step in enumerate(steps, start=1):
        role = "norm" if step.startswith("LN") else "compute"
        nodes.append(Node(f"s{index}", 0, index * 0.95, details.get(step, step), role))
    nodes.append(Node("y", 0, (len(steps) + 1) * 0.95, "输出（同样的形状，可以再堆一块）", "output"))
    keys = [n.key for n in nodes]
    edges = [Edge(a, b) for a, b in zip(keys, keys[1:])]
    sums = [f"s{i}" for i, step in enumerate(steps, start=1) if step.startswith("⊕")]
    sources = ["x", sums[0] if norm_first else f"s{steps.index('LN₁') + 1}"]
    edges += [Edge(src, dst, "残差", curve=0.5) for src, dst in zip(sources, sums)]
    title = f"编码器块（{'Pre-LN：LN 在子层之前' if norm_first else 'Post-LN：LN 在残差相加之后'}）"
    return Diagram(title, tuple(nodes), tuple(edges))


def bias_path(n_buckets: int, per_head: bool = False, learn_scale: bool = False, n_heads: int = 4) -> Diagram:
    """From a pair's distance buckets to the bias added to every head's attention scores.

    Args:
        n_buckets: entries of the bias table (bucket ids ``0 … n_buckets − 1``; padding is ``-1``).
        per_head: one table per head (shape ``(H, n_buckets)``) instead of one shared table.
        learn_scale: the looked-up bias is multiplied by a learnable scalar α.
        n_heads: heads ``H`` of the attention the bias is added to.
    """
    check_int(n_buckets, FieldName("n_buckets"))
    check_int(n_heads, FieldName("n_heads"))
    table = f"偏置表 b\n({n_heads}, {n_buckets})，每头一张" if per_head else f"偏置表 b\n({n_buckets},)，各头共用"
    looked_up = "(B, H, L, L)" if per_head else "(B, 1, L, L)，广播到各头"
    scaled = "α · b[桶号]" if learn_scale else "b[桶号]"
    nodes = (
        Node("trees", 0, 1.2, "两句的依存树\n（词级树距离）", "input"),
        Node("buckets", 2.6, 1.2, f"字对的桶号 (B, L, L)\n0 … {n_buckets - 1}；填充 = −1", "input"),
        Node("table", 2.6, -0.5, table, "norm"),
        Node("bias", 5.2, 0.4, f"查表 {scaled}\n{looked_up}\n填充处取 0，不读表"),
        Node("scores", 5.2, -1.5, f"分数 QKᵀ/√d_head\n(B, {n_heads}, L, L)", "input"),
        Node("sum", 7.8, -0.5, "分数 + 偏置"),
        Node("mask", 10.2, -0.5, "遮蔽：\n填充的键 = −∞"),
        Node("softmax", 12.6, -0.5, "softmax\n→ 注意力权重", "output"),
    )
    edges = (Edge("trees", "buckets"), Edge("buckets", "bias"), Edge("table", "bias"),
             Edge("bias", "sum"), Edge("scores", "sum"), Edge("sum", "mask"), Edge("mask", "softmax"))
    return Diagram("句法偏置进入注意力分数的路径", nodes, edges)


def _anchor(node: Node, towards: Node, width: float, height: float) -> tuple[float, float]:
    """Where the straight line from ``node``'s centre to ``towards``' centre leaves ``node``'s box."""
    dx, dy = towards.x - node.x, towards.y - node.y
    limits = [(width / 2) / abs(dx) if dx else float("inf"), (height / 2) / abs(dy) if dy else float("inf")]
    t = min(limits) * 1.04
    return node.x + t * dx, node.y + t * dy


# Widest figure a diagram is drawn at, in inches: at matplotlib's 100 dpi it fits the notebook column of
# JupyterLab in a 1280-pixel window with the file browser open, so it is shown at its own size.
MAX_FIGURE_WIDTH = 8.6
FONT_SIZE = 9.0
_ARROW_ROOM = 0.35  # least gap between two boxes of a row, in diagram units, so an arrow shows between them


def _text_width(ax, artist) -> float:
    """Width of a text artist in x data units, measured with the figure's renderer."""
    extent = artist.get_window_extent(ax.figure.canvas.get_renderer())
    inverse = ax.transData.inverted()
    return abs(inverse.transform((extent.x1, 0))[0] - inverse.transform((extent.x0, 0))[0])


def _widest_fit(diagram: Diagram, box_height: float) -> float:
    """The widest box that still leaves arrow room between neighbours of a row (boxes that overlap in y)."""
    gaps = [abs(a.x - b.x) for i, a in enumerate(diagram.nodes) for b in diagram.nodes[i + 1:]
            if abs(a.y - b.y) < box_height and a.x != b.x]
    return min(gaps) - _ARROW_ROOM if gaps else float("inf")


def _crosses(box, start, end) -> bool:
    """Whether the segment ``start``–``end`` (display coordinates) passes through the rectangle ``box``."""
    (x0, y0), (x1, y1) = start, end
    for k in range(101):  # fine enough for a label's box against an arrow many times its size
        t = k / 100
        if box.contains(x0 + t * (x1 - x0), y0 + t * (y1 - y0)):
            return True
    return False


def box_texts_fit(ax) -> list[str]:
    """The box texts drawn on ``ax`` by :func:`draw_diagram` that are wider or taller than their box."""
    renderer = ax.figure.canvas.get_renderer()
    too_big = []
    for text, patch in getattr(ax, "_diagram_boxes", []):
        inner, outer = text.get_window_extent(renderer), patch.get_window_extent(renderer)
        if inner.x0 < outer.x0 or inner.x1 > outer.x1 or inner.y0 < outer.y0 or inner.y1 > outer.y1:
            too_big.append(text.get_text())
    return too_big


def draw_diagram(diagram: Diagram, ax=None, box_width: float = 2.0, box_height: float = 0.8):
    """Draw ``diagram`` with matplotlib (a new figure when ``ax`` is None); returns the axes.

    A new figure is at most :data:`MAX_FIGURE_WIDTH` inches wide, so that the notebook shows it
    at its own size. Boxes are widened to their longest line where the row leaves room.
    Straight arrows join the box edges, and an arrow's label is moved off its line; a curved
    edge (a skip connection) leaves and enters its boxes on the right-hand side and bends
    outwards.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    xs, ys = [n.x for n in diagram.nodes], [n.y for n in diagram.nodes]
    margin = 1.2 if any(e.curve for e in diagram.edges) else 0.2
    if ax is None:
        width = 0.85 * (max(xs) - min(xs) + box_width + 2 * margin + 0.2)
        fig, ax = plt.subplots(figsize=(min(width, MAX_FIGURE_WIDTH), 0.85 * (max(ys) - min(ys) + box_height + 1.2)))
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.9)

    def set_limits(width):
        ax.set_xlim(min(xs) - width / 2 - 0.1, max(xs) + width / 2 + margin)
        ax.set_ylim(min(ys) - box_height, max(ys) + box_height)

    set_limits(box_width)
    ax.axis("off")
    texts = [ax.text(node.x, node.y, node.text, ha="center", va="center", fontsize=FONT_SIZE) for node in diagram.nodes]
    needed = max(_text_width(ax, t) for t in texts) + 0.15
    if needed > box_width:
        box_width = min(needed, max(box_width, _widest_fit(diagram, box_height)))
        set_limits(box_width)
    boxes = []
    for node, text in zip(diagram.nodes, texts):
        patch = FancyBboxPatch((node.x - box_width / 2, node.y - box_height / 2), box_width, box_height,
                               boxstyle="round,pad=0.04", facecolor=COLOURS.get(node.role, COLOURS["note"]),
                               edgecolor="0.35")
        ax.add_patch(patch)
        boxes.append((text, patch))
    ax._diagram_boxes = boxes
    renderer = ax.figure.canvas.get_renderer()
    for edge in diagram.edges:
        start, end = diagram.node(edge.start), diagram.node(edge.end)
        if edge.curve:
            tail, head = (start.x + box_width / 2, start.y), (end.x + box_width / 2, end.y)
        else:
            tail, head = _anchor(start, end, box_width, box_height), _anchor(end, start, box_width, box_height)
        ax.annotate("", xy=head, xytext=tail, arrowprops=dict(arrowstyle="-|>", color="0.3", shrinkA=0, shrinkB=0,
                                                              connectionstyle=f"arc3,rad={edge.curve}"))
        if not edge.label:
            continue
        middle = ((tail[0] + head[0]) / 2, (tail[1] + head[1]) / 2)
        if edge.curve:
            across = abs(edge.curve) * abs(head[1] - tail[1]) / 2 * 0.75
            ax.text(middle[0] + across, middle[1], edge.label, fontsize=FONT_SIZE - 1, color="0.25", ha="left",
                    va="bottom")
            continue
        # Above the line, raised point by point until the line no longer runs through the label.
        label = ax.annotate(edge.label, middle, xytext=(0, 2), textcoords="offset points", fontsize=FONT_SIZE - 1,
                            color="0.25", ha="center", va="bottom")
        line = (ax.transData.transform(tail), ax.transData.transform(head))
        for lift in range(3, 60):
            if not _crosses(label.get_window_extent(renderer), *line):
                break
            label.set_position((0, lift))
    ax.set_title(diagram.title)
    return ax
