"""The prose-number checker: what it reads, what it skips, and how a number is backed."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from lessons_lib.course.prose import (check_prose_numbers, checkable_prose, marker_problems, printed_values,
                                      prose_number_failures)
from lessons_lib.errors import CourseInputError


def _notebook(folder: Path, name: str, markdown: list[str], printed: list[str], ignored: str = "") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text) for text in markdown]
    for text in printed:
        cell = nbformat.v4.new_code_cell("print(...)")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nb.cells.append(cell)
    if ignored:
        cell = nbformat.v4.new_code_cell("print(time)", metadata={"tags": ["nbval-ignore-output"]})
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=ignored)]
        nb.cells.append(cell)
    path = folder / name
    nbformat.write(nb, path)
    return path


def _statuses(path: Path) -> dict[str, str]:
    return {n.text: n.status for n in check_prose_numbers(path)}


def test_a_printed_number_passes_within_the_rounding_of_the_prose(tmp_path):
    path = _notebook(tmp_path, "01_a.ipynb", ["准确率 0.759，方差 64.4，比值 6.3 倍。"], ["acc 0.7593 var 64.41 ratio 6.29x"])
    assert set(_statuses(path).values()) == {"printed"}


def test_a_number_more_precise_than_the_output_or_absent_fails(tmp_path):
    path = _notebook(tmp_path, "01_a.ipynb", ["准确率 0.7600，测试集 416 对。"], ["acc 0.76 test 428 pairs"])
    assert _statuses(path) == {"0.7600": "unsupported", "416": "unsupported"}
    failures = prose_number_failures(path)
    assert len(failures) == 2 and "cell 0: 0.7600" in failures[0] and "416" in failures[1]


def test_approximate_words_widen_the_tolerance_to_the_last_written_digit(tmp_path):
    path = _notebook(tmp_path, "01_a.ipynb", ["约 3,500 对训练数据；另有 3,500 对。"], ["train 3465"])
    assert [n.status for n in check_prose_numbers(path)] == ["printed", "unsupported"]


def test_percentages_match_fractions_and_printed_percentages(tmp_path):
    path = _notebook(tmp_path, "01_a.ipynb", ["完全匹配率 ≥ 95%，合并了 5.64% 的词对。"], ["threshold 0.95; merged 5.64%"])
    assert set(_statuses(path).values()) == {"printed"}


def test_outputs_of_cells_whose_output_varies_do_not_count(tmp_path):
    path = _notebook(tmp_path, "01_a.ipynb", ["快了 25.6 倍。"], [], ignored="speed-up 25.6x")
    assert _statuses(path) == {"25.6": "unsupported"}


def test_a_source_marker_covers_every_number_of_its_sentence_only(tmp_path):
    text = "共 238,766 / 8,802 / 12,500 对〔教材第 8 章〕。测试准确率 0.66485。"
    path = _notebook(tmp_path, "06_a.ipynb", [text], [])
    assert _statuses(path) == {"238,766": "cited", "8,802": "cited", "12,500": "cited", "0.66485": "unsupported"}


def test_a_lesson_marker_is_checked_against_that_lessons_outputs(tmp_path):
    _notebook(tmp_path, "01_other.ipynb", [], ["|J| 0.3375 -> 0.0537"])
    path = _notebook(tmp_path, "00_map.ipynb", ["雅可比范数从 0.3375 降到 0.0537〔第 01 课〕；另一处 0.1234〔第 01 课〕。"], [])
    assert _statuses(path) == {"0.3375": "other lesson", "0.0537": "other lesson", "0.1234": "unsupported"}


def test_unknown_markers_and_unnamed_papers_are_reported():
    assert marker_problems("0.5〔教材第 8 章〕 0.7〔第 06 课〕 0.9〔论文：Xiong 等 2020〕") == []
    problems = marker_problems("0.5〔种子文章〕 0.7〔论文〕 0.8〔第 6 课〕")
    assert len(problems) == 3 and "种子文章" in problems[0] and "name the paper" in problems[1]
    assert marker_problems("写成 `〔第 NN 课〕` 或 `〔…〕`") == []          # markers shown as code are examples


@pytest.mark.parametrize("text", [
    "```python\nsteps = 150\n```",                 # code block
    "调用 `train(steps=150)` 即可",                  # inline code
    "见第 12 节与第 8 章、练习 01-3",                    # structure
    "## 12. 标题",                                   # heading number
    "12. 列表项",                                     # list numbering
    "课程地图 01 → 02 → 07",                          # zero-padded lesson numbers
    "Xiong 等人 (2020, *On Layer Normalization*)",  # a year
    "2017 年提出",                                   # a year
    "PyTorch 2.13 与 2.13.0",                        # versions
    "float16 与 T5、BERT-base、d_k",                 # names
    "$\\omega_i = 10000^{-2i/D}$ 与 $\\sqrt{d_k}$",   # formulas
    "2 个块、标签 1",                                 # counting words
    "[链接](../data/README_2024.md)",                # link target
])
def test_what_is_not_prose_is_not_checked(tmp_path, text):
    path = _notebook(tmp_path, "01_a.ipynb", [text], [])
    assert check_prose_numbers(path) == []


def test_claims_inside_formulas_are_checked():
    kept = checkable_prose("$d_k=1024$ 时 $\\sqrt{2}\\approx 1.41$，误差 $10^{-6}$")
    assert "1024" in kept and "1.41" in kept and "1e-6" in kept and "sqrt" not in kept


def test_printed_values_skip_figure_reprs_and_read_scientific_notation():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "<Figure size 600x260 with 1 Axes>"}),
                    nbformat.v4.new_output("stream", name="stdout", text="grad 7.35e-10, lr=0.01")]
    nb.cells = [cell]
    assert printed_values(nb) == [(7.35e-10, 0.005e-10), (0.01, 0.005)]


def test_an_unreadable_notebook_is_named(tmp_path):
    bad = tmp_path / "01_bad.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CourseInputError, match="01_bad.ipynb"):
        check_prose_numbers(bad)
