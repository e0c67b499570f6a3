"""SOURCE_CLAIMS.md, the table of the sources' claims and what the lessons do with each, stays well formed:
known verdicts, cells that exist, and a count table that is the count of its rows."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "SOURCE_CLAIMS.md"
SOURCES = {"A": "article", "S": "blog post", "T": "textbook"}
VERDICTS = ("measured: agrees", "measured: disagrees", "measured: partly", "demonstrated", "cited",
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
