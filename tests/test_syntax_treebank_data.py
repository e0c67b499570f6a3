"""The course's question treebank: valid trees, jieba segmentation, reproducible templates, the split."""

from __future__ import annotations

import pytest

from lessons_lib.syntax import question_grammar
from lessons_lib.syntax.segmentation import segment
from lessons_lib.syntax.parser_training import TEMPLATE_FILE, read_course_treebank, split_course_treebank
from lessons_lib.syntax.treebank import format_conllu


@pytest.fixture(scope="module")
def treebank():
    return read_course_treebank()  # validates every tree while reading


def test_sizes_and_kinds(treebank):
    hand, templates = treebank
    assert len(hand) >= 300
    kinds = {s.comment("kind") for s in templates}
    assert {"how-to", "what-is", "recommendation", "yes/no", "comparison"} <= kinds
    texts = [s.text for s in hand + templates]
    assert len(texts) == len(set(texts)), "a question appears twice in the treebank"


def test_every_sentence_is_segmented_as_the_course_segments(treebank):
    hand, templates = treebank
    wrong = [s.sent_id for s in hand + templates if segment(s.text) != list(s.words)]
    assert wrong == []


def test_template_file_is_what_the_grammar_generates(treebank):
    hand, _ = treebank
    sentences, report = question_grammar.generate(exclude=[s.text for s in hand])
    assert format_conllu(sentences) == TEMPLATE_FILE.read_text(encoding="utf-8")
    assert report.kept == len(sentences) and report.rejected_segmentation > 0


def test_split_is_deterministic_and_disjoint(treebank):
    hand, templates = treebank
    split = split_course_treebank(hand, templates)
    again = split_course_treebank(hand, templates)
    assert {k: [s.sent_id for s in v] for k, v in split.items()} == {k: [s.sent_id for s in v] for k, v in again.items()}
    ids = [s.sent_id for part in split.values() for s in part]
    assert len(ids) == len(set(ids)) == len(hand) + len(templates)
    heldout = len(split["heldout_hand"]) + len(split["heldout_template"])
    assert 0.05 < heldout / len(ids) < 0.15  # about a tenth
    train_frames = {s.comment("frame") for s in split["train"] if s.comment("frame")}
    heldout_frames = {s.comment("frame") for s in split["heldout_template"]}
    assert heldout_frames and not train_frames & heldout_frames


def test_grammar_frames_and_fillers_are_well_formed():
    frames = question_grammar.frames()
    assert len(frames) >= 50
    for frame in frames:  # each frame realised with one-word fillers must be a valid tree
        fillers = [question_grammar.Phrase((f"X{i}",), (-1,), ("",)) for i, _ in enumerate(frame.slots)]
        question_grammar._realise_positional(frame, fillers, frame.frame_id)
    with pytest.raises(ValueError, match="exactly one bare head"):
        question_grammar.parse_filler("蓝牙@nmod>2 耳机@obj>1")
    with pytest.raises(ValueError, match="form:head:rel"):
        question_grammar.parse_frame("fx", "how-to", "怎么 {VP}:0:root")
