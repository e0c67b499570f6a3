"""Every sentence of a lesson is tied to what the lesson prints, in the course's one vocabulary.

The logic is in ``lessons_lib.course.prose`` (numbers) and ``lessons_lib.course.glossary``
(terms); CONTRIBUTING.md describes the conventions.
"""

from __future__ import annotations

import re

import pytest

from lessons_lib.course.glossary import GLOSSARY_PATH, notebook_variant_spellings, read_glossary
from lessons_lib.course.prose import SOURCE_TAGS, prose_number_failures, read_notebook
from lessons_lib.exercises.course_map import PREREQUISITES
from lessons_lib.paths import NOTEBOOKS_DIR

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
GLOSSARY = read_glossary()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_number_in_the_prose_is_printed_or_cited(path):
    failures = prose_number_failures(path)
    assert not failures, f"{path.name}: print these numbers or mark their source (CONTRIBUTING.md):\n" + "\n".join(failures)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_one_term_per_concept(path):
    problems = notebook_variant_spellings(path, GLOSSARY)
    assert not problems, f"{path.name}: variant spellings (see {GLOSSARY_PATH.name}):\n" + "\n".join(problems)


def test_lesson_00_names_every_source_and_links_the_glossary():
    start = read_notebook(next(NOTEBOOKS_DIR.glob("00_*.ipynb")))
    markdown = "\n".join("".join(c["source"]) for c in start["cells"] if c["cell_type"] == "markdown")
    table_rows = [line for line in markdown.splitlines() if line.startswith("| **")]
    # Each source is named: a row of the table, or (the markers met only from lesson 06) the marker written out.
    missing = [tag for tag in SOURCE_TAGS
               if not any(row.startswith(f"| **{tag}") for row in table_rows) and f"〔{tag}" not in markdown]
    assert not missing, f"lesson 00 names no row or marker for: {missing}"
    assert f"]({GLOSSARY_PATH.name})" in markdown, "lesson 00 must link the glossary"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_prerequisites_section_matches_the_course_map(path):
    lesson = path.name[:2]
    assert lesson in PREREQUISITES, f"lesson {lesson} is missing from lessons_lib.exercises.course_map.PREREQUISITES"
    nb = read_notebook(path)
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    section = markdown.partition("## 先修知识")[2].partition("\n#")[0]
    named = set(re.findall(r"第 (\d\d) 课", section))
    assert named == set(PREREQUISITES[lesson]), (
        f"{path.name}: 先修知识 names lessons {sorted(named)}, the course map says {sorted(PREREQUISITES[lesson])}")
