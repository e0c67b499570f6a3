"""The course as a static website, built from the committed, executed notebooks (never re-run).

``lessons site`` writes one folder of plain files that any static host serves (GitHub Pages,
``python -m http.server``) and that loads nothing from another host:

- a home page in Chinese for the course's reader (``site_assets/home.html``: what the course is, for
  whom, each lesson with its line of lesson 00's course map (:func:`lesson_summaries`), where to
  get it: pyproject.toml's ``[project.urls]`` or ``--repo-url``), the lessons in course order with
  previous / next, the glossary, the data, parser and treebank cards and README itself (a lesson's
  citation of a README section links to it);
- on each lesson page: its prerequisites (:data:`~lessons_lib.exercises.course_map.PREREQUISITES`),
  the wall time ``lessons execute`` recorded, the two commands to run it yourself (from README),
  every committed output (figures as files, displaCy trees as the notebook holds them);
- each exercise as the learner gets it (the student version of the cell,
  :func:`~lessons_lib.course.assignments.strip_solutions`), its answer and the check's result
  folded behind a "显示答案" toggle;
- the first use of each glossary term on a page linked to its entry;
- a search page over every section (substring matching, so a Chinese word is found
  without a word segmenter);
- MathJax 3 (from the ``django-static-mathjax`` package), loaded only by pages with a formula, and
  a subset of the course's Noto Sans CJK SC holding exactly the page's characters
  (:mod:`lessons_lib.course.fonts`), served from the site itself; formulas in the search index,
  titles and tooltips written as plain text (:func:`tex_to_text`);
- notebook HTML through an allow-list (:func:`sanitise_html`) and a Content-Security-Policy on
  every page: nothing from a notebook runs, and nothing loads from another host.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import nbformat

from lessons_lib.course.assignments import check_output_outside, find_exercises, strip_solutions
from lessons_lib.course.fonts import cjk_characters, font_subset
from lessons_lib.course.glossary import GLOSSARY_PATH, parse_glossary
from lessons_lib.course.notebooks import METADATA_KEY, merged_streams, read_notebook
from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.exercises.course_map import PREREQUISITES
from lessons_lib.files import check_output_folder, folder_lock, record_written
from lessons_lib.paths import DATA_DIR, NOTEBOOKS_DIR, REPO_ROOT

ASSETS_DIR = Path(__file__).with_name("site_assets")
MATHJAX_COMPONENT = "tex-svg-full.js"  # every TeX extension in one file: nothing loaded later
FONT_FILE = "course-cjk.woff"
SCRIPTS_AND_STYLES = ("site.css", "site.js", "search.js", "mathjax-config.js", "favicon.svg")  # from site_assets/
# Every page's policy: scripts, styles, fonts and images only from the site itself (images also as
# data: URIs: figures and displaCy trees), no inline script or event handler, no frame, no plugin.
# Inline styles stay allowed: MathJax writes its SVG's styles into the page.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                           "img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-src 'none'; "
                           "object-src 'none'; base-uri 'self'; form-action 'self'")
# The reference pages: (source in the repository, page name, sidebar title).
CARDS = (
    ("notebooks/GLOSSARY.md", "glossary", "术语表"),
    ("data/README.md", "data", "数据说明"),
    ("data/parser/README.md", "parser", "句法分析器说明"),
    ("data/treebank/README.md", "treebank", "树库说明"),
    ("README.md", "readme", "README（英文）"),
)
# The home page's one line per lesson comes from lesson 00's course map: the table of its section
# titled 课程地图 (課 | 主题 | 你会亲手测量的东西), one source that the lessons' authors keep current.
COURSE_MAP_SECTION = "课程地图"
_LESSON_FILE = re.compile(r"^(\d\d)_\w+\.ipynb$")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$", re.S)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SKIP_TERMS_INSIDE = {"a", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "script", "style", "summary", "th"}


@dataclass
class Page:
    """One page of the site: where it is written, its titles and its rendered parts.

    Attributes:
        name: the file name without ``.html``.
        title: the page's title; ``nav_title`` is its shorter name in the sidebar.
        group: the sidebar group (``""``: the home page).
        source: the repository path it is made from (relative links in it resolve from there).
        body: the article's HTML; ``top``: the boxes shown above it.
        toc: the page's own table of contents, ``(level, id, text)``.
        sections: its search entries (:func:`search_index`).
        math: whether its prose holds a formula (only then does the page load MathJax).
        lang: the language of its prose (:func:`page_language`), the page's ``lang``.
    """

    name: str
    title: str
    nav_title: str
    group: str
    source: str
    body: str = ""
    top: str = ""
    toc: list[tuple[int, str, str]] = field(default_factory=list)
    sections: list[dict[str, str]] = field(default_factory=list)
    math: bool = False
    lang: str = "zh-CN"

    @property
    def href(self) -> str:
        return f"{self.name}.html"


@dataclass(frozen=True)
class SiteReport:
    """What :func:`build_site` wrote: the pages, every file, their total size and the time it took."""

    pages: list[str]
    files: list[Path]
    size_bytes: int
    seconds: float


# --- math as readable text (search index, tooltips, titles: places MathJax does not typeset) ---------

_TEX_SYMBOLS = {
    "cdot": "·", "times": "×", "top": "ᵀ", "infty": "∞", "ne": "≠", "neq": "≠", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "approx": "≈", "to": "→", "rightarrow": "→", "leftarrow": "←", "in": "∈",
    "sum": "Σ", "prod": "∏", "pm": "±", "cap": "∩", "cup": "∪", "ldots": "…", "dots": "…", "cdots": "⋯",
    "lVert": "‖", "rVert": "‖", "Vert": "‖", "lvert": "|", "rvert": "|", "mid": "|", "quad": " ", "qquad": " ",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "theta": "θ",
    "lambda": "λ", "mu": "μ", "pi": "π", "sigma": "σ", "tau": "τ", "phi": "φ", "omega": "ω", "Delta": "Δ",
    "Sigma": "Σ", "Omega": "Ω",
}
_SUPERSCRIPTS = str.maketrans("0123456789-+()ni", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺⁽⁾ⁿⁱ")
_BRACED = r"\{([^{}]*)\}"


def tex_to_text(tex: str) -> str:
    """A TeX formula as plain text a reader (and a substring search) can use: ``\\sqrt{d_k}`` → ``√d_k``.

    Covers what the course writes: \\sqrt, \\frac, \\mathrm-like fonts, sub- and superscripts and
    common symbols; any other command loses its backslash and keeps its name.
    """
    text = re.sub(r"\\(?:left|right|big|Big|bigg|Bigg)\b|\\!", "", tex)
    text = re.sub(r"\\[,;: ]", " ", text)
    for _ in range(5):  # innermost braces first, so nested \\frac{\\sqrt{d}}{2} works
        before = text
        text = re.sub(r"\^\s*(\\top\b|[0-9a-zA-Z+-])", lambda m: _superscript(m.group(1)), text)
        text = re.sub(r"\\(?:mathrm|text|mathbf|mathit|mathsf|mathtt|operatorname|boldsymbol|mathcal)\s*" + _BRACED, r"\1", text)
        text = re.sub(r"\\sqrt\s*" + _BRACED, lambda m: "√" + (m.group(1) if re.fullmatch(r"\w+", m.group(1)) else f"({m.group(1)})"), text)
        text = re.sub(r"\\frac\s*" + _BRACED + r"\s*" + _BRACED, lambda m: f"{_grouped(m.group(1))}/{_grouped(m.group(2))}", text)
        text = re.sub(r"\^\s*" + _BRACED, lambda m: _superscript(m.group(1)), text)
        text = re.sub(r"_\s*" + _BRACED, lambda m: "_" + m.group(1).replace(" ", ""), text)
        if text == before:
            break
    text = re.sub(r"( ?)\\([A-Za-z]+)( ?)(?=(.?))", _command, text)
    text = text.replace("\\{", "{").replace("\\}", "}").replace("{", "").replace("}", "").replace("\\", " ")
    return re.sub(r"\s+", " ", text).strip()


def _command(match: re.Match) -> str:
    """A symbol's character; any other command (``\\cos``) its name, a space before a following letter."""
    before, name, space, after = match.groups()
    if name in _TEX_SYMBOLS:  # spaced as written on both sides (A \\cap B), else tight (q\\cdot k)
        return before + _TEX_SYMBOLS[name] + (space if before else "")
    return before + name + (" " if space or after.isalnum() or after == "\\" else "")


