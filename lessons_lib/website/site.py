"""The course as a static website, built from the committed, executed notebooks (never re-run).

``lessons site`` writes one folder of plain files that any static host serves (GitHub Pages,
``python -m http.server``) and that loads nothing from another host:

- the home page (README's overview, its Chinese summary and lesson table), the lessons in
  course order with previous / next, the glossary and the data, parser and treebank cards;
- on each lesson page: its prerequisites (:data:`~lessons_lib.exercises.course_map.PREREQUISITES`),
  the wall time ``lessons execute`` recorded, the two commands to run it yourself (from README),
  every committed output (figures as files, displaCy trees as the notebook holds them);
- each exercise as the learner gets it (the student version of the cell,
  :func:`~lessons_lib.course.assignments.strip_solutions`), its answer and the check's result
  folded behind a "显示答案" toggle;
- the first use of each glossary term on a page linked to its entry;
- a search page over every section (substring matching, so a Chinese word is found
  without a word segmenter);
- MathJax 3 (from the ``django-static-mathjax`` package) and a subset of the course's Noto Sans
  CJK SC holding exactly the page's characters (:mod:`lessons_lib.course.fonts`), served from the
  site itself.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable
from urllib.parse import quote, unquote, urlsplit

import nbformat

from lessons_lib.course.assignments import check_output_outside, find_exercises, strip_solutions
from lessons_lib.course.fonts import cjk_characters, font_subset
from lessons_lib.course.glossary import GLOSSARY_PATH, parse_glossary
from lessons_lib.course.notebooks import METADATA_KEY, read_notebook
from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.exercises.course_map import PREREQUISITES
from lessons_lib.files import folder_lock, foreign_entries, record_written
from lessons_lib.paths import DATA_DIR, NOTEBOOKS_DIR, REPO_ROOT

ASSETS_DIR = Path(__file__).with_name("site_assets")
MATHJAX_COMPONENT = "tex-svg-full.js"  # every TeX extension in one file: nothing loaded later
FONT_FILE = "course-cjk.woff"
README_SECTIONS = ("## 中文简介", "## Start here", "## Lessons", "## Licence")  # the home page, in this order
# The reference pages: (source in the repository, page name, sidebar title).
CARDS = (
    ("notebooks/GLOSSARY.md", "glossary", "术语表"),
    ("data/README.md", "data", "数据说明"),
    ("data/parser/README.md", "parser", "句法分析器说明"),
    ("data/treebank/README.md", "treebank", "树库说明"),
)
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


def _read_text(path: Path) -> str:
    with file_errors(path, "read"):
        return path.read_text(encoding="utf-8")


def lesson_paths(notebooks_dir: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The lesson notebooks ``NN_name.ipynb`` of ``notebooks_dir``, in course order."""
    paths = sorted(p for p in notebooks_dir.glob("*.ipynb") if _LESSON_FILE.match(p.name))
    if not paths:
        raise CourseInputError(f"no lesson notebooks (NN_name.ipynb) in {notebooks_dir}")
    return paths


def readme_overview(readme: str) -> str:
    """README's preamble and its sections :data:`README_SECTIONS`, in that order (the home page)."""
    parts = re.split(r"(?m)^(?=## )", readme)
    chosen = [parts[0]]
    for start in README_SECTIONS:
        found = [part for part in parts[1:] if part.startswith(start)]
        if not found:
            raise CourseInputError(f"README.md has no section starting {start!r} (the website's home page shows it)")
        chosen.append(found[0])
    return "\n".join(chosen)


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


def _markdown(text: str) -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return markdown2html_mistune(text)


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

    def add(self, data: bytes, extension: str) -> str:
        name = f"images/{self.page}-{len(self.files) + 1:02d}.{extension}"
        self.files[name] = data
        return name


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def _output_html(output: nbformat.NotebookNode, images: _Images, alt: str) -> str:
    """One committed output as HTML: text as ``<pre>``, figures as image files, HTML as the notebook holds it."""
    import base64

    kind = output.get("output_type")
    if kind == "stream":
        return f'<pre class="output stream-{output.get("name", "stdout")}">{html.escape(_text(output.text))}</pre>'
    if kind == "error":
        return f'<pre class="output error">{html.escape(_ANSI.sub("", chr(10).join(output.get("traceback", []))))}</pre>'
    data = output.get("data", {})
    if "text/html" in data:
        return f'<div class="output output-html">{_text(data["text/html"])}</div>'
    for mime, extension in (("image/svg+xml", "svg"), ("image/png", "png"), ("image/jpeg", "jpg")):
        if mime in data:
            content = _text(data[mime])
            raw = content.encode("utf-8") if extension == "svg" else base64.b64decode(content)
            return f'<div class="output output-image"><img src="{images.add(raw, extension)}" alt="{html.escape(alt)}"></div>'
    if "text/latex" in data:
        return f'<div class="output md">{html.escape(_text(data["text/latex"]))}</div>'
    if "text/plain" in data:
        return f'<pre class="output">{html.escape(_text(data["text/plain"]))}</pre>'
    return ""


