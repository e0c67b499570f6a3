"""Parser training and evaluation helpers (the parser itself is trained by `lessons train-parser`, never in CI)."""

from __future__ import annotations

import json

import pytest

from lessons_lib import paths
from lessons_lib.cli import build_parser
from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.parser_training import (
    DEFAULT_UD_DIR,
    SCORES_FILE,
    SMALL_MODEL_NAME,
    SMALL_SCORES_FILE,
    UD_EVAL_FILE,
    UD_TRAIN_FILES,
    evaluate_parser,
    read_course_treebank,
    read_ud,
    split_course_treebank,
    to_doc,
)

needs_ud = pytest.mark.skipif(not DEFAULT_UD_DIR.is_dir(),
                              reason=f"UD treebanks not found at {DEFAULT_UD_DIR} (../shared/data/ud)")


def test_the_evaluation_only_treebank_is_never_a_training_file():
    assert UD_EVAL_FILE not in UD_TRAIN_FILES
    assert "beginner" not in " ".join(UD_TRAIN_FILES)


def test_commands_are_registered():
    parser = build_parser()
    args = parser.parse_args(["train-parser", "--ud-dir", "somewhere", "--max-epochs", "2"])
    assert args.handler.__name__ == "run_train_parser" and str(args.ud_dir) == "somewhere"
    assert args.name == "course_parser" and args.config.name == "parser_config.cfg"
    args = parser.parse_args(["train-parser", "--config", "data/parser/parser_config_small.cfg", "--name", "x"])
    assert args.name == "x" and args.config.name == "parser_config_small.cfg"
    args = parser.parse_args(["preparse", "--data-dir", "x"])
    assert args.handler.__name__ == "run_preparse"


def test_train_parser_reports_a_missing_ud_folder(tmp_path, capsys):
    from lessons_lib.cli import main

    assert main(["train-parser", "--ud-dir", str(tmp_path / "nope")]) == 2
    assert "error: UD folder not found" in capsys.readouterr().err


def test_gold_docs_keep_words_heads_and_relations():
    import spacy

    hand, _ = read_course_treebank()
    doc = to_doc(hand[0], spacy.blank("zh").vocab)
    assert [t.text for t in doc] == list(hand[0].words)
    assert [t.dep_ for t in doc] == list(hand[0].deprels)
    assert [-1 if t.head.i == t.i else t.head.i for t in doc] == list(hand[0].heads)


@needs_ud
def test_ud_files_are_valid_treebanks():
    ud = read_ud(DEFAULT_UD_DIR, (*UD_TRAIN_FILES, UD_EVAL_FILE))
    assert all(len(sentences) > 400 for sentences in ud.values())
    with pytest.raises(CourseInputError, match="--ud-dir"):
        read_ud(DEFAULT_UD_DIR, ["zh_missing.conllu"])


def test_evaluation_on_the_heldout_hand_written_questions():
    from lessons_lib.syntax.parser import load_parser

    nlp = load_parser(paths.PARSER_MODEL_DIR, prefer_official=False)
    hand, templates = read_course_treebank()
    heldout = split_course_treebank(hand, templates)["heldout_hand"]
    gold = evaluate_parser(nlp, heldout, "gold")
    jieba = evaluate_parser(nlp, heldout, "jieba")
    # The hand-written treebank is segmented by jieba, so both conditions see the same words.
    assert gold == jieba and 0 <= gold["las"] <= gold["uas"] <= 100 and gold["sentences"] == len(heldout)
    with pytest.raises(CourseInputError, match="segmentation"):
        evaluate_parser(nlp, heldout, "pkuseg")
    with pytest.raises(CourseInputError, match="empty"):
        evaluate_parser(nlp, [], "gold")


SHIPPED = [(paths.PARSER_MODEL_DIR, SCORES_FILE, "course_parser"),
           (paths.SMALL_PARSER_MODEL_DIR, SMALL_SCORES_FILE, SMALL_MODEL_NAME)]


@pytest.mark.parametrize("model_dir, scores_file, name", SHIPPED, ids=["shipped", "small"])
def test_shipped_scores_file_describes_the_shipped_model(model_dir, scores_file, name):
    from lessons_lib.syntax.parser import load_parser, parser_identity

    data = json.loads(scores_file.read_text(encoding="utf-8"))
    assert set(data["scores"]) >= {"beginner_part_a", "course_heldout_hand", "course_heldout_templates"}
    size = sum(p.stat().st_size for p in model_dir.rglob("*") if p.is_file())
    assert size == data["model_bytes"] and size < 10_000_000
    # The held-out course sentences ship with the course: their scores are re-measured here.
    nlp = load_parser(model_dir, prefer_official=False)
    assert parser_identity(nlp)[0] == f"zh_{name}"
    hand, templates = read_course_treebank()
    split = split_course_treebank(hand, templates)
    assert evaluate_parser(nlp, split["heldout_hand"], "gold") == data["scores"]["course_heldout_hand"]["gold"]
    assert evaluate_parser(nlp, split["heldout_template"], "gold") == data["scores"]["course_heldout_templates"]["gold"]


def test_the_small_parser_is_smaller_than_the_shipped_one():
    shipped, small = (json.loads(f.read_text(encoding="utf-8")) for f in (SCORES_FILE, SMALL_SCORES_FILE))
    assert small["model_bytes"] < shipped["model_bytes"] / 2
    assert small["training_seconds"] < shipped["training_seconds"]


def test_train_parser_names_a_missing_config(tmp_path):
    from lessons_lib.syntax.parser_training import train_parser

    with pytest.raises(CourseInputError, match="config not found"):
        train_parser(ud_dir=tmp_path, output=tmp_path / "out", config=tmp_path / "missing.cfg")