def _grouped(part: str) -> str:
    return part.strip() if re.fullmatch(r"[\w.·√ᵀ⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+", part.strip()) else f"({part.strip()})"


def _superscript(part: str) -> str:
    if part.strip() in ("\\top", "T"):
        return "ᵀ"
    if re.fullmatch(r"[0-9ni()+-]+", part.strip()):
        return part.strip().translate(_SUPERSCRIPTS)
    return f"^({part})" if len(part) > 1 else f"^{part}"


def readable_math(text: str) -> str:
    """``text`` with each ``$…$`` and ``$$…$$`` formula replaced by :func:`tex_to_text` of it."""
    return _MATH.sub(lambda m: tex_to_text(m.group(0).strip("$")), text)


def _read_text(path: Path) -> str:
    with file_errors(path, "read"):
        return path.read_text(encoding="utf-8")


def lesson_paths(notebooks_dir: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The lesson notebooks ``NN_name.ipynb`` of ``notebooks_dir``, in course order."""
    paths = sorted(p for p in notebooks_dir.glob("*.ipynb") if _LESSON_FILE.match(p.name))
    if not paths:
        raise CourseInputError(f"no lesson notebooks (NN_name.ipynb) in {notebooks_dir}")
    return paths


def run_it_yourself_commands(readme: str) -> list[str]:
    """The learner's two commands, as README gives them: the ``<!-- learner -->`` block and the one after it."""
    marker = readme.find("<!-- learner -->")
    blocks = re.findall(r"```bash\n(.*?)```", readme[marker:], re.S) if marker >= 0 else []
    if len(blocks) < 2:
        raise CourseInputError("README.md needs a ```bash block after `<!-- learner -->` and one after it "
                               "(the website's \"run it yourself\" box shows them)")
    return [blocks[0].strip(), blocks[1].strip()]


def _slug(text: str, taken: set[str]) -> str:
    base = re.sub(r"[\s/]+", "-", re.sub(r"[$\\{}()`'\"?,.:;!|<>#%&=+*，。：；！？（）「」、]", "", text.strip())).strip("-")
    base = base.lower() or "section"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


# Pictures pasted into a markdown cell (its ``attachments``) that the site writes as image files, by type.
_ATTACHMENT_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def _markdown(text: str, attachments: dict | None = None, images: _Images | None = None) -> str:
    """A markdown cell (or file) as sanitised HTML; its pasted pictures (``attachment:NAME``) become image files."""
    from nbconvert.filters.markdown_mistune import MarkdownWithMath

    renderer = _attachment_renderer()(escape=False, attachments=attachments or {})
    renderer.images = images
    return sanitise_html(MarkdownWithMath(renderer=renderer).render(text))


def _attachment_renderer() -> type:
    """nbconvert's renderer, except that a picture the cell does not hold (or not as an image) is its alt text.

    nbconvert raises ``InvalidNotebook: missing attachment`` for those; the site shows the rest of the lesson.
    """
    import base64
    import binascii

    from nbconvert.filters.markdown_mistune import IPythonRenderer

    class AttachmentRenderer(IPythonRenderer):
        images: _Images | None = None

        def image(self, text: str, url: str, title: str | None = None) -> str:
            if not url.startswith("attachment:"):
                return super().image(text, url, title)
            found = self.attachments.get(url[len("attachment:"):])
            kind = next((t for t in _ATTACHMENT_TYPES if isinstance(found, dict) and isinstance(found.get(t), str)), None)
            data = b""
            if kind is not None and isinstance(found, dict) and self.images is not None:
                try:
                    data = base64.b64decode(_text(found[kind]), validate=False)
                except (binascii.Error, ValueError):
                    data = b""
            if not data or kind is None or self.images is None:  # missing, not an image, or undecodable
                return f'<span class="missing-picture">[{html.escape(text or url)}]</span>'  # the alt text stays readable
            return super().image(text, self.images.add(data, _ATTACHMENT_TYPES[kind]), title)

    return AttachmentRenderer


# --- notebook HTML, sanitised: nothing runs and nothing loads from another host ----------------------

_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details", "div", "dl",
    "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
    "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
}
# Removed with everything inside them (their content is code, or a frame onto another page); any other
# tag outside the allow-list is unwrapped: its text stays.
_DROPPED_TAGS = {
    "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "template", "noscript", "svg", "math",
    "link", "meta", "base", "audio", "video", "source", "track", "canvas", "form", "input", "button", "select",
    "textarea", "portal", "picture",
}
_ALLOWED_ATTRIBUTES = {"class", "id", "title", "lang", "dir", "align", "href", "src", "alt", "width", "height",
                       "colspan", "rowspan", "start", "open"}
