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


def _markdown(path) -> str:
    return "\n".join("".join(c["source"]) for c in read_notebook(path)["cells"] if c["cell_type"] == "markdown")


SECTION_HEADING = re.compile(r"^## (\d+)\.", re.M)
# "第 3 节", "第 3–8 节", "第 08 课第 6 节": a lesson's own section, or another lesson's
SECTION_REFERENCE = re.compile(r"(?:第 ?(\d{2}) ?课)?第 ?(\d+)(?:[–-](\d+))? ?节")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_sections_are_numbered_in_order_and_every_reference_finds_its_section(path):
    numbers = [int(n) for n in SECTION_HEADING.findall(_markdown(path))]
    assert numbers == list(range(1, len(numbers) + 1)), f"{path.name}: sections numbered {numbers}"
    sections = {p.name[:2]: {int(n) for n in SECTION_HEADING.findall(_markdown(p))} for p in NOTEBOOKS}
    missing = []
    for match in SECTION_REFERENCE.finditer(_markdown(path)):
        lesson = match.group(1) or path.name[:2]
        for number in filter(None, (match.group(2), match.group(3))):
            if lesson in sections and int(number) not in sections[lesson]:
                missing.append(f"{match.group(0)} (lesson {lesson} has sections {sorted(sections[lesson])})")
    assert not missing, f"{path.name}: references to sections that do not exist: {missing}"
