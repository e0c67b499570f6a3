"""Head arrays, root conventions and CoNLL-U reading/validation (lessons_lib.syntax.trees/treebank)."""

from __future__ import annotations

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.treebank import format_conllu, make_sentence, read_conllu, write_conllu
from lessons_lib.syntax.trees import (
    depths,
    heads_from_conllu,
    heads_from_spacy,
    heads_to_conllu,
    heads_to_spacy,
    validate_heads,
)

# 怎么 做 红烧肉 ？ — 做 is the root.
HEADS = [1, -1, 1, 1]


def test_valid_tree_passes_and_is_returned_as_ints():
    assert validate_heads(tuple(HEADS)) == HEADS


@pytest.mark.parametrize(
    "heads, message",
    [
        ([], "empty"),
        ([1, -1, 7], "outside"),
        ([-1, 1, 0], "its own head"),
        ([-1, -1, 0], "exactly one root"),
        ([1, 2, 0, -1], "cycle"),  # one root, but words 0-1-2 never reach it
        ([1, 2, 1, -1], "cycle"),
        ([1, "x", -1], "integers"),
    ],
)
def test_invalid_trees_are_rejected_with_the_sentence_named(heads, message):
    with pytest.raises(CourseInputError, match=message) as info:
        validate_heads(heads, name="demo.conllu:7 (sentence s1)")
    assert "demo.conllu:7" in str(info.value)


def test_cycle_message_lists_the_words_on_the_cycle():
    with pytest.raises(CourseInputError, match=r"cycle through words \[1, 2\]"):
        validate_heads([-1, 2, 1])


def test_root_conventions_round_trip():
    assert heads_from_conllu([2, 0, 2, 2]) == HEADS
    assert heads_to_conllu(HEADS) == [2, 0, 2, 2]
    assert heads_to_spacy(HEADS) == [1, 1, 1, 1]
    assert heads_from_spacy([1, 1, 1, 1]) == HEADS


def test_reading_a_conllu_head_column_as_0_based_is_caught_here():
    # The pitfall of lesson 07: CoNLL-U heads taken as 0-based give word 1 as its own head.
    with pytest.raises(CourseInputError, match="own head"):
        validate_heads([2, 0, 2, 2])


def test_depths():
    assert depths(HEADS) == [1, 0, 1, 1]
    assert depths([-1, 0, 1, 2]) == [0, 1, 2, 3]


def _write(tmp_path, text: str):
    path = tmp_path / "t.conllu"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = (
    "# sent_id = s1\n# text = 怎么做红烧肉？\n"
    "1\t怎么\t_\tPRON\t_\t_\t2\tadvmod\t_\t_\n"
    "2\t做\t_\tVERB\t_\t_\t0\troot\t_\t_\n"
    "3\t红烧肉\t_\tNOUN\t_\t_\t2\tobj\t_\t_\n"
    "4\t？\t_\tPUNCT\t_\t_\t2\tpunct\t_\t_\n\n"
)


def test_read_conllu(tmp_path):
    [s] = read_conllu(_write(tmp_path, GOOD))
    assert s.sent_id == "s1" and s.text == "怎么做红烧肉？"
    assert s.words == ("怎么", "做", "红烧肉", "？")
    assert s.heads == tuple(HEADS)
    assert s.deprels == ("advmod", "root", "obj", "punct")
    assert s.source.endswith("t.conllu:1")


def test_multiword_and_empty_nodes_are_skipped_and_counted(tmp_path):
    text = GOOD.replace("1\t怎么", "1-2\t怎么做\t_\t_\t_\t_\t_\t_\t_\t_\n1\t怎么", 1)
    text = text.replace("4\t？", "3.1\t了\t_\tPART\t_\t_\t_\t_\t2:aux\t_\n4\t？")
    [s] = read_conllu(_write(tmp_path, text))
    assert s.skipped_lines == 2 and len(s) == 4


@pytest.mark.parametrize(
    "old, new, message, line",
    [
        ("3\t红烧肉\t_\tNOUN\t_\t_\t2\tobj", "3\t红烧肉\t_\tNOUN\t_\t_\t9\tobj", "outside", 1),
        ("3\t红烧肉\t_\tNOUN\t_\t_\t2\tobj", "3\t红烧肉\t_\tNOUN\t_\t_\t0\tobj", "one root", 1),
        ("\tobj\t", "\tobject\t", "unknown dependency relation 'object'", 5),
        ("3\t红烧肉", "5\t红烧肉", "should be 3", 5),
        ("3\t红烧肉\t_\tNOUN\t_\t_\t2\tobj\t_\t_", "3\t红烧肉\t_\tNOUN", "10 tab-separated", 5),
        ("# text = 怎么做红烧肉？", "# text = 怎么做红烧鱼？", "do not spell the text", 1),
        ("2\tobj", "2\tobj", "", 0),
    ],
)
def test_bad_conllu_names_file_and_line(tmp_path, old, new, message, line):
    path = _write(tmp_path, GOOD.replace(old, new))
    if not message:
        assert len(read_conllu(path)) == 1
        return
    with pytest.raises(CourseInputError, match=message) as info:
        read_conllu(path)
    assert f"t.conllu:{line}" in str(info.value)
    assert "s1" in str(info.value) or "t.conllu" in str(info.value)


def test_repeated_sent_id_is_an_error(tmp_path):
    with pytest.raises(CourseInputError, match="repeats"):
        read_conllu(_write(tmp_path, GOOD + GOOD))
    # Also when the repeated sentence is the last one and the file has no final blank line.
    with pytest.raises(CourseInputError, match="repeats"):
        read_conllu(_write(tmp_path, GOOD + GOOD.rstrip("\n")))


def test_missing_or_undecodable_file(tmp_path):
    with pytest.raises(CourseInputError, match="no/such/file.conllu"):
        read_conllu("no/such/file.conllu")
    path = tmp_path / "latin1.conllu"
    path.write_bytes(GOOD.encode("utf-8") + "\n# text = caf\xe9\n".encode("latin-1"))
    with pytest.raises(CourseInputError, match=r"latin1.conllu:\d+: not UTF-8"):
        read_conllu(path)


def test_write_then_read_round_trip(tmp_path):
    s = make_sentence("x1", ["什么", "是", "区块链", "？"], [2, 2, -1, 2], ["nsubj", "cop", "root", "punct"],
                      comments=[("kind", "what-is")])
    path = tmp_path / "out.conllu"
    write_conllu([s], path)
    [back] = read_conllu(path)
    assert (back.words, back.heads, back.deprels, back.comment("kind")) == (s.words, s.heads, s.deprels, "what-is")
    assert format_conllu([]) == ""


def test_make_sentence_checks_lengths_and_root_label():
    with pytest.raises(CourseInputError, match="equal in number"):
        make_sentence("x", ["a", "b"], [-1], ["root"])
    with pytest.raises(CourseInputError, match="not 'root'"):
        make_sentence("x", ["a", "b"], [-1, 0], ["obj", "obj"])
    with pytest.raises(CourseInputError, match="have relation 'root' but a head"):
        make_sentence("x", ["a", "b"], [-1, 0], ["root", "root"])