_ALIGN_STYLE = re.compile(r"\s*text-align\s*:\s*(left|right|center)\s*;?\s*")  # markdown tables' column alignment
_DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.I)


def _safe_url(url: str, loads: bool) -> bool:
    """Whether a link (``loads=False``) or a source the page fetches (``loads=True``) may stay.

    Links may point anywhere on the web (they load nothing until followed) but never run script;
    sources must be the site's own files or data images.
    """
    # Browsers read a backslash in a URL as a slash: "\\host/x" is "//host/x", another host.
    bare = re.sub(r"[\x00-\x20\x7f]", "", url).replace("\\", "/")
    parts = urlsplit(bare)
    if loads:
        return (not parts.scheme and not parts.netloc) or bool(_DATA_IMAGE.match(bare))
    return parts.scheme.lower() in ("", "http", "https", "mailto")


def sanitise_html(fragment: str) -> str:
    """An HTML fragment from a notebook (markdown cell, ``text/html`` output) with an allow-list applied.

    Scripts, frames, styles, forms and embedded objects are removed with their content; every
    attribute outside a short list goes (so ``onerror=``, ``onload=`` and ``style=`` do), except a
    markdown table's text alignment; ``href`` keeps web and mail links only (no ``javascript:``), and
    ``src`` only the site's own files and ``data:`` images, so nothing loads from another host.
    """
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(fragment, "html.parser")
    for comment in soup.find_all(string=lambda text: isinstance(text, Comment)):
        comment.extract()
    for tag in soup.find_all(True):
        if tag.decomposed:
            continue
        if tag.name in _DROPPED_TAGS:
            tag.decompose()
            continue
        if tag.name not in _ALLOWED_TAGS:
            tag.unwrap()
            continue
        for name, value in list(tag.attrs.items()):
            value = " ".join(value) if isinstance(value, list) else str(value)
            keep = (name in _ALLOWED_ATTRIBUTES or (name == "style" and _ALIGN_STYLE.fullmatch(value))) and (
                name not in ("href", "src") or _safe_url(value, loads=name == "src"))
            if not keep:
                del tag[name]
    return str(soup)


