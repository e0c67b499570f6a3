"""The glossary: its table is well formed, and the variant check finds what it should and only that."""

from __future__ import annotations

import pytest

from lessons_lib.course.glossary import GlossaryEntry, parse_glossary, read_glossary, variant_spellings
from lessons_lib.errors import CourseInputError

TABLE = """# 术语表

| 中文 | English | 一句话定义 | 不要写成 |
|---|---|---|---|
| 遮蔽 | mask | 布尔张量。 | 掩码、掩蔽 |
| 掩码语言模型 | masked language model | 固定译名。 | |
| 热图 | heatmap | 用颜色画矩阵。 | 热力图 |
"""


def test_the_table_is_parsed_with_its_variants():
    entries = parse_glossary(TABLE)
    assert entries[0] == GlossaryEntry("遮蔽", "mask", "布尔张量。", ("掩码", "掩蔽"))
    assert entries[1].variants == ()


def test_variants_are_found_and_named_with_the_term_to_use():
    problems = variant_spellings("用掩码遮住填充，画一张热力图；再画一张热力图。", parse_glossary(TABLE))
    assert problems == ["「掩码」 ×1: write 「遮蔽」 (mask)", "「热力图」 ×2: write 「热图」 (heatmap)"]


def test_a_variant_inside_a_longer_term_is_not_a_variant():
    assert variant_spellings("BERT 用掩码语言模型预训练；遮蔽与热图。", parse_glossary(TABLE)) == []


@pytest.mark.parametrize("reference, flagged", [("第 06 课", False), ("第 6 课", True), ("第06课", True), ("第 1 课", True)])
def test_lesson_references_are_written_with_two_digits(reference, flagged):
    problems = variant_spellings(f"见{reference}的例子", parse_glossary(TABLE))
    assert bool(problems) == flagged
    if flagged:
        assert "第 0" in problems[0]


@pytest.mark.parametrize("text, message", [
    ("| 中文 | English | 一句话定义 | 不要写成 |\n|---|---|---|---|\n| 遮蔽 | mask | |  |\n", "line 3"),
    ("| 中文 | English | 一句话定义 | 不要写成 |\n|---|---|---|---|\n| 遮蔽 | mask | a. |\n", "line 3"),
    ("no table here\n", "no glossary table"),
    (TABLE + "| 遮蔽 | mask | again. | |\n", "listed twice"),
    (TABLE + "| 掩码 | mask | clash. | |\n", "both as a term and as a variant"),
])
def test_a_malformed_glossary_is_refused_with_its_line(text, message):
    with pytest.raises(CourseInputError, match=message):
        parse_glossary(text)


def test_the_course_glossary_reads_and_has_the_source_names():
    terms = {entry.term for entry in read_glossary()}
    assert {"句法偏置原文", "Seq2Seq 博客", "教材第 8 章", "遮蔽", "热图", "编码器块", "段编号", "段嵌入"} <= terms
    assert len(terms) >= 60


def _string_constants(path) -> str:
    """Every string literal of a module, f-strings' literal parts included (what its messages say)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return "\n".join(node.value for node in ast.walk(tree)
                     if isinstance(node, ast.Constant) and isinstance(node.value, str))


def test_the_checkers_messages_use_the_glossary_terms():
    from pathlib import Path

    import lessons_lib.exercises as exercises

    glossary = read_glossary()
    modules = sorted(Path(exercises.__file__).parent.glob("*.py"))
    assert len(modules) >= 5
    problems = {path.name: found for path in modules if (found := variant_spellings(_string_constants(path), glossary))}
    assert not problems, problems


def test_the_checkers_messages_check_finds_a_variant(tmp_path):
    module = tmp_path / "checker.py"
    module.write_text('exercise = "练习 05-1 Pre-LN 编码块"\nhint = f"见{1}热力图"\n', encoding="utf-8")
    assert variant_spellings(_string_constants(module), parse_glossary(TABLE)) == ["「热力图」 ×1: write 「热图」 (heatmap)"]
    assert variant_spellings(_string_constants(module), read_glossary())
