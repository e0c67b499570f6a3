"""JupyterLab in a real browser: a learner's workspace and the solution notebooks, run from the Run menu.

A real ``jupyter lab`` server on loopback and Debian's Chromium driven by Playwright (no
browser download). Solution notebooks are opened with their outputs cleared, and the learner's
workspace is made by the real ``lessons workspace`` command, so every output the tests read
comes from the live kernel. Each test saves a screenshot of the page under
``test-artifacts/browser/`` (or ``$COURSE_TEST_ARTIFACTS``). Where Chromium or Playwright is
missing the tests are skipped, unless ``COURSE_BROWSER_TESTS=required`` (CI sets it): then
they fail.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from lessons_lib.course.assignments import find_exercises
from lessons_lib.course.notebooks import KERNEL_ENV
from lessons_lib.exercises import FAIL_MARK, NOT_DONE_MARK, PASS_MARK
from lessons_lib.paths import NOTEBOOKS_DIR, REPO_ROOT

LESSON = "00_start_here.ipynb"
EXERCISE_LESSON = "01_dot_product_attention.ipynb"
WRONG_ANSWER = "def scaled_scores(q, k):\n    return q @ k.transpose(-2, -1)  # forgot the scale\n"
ARTIFACTS = Path(os.environ.get("COURSE_TEST_ARTIFACTS", REPO_ROOT / "test-artifacts")) / "browser"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")  # Debian's package
# Chromium on a machine without network: no background connections, no first-run work.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
RUN_SECONDS = 300


def _require(condition: bool, why: str) -> None:
    if not condition:
        if os.environ.get("COURSE_BROWSER_TESTS") == "required":
            pytest.fail(why)
        pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _without_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def _write_first_answer(path: Path, answer: str) -> None:
    """Put ``answer`` in the first exercise cell of the workspace notebook at ``path``, as a learner would."""
    nb = nbformat.read(path, as_version=4)
    exercise = find_exercises(nbformat.read(NOTEBOOKS_DIR / path.name, as_version=4), path.name)[0]
    assert "NotImplementedError" in nb.cells[exercise.cell_index].source
    nb.cells[exercise.cell_index].source = answer
    nbformat.write(nb, path)


def _screenshot(page, name: str, cell: int | None = None) -> None:
    """Save the page (scrolled to code cell number ``cell`` when given) as ``ARTIFACTS/name.png``."""
    if cell is not None:
        page.locator(".jp-NotebookPanel .jp-CodeCell").nth(cell).scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a folder holding lesson 00 (outputs cleared) and a learner's ``workspace/``.

    The workspace comes from ``lessons workspace``; in its lesson 01 the learner has written a
    wrong first answer (the scores without √d_k).
    """
    _require(CHROMIUM is not None, "no chromium on PATH (Debian package chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _require(False, "playwright is not installed (pip install -e '.[dev]')")
    root = tmp_path_factory.mktemp("lab")
    solution = nbformat.read(NOTEBOOKS_DIR / LESSON, as_version=4)
    nbformat.write(_without_outputs(nbformat.from_dict(json.loads(json.dumps(solution)))), root / LESSON)
    made = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "workspace", str(root / "workspace")],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0 and "wrote" in made.stdout, made.stdout + made.stderr
    _write_first_answer(root / "workspace" / EXERCISE_LESSON, WRONG_ANSWER)
    settings = root / ".settings" / "@jupyterlab"
    (settings / "notebook-extension").mkdir(parents=True)
    (settings / "apputils-extension").mkdir(parents=True)
    # Every cell stays in the page (no virtual scrolling), so the test can read all outputs.
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}), encoding="utf-8")
    # No "get notified about Jupyter news?" toast over the screenshots (and no attempt to fetch news).
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false"}), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, **KERNEL_ENV, "JUPYTERLAB_SETTINGS_DIR": str(root / ".settings"),
           "JUPYTER_RUNTIME_DIR": str(root / ".runtime"), "JUPYTERLAB_WORKSPACES_DIR": str(root / ".workspaces")}
    log = open(root / "server.log", "w", encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--ServerApp.port_retries=0", "--ServerApp.allow_root=True",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("jupyter lab did not start:\n" + (root / "server.log").read_text(encoding="utf-8")[-3000:])
                time.sleep(0.5)
        yield {"url": f"http://127.0.0.1:{port}", "token": token, "root": root}
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _fontconfig_with_cjk(root: Path) -> Path:
    """A fontconfig file adding the course's bundled Noto Sans CJK to the system's fonts.

    Only for legible screenshots on machines without a CJK font: the tests read the page's
    text, which does not depend on fonts.
    """
    from lessons_lib.course.plotting import _bundled_font_file

    conf = root / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
        f"  <dir>{_bundled_font_file().parent}</dir>\n  <cachedir>{root / '.fontcache'}</cachedir>\n</fontconfig>\n",
        encoding="utf-8")
    return conf


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                              env={**os.environ, "FONTCONFIG_FILE": str(_fontconfig_with_cjk(lab["root"]))})
        try:
            yield chromium
        finally:
            chromium.close()