def _highlight(source: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return highlight(source, PythonLexer(), HtmlFormatter(cssclass="highlight"))


# --- notebook cells -------------------------------------------------------------------------------


@dataclass
class _Images:
    """The figures of one page, written as files beside the pages (``images/<page>-<n>.<ext>``)."""

    page: str
    files: dict[str, bytes] = field(default_factory=dict)
    alts: set[str] = field(default_factory=set)

    def add(self, data: bytes, extension: str) -> str:
        name = f"images/{self.page}-{len(self.files) + 1:02d}.{extension}"
        self.files[name] = data
        return name

    def unique_alt(self, alt: str) -> str:
        """``alt``, numbered when an earlier figure of the page already has it (a cell drawing two figures)."""
        chosen, n = alt, 2
        while chosen in self.alts:
            chosen, n = f"{alt}（第 {n} 张）", n + 1
        self.alts.add(chosen)
        return chosen


# Where a figure's own words are in the code that draws it: titles first, then the axes' labels.
_TITLE_CALLS = ("suptitle", "set_title", "title")
_LABEL_CALLS = ("set_xlabel", "set_ylabel", "xlabel", "ylabel")
_MAX_ALT = 200


def _string_value(node) -> str | None:
    """A string literal's text; an f-string's with each ``{…}`` as "…"; anything else ``None``."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        text = "".join(str(part.value) if isinstance(part, ast.Constant) else "…" for part in node.values)
        return text if len(re.findall(r"\w", text)) >= 2 else None  # not a bare "{a} -> {b}"
    return None


def _figure_words(source: str) -> tuple[list[str], list[str]]:
    """The titles (``set_title``, ``suptitle``, a ``title=`` argument) and axis labels a cell's code writes."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:  # a cell with IPython magic: no titles read
        return [], []
    titles: list[str] = []
    labels: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        first = _string_value(node.args[0]) if node.args else None
        if first and name in _TITLE_CALLS:
            (titles.insert(0, first) if name == "suptitle" else titles.append(first))
        elif first and name in _LABEL_CALLS:
            labels.append(first)
        for keyword in node.keywords:
            value = _string_value(keyword.value)
            if value and keyword.arg == "title":
                titles.append(value)
            elif value and keyword.arg in ("xlabel", "ylabel"):
                labels.append(value)
    return titles, labels


def _first_comment(source: str) -> str | None:
    for line in source.splitlines():
        text = line.strip()
        if text.startswith("#") and not text.startswith(("#!", "# noqa", "# type:")):
            return text.lstrip("#").strip() or None
    return None


def figure_alt(source: str, heading: str) -> str:
    """The alt text of the figures a code cell draws, from what the figure says about itself.

    Its titles (a suptitle first); else its axis labels, with the section it is drawn in
    (``heading``); else the cell's first comment line; else the section alone. Line breaks inside
    a title become spaces.
    """
    titles, labels = _figure_words(source)
    unique = lambda texts: list(dict.fromkeys(" ".join(t.split()) for t in texts))  # noqa: E731
    # A label worth reading alone: Chinese words, or four letters (not a bare "d_k").
    labels = [label for label in unique(labels) if re.search(r"[\u4e00-\u9fff]", label) or len(re.findall(r"\w", label)) >= 4]
    if titles:
        alt = "图：" + "；".join(unique(titles)[:3])
    elif labels:
        alt = f"「{heading}」一节的图：" + " / ".join(labels[:2])
    else:
        alt = _first_comment(source) or f"「{heading}」一节的图"
    return alt if len(alt) <= _MAX_ALT else alt[:_MAX_ALT - 1] + "…"


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


# A printed table's row: text, a gap of two spaces or more, text (columns aligned with spaces).
_COLUMN_GAP = re.compile(r"\S {2,}\S")
TABLE_MIN_ROWS = 2  # consecutive rows with a column gap; a single line with a wide gap is prose


def printed_text_html(text: str) -> str:
    """Printed text as the body of a ``<pre>``: each printed table (rows with aligned columns) in its own block.

    The ``<pre>`` wraps long lines as JupyterLab does; a table's block keeps its rows whole and
    scrolls sideways on its own when it is wider than the page (``span.output-table``, styled in
    ``site.css``), so its columns stay aligned.
    """
    lines = text.splitlines(keepends=True)
    parts: list = []
    run: list[str] = []

    def flush_run() -> None:
        escaped = html.escape("".join(run))
        parts.append(f'<span class="output-table">{escaped}</span>' if len(run) >= TABLE_MIN_ROWS else escaped)
        run.clear()

    for line in lines:
        if _COLUMN_GAP.search(line):
            run.append(line)
            continue
        flush_run()
        parts.append(html.escape(line))
    flush_run()
    return "".join(parts)


def _output_html(output: nbformat.NotebookNode, images: _Images, alt: str) -> str:
    """One committed output as HTML: text as ``<pre>``, figures as image files, HTML as the notebook holds it."""
    import base64

    kind = output.get("output_type")
    if kind == "stream":
        return f'<pre class="output stream-{output.get("name", "stdout")}">{printed_text_html(_text(output.text))}</pre>'
    if kind == "error":
        return f'<pre class="output error">{html.escape(_ANSI.sub("", chr(10).join(output.get("traceback", []))))}</pre>'
    data = output.get("data", {})
    if "text/html" in data:
        return f'<div class="output output-html">{sanitise_html(_text(data["text/html"]))}</div>'
    for mime, extension in (("image/svg+xml", "svg"), ("image/png", "png"), ("image/jpeg", "jpg")):
        if mime in data:
            content = _text(data[mime])
            raw = content.encode("utf-8") if extension == "svg" else base64.b64decode(content)
            src, alt = images.add(raw, extension), images.unique_alt(alt)
            lang = "" if re.search(r"[\u4e00-\u9fff]", alt) else ' lang="en"'  # an English comment line
            # Linked to itself: a tap on a phone opens the figure full size.
            return (f'<div class="output output-image"><a class="figure-link" href="{src}" title="打开原图">'
                    f'<img src="{src}" alt="{html.escape(alt)}"{lang}></a></div>')
    if "text/latex" in data:
        return f'<div class="output md">{html.escape(_text(data["text/latex"]))}</div>'
    if "text/plain" in data:
        return f'<pre class="output">{printed_text_html(_text(data["text/plain"]))}</pre>'
    return ""


def _outputs_html(cell: nbformat.NotebookNode, images: _Images, alt: str) -> str:
    return "".join(_output_html(output, images, alt) for output in merged_streams(cell.get("outputs", [])))


def _code_html(source: str, label: str = "") -> str:
    caption = f'<div class="code-label">{html.escape(label)}</div>' if label else ""
    return f'<div class="code">{caption}{_highlight(source)}</div>'


def _exercise_html(nb: nbformat.NotebookNode, index: int, check: int | None, images: _Images, alt: str,
                   where: str) -> str:
    """An exercise as the learner gets it; its answer (and the check cell's result) folded behind a closed toggle."""
    cell = nb.cells[index]
    shown = _code_html(strip_solutions(cell.source, where), "练习：在 TODO 处写你的答案")
    answer = _code_html(cell.source, "参考答案") + _outputs_html(cell, images, alt)
    if check is not None:
        shown += _code_html(nb.cells[check].source, "检查单元")
        answer += '<div class="code-label">参考答案的检查结果</div>' + _outputs_html(nb.cells[check], images, alt)
    return (f'<div class="exercise">{shown}<details class="answer"><summary>显示答案</summary>'
            f'<div class="answer-body">{answer}</div></details></div>')


def _check_alone_html(cell: nbformat.NotebookNode, images: _Images, alt: str) -> str:
    """A check cell that does not follow its exercise directly: its result folded on its own."""
    return (f'<div class="exercise">{_code_html(cell.source, "检查单元")}<details class="answer">'
            f'<summary>显示答案的检查结果</summary><div class="answer-body">{_outputs_html(cell, images, alt)}</div>'
            f'</details></div>')


def figure_alts(nb: nbformat.NotebookNode, name: str) -> dict[int, str]:
    """Each code cell's :func:`figure_alt`, by cell index (the section is the last heading above the cell)."""
    heading, alts = name, {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            headings = re.findall(r"(?m)^#{1,6}\s+(.+?)\s*#*\s*$", cell.source)
            heading = re.sub(r"[*`]", "", readable_math(headings[-1])) if headings else heading
        elif cell.cell_type == "code":
            alts[index] = figure_alt(cell.source, heading)
    return alts


def notebook_body(nb: nbformat.NotebookNode, name: str, images: _Images) -> str:
    """The cells of a committed notebook as HTML, outputs as they are (nothing is executed)."""
    exercises = find_exercises(nb, name)
    by_cell = {e.cell_index: e for e in exercises}
    checks = {e.check_index for e in exercises}
    alts = figure_alts(nb, name)
    parts = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            parts.append(f'<div class="md tex2jax_process">{_markdown(cell.source, cell.get("attachments"), images)}</div>')
        elif cell.cell_type != "code":
            continue
        elif index in by_cell:
            check = by_cell[index].check_index
            adjacent = check == index + 1
            parts.append(_exercise_html(nb, index, check if adjacent else None, images, alts[index], f"{name} cell {index}"))
        elif index in checks and index - 1 not in by_cell:
            parts.append(_check_alone_html(cell, images, alts[index]))
        elif index not in checks:
            parts.append(f'<div class="cell">{_code_html(cell.source)}{_outputs_html(cell, images, alts[index])}</div>')
    return "\n".join(parts)


def _first_heading(text: str, where: str) -> str:
    match = re.search(r"(?m)^#\s+(.+?)\s*$", text)
    if not match:
        raise CourseInputError(f"{where} has no '# title' line")
    return match.group(1)


def check_repo_url(url: str | None) -> str | None:
    """``--repo-url``: a web, ssh or git address of the course's repository (``None``: none given)."""
    if url is None:
        return None
    parts = urlsplit(url)
    if not ((parts.scheme in ("http", "https", "ssh", "git") and parts.netloc) or re.fullmatch(r"[\w.-]+@[\w.-]+:\S+", url)) \
            or re.search(r"[\s<>\"']", url):
        raise CourseInputError(f"--repo-url {url!r} is not a repository address (like https://github.com/owner/course)")
    return url


# pyproject.toml's [project.urls] labels that name the repository, the first one found wins.
_REPOSITORY_LABELS = ("repository", "source", "source code", "homepage")
PYPROJECT = REPO_ROOT / "pyproject.toml"


def _repository_in(urls: dict[str, str]) -> str | None:
    """The address under the first of :data:`_REPOSITORY_LABELS` that ``urls`` (label → address) names."""
    found = {label.strip().lower(): url.strip() for label, url in urls.items() if isinstance(url, str)}
    return next((found[label] for label in _REPOSITORY_LABELS if found.get(label)), None)


def pyproject_repo_url(path: Path = PYPROJECT) -> str | None:
    """The repository's address as ``path``'s ``[project.urls]`` lists it (``None``: it lists none).

    Read from the file itself, so an address added there shows on the next build without
    reinstalling the package.

    Raises:
        CourseInputError: the file is not valid TOML, or its address is not a repository address.
    """
    import tomllib

    text = _read_text(path)
    try:
        project = tomllib.loads(text).get("project", {})
    except tomllib.TOMLDecodeError as error:
        raise CourseInputError(f"{path}: not valid TOML ({error})") from None
    urls = project.get("urls", {}) if isinstance(project, dict) else {}
    url = _repository_in(urls) if isinstance(urls, dict) else None
    try:
        return check_repo_url(url)
    except CourseInputError:
        raise CourseInputError(f"{path}: [project.urls] {url!r} is not a repository address "
                               "(like https://github.com/owner/course)") from None


def package_repo_url() -> str | None:
    """The repository's address as the installed course package records it (pyproject.toml's ``[project.urls]``).

    ``None`` when the package is not installed or names no Repository / Source / Homepage URL.
    """
    from importlib.metadata import PackageNotFoundError, metadata, packages_distributions

    names = packages_distributions().get(__name__.split(".")[0], [])
    for name in names:
        try:
            entries = metadata(name).get_all("Project-URL") or []
        except PackageNotFoundError:
            continue
        found = _repository_in({label: url for label, _, url in (e.partition(",") for e in entries)})
        if found:
            return found
    return None


def site_repo_url(given: str | None, pyproject: Path | None = None) -> str | None:
    """The address the site shows: ``--repo-url`` when given (checked), else the repository's own address.

    That is ``[project.urls]`` of ``pyproject`` (default :data:`PYPROJECT`, :func:`pyproject_repo_url`) when the course runs
    from its repository on Python 3.11+ (``tomllib``), else the installed package's metadata
    (:func:`package_repo_url`), which records the same table at install time.
    """
    if given is not None:
        return check_repo_url(given)
    pyproject = PYPROJECT if pyproject is None else pyproject
    if pyproject.is_file() and sys.version_info >= (3, 11):
        return pyproject_repo_url(pyproject)
    return package_repo_url()


def _repo_line(repo_url: str | None) -> str:
    if repo_url is None:
        return "构建本站时没有给出仓库地址（pyproject.toml 的 <code>[project.urls]</code> 或 <code>lessons site --repo-url 地址</code>）；"
    return f'仓库：<a href="{html.escape(repo_url)}">{html.escape(repo_url)}</a>；'


def _plain_line(node) -> str:
    """A table cell or list item as one line of plain text: formulas as text, the 〔source〕 marks dropped."""
    text = re.sub(r"\s+", " ", re.sub(r"\s*〔[^〕]*〕\s*", " ", _readable_text(node)))
    return re.sub(r" (?=[；，。、）」”])", "", text).strip().rstrip("；;。")


def lesson_summaries(first_lesson: nbformat.NotebookNode, where: str) -> dict[str, str]:
    """Each lesson's line on the home page, from lesson 00 (``first_lesson``), as plain text.

    A lesson's line is its row of the course map (the table under the heading with
    :data:`COURSE_MAP_SECTION`: what the learner measures there). Lesson 00, which holds the map
    and has no row in it, is summed up by its own 学习目标 list.

    Raises:
        CourseInputError: lesson 00 has no course map table.
    """
    from bs4 import BeautifulSoup

    summaries: dict[str, str] = {}
    for cell in first_lesson.cells:
        if cell.cell_type != "markdown":
            continue
        soup = BeautifulSoup(_markdown(cell.source), "html.parser")
        goals = next((h for h in soup.find_all(["h2", "h3"]) if "学习目标" in h.get_text()), None)
        listed = goals.find_next_sibling(["ul", "ol"]) if goals is not None else None
        if listed is not None and "00" not in summaries:
            summaries["00"] = "；".join(_plain_line(item) for item in listed.find_all("li")) + "。"
        map_heading = next((h for h in soup.find_all(["h2", "h3"]) if COURSE_MAP_SECTION in h.get_text()), None)
        table = map_heading.find_next_sibling("table") if map_heading is not None else None
        for row in table.select("tbody tr") if table is not None else []:
            columns = row.find_all("td")
            if len(columns) >= 2 and re.fullmatch(r"\d\d", columns[0].get_text(strip=True)):
                summaries[columns[0].get_text(strip=True)] = _plain_line(columns[-1]) + "。"
    if len(summaries) < 2:
        raise CourseInputError(f"{where} has no course map: a '## … {COURSE_MAP_SECTION}' section with a table "
                               "(课 | 主题 | …) whose last column the website's home page shows")
    return summaries


def home_body(lessons: dict[str, "Page"], commands: list[str], repo_url: str | None,
              summaries: dict[str, str] | None = None) -> str:
    """The home page's article: what the course is, for whom, the lessons (one line each), where to get it."""
    summaries = summaries or {}
    rows = [{"number": number, "href": page.source, "title": re.sub(r"^第\s*\d+\s*课[：:]\s*", "", page.title),
             "summary": summaries.get(number, "")} for number, page in lessons.items()]
    return _environment().get_template("home.html").render(lessons=rows, commands=commands, repo_url=repo_url)


def lesson_box(nb: nbformat.NotebookNode, number: str, lesson_pages: dict[str, "Page"], commands: list[str],
               repo_url: str | None = None) -> str:
    """The boxes at the top of a lesson: its prerequisites, its recorded wall time, how to run it yourself."""
    needs = PREREQUISITES.get(number)
    if needs is None:
        raise CourseInputError(f"lesson {number} has no entry in the course map (PREREQUISITES)")
    links = "、".join(f'<a href="{lesson_pages[n].href}">第 {n} 课</a>' for n in needs if n in lesson_pages) or "无"
    recorded = nb.metadata.get(METADATA_KEY, {})
    seconds, cpus = recorded.get("wall_seconds"), recorded.get("cpus")
    if isinstance(seconds, (int, float)):
        on = f"在 {cpus} 核 CPU 上" if isinstance(cpus, int) else ""
        wall = f"上次 <code>lessons execute</code> {on}执行用时 {seconds:.0f} 秒"
    else:
        wall = "尚未记录（<code>lessons execute</code> 执行时记下）"
    run = "".join(f"<pre><code>{html.escape(c)}</code></pre>" for c in commands)
    return (f'<div class="lesson-meta"><div><strong>先修</strong>：{links}</div>'
            f'<div><strong>运行时间</strong>：{wall}</div></div>'
            f'<div class="run-yourself"><div><strong>自己运行</strong>：{_repo_line(repo_url)}'
            f'在仓库根目录（Python 3.10–3.12 的虚拟环境里）</div>'
            f'{run}<div>然后在 JupyterLab 里打开 <code>{html.escape(lesson_pages[number].source.split("/")[-1])}</code>。'
            f'</div></div>')


# --- one pass over a page's HTML: headings, links, glossary terms ----------------------------------


@dataclass(frozen=True)
class _Terms:
    """The glossary's terms (two characters or more: a one-character term matches inside other words)."""

    pattern: re.Pattern | None
    titles: dict[str, str]

    @classmethod
    def from_glossary(cls, text: str) -> "_Terms":
        entries = [e for e in parse_glossary(text, str(GLOSSARY_PATH)) if len(e.term) >= 2]
        terms = sorted((e.term for e in entries), key=len, reverse=True)  # longest first: 缩放点积注意力 before 注意力
        pattern = re.compile("|".join(re.escape(t) for t in terms)) if terms else None
        return cls(pattern, {e.term: readable_math(f"{e.english}：{e.definition}") for e in entries})


def glossary_anchor(term: str) -> str:
    """The id of a term's row on the glossary page."""
    return "g-" + re.sub(r"\s+", "-", term)


def _link_terms(soup, terms: _Terms) -> None:
    """Link the first use of each glossary term on the page (prose only: not in code, links, headings or math)."""
    from bs4 import NavigableString

    if terms.pattern is None:
        return
    done: set[str] = set()
    for container in soup.select("div.md"):
        for node in list(container.find_all(string=True)):
            if any(parent.name in _SKIP_TERMS_INSIDE for parent in node.parents) or not terms.pattern.search(node):
                continue
            pieces, text, last = [], str(node), 0
            math = [m.span() for m in _MATH.finditer(text)]
            for match in terms.pattern.finditer(text):
                term = match.group(0)
                if term in done or any(a <= match.start() < b for a, b in math):
                    continue
                done.add(term)
                pieces.append(NavigableString(text[last:match.start()]))
                link = soup.new_tag("a", href=f"glossary.html#{quote(glossary_anchor(term))}", attrs={"class": "term"})
                link["title"], link.string = terms.titles[term], term
                pieces.append(link)
                last = match.end()
            if pieces:
                pieces.append(NavigableString(text[last:]))
                node.replace_with(*pieces)


# A lesson citing a README section: README「Presets」, README 的 “Presets” 一节, README "Measured".
_README_SECTION = re.compile(r"README\s*(?:的\s*)?[「“\"]([^」”\"\n]{2,80})[」”\"]")


def _readme_target(name: str, sections: dict[str, str]) -> str | None:
    """The link of README's section called ``name``, or the only one whose heading starts with it."""
    if name in sections:
        return sections[name]
    starting = [href for heading, href in sections.items() if heading.startswith(name)]
    return starting[0] if len(starting) == 1 else None


def _link_readme_sections(soup, sections: dict[str, str]) -> None:
    """Each citation of a README section in prose becomes a link to that section of the README page.

    A citation naming no section of README (or more than one) stays plain text.
    """
    from bs4 import NavigableString

    for container in soup.select("div.md"):
        for node in list(container.find_all(string=_README_SECTION)):
            if any(parent.name in _SKIP_TERMS_INSIDE for parent in node.parents):
                continue
            pieces, text, last = [], str(node), 0
            for match in _README_SECTION.finditer(text):
                target = _readme_target(match.group(1).strip(), sections)
                if target is None:
                    continue
                pieces.append(NavigableString(text[last:match.start()]))
                link = soup.new_tag("a", href=target, attrs={"class": "readme-link"})
                link.string = match.group(0)
                pieces.append(link)
                last = match.end()
            if pieces:
                pieces.append(NavigableString(text[last:]))
                node.replace_with(*pieces)


def _resolve(href: str, source: str, targets: dict[str, str]) -> str | None:
    """Where a relative link of the file ``source`` points on the site (``None``: not a page of the site)."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return href
    if not parts.path:
        return href  # a link inside the page
    path = posixpath.normpath(posixpath.join(posixpath.dirname(source), unquote(parts.path)))
    return targets.get(path)


def _fix_links(soup, source: str, targets: dict[str, str]) -> None:
    """Links to the course's files point at their pages; links to files the site does not have become plain text."""
    for link in soup.find_all("a", href=True):
        if "anchor-link" in link.get("class", []):
            link.decompose()
            continue
        if "figure-link" in link.get("class", []):
            continue  # a figure's own image file, written beside the pages
        target = _resolve(link["href"], source, targets)
        if target is None:
            link.name, link.attrs = "span", {"class": "repo-path", "title": f"in the repository: {link['href']}"}
        else:
            link["href"] = target
    for code in soup.find_all("code"):  # `notebooks/01_….ipynb` in README's table: a link to the lesson
        target = targets.get(code.get_text().strip())
        if target and code.parent.name != "a":
            code.wrap(soup.new_tag("a", href=target))


def _headings(soup) -> list[tuple[int, str, str]]:
    """Give every heading a readable id; the page's table of contents (its h2 and h3)."""
    taken: set[str] = set()
    toc = []
    for heading in soup.find_all(["h1", "h2", "h3", "h4"]):
        text = heading.get_text(" ", strip=True)
        heading["id"] = _slug(text, taken)
        if heading.name in ("h2", "h3"):
            toc.append((int(heading.name[1]), heading["id"], text))
    return toc


def _glossary_ids(soup) -> None:
    """On the glossary page each term's row carries the id the terms link to."""
    for row in soup.find_all("tr"):
        first = row.find("td")
        if first is not None:
            row["id"] = glossary_anchor(first.get_text(strip=True))


def finish_page(page: Page, targets: dict[str, str], terms: _Terms, readme_sections: dict[str, str]) -> None:
    """Headings, links, README section links and glossary links of ``page.body``, in place."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.body, "html.parser")
    _fix_links(soup, page.source, targets)
    _link_readme_sections(soup, readme_sections)
    if page.name == "glossary":
        _glossary_ids(soup)
    else:
        _link_terms(soup, terms)
    page.toc = _headings(soup)
    page.sections = _sections(soup, page.title)
    page.math = _has_math(soup)
    page.lang = page_language(soup)
    title = soup.find("h1")
    if page.top and title is not None:  # the lesson's boxes right under its title
        title.insert_after(BeautifulSoup(page.top, "html.parser"))
        page.top = ""
    page.body = str(soup)


# --- the pages, the search index, the files ---------------------------------------------------------


def _sections(soup, title: str) -> list[dict[str, str]]:
    """The page's prose cut at its headings, as search entries: the anchor, the heading and the text under it.

    Only markdown is searched (not code, outputs or folded answers): a hit lands on prose a reader sees.
    """
    entries: list[dict] = []
    current: dict = {"a": "", "h": title, "t": []}
    for container in soup.select("div.md"):
        for node in container.find_all(["h1", "h2", "h3", "h4", "p", "li", "td", "th", "pre"]):
            if node.name in ("h1", "h2", "h3", "h4"):
                entries.append(current)
                current = {"a": node.get("id", ""), "h": _readable_text(node), "t": []}
            elif node.name in ("td", "th") or not node.find_parent(["li", "td", "th"]):
                current["t"].append(_readable_text(node))
    entries.append(current)
    return [{"a": e["a"], "h": e["h"], "t": " ".join(e["t"])} for e in entries if e["t"] or e["a"]]


def _readable_text(node) -> str:
    """A node's text with its formulas as :func:`readable_math` writes them (code is left as it is)."""
    from bs4 import NavigableString

    parts = [str(s) if s.find_parent(["code", "pre"]) else readable_math(str(s))
             for s in node.find_all(string=True) if isinstance(s, NavigableString)]
    return re.sub(r"\s+", " ", "".join(parts)).strip()  # "".join: a linked term stays part of its word


def page_language(soup) -> str:
    """``zh-CN`` when the page's prose (outside code) has at least as many Chinese characters as Latin words, else ``en``.

    The lessons, the glossary and the home page are Chinese; README and the data cards are English
    (quoting a Chinese example or two).
    """
    prose = " ".join(node for div in soup.select("div.md") for node in div.find_all(string=True)
                     if not node.find_parent(["code", "pre"]))
    chinese, words = len(re.findall(r"[\u4e00-\u9fff]", prose)), len(re.findall(r"[A-Za-z]+", prose))
    return "zh-CN" if chinese >= words else "en"


def _has_math(soup) -> bool:
    """Whether the prose MathJax reads (``.tex2jax_process``, outside code) holds a formula."""
    for container in soup.select(".tex2jax_process"):
        for node in container.find_all(string=True):
            if not node.find_parent(["code", "pre"]) and (_MATH.search(node) or re.search(r"\\[(\[]", node)):
                return True
    return False


def search_index(pages: list[Page]) -> str:
    """The search index as a script (``window.COURSE_SEARCH``), so search works from ``file://`` too."""
    index = {"pages": [{"u": p.href, "t": p.title} for p in pages],
             "sections": [{"p": i, **s} for i, p in enumerate(pages) for s in p.sections]}
    return "window.COURSE_SEARCH = " + json.dumps(index, ensure_ascii=False, separators=(",", ":")) + ";\n"


def _markdown_page(source: str, name: str, nav_title: str, group: str) -> Page:
    text = _read_text(REPO_ROOT / source)
    return Page(name=name, title=_first_heading(text, source), nav_title=nav_title, group=group, source=source,
                body=f'<div class="md tex2jax_process">{_markdown(text)}</div>')


def collect_pages(notebooks_dir: Path = NOTEBOOKS_DIR, repo_url: str | None = None) -> tuple[list[Page], dict[str, bytes]]:
    """Every page of the site in sidebar order, rendered and linked; and the figures they show."""
    readme = _read_text(REPO_ROOT / "README.md")
    commands = run_it_yourself_commands(readme)
    lessons, notebooks = {}, {}
    for path in lesson_paths(notebooks_dir):
        number = path.name[:2]
        nb = read_notebook(path)
        first = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
        title = _first_heading(first, path.name)
        short = re.sub(r"^第\s*\d+\s*课[：:]\s*", "", title)
        lessons[number] = Page(name=path.stem, title=title, nav_title=f"{number} {short}", group="课程",
                               source=f"notebooks/{path.name}")
        notebooks[number] = nb
    images: dict[str, bytes] = {}
    for number, page in lessons.items():
        figures = _Images(page.name)
        page.body = notebook_body(notebooks[number], page.source.split("/")[-1], figures)
        page.top = lesson_box(notebooks[number], number, lessons, commands, repo_url)
        images.update(figures.files)
    first = min(notebooks)
    summaries = lesson_summaries(notebooks[first], lessons[first].source)
    home = Page(name="index", title="注意力：从点积到句法偏置的 Transformer", nav_title="首页", group="", source="",
                body=home_body(lessons, commands, repo_url, summaries))
    cards = [_markdown_page(source, name, nav, "参考") for source, name, nav in CARDS]
    pages = [home, *lessons.values(), *cards]
    targets = {p.source: p.href for p in pages if p.source}
    terms = _Terms.from_glossary(_read_text(GLOSSARY_PATH))
    readme_page = next(p for p in cards if p.source == "README.md")
    finish_page(readme_page, targets, terms, {})
    sections = {text: f"{readme_page.href}#{anchor}" for _, anchor, text in readme_page.toc}
    for page in pages:
        if page is not readme_page:
            finish_page(page, targets, terms, sections)
    return pages, images


def _environment():
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    environment = Environment(loader=FileSystemLoader(ASSETS_DIR), autoescape=select_autoescape(["html"]),
                              keep_trailing_newline=True)
    environment.filters["plain"] = readable_math  # titles outside the typeset prose (<title>, sidebar)
    return environment


def render_pages(pages: list[Page]) -> dict[str, str]:
    """Each page, and the search page, as a whole HTML document (sidebar, table of contents, previous / next)."""
    template = _environment().get_template("page.html")
    nav = [{"href": p.href, "title": p.nav_title, "group": p.group} for p in pages]
    out = {}
    for i, page in enumerate(pages):
        out[page.href] = template.render(page=page, nav=nav, current=page.href, search=False, csp=CONTENT_SECURITY_POLICY,
                                         previous=pages[i - 1] if i > 0 else None,
                                         next=pages[i + 1] if i + 1 < len(pages) else None)
    search = Page(name="search", title="搜索", nav_title="搜索", group="", source="")
    out[search.href] = template.render(page=search, nav=nav, current=search.href, search=True, previous=None, next=None,
                                       csp=CONTENT_SECURITY_POLICY)
    return out


def _mathjax_files() -> dict[str, bytes]:
    """MathJax's single-file TeX → SVG component and its licence, from the installed ``django-static-mathjax``."""
    try:
        import mathjax
    except ImportError:
        raise CourseInputError("the website needs MathJax: python -m pip install -e '.[site]' "
                               "(it installs the django-static-mathjax package)") from None
    root = Path(mathjax.__file__).parent / "static" / "mathjax"
    with file_errors(root / "es5" / MATHJAX_COMPONENT, "read"):
        return {f"assets/mathjax/{MATHJAX_COMPONENT}": (root / "es5" / MATHJAX_COMPONENT).read_bytes(),
                "assets/mathjax/LICENSE": (root / "LICENSE").read_bytes()}


def _assets(documents: dict[str, str]) -> dict[str, bytes]:
    """The stylesheets, scripts, MathJax and the CJK font subset holding every character of ``documents``."""
    from pygments.formatters import HtmlFormatter

    files = {f"assets/{name}": (ASSETS_DIR / name).read_bytes() for name in SCRIPTS_AND_STYLES}
    files["assets/pygments.css"] = HtmlFormatter(cssclass="highlight").get_style_defs(".highlight").encode("utf-8")
    files.update(_mathjax_files())
    # The scripts and styles write a few words too (the wide-table note): the subset holds them.
    text = "".join(documents.values()) + "".join(files[f"assets/{name}"].decode("utf-8") for name in SCRIPTS_AND_STYLES)
    files[f"assets/{FONT_FILE}"] = font_subset(cjk_characters(text), flavor="woff")
    return files


def build_site(out_dir: Path, notebooks_dir: Path = NOTEBOOKS_DIR, repo_url: str | None = None,
               force: bool = False) -> SiteReport:
    """Write the course's website into ``out_dir`` from the committed notebooks and cards.

    ``out_dir`` must be new, empty, or hold only files this course wrote there (an earlier
    site); every page is rendered before anything is written. ``repo_url``, the repository's
    address, is shown on the home page and in each lesson's "run it yourself" box (``None``: the
    address pyproject.toml's ``[project.urls]`` lists, :func:`site_repo_url`). ``force`` (``--force``) replaces
    files of the same names that the course did not write.

    Raises:
        CourseInputError: ``out_dir`` is inside the notebooks folder or holds files the course
            did not write; a notebook or card is unreadable; MathJax is not installed; ``repo_url``
            (or pyproject.toml's address) is not a repository address.
    """
    start = time.perf_counter()
    check_output_outside(out_dir, [notebooks_dir, DATA_DIR], flag="--out")
    check_output_folder(out_dir, "--out", force=force)  # before the work, and again under the folder's lock
    pages, images = collect_pages(notebooks_dir, site_repo_url(repo_url))
    documents = render_pages(pages)
    documents["assets/search-index.js"] = search_index(pages)
    files: dict[str, bytes] = {name: text.encode("utf-8") for name, text in documents.items()}
    files.update(images)
    files.update(_assets(documents))
    files[".nojekyll"] = b""  # GitHub Pages: serve the folder as it is
    written = _write_all(out_dir, files, force)
    return SiteReport(pages=[p.href for p in pages] + ["search.html"], files=written,
                      size_bytes=sum(len(data) for data in files.values()), seconds=time.perf_counter() - start)


def _write_all(out_dir: Path, files: dict[str, bytes], force: bool) -> list[Path]:
    with file_errors(out_dir, "create the folder"):
        out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):
        check_output_folder(out_dir, "--out", force=force)
        written = []
        for name, data in sorted(files.items()):
            target = out_dir / name
            with file_errors(target.parent, "create the folder"):
                target.parent.mkdir(parents=True, exist_ok=True)
            written.append(record_written(target, data))
    return written