def _outputs_html(cell: nbformat.NotebookNode, images: _Images, alt: str) -> str:
    return "".join(_output_html(output, images, alt) for output in cell.get("outputs", []))


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


def notebook_body(nb: nbformat.NotebookNode, name: str, images: _Images) -> str:
    """The cells of a committed notebook as HTML, outputs as they are (nothing is executed)."""
    exercises = find_exercises(nb, name)
    by_cell = {e.cell_index: e for e in exercises}
    checks = {e.check_index for e in exercises}
    alt = f"{name} 的图"
    parts = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            parts.append(f'<div class="md tex2jax_process">{_markdown(cell.source)}</div>')
        elif cell.cell_type != "code":
            continue
        elif index in by_cell:
            check = by_cell[index].check_index
            adjacent = check == index + 1
            parts.append(_exercise_html(nb, index, check if adjacent else None, images, alt, f"{name} cell {index}"))
        elif index in checks and index - 1 not in by_cell:
            parts.append(_check_alone_html(cell, images, alt))
        elif index not in checks:
            parts.append(f'<div class="cell">{_code_html(cell.source)}{_outputs_html(cell, images, alt)}</div>')
    return "\n".join(parts)


def _first_heading(text: str, where: str) -> str:
    match = re.search(r"(?m)^#\s+(.+?)\s*$", text)
    if not match:
        raise CourseInputError(f"{where} has no '# title' line")
    return match.group(1)


def lesson_box(nb: nbformat.NotebookNode, number: str, lesson_pages: dict[str, "Page"], commands: list[str]) -> str:
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
            f'<div class="run-yourself"><div><strong>自己运行</strong>：在仓库根目录（Python 3.10–3.12 的虚拟环境里）</div>'
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
        return cls(pattern, {e.term: f"{e.english}：{e.definition}" for e in entries})


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


def finish_page(page: Page, targets: dict[str, str], terms: _Terms) -> None:
    """Headings, links and glossary links of ``page.body``, in place."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.body, "html.parser")
    _fix_links(soup, page.source, targets)
    if page.name == "glossary":
        _glossary_ids(soup)
    else:
        _link_terms(soup, terms)
    page.toc = _headings(soup)
    page.sections = _sections(soup, page.title)
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
    entries, current = [], {"a": "", "h": title, "t": []}
    for container in soup.select("div.md"):
        for node in container.find_all(["h1", "h2", "h3", "h4", "p", "li", "td", "th", "pre"]):
            if node.name in ("h1", "h2", "h3", "h4"):
                entries.append(current)
                current = {"a": node.get("id", ""), "h": node.get_text(" ", strip=True), "t": []}
            elif node.name in ("td", "th") or not node.find_parent(["li", "td", "th"]):
                current["t"].append(node.get_text(" ", strip=True))
    entries.append(current)
    return [{"a": e["a"], "h": e["h"], "t": " ".join(e["t"])} for e in entries if e["t"] or e["a"]]


def search_index(pages: list[Page]) -> str:
    """The search index as a script (``window.COURSE_SEARCH``), so search works from ``file://`` too."""
    index = {"pages": [{"u": p.href, "t": p.title} for p in pages],
             "sections": [{"p": i, **s} for i, p in enumerate(pages) for s in p.sections]}
    return "window.COURSE_SEARCH = " + json.dumps(index, ensure_ascii=False, separators=(",", ":")) + ";\n"


def _markdown_page(source: str, name: str, nav_title: str, group: str) -> Page:
    text = _read_text(REPO_ROOT / source)
    return Page(name=name, title=_first_heading(text, source), nav_title=nav_title, group=group, source=source,
                body=f'<div class="md tex2jax_process">{_markdown(text)}</div>')