def _run_all(browser, lab, name: str):
    """Open ``name`` in JupyterLab and choose Run ▸ Run All Cells; the page and the cells' prompts once it stops.

    It stops when no cell is queued or running: all have run, or a cell raised (JupyterLab then
    leaves the cells after it unrun, as it does for a learner).
    """
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    # A workspace of its own, reset: JupyterLab would otherwise reopen the notebooks of an earlier page.
    page.goto(f"{lab['url']}/lab/workspaces/{Path(name).stem}/tree/{name}?reset&token={lab['token']}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    # The kernel is connected when the status bar names it and says it is idle.
    page.locator(".jp-StatusBar-Widget", has_text=re.compile(r"Python 3.*Idle")).first.wait_for(timeout=120_000)
    prompts = page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt")
    deadline = time.monotonic() + RUN_SECONDS
    started = None
    while True:
        texts = [t.strip() for t in prompts.all_inner_texts()]
        if started is None or (time.monotonic() - started > 20 and all(t == "[ ]:" for t in texts)):
            # (again, should the first click have reached the page before the notebook was ready)
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
            started = time.monotonic()
        elif texts and "[*]:" not in texts and re.fullmatch(r"\[\d+\]:", texts[0]):
            return page, texts
        assert time.monotonic() < deadline, f"cells still running or not started after {RUN_SECONDS} s: {texts}"
        time.sleep(1)


def _output_texts(page) -> list[str]:
    """The visible text of each code cell's outputs, in order."""
    cells = page.locator(".jp-NotebookPanel .jp-CodeCell")
    return [cells.nth(i).locator(".jp-OutputArea").inner_text() for i in range(cells.count())]


def test_a_learner_runs_lesson_00_in_jupyterlab_and_sees_its_outputs(browser, lab):
    page, prompts = _run_all(browser, lab, LESSON)
    assert all(re.fullmatch(r"\[\d+\]:", p) for p in prompts), prompts
    text = "\n".join(_output_texts(page))
    reference = nbformat.read(NOTEBOOKS_DIR / LESSON, as_version=4)
    committed = "".join(o.get("text", "") for c in reference.cells if c.cell_type == "code" for o in c.outputs)
    # The page shows as many passed checks as the committed run (the lesson's exercises and its demonstration).
    assert text.count(PASS_MARK) == committed.count(PASS_MARK) >= len(find_exercises(reference, LESSON)) >= 1, text[-2000:]
    assert "Traceback" not in text, text[-2000:]
    assert "font:" in text  # the CJK font setup cell printed in the page
    # The figure is drawn by the kernel's inline backend and shown as an image.
    assert page.locator(".jp-NotebookPanel .jp-OutputArea-output img").count() >= 1
    _screenshot(page, "solution_00")
    page.close()


def _stopped_at_check(browser, lab, name: str, check: int):
    """Run ``name`` (a workspace notebook) from the Run menu; it must stop at exercise ``check``'s check cell.

    Returns the page, the shown lines of that cell's output and the text of the outputs before it.
    """
    reference = nbformat.read(NOTEBOOKS_DIR / Path(name).name, as_version=4)  # the workspace keeps the cell order
    code_cells = [i for i, cell in enumerate(reference.cells) if cell.cell_type == "code"]
    stop = code_cells.index(find_exercises(reference, Path(name).name)[check].check_index)
    page, prompts = _run_all(browser, lab, name)
    outputs = _output_texts(page)
    assert all(re.fullmatch(r"\[\d+\]:", p) for p in prompts[:stop + 1]), prompts
    assert all(p in ("[ ]:", "") for p in prompts[stop + 1:]), prompts  # Run All stops at the failing check
    shown = [line for line in outputs[stop].splitlines() if line.strip()]
    _screenshot(page, f"workspace_{Path(name).stem}_check_{check + 1}", cell=stop)
    return page, shown, "\n".join(outputs[:stop])


def test_the_learners_workspace_runs_up_to_the_first_exercise_and_says_it_is_not_done(browser, lab):
    page, shown, before = _stopped_at_check(browser, lab, f"workspace/{LESSON}", 0)
    assert len(shown) == 1 and shown[0].startswith(NOT_DONE_MARK) and "还没有完成" in shown[0], shown
    assert "Traceback" not in before and "font:" in before
    page.close()


def test_a_wrong_answer_in_the_workspace_shows_one_line_of_explanation(browser, lab):
    page, shown, _ = _stopped_at_check(browser, lab, f"workspace/{EXERCISE_LESSON}", 0)
    assert len(shown) <= 3 and shown[0].startswith(FAIL_MARK) and "√d_k" in shown[0], shown
    assert not any(word in line for line in shown for word in ("Traceback", "File ", "compare_tensor", "transpose")), shown
    page.close()


DRAWING_LESSON = "07_dependency_trees.ipynb"


def _svg_only_control_notebook() -> nbformat.NotebookNode:
    """A notebook whose one output is a bare SVG, as lesson 07 showed its trees before: JupyterLab hides it when untrusted."""
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>'
    cell = nbformat.v4.new_code_cell("display(SVG(svg))", execution_count=1, outputs=[nbformat.v4.new_output(
        "display_data", data={"image/svg+xml": svg, "text/plain": "<IPython.core.display.SVG object>"})])
    return nbformat.v4.new_notebook(cells=[cell])


def _open_without_running(browser, lab, name: str):
    """Open ``name`` (already in the lab's folder) in JupyterLab as a learner would, without running a cell; the page."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{lab['url']}/lab/workspaces/{Path(name).stem}/tree/{name}?reset&token={lab['token']}")
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell .jp-OutputArea-output", timeout=120_000)
    return page


def _data_images(page) -> list[dict]:
    """Each ``<img>`` with a ``data:`` source in the notebook's outputs: its source's start, size once loaded, visibility."""
    return page.eval_on_selector_all(
        ".jp-NotebookPanel .jp-OutputArea-output img[src^='data:']",
        "imgs => imgs.map(i => ({src: i.getAttribute('src').slice(0, 30), complete: i.complete,"
        " naturalWidth: i.naturalWidth, shown: i.getBoundingClientRect().width > 0}))")


def test_lesson_07s_dependency_drawings_show_in_an_untrusted_notebook(browser, lab):
    """The committed lesson 07, never trusted on this server, shows each displaCy drawing as a loaded image."""
    shutil.copy(NOTEBOOKS_DIR / DRAWING_LESSON, lab["root"] / DRAWING_LESSON)
    nbformat.write(_svg_only_control_notebook(), lab["root"] / "untrusted_svg_control.ipynb")
    # Control: the bare SVG output is hidden, so the server really treats these notebooks as untrusted.
    page = _open_without_running(browser, lab, "untrusted_svg_control.ipynb")
    output = page.locator(".jp-NotebookPanel .jp-OutputArea-output").first
    assert "<IPython.core.display.SVG object>" in output.inner_text() and output.locator("svg, img").count() == 0, (
        "the control's SVG is shown: the notebook is trusted on this server, so the check below would prove nothing")
    page.close()

    reference = nbformat.read(NOTEBOOKS_DIR / DRAWING_LESSON, as_version=4)
    drawings = sum("依存树：" in o.get("data", {}).get("text/plain", "") for c in reference.cells if c.cell_type == "code"
                   for o in c.outputs)
    code_cells = [c for c in reference.cells if c.cell_type == "code"]
    last_with_output = max(k for k, c in enumerate(code_cells) if c.outputs)
    page = _open_without_running(browser, lab, DRAWING_LESSON)
    # Every stored output is in the page once the last cell that has one shows it.
    page.locator(".jp-NotebookPanel .jp-CodeCell").nth(last_with_output).locator(".jp-OutputArea-output").first.wait_for(
        timeout=60_000)
    page.wait_for_function("[...document.querySelectorAll('.jp-OutputArea-output img')].every(i => i.complete)",
                           timeout=60_000)
    images = [i for i in _data_images(page) if i["src"].startswith("data:image/svg+xml")]
    assert drawings >= 3, "lesson 07's stored outputs hold no dependency drawing (a `dependency_drawing` output)"
    assert len(images) == drawings, (drawings, images)
    assert all(i["naturalWidth"] > 0 and i["shown"] for i in images), images
    assert "<IPython.core.display.SVG object>" not in page.locator(".jp-NotebookPanel").inner_text()
    tree = page.locator(".jp-NotebookPanel .jp-OutputArea-output img[src^='data:image/svg+xml']").first
    tree.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    tree.screenshot(path=str(ARTIFACTS / "lesson07_untrusted_tree.png"))
    page.close()


def test_lesson_07_runs_in_jupyterlab_with_its_figures_and_drawings(browser, lab):
    """The solution notebook, outputs cleared, run from the Run menu: no error, every figure and drawing shown."""
    reference = nbformat.read(NOTEBOOKS_DIR / DRAWING_LESSON, as_version=4)
    nbformat.write(_without_outputs(nbformat.from_dict(json.loads(json.dumps(reference)))),
                   lab["root"] / f"run_{DRAWING_LESSON}")
    page, prompts = _run_all(browser, lab, f"run_{DRAWING_LESSON}")
    assert all(re.fullmatch(r"\[\d+\]:", p) for p in prompts), prompts
    text = "\n".join(_output_texts(page))
    assert "Traceback" not in text and page.locator(".jp-OutputArea-output[data-mime-type*='error']").count() == 0
    outputs = [o for c in reference.cells if c.cell_type == "code" for o in c.outputs]
    figures = sum("image/png" in o.get("data", {}) for o in outputs)
    drawings = sum("依存树：" in o.get("data", {}).get("text/plain", "") for o in outputs)
    page.wait_for_function("[...document.querySelectorAll('.jp-OutputArea-output img')].every(i => i.complete)",
                           timeout=60_000)
    images = _data_images(page)
    assert figures >= 1 and sum(i["src"].startswith("data:image/png") for i in images) == figures, (figures, images)
    trees = [i for i in images if i["src"].startswith("data:image/svg+xml")]
    assert drawings >= 3 and len(trees) == drawings and all(i["naturalWidth"] > 0 for i in trees), trees
    _screenshot(page, "solution_07")
    page.close()
