"""SOURCE_CLAIMS.md, the table of the sources' claims and what the lessons do with each, stays well formed:
known verdicts, cells that exist, a count table that is the count of its rows, and notes whose numbers
the cells they name still print."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from lessons_lib.course.prose import (MARKER, NUMBER, _found, _is_exempt, _value_and_tolerance, checkable_prose,
                                      marker_problems, printed_values)

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "SOURCE_CLAIMS.md"
SOURCES = {"A": "article", "S": "blog post", "T": "textbook"}
VERDICTS = ("measured: agrees", "measured: disagrees", "measured: partly", "measured: inconclusive", "demonstrated", "cited",
            "untested, said so", "prose-only", "missing")
_CELLS = re.compile(r"(\d\d): ([\d, ]+)")


def _rows() -> list[dict]:
    rows = []
    for line in CLAIMS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[AST]\d\d", cells[0]):
            rows.append(dict(zip(("id", "section", "claim", "where", "verdict", "notes"), cells)))
    return rows


def _count_table() -> dict[str, list[int]]:
    text = CLAIMS.read_text(encoding="utf-8").split("## Counts by verdict", 1)[1]
    table = {}
    for line in text.splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].isdigit():
            table[cells[0]] = [int(c) for c in cells[1:]]
    return table


def test_every_row_has_a_unique_id_and_a_known_verdict():
    rows = _rows()
    assert len(rows) > 50
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    unknown = [(r["id"], r["verdict"]) for r in rows if r["verdict"] not in VERDICTS]
    assert not unknown


def test_no_row_is_dropped_for_a_stray_pipe():
    lines = [line for line in CLAIMS.read_text(encoding="utf-8").splitlines() if re.match(r"\| [AST]\d\d \|", line)]
    assert len(lines) == len(_rows())


def test_the_cells_a_row_names_exist():
    lengths = {p.name[:2]: len(nbformat.read(p, as_version=4).cells) for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    wrong = []
    for row in _rows():
        for lesson, indices in _CELLS.findall(row["where"]):
            for index in (int(i) for i in indices.replace(" ", "").split(",") if i):
                if lesson not in lengths or index >= lengths[lesson]:
                    wrong.append((row["id"], lesson, index))
    assert not wrong


def test_a_measured_or_demonstrated_row_names_where():
    vague = [r["id"] for r in _rows() if r["verdict"].startswith(("measured", "demonstrated")) and r["where"] in ("", "—")]
    assert not vague


def test_the_count_table_is_the_count_of_the_rows():
    counted = Counter((r["verdict"], r["id"][0]) for r in _rows())
    table = _count_table()
    assert set(table) == set(VERDICTS) | {"all rows"}
    for verdict in VERDICTS:
        per_source = [counted[verdict, prefix] for prefix in SOURCES]
        assert table[verdict] == per_source + [sum(per_source)], verdict
    totals = [sum(counted[v, p] for v in VERDICTS) for p in SOURCES]
    assert table["all rows"] == totals + [sum(totals)]


@pytest.mark.parametrize("marker", ["(pending", "TODO"])
def test_no_row_waits_on_a_change(marker):
    assert marker not in CLAIMS.read_text(encoding="utf-8")


# What a note quotes: the lessons' number rules (lessons_lib.course.prose), applied to one row's note.
_CLAUSE_END = re.compile(r";\s|\.\s|\.$")   # a marker covers the numbers of its clause (English notes)
_NOT_QUOTED_BEFORE = re.compile(r"(?:<|>|≤|≥|×)\s*$")   # a bound (p < 1e-29) or a multiplier setting (×30)
# Cell and lesson references ("08 cell 39", "07: 34, 35", "lesson 09") and section numbers (§3.3) are not figures.
_NOT_FIGURES = re.compile(r"(?:\b\d\d )?cells? \d+(?:, \d+)*|\b\d\d: \d+(?:, \d+)*|§\d+(?:\.\d+)*|lessons? \d\d", re.I)


def _named_cells(row: dict) -> dict[str, list[int]]:
    """Lesson -> cell indices named by the row's where column and by "Related cells: NN: i, j" in its note."""
    named: dict[str, list[int]] = {}
    for lesson, indices in _CELLS.findall(row["where"] + " | " + row["notes"]):
        named.setdefault(lesson, []).extend(int(i) for i in indices.replace(" ", "").split(",") if i)
    return named


