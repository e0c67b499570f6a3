"""Every number in a lesson's prose is printed by the lesson or cited from a named source.

A lesson's markdown may only state a number that

* appears in an output of the same notebook, within the rounding the prose uses
  (``0.759`` matches a printed ``0.7593``; ``约 3,500`` matches ``3465``; ``95%`` matches
  ``0.95``) — outputs of cells tagged ``nbval-ignore-output`` do not count, they vary; or
* sits in a sentence carrying a **source marker** ``〔TAG …〕``, ``TAG`` being one of the
  source names of lesson 00's table (:data:`SOURCE_TAGS`), free text allowed after it:
  ``0.66485〔教材第 8 章〕``, ``〔论文：Xiong 等 2020〕`` (a paper must be named); or
* sits in a sentence carrying ``〔第 NN 课〕`` and appears in an output of lesson ``NN``.

One marker covers every number of its sentence (up to 。；！？, a line break or a table
cell's ``|``). The full-width brackets are meant to be read: they say where a number comes from.

What is not checked (:func:`checkable_prose` blanks it out), and why:

* code (fenced blocks, inline code except a bare number such as `68800`), link targets and
  the markers themselves — not prose;
* heading numbers, list numbering, lesson / section / chapter / exercise references
  (第 6 节, 第 8 章, 练习 01-2) and zero-padded lesson numbers (01 … 09) — structure, not measurements;
* years (``2020 年``, ``Xiong 等 (2020)``) and software versions (``PyTorch 2.13``);
* digits glued to Latin letters or underscores (``float16``, ``T5``, ``F1``, ``d_k``) — names;
* inside LaTeX, everything except a number right after ``=`` / ``≈`` / ``\\approx`` and a
  power of ten ``10^{-6}`` (formulas are not claims about outputs);
* bare integers 0–10 (「2 个块」「标签 1」) — counting words, too ambiguous to check.

Known gap: Chinese numerals (「一个数量级」「十几个」) are invisible to the checker.
It checks that a number exists in the outputs, not that it means what the sentence says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from lessons_lib.course.notebooks import read_notebook

# The source names of lesson 00's table; a marker 〔TAG …〕 must start with one of them.
SOURCE_TAGS = ("句法偏置原文", "Seq2Seq 博客", "教材", "论文", "维护者实测", "课程实测", "数据说明")
IGNORE_OUTPUT_TAG = "nbval-ignore-output"

MARKER = re.compile(r"〔([^〕]*)〕")
LESSON_MARKER = re.compile(r"^第 (\d\d) 课$")
NUMBER = re.compile(r"""
    (?<![A-Za-z_\d.])                # not glued to a name or to another number
    (\d{1,3}(?:,\d{3})+|\d+)         # integer part, optional thousands commas
    (\.\d+)?                         # decimals
    ([eE][-+]?\d+)?                  # exponent: 5e-5
    (%)?                             # percent
    (?![A-Za-z_\d])                  # not followed by a name: float16, 1e, d2
