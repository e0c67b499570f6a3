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
from lessons_lib.website.site import (FONT_FILE, build_site, lesson_box, lesson_paths, readme_overview,
                                    run_it_yourself_commands)
from lessons_lib.errors import CourseInputError
from lessons_lib.exercises.course_map import PREREQUISITES
from lessons_lib.paths import NOTEBOOKS_DIR, REPO_ROOT

ARTIFACTS = Path(os.environ.get("COURSE_TEST_ARTIFACTS", REPO_ROOT / "test-artifacts")) / "site"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")  # Debian's package
# As the JupyterLab browser test: no background connections, no first-run work.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
LESSONS = [path.stem for path in lesson_paths()]
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
    order = ["index", *LESSONS, "glossary", "data", "parser", "treebank"]
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
        shown = {pre.get_text() for pre in soup.select("pre.output")}
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream":
                    assert output.text in shown, (stem, output.text[:80])
    assert len(_soup(_lesson(site, "07")).select('div.output-html img[src^="data:image/svg+xml"]')) >= 3  # displaCy


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
    assert readme_overview(readme).startswith("# ") and "## Lessons" in readme_overview(readme)
    with pytest.raises(CourseInputError, match="no section starting '## Lessons'"):
        readme_overview(readme.replace("## Lessons", "## Lesson list"))
    with pytest.raises(CourseInputError, match="<!-- learner -->"):
        run_it_yourself_commands(readme.replace("<!-- learner -->", ""))
    with pytest.raises(CourseInputError, match="no lesson notebooks"):
        lesson_paths(tmp_path)


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

    def __init__(self, browser, base: str):
        self.base, self.errors, self.external, self.failed = base, [], [], []
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", lambda r: self.failed.append(r.url))
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.status} {r.url}"))
        self.page.route("**/*", self._route)

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
        first_lessons = [p for p in pages if re.match(r"\d\d_", p)]
        assert first_lessons[0].startswith("08_"), first_lessons[:5]
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
    answers.first.locator("summary").click()
    assert solution.is_visible() and "BEGIN SOLUTION" in solution.inner_text()
    answers.first.scroll_into_view_if_needed()
    watched.page.evaluate("() => window.scrollBy(0, -80)")
    time.sleep(0.3)
    _screenshot(watched.page, "lesson-08-answer-open")
    assert watched.errors == [] and watched.external == []
    watched.page.close()