def _clause(note: str, start: int, end: int) -> str:
    left = max([m.end() for m in _CLAUSE_END.finditer(note, 0, start)], default=0)
    right = _CLAUSE_END.search(note, end)
    return note[left:right.start() if right else len(note)]


def _cell_outputs(cache: dict, lesson: str, indices: list[int]) -> list[tuple[float, float]]:
    if lesson not in cache:
        found = sorted((ROOT / "notebooks").glob(f"{lesson}_*.ipynb"))
        cache[lesson] = nbformat.read(found[0], as_version=4).cells if found else []
    cells = cache[lesson]
    return printed_values({"cells": [cells[i] for i in indices if i < len(cells)]})


def unbacked_note_numbers(rows: list[dict]) -> list[str]:
    """Numbers in the rows' notes that no cell the row names prints, and markers that name no source.

    A note's numbers are read as the lessons' prose is (lessons_lib.course.prose): decimals,
    percentages, exponents and integers with thousands commas; integers 0–10 and years are counting
    words and skipped; signs are ignored on both sides. Each must be printed, within the note's
    rounding (0.759 matches a printed 0.7593, not 0.7600), by a compared cell (one not tagged
    nbval-ignore-output: timings vary) that the row names: its where column, or "Related cells:
    NN: i, j" in the note. Not checked:

    * a number in a clause (up to "; " or ". ") that carries a source marker 〔TAG …〕, TAG one of
      lesson 00's table: 〔教材 §7〕 for the textbook's own figure, 〔课程实测, README, cited in cell 52〕
      for a README "Measured" command a lesson cites, 〔维护者实测〕 for the maintainers' LCQMC runs;
    * a bound after <, >, ≤ or ≥ (a threshold the note chooses) and a multiplier setting after ×;
    * cell and lesson references ("08 cell 39", "07: 34") and section numbers (§3.3).

    Like the prose check it finds a number among the outputs, not what the number means there, and
    numbers written in words are invisible to it.
    """
    cache: dict = {}
    failures = []
    for row in rows:
        note = row["notes"]
        failures += [f"{row['id']}: {problem}" for problem in marker_problems(note)]
        pool = [v for lesson, indices in _named_cells(row).items() for v in _cell_outputs(cache, lesson, indices)]
        readable = checkable_prose(_NOT_FIGURES.sub(lambda m: " " * len(m.group(0)), note))
        for match in NUMBER.finditer(readable):
            if _is_exempt(match, note) or _NOT_QUOTED_BEFORE.search(note[:match.start()]):
                continue
            value, tolerance = _value_and_tolerance(match, note)
            if _found(value, tolerance, bool(match.group(4)), pool):
                continue
            if MARKER.search(_clause(note, match.start(), match.end())):
                continue
            failures.append(f"{row['id']}: {match.group(0)} (…{note[max(0, match.start() - 30):match.end() + 10]}…) "
                            f"is printed by none of its cells {_named_cells(row)} and carries no source marker")
    return failures


def test_every_number_a_note_quotes_is_printed_by_a_cell_it_names():
    failures = unbacked_note_numbers(_rows())
    assert not failures, "\n".join(failures)


def test_a_stale_number_in_a_note_is_caught():
    # 06 cell 4 prints the flower pair's character Jaccard, 0.900; the source's own figure carries a marker.
    note = "Character Jaccard {} (label 0); the source reports 0.66485 〔教材 §7〕; p < 0.05 throughout."
    row = {"id": "X01", "where": "06: 4", "notes": note.format("0.900")}
    assert unbacked_note_numbers([row]) == []
    stale = unbacked_note_numbers([{**row, "notes": note.format("0.901")}])
    assert [f.split(" (")[0] for f in stale] == ["X01: 0.901"]
    elsewhere = unbacked_note_numbers([{**row, "where": "06: 5"}])     # printed, but not by a cell the row names
    assert [f.split(" (")[0] for f in elsewhere] == ["X01: 0.900"]
