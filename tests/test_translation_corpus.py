"""The course's translation corpus: the generator, and the shipped folder it wrote."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.files import MANIFEST_NAME
from lessons_lib.paths import TRANSLATION_CORPUS_DIR
from lessons_lib.syntax.attachment_control import PEOPLE, VERBS
from lessons_lib.syntax.treebank import read_conllu
from lessons_lib.syntax.trees import validate_heads
from lessons_lib.translation.course_corpus import (CLAUSE_FRAMES, CORPUS_FILES, DEFAULT_SIZES, NOUN_GLOSSES,
                                                   STATEMENT_FRAMES, VERB_GLOSSES, clause_sentence, corpus_files,
                                                   english_phrase, make_course_corpus, possessive_sentence,
                                                   split_phrases, syntax_sentence,
                                                   write_course_corpus)
from lessons_lib.translation.pairs_folder import SPLITS, TREES_FILE, read_pairs_folder

PHRASE = ("关心", "学生", "老师")


@pytest.fixture(scope="module")
def shipped():
    """The shipped folder as read back: ``(pairs by split, trees by id)``."""
    data = read_pairs_folder(TRANSLATION_CORPUS_DIR)
    trees = {tree.sent_id: tree for tree in read_conllu(TRANSLATION_CORPUS_DIR / TREES_FILE)}
    return {split: data.split(split) for split in SPLITS}, trees


def _syntax(shipped, split):
    pairs, trees = shipped
    return [(pair, trees[pair.id]) for pair in pairs[split] if pair.group == "syntax"]


# --- the sentences


def test_the_two_readings_of_one_text_translate_differently():
    relative, verbal = (syntax_sentence("s", PHRASE, reading, 0) for reading in (0, 1))
    assert relative.text == verbal.text == "关心学生的老师很重要。"
    assert relative.reference == "The teacher who cares about the student is important."
    assert verbal.reference == "Caring about the student's teacher is important."
    assert relative.heads != verbal.heads
    inside = syntax_sentence("s", PHRASE, 1, 3)
    assert inside.text == "我们讨论了关心学生的老师。" and inside.reference == "We discussed caring about the student's teacher."


def test_the_readings_differ_in_words_and_order_for_every_verb():
    for verb in VERBS:
        relative, verbal = (english_phrase(verb, "学生", "老师", reading).split() for reading in (0, 1))
        assert set(relative) != set(verbal), verb
        assert relative.index("teacher") < relative.index("student") and verbal.index("student's") < verbal.index("teacher")


def test_plain_sentences_read_as_their_text_says():
    clause = clause_sentence("p", PHRASE, 0)
    assert clause.text == "学生关心老师。" and clause.reference == "The student cares about the teacher."
    assert clause.heads == (1, -1, 1, 1) and clause.deprels == ("nsubj", "root", "obj", "punct")
    possessive = possessive_sentence("p", PHRASE, 0)
    assert possessive.text == "学生的老师很重要。" and possessive.reference == "The student's teacher is important."
    assert clause_sentence("p", PHRASE, 1).reference == "We know that the student cares about the teacher."


def test_the_glosses_cover_the_vocabulary_exactly():
    assert set(VERB_GLOSSES) == set(VERBS) and set(NOUN_GLOSSES) == set(PEOPLE)
    assert all(third.split()[0].endswith("s") and gerund.split()[0].endswith("ing")
               for third, gerund in VERB_GLOSSES.values())


def test_every_frame_builds_a_valid_tree_for_every_kind_of_phrase():
    for frame in range(len(STATEMENT_FRAMES)):
        for sentence in (syntax_sentence("a", PHRASE, 0, frame), syntax_sentence("b", PHRASE, 1, frame),
                         possessive_sentence("c", PHRASE, frame)):
            sentence.tree()  # validates: one root, no cycle, UD relations, words spell the text
    for frame in range(len(CLAUSE_FRAMES)):
        clause_sentence("d", PHRASE, frame).tree()


@pytest.mark.parametrize("call", [lambda: make_course_corpus(n_train=1), lambda: make_course_corpus(seed=-1),
                                  lambda: syntax_sentence("x", PHRASE, 2, 0),
                                  lambda: syntax_sentence("x", PHRASE, 0, len(STATEMENT_FRAMES))])
def test_bad_arguments_are_refused(call):
    with pytest.raises(CourseInputError):
        call()


# --- the generator


def test_the_generator_is_deterministic_and_the_seed_matters():
    first, again = (corpus_files(make_course_corpus(60, 10, 20, seed=3)) for _ in range(2))
    assert first == again
    assert corpus_files(make_course_corpus(60, 10, 20, seed=4))["train.tsv"] != first["train.tsv"]


@pytest.mark.parametrize("sizes", [(2, 2, 2), (3, 5, 7)])
def test_the_smallest_corpora_are_written_whole(tmp_path, sizes):
    write_course_corpus(tmp_path, *sizes, seed=1)
    data = read_pairs_folder(tmp_path)
    assert [len(data.split(split)) for split in SPLITS] == list(sizes)
    assert [Counter(p.group for p in data.split(split))["syntax"] for split in SPLITS] == [n // 2 for n in sizes]
    assert len(read_conllu(tmp_path / TREES_FILE)) == sum(sizes)


def test_the_phrase_split_leaves_no_phrase_in_two_splits():
    pools = split_phrases(0)
    assert sum(map(len, pools.values())) == len(VERBS) * len(PEOPLE) * (len(PEOPLE) - 1)
    assert not (set(pools["train"]) & set(pools["test"])) and not (set(pools["train"]) & set(pools["dev"]))


def test_the_shipped_folder_is_what_the_command_writes(cli, tmp_path):
    code, out, err = cli(["build-translation-corpus", "--out-dir", tmp_path / "corpus"])
    assert code == 0 and err == "", err
    assert "train: 4,000 pairs (2,000 syntax, 2,000 plain)" in out
    written = {p.name for p in (tmp_path / "corpus").iterdir()} - {MANIFEST_NAME}
    shipped = {p.name for p in TRANSLATION_CORPUS_DIR.iterdir()}
    assert written == shipped == set(CORPUS_FILES)
    differing = [name for name in sorted(shipped)
                 if (TRANSLATION_CORPUS_DIR / name).read_bytes() != (tmp_path / "corpus" / name).read_bytes()]
    assert not differing, f"rebuild with `lessons build-translation-corpus`: {differing} differ"


def test_a_second_build_replaces_its_own_files_but_not_the_users(cli, tmp_path):
    out = tmp_path / "corpus"
    small = ["--train-pairs", "20", "--dev-pairs", "4", "--test-pairs", "6"]
    assert cli(["build-translation-corpus", "--out-dir", out, *small])[0] == 0
    assert cli(["build-translation-corpus", "--out-dir", out, *small, "--seed", "5"])[0] == 0
    assert "--seed 5" in (out / "README.md").read_text(encoding="utf-8")
    (out / "dev.tsv").write_text("mine\n", encoding="utf-8")
    code, _, err = cli(["build-translation-corpus", "--out-dir", out, *small])
    assert code == 2 and "holds dev.tsv, which" in err and (out / "dev.tsv").read_text(encoding="utf-8") == "mine\n"


# --- the shipped corpus


def test_the_shipped_sizes_and_groups(shipped):
    pairs, trees = shipped
    for split in SPLITS:
        groups = Counter(pair.group for pair in pairs[split])
        assert len(pairs[split]) == DEFAULT_SIZES[split]
        assert groups == {"syntax": DEFAULT_SIZES[split] // 2, "plain": DEFAULT_SIZES[split] - DEFAULT_SIZES[split] // 2}
        assert max(len(pair.source) for pair in pairs[split]) <= 20
    assert list(trees) == [pair.id for split in SPLITS for pair in pairs[split]]


def test_jieba_segments_every_shipped_source_into_its_gold_words(shipped):
    from lessons_lib.syntax.segmentation import segment

    pairs, trees = shipped
    words = {pair.source: list(trees[pair.id].words) for split in SPLITS for pair in pairs[split]}
    cut = {text: segment(text) for text in words}
    wrong = [(text, cut[text]) for text, gold in words.items() if cut[text] != gold]
    assert not wrong, wrong[:5]


def test_every_tree_is_valid_and_spells_its_source(shipped):
    pairs, trees = shipped
    for split in SPLITS:
        for pair in pairs[split]:
            tree = trees[pair.id]
            validate_heads(tree.heads, name=pair.id)
            assert tree.text == pair.source == "".join(tree.words)
            assert tree.comment("group") == pair.group


def test_no_phrase_is_shared_between_training_and_evaluation(shipped):
    pairs, trees = shipped
    phrases = {split: {trees[pair.id].comment("phrase") for pair in pairs[split]} for split in SPLITS}
    assert not phrases["train"] & phrases["test"] and not phrases["train"] & phrases["dev"]
    for split in SPLITS:  # the recorded phrase is the one the sentence is made of
        for pair in pairs[split]:
            verb, noun1, noun2 = trees[pair.id].comment("phrase").split()
            assert noun1 in pair.source and noun2 in pair.source
            assert pair.group == "plain" or f"{verb}{noun1}的{noun2}" in pair.source


def test_the_tree_and_the_reference_follow_the_reading(shipped):
    relation_of_de = {0: "mark:rel", 1: "case"}
    for split in SPLITS:
        for pair, tree in _syntax(shipped, split):
            reading = int(tree.comment("reading"))
            assert tree.deprels[tree.words.index("的")] == relation_of_de[reading]
            assert english_phrase(*tree.comment("phrase").split(), reading).lower() in pair.reference.lower()


def test_both_readings_occur_in_every_split_at_about_equal_rates(shipped):
    for split in SPLITS:
        readings = [int(tree.comment("reading")) for _, tree in _syntax(shipped, split)]
        assert set(readings) == {0, 1} and 0.4 <= sum(readings) / len(readings) <= 0.6, split


def test_one_text_under_two_readings_has_two_references(shipped):
    seen_both = 0
    for split in SPLITS:
        references = defaultdict(dict)
        for pair, tree in _syntax(shipped, split):
            reading = int(tree.comment("reading"))
            assert references[pair.source].setdefault(reading, pair.reference) == pair.reference  # one per reading
        for by_reading in references.values():
            if len(by_reading) == 2:
                seen_both += 1
                assert by_reading[0] != by_reading[1]
    assert seen_both > 500


def test_a_plain_text_has_one_reference(shipped):
    pairs, _ = shipped
    references = defaultdict(set)
    for split in SPLITS:
        for pair in pairs[split]:
            if pair.group == "plain":
                references[pair.source].add(pair.reference)
    assert references and all(len(found) == 1 for found in references.values())


def test_the_text_does_not_predict_a_syntax_reference(shipped):
    """In train, about half of the texts come with both references; a rule on the text is at chance on test."""
    by_text = defaultdict(set)
    for pair, _ in _syntax(shipped, "train"):
        by_text[pair.source].add(pair.reference)
    assert sum(len(found) == 2 for found in by_text.values()) >= 0.3 * len(by_text)
    # Majority reading in train per verb, per noun, per frame (the text minus its phrase): chance on test.
    train, test = ([(pair, tree) for pair, tree in _syntax(shipped, split)] for split in ("train", "test"))

    def keys(pair, tree):
        verb, noun1, noun2 = tree.comment("phrase").split()
        return {"verb": verb, "noun1": noun1, "noun2": noun2, "frame": pair.source.replace(f"{verb}{noun1}的{noun2}", "")}

    for feature in ("verb", "noun1", "noun2", "frame"):
        votes = defaultdict(Counter)
        for pair, tree in train:
            votes[keys(pair, tree)[feature]][int(tree.comment("reading"))] += 1
        hits = [votes[keys(pair, tree)[feature]].most_common(1)[0][0] == int(tree.comment("reading")) for pair, tree in test]
        assert 0.4 <= sum(hits) / len(hits) <= 0.6, feature


def test_the_folder_holds_what_its_readme_says(shipped):
    readme = (TRANSLATION_CORPUS_DIR / "README.md").read_text(encoding="utf-8")
    assert "written for\nthe course" in readme or "written for the course" in readme
    assert f"| train | {DEFAULT_SIZES['train'] // 2:,}:" in readme


def test_data_readme_lists_the_folder():
    assert "`translation_corpus/`" in (Path(TRANSLATION_CORPUS_DIR).parent / "README.md").read_text(encoding="utf-8")


def test_bleu_tells_the_two_readings_apart(shipped):
    """The other reading's reference, scored against the right one, is far from a perfect translation."""
    import sacrebleu

    by_text = defaultdict(dict)
    for pair, tree in _syntax(shipped, "test"):
        by_text[pair.source][int(tree.comment("reading"))] = pair.reference
    both = [found for found in by_text.values() if len(found) == 2]
    assert len(both) > 50
    swapped = sacrebleu.corpus_bleu([found[1] for found in both], [[found[0] for found in both]]).score
    assert swapped < 30, swapped
    assert sacrebleu.corpus_bleu([found[0] for found in both], [[found[0] for found in both]]).score > 99


def test_format_pairs_is_the_text_write_pairs_file_writes(tmp_path):
    from lessons_lib.translation.pairs_folder import TranslationPair, format_pairs, write_pairs_file

    pairs = [TranslationPair("a-1", "老师关心学生。", "The teacher cares about the student.", "plain")]
    write_pairs_file(pairs, tmp_path / "x.tsv")
    assert (tmp_path / "x.tsv").read_text(encoding="utf-8") == format_pairs(pairs) == (
        "id\tsource\treference\tgroup\na-1\t老师关心学生。\tThe teacher cares about the student.\tplain\n")
    with pytest.raises(CourseInputError, match="a tab or a line break"):
        format_pairs([TranslationPair("a-2", "老师\t学生", "x", "plain")])
