"""The course's website (``lessons site``): built once into a temporary folder, read as files, then in Chromium.

The file tests run everywhere. The browser tests serve the folder on loopback and drive Debian's
Chromium through Playwright (no browser download), as ``tests/test_jupyterlab_browser.py`` does;
without Chromium or Playwright they skip, unless ``COURSE_BROWSER_TESTS=required`` (CI sets it).
They save screenshots and the list of requests that left the site under
``test-artifacts/site/`` (or ``$COURSE_TEST_ARTIFACTS/site/``).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from lessons_lib.course.assignments import BEGIN_SOLUTION as BEGIN
from lessons_lib.course.assignments import END_SOLUTION as END
from lessons_lib.course.assignments import find_exercises, solution_lines
from lessons_lib.course.fonts import cjk_characters
from lessons_lib.course.glossary import read_glossary, variant_spellings
from lessons_lib.course.notebooks import merged_streams
from lessons_lib.website.site import (CONTENT_SECURITY_POLICY, FONT_FILE, build_site, figure_alt,
                                    home_body, lesson_box, lesson_paths, lesson_summaries, package_repo_url,
                                    page_language, printed_text_html, pyproject_repo_url, readable_math,
                                    run_it_yourself_commands, sanitise_html, site_repo_url, tex_to_text)
from lessons_lib.errors import CourseInputError
from lessons_lib.exercises.course_map import PREREQUISITES
from lessons_lib.paths import NOTEBOOKS_DIR, REPO_ROOT

pytestmark = pytest.mark.slow

ARTIFACTS = Path(os.environ.get("COURSE_TEST_ARTIFACTS", REPO_ROOT / "test-artifacts")) / "site"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")  # Debian's package
# As the JupyterLab browser test: no background connections, no first-run work.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
LESSONS = [path.stem for path in lesson_paths()]
PHONE = {"width": 390, "height": 844}
HEADER_MAX_PX = 64
CODE_COLUMNS = 120  # the course's line length: a code line this wide fits at 1280 px without scrolling
BUILD_SECONDS = 120  # the build on CI's 2 cores, with room to spare


def _require(condition: bool, why: str) -> None:
    if not condition:
        if os.environ.get("COURSE_BROWSER_TESTS") == "required":
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    report = build_site(out)
    print(f"site built in {report.seconds:.1f} s: {len(report.files)} files, {report.size_bytes / 1e6:.1f} MB")
    assert report.seconds < BUILD_SECONDS
    return out


@functools.lru_cache(maxsize=None)
def _soup(path: Path):
    """The parsed page (cached: the tests only read it)."""
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _lesson(site: Path, number: str) -> Path:
    return site / f"{next(stem for stem in LESSONS if stem.startswith(number))}.html"


def _notebook(number: str) -> nbformat.NotebookNode:
    return nbformat.read(next(NOTEBOOKS_DIR.glob(f"{number}_*.ipynb")), as_version=4)


# --- the files ------------------------------------------------------------------------------------


def test_the_lessons_come_in_course_order_with_previous_and_next(site):
    order = ["index", *LESSONS, "glossary", "data", "parser", "treebank", "readme"]
    sidebar = [a["href"] for a in _soup(site / "index.html").select("nav.sidebar a")]
    assert sidebar == [f"{name}.html" for name in order] + ["search.html"]
    for before, page, after in zip([None, *order[:-1]], order, [*order[1:], None]):
        soup = _soup(site / f"{page}.html")
        prev_link, next_link = soup.select_one("a[rel=prev]"), soup.select_one("a[rel=next]")
        assert (prev_link["href"] if prev_link else None) == (f"{before}.html" if before else None), page
        assert (next_link["href"] if next_link else None) == (f"{after}.html" if after else None), page
        assert soup.select_one("nav.sidebar a.current")["href"] == f"{page}.html"


def _local_targets(soup) -> list[str]:
    refs = [a["href"] for a in soup.find_all("a", href=True)]
    refs += [tag["src"] for tag in soup.find_all(["img", "script", "iframe", "source", "video", "audio"], src=True)]
    refs += [tag["href"] for tag in soup.find_all("link", href=True)]
    return refs


def test_no_internal_link_is_broken_and_nothing_comes_from_another_host(site):
    pages = sorted(site.glob("*.html"))
    ids = {page.name: {tag["id"] for tag in _soup(page).find_all(id=True)} for page in pages}
    broken, external_loads = [], []
    for page in pages:
        soup = _soup(page)
        loads = [t.get("src") or t.get("href") for t in soup.find_all(["img", "script", "link", "iframe", "source"])]
        external_loads += [(page.name, ref) for ref in loads if ref and re.match(r"^(https?:)?//", ref)]
        for ref in _local_targets(soup):
            parts = urlsplit(ref)
            if parts.scheme in ("http", "https", "mailto") or parts.scheme == "data":
                continue
            target = page.name if not parts.path else unquote(parts.path)
            if not (site / target).is_file():
                broken.append((page.name, ref))
            elif parts.fragment and target.endswith(".html") and unquote(parts.fragment) not in ids[target]:
                broken.append((page.name, ref))
    for css in site.rglob("*.css"):
        external_loads += [(css.name, u) for u in re.findall(r"url\(\s*['\"]?((?:https?:)?//[^'\")]+)", css.read_text())]
    assert not broken, broken[:20]
    assert not external_loads, external_loads


def test_every_committed_output_is_shown_and_figures_are_files(site):
    for stem in LESSONS:
        nb = nbformat.read(NOTEBOOKS_DIR / f"{stem}.ipynb", as_version=4)
        soup = _soup(site / f"{stem}.html")
        pictures = sum(1 for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
        figures = soup.select('div.output-image img[src^="images/"]')
        assert len(figures) == pictures, stem
        trees = sum(''.join(o["data"]["text/html"]).count('<img src="data:image/svg+xml')
                    for c in nb.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {}))
        assert len(soup.select('div.output-html img[src^="data:image/svg+xml"]')) == trees, stem
        shown = "\n".join(pre.get_text() for pre in soup.select("pre.output"))
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream":
                    assert output.text in shown, (stem, output.text[:80])
    assert len(_soup(_lesson(site, "07")).select('div.output-html img[src^="data:image/svg+xml"]')) >= 3  # displaCy


def _split_boxes(soup) -> int:
    """Stream boxes that follow a box of the same stream (stdout after stdout) in one cell."""
    count = 0
    for pre in soup.select("pre.output"):
        stream = [c for c in pre.get("class", []) if c.startswith("stream-")]
        before = pre.find_previous_sibling()
        count += bool(stream and before is not None and before.name == "pre" and stream[0] in before.get("class", []))
    return count


def test_a_cells_consecutive_prints_are_one_box_as_in_jupyterlab(site):
    stored_apart = 0
    for stem in LESSONS:
        nb = nbformat.read(NOTEBOOKS_DIR / f"{stem}.ipynb", as_version=4)
        for cell in nb.cells:
            outputs = cell.get("outputs", [])
            stored_apart += sum(a.get("output_type") == b.get("output_type") == "stream" and a.get("name") == b.get("name")
                                for a, b in zip(outputs, outputs[1:]))
        assert _split_boxes(_soup(site / f"{stem}.html")) == 0, stem
    print(f"stream outputs stored apart from the one before: {stored_apart}; split boxes on the site: 0")
    assert stored_apart > 0  # the committed notebooks hold such outputs: the merge is exercised
    merged = merged_streams([nbformat.v4.new_output("stream", name="stdout", text="a\n"),
                             nbformat.v4.new_output("stream", name="stdout", text="b\n"),
                             nbformat.v4.new_output("stream", name="stderr", text="c\n"),
                             nbformat.v4.new_output("stream", name="stdout", text="d\n")])
    assert [(o.name, o.text) for o in merged] == [("stdout", "a\nb\n"), ("stderr", "c\n"), ("stdout", "d\n")]


def test_a_table_printed_in_two_stream_outputs_is_one_box_holding_one_table():
    from bs4 import BeautifulSoup

    from lessons_lib.website.site import _Images, _outputs_html

    cell = nbformat.v4.new_code_cell("print(table)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="results:\nrule     accuracy\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="none     0.71\nhard     0.72\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="a warning\n")]
    boxes = BeautifulSoup(_outputs_html(cell, _Images("p"), "alt"), "html.parser").select("pre.output")
    assert [box["class"] for box in boxes] == [["output", "stream-stdout"], ["output", "stream-stderr"]]
    tables = boxes[0].select(".output-table")
    assert [t.get_text() for t in tables] == ["rule     accuracy\nnone     0.71\nhard     0.72\n"], tables
    assert boxes[0].get_text().startswith("results:\n")  # the line before the table wraps with the prose
    assert "output-table" not in printed_text_html("one line with    a wide gap\n")  # one row is not a table


def test_a_pages_language_is_read_from_its_prose_not_its_code():
    from bs4 import BeautifulSoup

    english = ('<div class="md"><p>The parser card describes the model (模型) and its data.</p>'
               '<pre>这里是很长很长很长的中文代码注释，不算在正文里</pre></div>')
    chinese = '<div class="md"><p>这一课测量 attention 的 softmax 权重。</p><pre>print("the English code")</pre></div>'
    assert page_language(BeautifulSoup(english, "html.parser")) == "en"
    assert page_language(BeautifulSoup(chinese, "html.parser")) == "zh-CN"


def _squeezed(text: str) -> str:
    """Text without spaces, written line breaks or formula markup, for finding one text inside another."""
    return re.sub(r"\s|\\n", "", readable_math(text))


def test_each_figures_alt_text_is_found_in_its_own_cell_or_section(site):
    """Every piece of an alt text is written in the figure's cell (its code) or is its section's heading."""
    checked = 0
    for stem in LESSONS:
        for image in _soup(site / f"{stem}.html").select(".output-image img"):
            block = image.find_parent("div", class_=["cell", "exercise"])
            heading = image.find_previous(["h2", "h3", "h4"])
            source = _squeezed(block.get_text() + (heading.get_text() if heading else ""))
            alt = re.sub(r"（第 \d+ 张）$", "", image["alt"])  # a cell's second figure is numbered
            pieces = [p for p in re.split(r"^图：|「|」一节的图：?|；|…| / ", alt) if len(p.strip()) >= 2]
            assert pieces and all(_squeezed(p) in source for p in pieces), (stem, alt, pieces)
            checked += 1
    assert checked == sum(1 for stem in LESSONS for c in _notebook(stem[:2]).cells for o in c.get("outputs", [])
                          if "image/png" in o.get("data", {}))


def test_each_figure_has_its_own_alt_text_from_what_it_shows(site):
    alts = [img["alt"] for stem in LESSONS for img in _soup(site / f"{stem}.html").select(".output-image img")]
    print(f"{len(alts)} figures, {len(set(alts))} alt texts")
    assert len(alts) >= 31 and len(set(alts)) == len(alts), [a for a in alts if alts.count(a) > 1]
    assert not [a for a in alts if ".ipynb" in a or len(a) < 6], alts
    first = _soup(_lesson(site, "00")).select_one(".output-image img")["alt"]
    assert first == "图：中文刻度标签：什么花一年四季都开", first  # the figure's own title


def test_a_figures_alt_text_is_its_title_else_its_labels_else_the_cells_comment():
    drawn = 'fig.suptitle("全图");\nax.set_title(f"{n} 个块");\nax.set_title(f"{a}→{b}")'
    assert figure_alt(drawn, "第 1 节") == "图：全图；… 个块"
    assert figure_alt('heatmap(w, title="填充列\\n的权重")', "节") == "图：填充列 的权重"
    assert figure_alt('ax.set_xlabel("d_k"); ax.set_ylabel("测试准确率")', "3. 缩放") == "「3. 缩放」一节的图：测试准确率"
    assert figure_alt("# Loss curves of both runs\nplot(x)", "3. 缩放") == "Loss curves of both runs"
    assert figure_alt("draw_diagram(flow)", "1. 从相似度到权重") == "「1. 从相似度到权重」一节的图"
    assert figure_alt("%matplotlib inline\nplot()", "节") == "「节」一节的图"


def test_exercises_are_shown_as_the_learner_gets_them_with_the_answer_folded(site):
    for stem in LESSONS:
        nb = nbformat.read(NOTEBOOKS_DIR / f"{stem}.ipynb", as_version=4)
        soup = _soup(site / f"{stem}.html")
        answers = soup.select("div.exercise > details.answer")
        assert len(answers) == len(find_exercises(nb)), stem
        assert all(not d.has_attr("open") and d.summary.get_text(strip=True) == "显示答案" for d in answers)
        assert all("NotImplementedError" in d.find_parent("div").get_text() for d in answers)
        for exercise, shown in zip(find_exercises(nb), answers):
            block = shown.find_parent("div", class_="exercise")
            visible = "".join(t for t in block.find_all(string=True) if not t.find_parent("details"))
            region = nb.cells[exercise.cell_index].source.split(BEGIN)[1].split(END)[0]
            leaked = [line.strip() for line in region.splitlines() if len(line.strip()) > 12 and line.strip() in visible]
            assert not leaked, (stem, leaked)
        inside = " ".join(d.get_text() for d in answers)
        assert all(line.strip() in inside for line in solution_lines(nb)), stem


def test_each_lesson_says_its_prerequisites_wall_time_and_how_to_run_it(site):
    commands = run_it_yourself_commands((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    assert commands[0] == "python -m pip install -e . && lessons workspace"
    for stem in LESSONS:
        soup = _soup(site / f"{stem}.html")
        meta = soup.select_one("div.lesson-meta")
        linked = [a.get_text() for a in meta.find_all("a")]
        assert linked == [f"第 {n} 课" for n in PREREQUISITES[stem[:2]]], stem
        assert "运行时间" in meta.get_text()
        shown = [pre.get_text() for pre in soup.select("div.run-yourself pre")]
        assert shown == commands, stem


def test_the_wall_time_shown_is_the_one_lessons_execute_recorded():
    nb = _notebook("01")
    pages = {n: type("P", (), {"href": f"{n}.html", "source": f"notebooks/{n}.ipynb"})() for n in PREREQUISITES}
    nb.metadata["lessons"] = {"source_sha256": "x", "wall_seconds": 93, "cpus": 2}
    assert "在 2 核 CPU 上执行用时 93 秒" in lesson_box(nb, "01", pages, ["a", "b"])
    nb.metadata["lessons"] = {"source_sha256": "x"}
    assert "尚未记录" in lesson_box(nb, "01", pages, ["a", "b"])


def test_glossary_terms_link_to_their_entry_once_per_page(site):
    soup = _soup(_lesson(site, "01"))
    terms = [a.get_text() for a in soup.select("a.term")]
    assert {"注意力", "查询", "点积", "遮蔽"} <= set(terms) and len(terms) == len(set(terms))
    assert all(a["href"].startswith("glossary.html#g-") for a in soup.select("a.term"))
    assert not soup.select("pre a.term, code a.term, h1 a.term, h2 a.term")


def test_the_font_holds_every_chinese_character_of_the_site(site):
    from fontTools.ttLib import TTFont

    font = TTFont(site / "assets" / FONT_FILE)
    cmap = font.getBestCmap()
    text = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    text += (site / "assets" / "search-index.js").read_text(encoding="utf-8")
    missing = [c for c in cjk_characters(text) if ord(c) not in cmap]
    # Noto Sans CJK has every Chinese character the course writes; what it lacks (emoji) falls back.
    assert not [c for c in missing if 0x4E00 <= ord(c) <= 0x9FFF], missing[:20]
    assert font.flavor == "woff"


def test_an_output_folder_with_someone_elses_files_is_refused_in_one_line(tmp_path, capsys):
    from lessons_lib.cli import main

    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["site", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "notes.txt" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert main(["site", "--out", str(NOTEBOOKS_DIR / "web")]) == 2
    assert capsys.readouterr().err.startswith("error: --out") and not (NOTEBOOKS_DIR / "web").exists()


def test_each_page_has_its_own_table_of_contents(site):
    for stem in LESSONS:
        soup = _soup(site / f"{stem}.html")
        headings = [(h.name, h["id"]) for h in soup.select("article h2, article h3")]
        toc = [a["href"] for a in soup.select("aside.toc a")]
        assert toc == [f"#{anchor}" for _, anchor in headings] and len(toc) >= 5, stem


def test_what_the_site_reads_from_readme_and_the_notebooks_folder_is_checked(tmp_path):
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    with pytest.raises(CourseInputError, match="<!-- learner -->"):
        run_it_yourself_commands(readme.replace("<!-- learner -->", ""))
    with pytest.raises(CourseInputError, match="no lesson notebooks"):
        lesson_paths(tmp_path)


def test_formulas_become_readable_text():
    assert tex_to_text(r"\sqrt{d_k}") == "√d_k"
    assert tex_to_text(r"\frac{a}{b}") == "a/b"
    assert tex_to_text(r"\mathrm{x}") == "x"
    assert tex_to_text(r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V") == "softmax(QKᵀ/√d_k) V"
    assert tex_to_text(r"\mathrm{score}_{h}(i, j) = \frac{q_i\cdot k_j}{\sqrt{d_k}} + b_{h}") == "score_h(i, j) = (q_i·k_j)/√d_k + b_h"
    assert tex_to_text(r"10^{-6}") == "10⁻⁶" and tex_to_text(r"d_{enc}\ne d_{dec}") == "d_enc≠d_dec"
    assert tex_to_text(r"J = |A \cap B| / |A \cup B|") == "J = |A ∩ B| / |A ∪ B|"
    assert readable_math(r"除以 $\sqrt{d_k}$，$$\mathrm{score}$$ 与 5 元") == "除以 √d_k，score 与 5 元"


def test_search_index_and_tooltips_show_math_as_text(site):
    index = json.loads((site / "assets" / "search-index.js").read_text(encoding="utf-8")
                       .removeprefix("window.COURSE_SEARCH = ").rstrip().rstrip(";"))
    texts = [s["h"] + " " + s["t"] for s in index["sections"]]
    code = {c.get_text(" ", strip=True) for page in site.glob("*.html") for c in _soup(page).select(".md code")
            if re.search(r"[$\\]", c.get_text())}
    prose = [functools.reduce(lambda text, c: text.replace(c, ""), code, t) for t in texts if "$" in t or "\\" in t]
    raw = [t[:80] for t in prose if re.search(r"\$|\\(sqrt|frac|mathrm)", t)]  # code (`$LCQMC_DIR`) stays as written
    assert not raw, raw[:5]
    assert sum("√d_k" in t for t in texts) >= 10  # 2 before formulas were converted
    titles = [a["title"] for stem in LESSONS for a in _soup(site / f"{stem}.html").select("a.term")]
    assert titles and not [t for t in titles if re.search(r"\$|\\[a-zA-Z]", t)]


def test_mathjax_loads_only_on_pages_with_formulas(site):
    for page in sorted(site.glob("*.html")):
        soup = _soup(page)
        prose = " ".join(node for div in soup.select(".md") for node in div.find_all(string=True)
                         if not node.find_parent(["code", "pre"]))
        has_math = bool(re.search(r"\$[^$\n]+\$", prose))
        loads = soup.select_one("script#MathJax-script") is not None
        assert loads == has_math, page.name
    assert _soup(site / "index.html").select_one("script#MathJax-script") is None
    assert _soup(_lesson(site, "01")).select_one("script#MathJax-script") is not None


def test_every_page_has_a_policy_a_favicon_and_no_inline_script(site):
    for page in sorted(site.glob("*.html")):
        soup = _soup(page)
        assert soup.select_one('meta[http-equiv="Content-Security-Policy"]')["content"] == CONTENT_SECURITY_POLICY
        assert soup.select_one('link[rel="icon"]')["href"] == "assets/favicon.svg"
        assert all(script.has_attr("src") for script in soup.find_all("script")), page.name
    assert (site / "assets" / "favicon.svg").read_text(encoding="utf-8").startswith("<svg")


def test_the_home_page_is_chinese_and_lists_every_lesson(site):
    soup = _soup(site / "index.html")
    text = soup.select_one("article").get_text()
    assert sum("\u4e00" <= c <= "\u9fff" for c in text) > 0.5 * len(re.sub(r"\s", "", text))
    rows = soup.select("table.lesson-list tbody tr")
    assert [row.a["href"] for row in rows] == [f"{stem}.html" for stem in LESSONS]
    assert all(row.find_all("td")[2].get_text(strip=True) for row in rows)
    # By default the address comes from pyproject.toml's [project.urls], through the package's metadata.
    listed = re.search(r'(?ms)^\[project\.urls\].*?^Repository = "([^"]+)"', (REPO_ROOT / "pyproject.toml").read_text())
    if listed:
        assert soup.select_one(f'.run-yourself a[href="{listed.group(1)}"]'), listed
        assert f"git clone {listed.group(1)}" in soup.select_one(".run-yourself").get_text()
    else:  # an address is never made up
        assert "没有给出仓库地址" in soup.select_one(".run-yourself").get_text()
        assert not soup.select_one(".run-yourself a[href^='http']")
    assert soup.select_one('article a[href="readme.html"]') and soup.select_one('article a[href="glossary.html"]')
    assert f"由 {len(LESSONS)} 个" in text
    assert variant_spellings(text, read_glossary()) == []


def test_each_page_names_its_language(site):
    langs = {page.stem: _soup(page).html["lang"] for page in site.glob("*.html")}
    english = {"readme", "data", "parser", "treebank"}
    assert {name for name, lang in langs.items() if lang == "en"} == english, langs
    assert {lang for name, lang in langs.items() if name not in english} == {"zh-CN"}, langs
    readme = _soup(site / "readme.html")  # an English page: its Chinese menu and footer say so
    assert readme.select_one("nav.sidebar")["lang"] == readme.select_one("footer")["lang"] == "zh-CN"


def test_the_home_pages_lesson_lines_are_lesson_00s_course_map(site):
    lesson_00 = _notebook("00")
    summaries = lesson_summaries(lesson_00, "00")
    assert sorted(summaries) == [stem[:2] for stem in LESSONS]  # a new lesson needs its row in 00's course map
    rows = _soup(site / "index.html").select("table.lesson-list tbody tr")
    shown = {row.td.get_text(strip=True): " ".join(row.find_all("td")[2].get_text().split()) for row in rows}
    assert shown == summaries
    assert "√d_k" not in summaries["01"] and "d_k 增长" in summaries["01"] and "〔" not in "".join(summaries.values())
    last = max(summaries)  # the map's last lesson, whichever it is
    course_map = next(i for i, c in enumerate(lesson_00.cells) if "课程地图" in c.source and f"| {last} |" in c.source)
    lesson_00.cells[course_map].source = re.sub(rf"(?m)^\| {last} \|([^|]*)\|.*$", rf"| {last} |\1| 新的一行 |",
                                                lesson_00.cells[course_map].source)
    assert lesson_summaries(lesson_00, "00")[last] == "新的一行。"  # edited there, shown here
    lesson_00.cells[course_map].source = "## 3. 课程\n\n没有表。"
    with pytest.raises(CourseInputError, match="no course map"):
        lesson_summaries(lesson_00, "00")


def test_the_repository_address_is_shown_where_given(tmp_path, capsys):
    from lessons_lib.cli import main

    nb = _notebook("01")
    pages = {n: type("P", (), {"href": f"{n}.html", "source": f"notebooks/{n}.ipynb", "title": f"第 {n} 课：x"})()
             for n in PREREQUISITES}
    url = "https://example.org/owner/course"
    assert f'<a href="{url}">' in lesson_box(nb, "01", pages, ["a", "b"], url)
    assert "没有给出仓库地址" in lesson_box(nb, "01", pages, ["a", "b"])
    home = home_body(pages, ["a", "b"], url)
    assert f"git clone {url}" in home and "没有给出仓库地址" not in home
    assert site_repo_url(url) == url  # --repo-url overrides the package's address
    assert site_repo_url(None) == pyproject_repo_url()  # by default the repository's own pyproject.toml
    assert site_repo_url(None, tmp_path / "no-pyproject.toml") == package_repo_url()  # else the package's metadata
    assert main(["site", "--out", str(tmp_path / "s"), "--repo-url", "not a url"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --repo-url") and err.count("\n") == 1 and not (tmp_path / "s").exists()


def test_readme_sections_cited_in_a_lesson_link_to_them(site):
    links = {a["href"] for stem in LESSONS for a in _soup(site / f"{stem}.html").select("a.readme-link")}
    assert {"readme.html#presets", "readme.html#training-on-lcqmc-from-the-command-line"} <= links, links


PAYLOADS = [
    '<script>window.__pwned = "script"; fetch("http://evil.example/script")</script>',
    '<img src="missing.png" onerror="window.__pwned = \'onerror\'">',
    '<iframe src="http://evil.example/frame"></iframe>',
    '<img src="http://evil.example/pixel.png">',
    '<a href="javascript:void(window.__pwned=\'link\')" id="js-link">a link</a>',
    '<svg onload="window.__pwned = \'svg\'"><circle r="1"/></svg>',
    '<div style="background: url(http://evil.example/bg.png)">styled</div>',
    '<style>@import url("http://evil.example/style.css");</style>',
    '<object data="http://evil.example/object"></object>',
]


def test_sanitising_removes_what_runs_or_loads():
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(sanitise_html("".join(PAYLOADS)), "html.parser")
    assert not soup.find_all(["script", "iframe", "svg", "style", "object"])
    assert not [attr for tag in soup.find_all(True) for attr in tag.attrs if attr.startswith("on") or attr == "style"]
    assert [img.get("src") for img in soup.find_all("img")] == ["missing.png", None]
    assert not soup.find("a").has_attr("href")
    kept = sanitise_html('<img src="data:image/svg+xml;charset=utf-8,%3Csvg%3E" alt="t"><td style="text-align: left">x</td>')
    assert "data:image/svg+xml" in kept and 'style="text-align: left"' in kept


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    """The course's site built with every payload planted in lesson 00's markdown and in a text/html output."""
    notebooks = tmp_path_factory.mktemp("notebooks")
    for path in lesson_paths():
        shutil.copy(path, notebooks / path.name)
    target = next(notebooks.glob("00_*.ipynb"))
    nb = nbformat.read(target, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("# 第 00 课：payload\n\n" + "\n\n".join(PAYLOADS)))
    cell = nbformat.v4.new_code_cell("show()")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": "".join(PAYLOADS), "text/plain": "x"})]
    nb.cells.insert(2, cell)
    nbformat.write(nb, target)
    out = tmp_path_factory.mktemp("hostile") / "site"
    build_site(out, notebooks)
    return out, target.stem


# --- in Chromium ----------------------------------------------------------------------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def served(site):
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser():
    _require(CHROMIUM is not None, "no chromium on PATH (Debian package chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require(False, "playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class _Watched:
    """A page that records console errors, failed or refused requests and every request that leaves the site."""

    def __init__(self, browser, base: str, viewport: dict | None = None):
        self.base, self.errors, self.external, self.failed = base, [], [], []
        self.page = browser.new_page(viewport=viewport or {"width": 1400, "height": 1000})
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", self._failed)
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.status} {r.url}"))
        self.page.route("**/*", self._route)

    def _failed(self, request) -> None:
        # Chromium fetches the icon after the page has loaded; the next navigation cancels that fetch.
        if not (request.url.endswith("/assets/favicon.svg") and request.failure == "net::ERR_ABORTED"):
            self.failed.append(request.url)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.base + "/") or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def open(self, name: str) -> None:
        self.page.goto(f"{self.base}/{name}", wait_until="load", timeout=120_000)
        self.page.evaluate("() => document.fonts.ready.then(() => true)")
        self.page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise "
                           "? MathJax.startup.promise.then(() => true) : true")


def _screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_every_page_loads_cleanly_with_its_images_and_nothing_from_another_host(site, served, browser):
    watched = _Watched(browser, served)
    images = {}
    for path in sorted(site.glob("*.html")):
        watched.open(path.name)
        state = watched.page.evaluate("() => [...document.images].map(i => [i.complete && i.naturalWidth > 0, "
                                      "i.getAttribute('src').slice(0, 60)])")
        images[path.name] = len(state)
        assert all(ok for ok, _ in state), (path.name, [src for ok, src in state if not ok])
    watched.page.close()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "external_requests.json").write_text(json.dumps(watched.external, indent=1) + "\n", encoding="utf-8")
    assert watched.external == []
    assert watched.errors == [] and watched.failed == [], (watched.errors[:5], watched.failed[:5])
    assert images[f"{LESSONS[7]}.html"] >= 3 and images[f"{LESSONS[1]}.html"] >= 1


@pytest.mark.parametrize("query, expected", [("句法偏置", "08"), ("注意力", "01"), ("遮蔽", "01")])
def test_search_finds_chinese_words(served, browser, query, expected):
    watched = _Watched(browser, served)
    watched.open(f"search.html?q={query}")
    hrefs = watched.page.eval_on_selector_all("#search-results a", "links => links.map(a => a.getAttribute('href'))")
    pages = [h.split("#")[0] for h in hrefs]
    assert any(p.startswith(expected + "_") for p in pages), (query, pages[:10])
    if query == "句法偏置":
        # Lessons 08 and 11 both carry the term in their title; the lesson that teaches it is among the first two.
        first_lessons = [p for p in pages if re.match(r"\d\d_", p)]
        assert any(p.startswith("08_") for p in first_lessons[:2]), first_lessons[:5]
    assert watched.errors == [] and watched.external == []
    watched.page.close()


def test_math_is_typeset(served, browser):
    watched = _Watched(browser, served)
    watched.open(f"{LESSONS[1]}.html")
    typeset = watched.page.evaluate("() => document.querySelectorAll('mjx-container').length")
    errors = watched.page.evaluate("() => document.querySelectorAll('mjx-merror, [data-mjx-error]').length")
    raw = watched.page.evaluate("() => [...document.querySelectorAll('.md p, .md li, .md td')]"
                                ".filter(e => /\\$[^$\\s][^$]*\\$/.test(e.textContent)).length")
    assert typeset > 20 and errors == 0 and raw == 0, (typeset, errors, raw)
    _screenshot(watched.page, "lesson-01")
    watched.page.close()


def test_the_answer_toggle_starts_closed_and_opens(served, browser):
    from playwright.sync_api import expect  # importable: the browser fixture has checked playwright
    watched = _Watched(browser, served)
    watched.open("index.html")
    cjk = watched.page.evaluate("() => [...document.fonts].some(f => f.family.includes('Course CJK') "
                                "&& f.status === 'loaded')")
    assert cjk, "the site's Chinese font was not loaded on the home page"
    _screenshot(watched.page, "home")
    watched.open(f"{LESSONS[8]}.html")
    answers = watched.page.locator("details.answer")
    assert answers.count() >= 2
    assert watched.page.evaluate("() => [...document.querySelectorAll('details.answer')].every(d => !d.open)")
    solution = answers.first.locator(".answer-body")
    assert not solution.is_visible()
    summary = answers.first.locator("summary")
    summary.click()
    assert solution.is_visible() and "BEGIN SOLUTION" in solution.inner_text()
    # The label follows the state on the "toggle" event, which the browser queues after the click returns:
    # expect() waits for it (up to its timeout) where reading inner_text() at once races.
    expect(summary).to_have_text("隐藏答案")
    answers.first.scroll_into_view_if_needed()
    watched.page.evaluate("() => window.scrollBy(0, -80)")
    time.sleep(0.3)
    _screenshot(watched.page, "lesson-08-answer-open")
    summary.click()
    assert not solution.is_visible()
    expect(summary).to_have_text("显示答案")
    assert watched.errors == [] and watched.external == []
    watched.page.close()


# What the layout tests measure, as JavaScript run in the page (every answer opened first, so that
# the outputs folded behind "显示答案" are measured too).
OPEN_ANSWERS = "() => document.querySelectorAll('details').forEach(d => { d.open = true; })"
# Printed tables whose rows were broken onto more lines than they have.
WRAPPED_TABLES = """() => [...document.querySelectorAll('pre.output .output-table')].filter(t => t.offsetParent).filter(t => {
  const style = getComputedStyle(t);
  const lines = t.textContent.replace(/\\n$/, '').split('\\n').length;
  return Math.round(t.clientHeight / parseFloat(style.lineHeight)) > lines;
}).map(t => t.textContent.split('\\n')[0].slice(0, 60))"""
# Outputs that need sideways scrolling (a printed table inside one scrolls on its own and is not counted).
SCROLLING_OUTPUTS = """() => [...document.querySelectorAll('article .output')].filter(o => o.offsetParent)
  .filter(o => o.scrollWidth > o.clientWidth + 1).map(o => o.textContent.slice(0, 60))"""
# A code block whose widest line fits the course's line length (a Chinese character counts two columns)
# must not scroll sideways.
SCROLLING_CODE = """(columns) => [...document.querySelectorAll('.code pre')].filter(p => p.offsetParent).filter(p => {
  const widest = Math.max(...p.textContent.split('\\n').map(l => [...l].reduce((n, c) => n + (c.codePointAt(0) >= 0x2e80 ? 2 : 1), 0)));
  return widest <= columns && p.scrollWidth > p.clientWidth;
}).map(p => p.textContent.slice(0, 60))"""
OVERFLOWING = """() => [...document.querySelectorAll('mjx-container[display="true"], article table, pre, .output-html')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).map(e => e.tagName)"""


def test_outputs_wrap_tables_keep_their_rows_and_code_fits_at_1280_px(site, served, browser):
    watched = _Watched(browser, served, {"width": 1280, "height": 800})
    scrolling, wrapped_tables, scrolling_code, tables = {}, {}, {}, 0
    for stem in LESSONS:
        watched.open(f"{stem}.html")
        watched.page.evaluate(OPEN_ANSWERS)
        scrolling[stem] = watched.page.evaluate(SCROLLING_OUTPUTS)
        wrapped_tables[stem] = watched.page.evaluate(WRAPPED_TABLES)
        scrolling_code[stem] = watched.page.evaluate(SCROLLING_CODE, CODE_COLUMNS)
        tables += watched.page.locator("pre.output .output-table").count()
    watched.open(f"{LESSONS[6]}.html")
    watched.page.locator("pre.output", has_text="LCQMC (measured by the maintainers)").first.scroll_into_view_if_needed()
    _screenshot(watched.page, "lesson-06-section-2-table-1280")
    # 06-4's checker explains itself in one line of 285 characters: JupyterLab wraps it, so does the site.
    watched.page.evaluate(OPEN_ANSWERS)
    explanation = watched.page.locator("pre.output", has_text="练习 06-4").first
    lines = explanation.evaluate("p => Math.round(p.clientHeight / parseFloat(getComputedStyle(p).lineHeight))")
    watched.page.close()
    print(f"at 1280 px: {sum(map(len, scrolling.values()))} outputs scroll sideways; {tables} printed tables")
    assert not {k: v for k, v in scrolling.items() if v}, scrolling
    assert not {k: v for k, v in wrapped_tables.items() if v}, wrapped_tables
    assert not {k: v for k, v in scrolling_code.items() if v}, scrolling_code
    assert tables >= 40 and lines >= 4, (tables, lines)


def test_every_page_fits_a_phone(site, served, browser):
    watched = _Watched(browser, served, PHONE)
    for page in sorted(site.glob("*.html")):
        watched.open(page.name)
        width = watched.page.evaluate("() => document.scrollingElement.scrollWidth")
        header = watched.page.evaluate("() => document.querySelector('header.topbar').getBoundingClientRect().height")
        overflowing = watched.page.evaluate(OVERFLOWING)
        assert width <= PHONE["width"] and header <= HEADER_MAX_PX and not overflowing, (page.name, width, header,
                                                                                          overflowing)
    assert watched.errors == [] and watched.external == []
    watched.page.close()


# Each figure: its link's target, its own source, its width drawn and natural, whether it says a tap opens it.
FIGURES = """() => [...document.querySelectorAll('.output-image img')].map(i => [
  i.closest('a.figure-link') && i.closest('a.figure-link').getAttribute('href'), i.getAttribute('src'),
  i.clientWidth, i.naturalWidth, !!i.closest('a.figure-link.shrunk')])"""
# Each printed table: wider than its block, and whether a note above it says to slide it.
TABLES = """() => [...document.querySelectorAll('pre.output .output-table')].filter(t => t.offsetParent).map(t => [
  t.scrollWidth > t.clientWidth + 1, !!(t.previousElementSibling && t.previousElementSibling.classList.contains('table-note'))])"""
# Each HTML table wider than the screen: it scrolls inside its own box, and its first column stays put.
HTML_TABLES = """() => [...document.querySelectorAll('article table')].filter(t => t.offsetParent && t.scrollWidth > t.clientWidth + 1)
  .map(t => { const first = t.querySelector('td, th'); const before = first.getBoundingClientRect().left;
              t.scrollLeft = 80; const after = first.getBoundingClientRect().left; t.scrollLeft = 0;
              return [t.getBoundingClientRect().right <= document.documentElement.clientWidth + 0.5, Math.abs(after - before) < 1]; })"""


def test_on_a_phone_figures_open_full_size_and_wide_tables_scroll_as_one_block(site, served, browser):
    watched = _Watched(browser, served, PHONE)
    figures, tables, html_tables, scrolling = {}, {}, {}, {}
    for stem in sorted(page.stem for page in site.glob("*.html")):  # the lessons, the home page and the cards
        watched.open(f"{stem}.html")
        watched.page.evaluate(OPEN_ANSWERS)
        watched.page.wait_for_timeout(200)  # the notes follow the answers' toggle events
        figures[stem] = watched.page.evaluate(FIGURES)
        tables[stem] = watched.page.evaluate(TABLES)
        html_tables[stem] = watched.page.evaluate(HTML_TABLES)
        scrolling[stem] = watched.page.evaluate(SCROLLING_OUTPUTS)
    every = lambda found: [(stem, item) for stem, items in found.items() for item in items]  # noqa: E731
    wide = [(stem, noted) for stem, (is_wide, noted) in every(tables) if is_wide]
    print(f"at 390 px: {len(every(figures))} figures ({sum(f[4] for _, f in every(figures))} drawn smaller, a tap "
          f"opens them); {len(wide)} of {len(every(tables))} printed tables wider than the screen, all noted: "
          f"{all(noted for _, noted in wide)}; {len(every(html_tables))} wide HTML tables; "
          f"{len(every(scrolling))} other outputs scroll sideways")
    for stem, (href, src, shown, natural, shrunk) in every(figures):
        assert href == src and src.startswith("images/"), (stem, href, src)  # a tap opens the image file itself
        assert shrunk == (shown < 0.9 * natural), (stem, src, shown, natural, shrunk)  # a shrunk figure says so
    assert all(is_wide == noted for _, (is_wide, noted) in every(tables)), tables
    assert wide and all(noted for _, noted in wide)
    assert every(html_tables) and all(inside and fixed for _, (inside, fixed) in every(html_tables)), html_tables
    assert not every(scrolling), scrolling
    with_figures = [stem for stem in LESSONS if figures[stem]]
    assert with_figures and any(f[4] for _, f in every(figures))
    with_table = next(stem for stem in LESSONS if any(is_wide for is_wide, _ in tables[stem]))
    watched.open(f"{with_table}.html")
    table = watched.page.locator("pre.output .output-table").first
    table.scroll_into_view_if_needed()
    watched.page.evaluate("() => window.scrollBy(0, -120)")
    _screenshot(watched.page, f"{with_table[:2]}-table-phone")
    last = with_figures[-1]  # the last lesson's figures, whichever lesson that is
    watched.open(f"{last}.html")
    watched.page.locator("a.figure-link").first.scroll_into_view_if_needed()
    _screenshot(watched.page, f"{last[:2]}-figure-phone")
    watched.page.locator("a.figure-link").first.click()  # a tap opens the image file itself
    watched.page.wait_for_url("**/images/*.png")
    assert watched.page.evaluate("() => document.images[0].naturalWidth") == figures[last][0][3]
    assert watched.errors == [] and watched.external == []
    watched.page.close()


def test_the_course_menu_folds_on_a_phone(served, browser):
    watched = _Watched(browser, served, PHONE)
    watched.open("index.html")
    menu, button = watched.page.locator("nav.sidebar"), watched.page.locator("button.menu-button")
    assert button.is_visible() and not menu.is_visible()
    top = watched.page.locator("article h1").bounding_box()["y"]
    assert top < 150, top  # the first screen is the page, not the menu
    _screenshot(watched.page, "home-phone")
    button.click()
    assert menu.is_visible() and button.get_attribute("aria-expanded") == "true"
    assert watched.page.locator(f'nav.sidebar a[href="{LESSONS[1]}.html"]').is_visible()
    _screenshot(watched.page, "home-phone-menu-open")
    button.click()
    assert not menu.is_visible()
    watched.page.close()


def test_a_glossary_jump_lands_below_the_header_on_a_phone(served, browser):
    watched = _Watched(browser, served, PHONE)
    watched.open(f"{LESSONS[1]}.html")
    term = watched.page.locator("a.term").first
    href = term.get_attribute("href")
    term.click()
    watched.page.wait_for_url(f"**/{href}")
    watched.page.wait_for_timeout(300)
    anchor = unquote(href.split("#")[1])
    row_top = watched.page.evaluate("(id) => document.getElementById(id).getBoundingClientRect().top", anchor)
    header = watched.page.evaluate("() => document.querySelector('header.topbar').getBoundingClientRect().bottom")
    assert header <= row_top < header + 40, (row_top, header)
    watched.page.close()


def test_a_search_for_a_formula_finds_the_sections_that_write_it(site, served, browser):
    index = (site / "assets" / "search-index.js").read_text(encoding="utf-8")
    sections = json.loads(index.removeprefix("window.COURSE_SEARCH = ").rstrip().rstrip(";"))["sections"]
    expected = sum("√d_k" in s["h"] + " " + s["t"] for s in sections)
    watched = _Watched(browser, served, {"width": 1280, "height": 800})
    watched.open("search.html?q=√d_k")
    hits = watched.page.locator("#search-results li").count()
    snippets = watched.page.locator("#search-results").inner_text()
    _screenshot(watched.page, "search-sqrt-dk")
    assert hits == min(expected, 50) and hits >= 10 and "\\sqrt" not in snippets and "$" not in snippets, hits
    assert watched.errors == [] and watched.external == []
    watched.page.close()


def test_planted_html_neither_runs_nor_loads(hostile_site, browser):
    out, stem = hostile_site
    article = _soup(out / f"{stem}.html").select_one("article")
    assert not article.find_all(["script", "iframe", "svg", "style", "object"])
    assert not [a for tag in article.find_all(True) for a in tag.attrs if a.startswith("on")]
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        watched = _Watched(browser, base)
        watched.open(f"{stem}.html")
        watched.page.wait_for_timeout(500)
        ran = [watched.page.evaluate("() => window.__pwned || null")]
        watched.page.locator("#js-link").first.click()
        watched.page.wait_for_timeout(300)
        ran.append(watched.page.evaluate("() => window.__pwned || null"))
        frames = len(watched.page.frames)
        watched.page.close()
    finally:
        server.shutdown()
        server.server_close()
    assert ran == [None, None] and frames == 1 and watched.external == [], (ran, frames, watched.external)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib: on 3.10 the address comes from the package's metadata")
def test_the_repository_address_is_read_from_pyproject_tomls_project_urls(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    head = '[project]\nname = "course"\n'
    for urls, expected in (('Documentation = "https://d.example"\nRepository = "https://r.example/c"', "https://r.example/c"),
                           ('Homepage = "https://h.example"', "https://h.example"),
                           ('Documentation = "https://d.example"', None), ("", None)):
        pyproject.write_text(f"{head}[project.urls]\n{urls}\n", encoding="utf-8")
        assert pyproject_repo_url(pyproject) == expected and site_repo_url(None, pyproject) == expected, urls
    assert site_repo_url("https://given.example/c", pyproject) == "https://given.example/c"  # --repo-url wins
    for text, why in (("[project\n", "not valid TOML"), (f'{head}[project.urls]\nRepository = "a b"\n', "not a repository")):
        pyproject.write_text(text, encoding="utf-8")
        with pytest.raises(CourseInputError, match=why) as raised:
            site_repo_url(None, pyproject)
        assert str(raised.value).startswith(str(pyproject)) and "\n" not in str(raised.value)


def test_the_repository_address_is_read_from_the_packages_project_urls(monkeypatch):
    import importlib.metadata as metadata

    from lessons_lib.website import site as site_module

    class Recorded:
        def __init__(self, urls):
            self.urls = urls

        def get_all(self, key):
            return self.urls if key == "Project-URL" else None

    monkeypatch.setattr(metadata, "packages_distributions", lambda: {"lessons_lib": ["attention-course"]})
    for urls, expected in ((["Documentation, https://d.example", "Repository, https://r.example/c"], "https://r.example/c"),
                           (["Homepage, https://h.example"], "https://h.example"),
                           (["Documentation, https://d.example"], None), ([], None)):
        monkeypatch.setattr(metadata, "metadata", lambda name, urls=urls: Recorded(urls))
        assert site_module.package_repo_url() == expected


# A 1×1 PNG, as Jupyter stores a picture pasted into a markdown cell (base64 in the cell's attachments).
PIXEL_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def test_a_picture_pasted_into_a_markdown_cell_is_a_file_and_a_missing_one_its_alt_text():
    import base64

    from lessons_lib.website.site import _Images, notebook_body

    cell = nbformat.v4.new_markdown_cell("![a pasted plot](attachment:image.png) and ![gone](attachment:other.png)")
    cell["attachments"] = {"image.png": {"image/png": PIXEL_PNG}}
    nb = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_markdown_cell("![never pasted](attachment:x.png)")])
    images = _Images("p")
    body = notebook_body(nb, "p.ipynb", images)
    assert images.files == {"images/p-01.png": base64.b64decode(PIXEL_PNG)}
    assert '<img alt="a pasted plot" src="images/p-01.png"' in body or 'src="images/p-01.png"' in body
    assert "[gone]" in body and "[never pasted]" in body and "attachment:" not in body


def test_backslashed_sources_that_browsers_read_as_another_host_are_removed():
    from bs4 import BeautifulSoup

    from lessons_lib.website.site import _markdown

    for fragment in ('<img src="\\\\evil.example/a.png">', '<img src="/\\evil.example/b.png">',
                     '<img src="\\/evil.example/c.png">', '<img src=" \\\\evil.example/d.png">'):
        assert BeautifulSoup(sanitise_html(fragment), "html.parser").img.get("src") is None, fragment
    assert "evil.example" not in _markdown('text <img src="\\\\evil.example/e.png" alt="e">')  # HTML in a cell
    assert 'src="images/own.png"' in sanitise_html('<img src="images/own.png">')  # the site's own files stay