def collect_pages(notebooks_dir: Path = NOTEBOOKS_DIR) -> tuple[list[Page], dict[str, bytes]]:
    """Every page of the site in sidebar order, rendered and linked; and the figures they show."""
    readme = _read_text(REPO_ROOT / "README.md")
    commands = run_it_yourself_commands(readme)
    home = Page(name="index", title=_first_heading(readme, "README.md"), nav_title="首页", group="", source="README.md",
                body=f'<div class="md tex2jax_process">{_markdown(readme_overview(readme))}</div>')
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
        page.top = lesson_box(notebooks[number], number, lessons, commands)
        images.update(figures.files)
    cards = [_markdown_page(source, name, nav, "参考") for source, name, nav in CARDS]
    pages = [home, *lessons.values(), *cards]
    targets = {p.source: p.href for p in pages}
    terms = _Terms.from_glossary(_read_text(GLOSSARY_PATH))
    for page in pages:
        finish_page(page, targets, terms)
    return pages, images


def _environment():
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(loader=FileSystemLoader(ASSETS_DIR), autoescape=select_autoescape(["html"]),
                       keep_trailing_newline=True)


def render_pages(pages: list[Page]) -> dict[str, str]:
    """Each page, and the search page, as a whole HTML document (sidebar, table of contents, previous / next)."""
    template = _environment().get_template("page.html")
    nav = [{"href": p.href, "title": p.nav_title, "group": p.group} for p in pages]
    out = {}
    for i, page in enumerate(pages):
        out[page.href] = template.render(page=page, nav=nav, current=page.href, search=False,
                                         previous=pages[i - 1] if i > 0 else None,
                                         next=pages[i + 1] if i + 1 < len(pages) else None)
    search = Page(name="search", title="搜索", nav_title="搜索", group="", source="")
    out[search.href] = template.render(page=search, nav=nav, current=search.href, search=True, previous=None, next=None)
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

    files = {f"assets/{name}": (ASSETS_DIR / name).read_bytes() for name in ("site.css", "search.js")}
    files["assets/pygments.css"] = HtmlFormatter(cssclass="highlight").get_style_defs(".highlight").encode("utf-8")
    files.update(_mathjax_files())
    files[f"assets/{FONT_FILE}"] = font_subset(cjk_characters("".join(documents.values())), flavor="woff")
    return files


def build_site(out_dir: Path, notebooks_dir: Path = NOTEBOOKS_DIR) -> SiteReport:
    """Write the course's website into ``out_dir`` from the committed notebooks and cards.

    ``out_dir`` must be new, empty, or hold only files this course wrote there (an earlier
    site); every page is rendered before anything is written.

    Raises:
        CourseInputError: ``out_dir`` is inside the notebooks folder or holds files the course
            did not write; a notebook or card is unreadable; MathJax is not installed.
    """
    start = time.perf_counter()
    check_output_outside(out_dir, [notebooks_dir, DATA_DIR], flag="--out")
    _refuse_foreign(out_dir)  # before the work, and again under the folder's lock
    pages, images = collect_pages(notebooks_dir)
    documents = render_pages(pages)
    documents["assets/search-index.js"] = search_index(pages)
    files: dict[str, bytes] = {name: text.encode("utf-8") for name, text in documents.items()}
    files.update(images)
    files.update(_assets(documents))
    files[".nojekyll"] = b""  # GitHub Pages: serve the folder as it is
    written = _write_all(out_dir, files)
    return SiteReport(pages=[p.href for p in pages] + ["search.html"], files=written,
                      size_bytes=sum(len(data) for data in files.values()), seconds=time.perf_counter() - start)


def _write_all(out_dir: Path, files: dict[str, bytes]) -> list[Path]:
    with file_errors(out_dir, "create the folder"):
        out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):
        _refuse_foreign(out_dir)
        written = []
        for name, data in sorted(files.items()):
            target = out_dir / name
            with file_errors(target.parent, "create the folder"):
                target.parent.mkdir(parents=True, exist_ok=True)
            written.append(record_written(target, data))
    return written


def _refuse_foreign(out_dir: Path) -> None:
    foreign = foreign_entries(out_dir)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise CourseInputError(f"{out_dir} holds files the course did not write there, or that were edited "
                               f"since ({shown}): choose a new or empty folder (nothing was written)")