""", re.VERBOSE)
# In outputs numbers may touch anything ("5.5x", "d=1", "lr=0.01").
OUTPUT_NUMBER = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(%)?")
# An integer printed with thousands separators (Python's ``f"{n:,}"``), read whole as well.
GROUPED_OUTPUT_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d.]|,\d)")
STRUCTURE = re.compile(
    r"第\s*\d+\s*[课节章]|练习\s*\d+-\d+|(?<![\d.,])0\d(?![\d.,])"
    r"|\d+\.\d+\.\d+"
    r"|(?:PyTorch|torch|Python|spaCy|jieba|CUDA|numpy|matplotlib|nbformat|nbval)\s*v?\d+(?:\.\d+)*"
)
YEAR_BEFORE = re.compile(r"(等人|等|et al\.?|\()[^)。；\n]{0,30}$")
APPROX_BEFORE = re.compile(r"(约|大约|大概|接近|近|≈|~|\\approx)\s*$")
APPROX_AFTER = re.compile(r"^\s*(左右|上下|多|来|余)")
SENTENCE_END = "。；！？\n|"
FIGURE_REPR = re.compile(r"^<(Figure size|IPython\.core\.display\.\w+ object)")


@dataclass(frozen=True)
class ProseNumber:
    """One number of a lesson's markdown and how it is backed.

    Attributes:
        cell: index of the markdown cell in the notebook.
        text: the number as written.
        status: ``"printed"`` (in this notebook's outputs), ``"cited"`` (source marker),
            ``"other lesson"`` (marker 〔第 NN 课〕 and printed there) or ``"unsupported"``.
        context: the words around it, for the failure message.
    """

    cell: int
    text: str
    status: str
    context: str


def _blank(text: str, pattern: str, flags: int = 0) -> str:
    """Replace every match by spaces, so that positions (and sentence contexts) stay right."""
    return re.sub(pattern, lambda m: " " * len(m.group(0)), text, flags=flags)


def _keep_math_claims(match: re.Match) -> str:
    """Inside ``$…$`` keep only numbers after =, ≈, \\approx, and powers of ten (as ``1e-6``)."""
    body = match.group(0)
    chars = [" "] * len(body)
    for claim in re.finditer(r"(?:=|\\approx|≈)\s*-?(\d+(?:\.\d+)?)(?![\d^_{.])", body):
        chars[claim.start(1):claim.end(1)] = body[claim.start(1):claim.end(1)]
    for power in re.finditer(r"10\^\{?(-?\d+)\}?", body):
        written = f"1e{power.group(1)}".ljust(len(power.group(0)))
        chars[power.start():power.end()] = written
    return "".join(chars)


def checkable_prose(markdown: str) -> str:
    """``markdown`` with everything the checker does not read replaced by spaces (same length)."""
    text = _blank(markdown, r"```.*?```", re.S)
    text = _blank(text, r"〔[^〕]*〕")
    text = re.sub(r"`([^`\n]*)`", lambda m: m.group(0).replace("`", " ") if re.fullmatch(r"-?[\d,.]+", m.group(1))
                  else " " * len(m.group(0)), text)
    text = _blank(text, r"\]\([^)]*\)")
    text = _blank(text, r"^\s*#+\s*\d+(?:\.\d+)*\.?", re.M)
    text = _blank(text, r"^\s*\d+[.、)]\s", re.M)
    text = STRUCTURE.sub(lambda m: " " * len(m.group(0)), text)
    return re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", _keep_math_claims, text, flags=re.S)


def _value_and_tolerance(match: re.Match, raw: str) -> tuple[float, float]:
    """The written value and how far a printed value may be from it (half a unit of the last digit)."""
    integer, decimals, exponent, _ = match.groups()
    digits = integer.replace(",", "")
    value = float(digits + (decimals or "") + (exponent or ""))
    unit = 10.0 ** -len(decimals[1:]) if decimals else 1.0
    if exponent:
        unit *= 10.0 ** int(exponent[1:])
    tolerance = unit / 2
    approximate = APPROX_BEFORE.search(raw[:match.start()]) or APPROX_AFTER.search(raw[match.end():])
    if approximate:
        zeros = len(digits) - len(digits.rstrip("0")) if not decimals and not exponent else 0
        tolerance = 10.0 ** zeros / 2 if zeros else 2 * tolerance   # 约 3,500 ↔ 3465; 约 6.3 ↔ 6.25
    return value, tolerance


def _is_exempt(match: re.Match, raw: str) -> bool:
    """Years and small counting integers."""
    integer, decimals, exponent, percent = match.groups()
    if decimals or exponent or percent:
        return False
    value = int(integer.replace(",", ""))
    if value <= 10:
        return True
    is_year = 1900 <= value <= 2099 and "," not in integer
    return is_year and (raw[match.end():].lstrip().startswith("年") or bool(YEAR_BEFORE.search(raw[:match.start()])))


def _sentence(raw: str, start: int, end: int) -> str:
    left = max(raw.rfind(c, 0, start) for c in SENTENCE_END) + 1
    rights = [i for i in (raw.find(c, end) for c in SENTENCE_END) if i >= 0]
    return raw[left:min(rights) if rights else len(raw)]


def marker_problems(markdown: str) -> list[str]:
    """Markers that name no known source: ``〔…〕`` must start with a tag or read ``第 NN 课`` (code is skipped)."""
    problems = []
    prose = _blank(_blank(markdown, r"```.*?```", re.S), r"`[^`\n]*`")
    for marker in MARKER.finditer(prose):
        content = marker.group(1).strip()
        if LESSON_MARKER.match(content):
            continue
        tag = next((t for t in SOURCE_TAGS if content.startswith(t)), None)
        if tag is None:
            problems.append(f"〔{content}〕 names no source of lesson 00's table ({', '.join(SOURCE_TAGS)})")
        elif tag == "论文" and not content[len(tag):].strip(" ：:"):
            problems.append(f"〔{content}〕 must name the paper, e.g. 〔论文：Xiong 等 2020〕")
    return problems


def output_text(cell: dict) -> str:
    """What a code cell printed (stream, text results, error text); figure reprs are left out."""
    parts = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(_joined(output.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            plain = _joined(output.get("data", {}).get("text/plain", ""))
            if not FIGURE_REPR.match(plain):
                parts.append(plain)
        elif kind == "error":
            parts.append(f"{output.get('ename', '')}: {output.get('evalue', '')}")
    return "\n".join(parts)


def _joined(text: str | list[str]) -> str:
    return "".join(text) if isinstance(text, list) else text


def printed_values(nb: dict) -> list[tuple[float, float]]:
    """Every number printed by a compared cell (not tagged nbval-ignore-output), with half a unit of its last digit.

    A printed percentage is also listed as a fraction (``5.64%`` → 0.0564); an integer printed
    with thousands separators (``49,984``) is also listed whole.
    """
    values = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code" or IGNORE_OUTPUT_TAG in cell.get("metadata", {}).get("tags", []):
            continue
        for match in OUTPUT_NUMBER.finditer(output_text(cell)):
            mantissa, _, exponent = match.group(1).lower().partition("e")
            decimals = len(mantissa.partition(".")[2])
            half_unit = 10.0 ** (int(exponent or 0) - decimals) / 2
            value = float(match.group(1))
            values.append((value, half_unit))
            if match.group(2):
                values.append((value / 100, half_unit / 100))
        values += [(float(m.group(0).replace(",", "")), 0.5) for m in GROUPED_OUTPUT_NUMBER.finditer(output_text(cell))]
    return values


def _found(value: float, tolerance: float, percent: bool, pool: Iterable[tuple[float, float]]) -> bool:
    """Is a printed value within the prose's rounding, and printed at least as precisely as the prose claims?"""
    candidates = [(value, tolerance)] + ([(value / 100, tolerance / 100)] if percent else [])
    slack = 1 + 1e-9
    return any(abs(printed - wanted) <= limit * slack + 1e-15 and precision <= limit * slack
               for wanted, limit in candidates for printed, precision in pool)


def _lesson_values(folder: Path, lesson: str, cache: dict[str, list]) -> list[tuple[float, float]]:
    if lesson not in cache:
        found = sorted(folder.glob(f"{lesson}_*.ipynb"))
        cache[lesson] = printed_values(read_notebook(found[0])) if found else []
    return cache[lesson]


def check_prose_numbers(path: Path) -> list[ProseNumber]:
    """Every checked number of the notebook's markdown cells, with how it is backed."""
    path = Path(path)
    nb = read_notebook(path)
    printed = printed_values(nb)
    other_lessons: dict[str, list] = {}
    results = []
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        raw = _joined(cell.get("source", ""))
        for match in NUMBER.finditer(checkable_prose(raw)):
            if _is_exempt(match, raw):
                continue
            value, tolerance = _value_and_tolerance(match, raw)
            percent = bool(match.group(4))
            markers = [m.group(1).strip() for m in MARKER.finditer(_sentence(raw, match.start(), match.end()))]
            lessons = [m.group(1) for m in map(LESSON_MARKER.match, markers) if m]
            if _found(value, tolerance, percent, printed):
                status = "printed"
            elif any(not LESSON_MARKER.match(m) for m in markers):
                status = "cited"
            elif any(_found(value, tolerance, percent, _lesson_values(path.parent, n, other_lessons)) for n in lessons):
                status = "other lesson"
            else:
                status = "unsupported"
            context = raw[max(0, match.start() - 20):match.end() + 12].replace("\n", " ")
            results.append(ProseNumber(index, match.group(0), status, context))
    return results


def prose_number_failures(path: Path) -> list[str]:
    """One line per unsupported number or unknown marker of the notebook (empty when all is backed)."""
    nb = read_notebook(path)
    lines = [f"cell {n.cell}: {n.text} (…{n.context}…) is printed nowhere in this notebook and carries no source marker"
             for n in check_prose_numbers(path) if n.status == "unsupported"]
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "markdown":
            lines += [f"cell {index}: {problem}" for problem in marker_problems(_joined(cell.get("source", "")))]
    return lines
