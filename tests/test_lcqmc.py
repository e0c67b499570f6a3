"""The LCQMC reader, the data-directory resolution and the shipped sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import find_split_file, load_lcqmc, read_lcqmc_file, resolve_data_dir
from lessons_lib.paths import LCQMC_ENV_VAR, LCQMC_SAMPLE_DIR
from lessons_lib.pairs.sample import build_sample, char_overlap, read_question_groups
from lessons_lib.pairs.stats import LCQMC_MEASURED, split_statistics


def write(tmp_path: Path, content: bytes, name: str = "train.tsv") -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_reads_header_bom_and_crlf(tmp_path: Path) -> None:
    content = "\ufefftext_a\ttext_b\tlabel\r\n什么花一年四季都开\t哪种花全年都开\t1\r\n什么花\t什么花生\t0\r\n".encode()
    split = read_lcqmc_file(write(tmp_path, content))
    assert split.had_header
    assert [(e.text_a, e.text_b, e.label, e.line) for e in split.examples] == [
        ("什么花一年四季都开", "哪种花全年都开", 1, 2),
        ("什么花", "什么花生", 0, 3),
    ]


def test_reads_file_without_header_or_final_newline(tmp_path: Path) -> None:
    split = read_lcqmc_file(write(tmp_path, "甲\t乙\t0\n丙\t丁\t1".encode()))
    assert not split.had_header
    assert [e.label for e in split.examples] == [0, 1]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("只有一列\t1", "3 tab-separated columns"),
        ("a\tb\tc\td", "found 4"),
        ("问题一\t问题二\t2", "label must be 0 or 1"),
        ("问题一\t问题二\tyes", "label must be 0 or 1"),
        ("\t问题二\t1", "empty first sentence"),
        ("问题一\t  \t0", "empty second sentence"),
        ("", "empty line"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, f"好\t坏\t1\n{line}\n对\t错\t0\n".encode())
    with pytest.raises(CourseInputError, match=message) as info:
        read_lcqmc_file(path)
    assert str(path) in str(info.value) and "line 2" in str(info.value)


def test_invalid_utf8_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, "好\t坏\t1\n".encode() + b"\xff\xfe\t\xe5\t1\n")
    with pytest.raises(CourseInputError, match="line 2: not valid UTF-8"):
        read_lcqmc_file(path)


def test_lenient_mode_counts_and_lists_skipped_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "好\t坏\t1\n坏行\n对\t错\t3\n对\t错\t0\n".encode())
    split = read_lcqmc_file(path, lenient=True, name="train")
    assert len(split) == 2
    assert [(s.line, s.text) for s in split.skipped] == [(2, "坏行"), (3, "对\t错\t3")]
    assert "skipped lines: 2 (lines 2, 3)" in split.summary()


def test_duplicates_and_conflicting_labels_are_counted_not_dropped(tmp_path: Path) -> None:
    content = "甲\t乙\t1\n甲\t乙\t1\n乙\t甲\t0\n丙\t丁\t0\n".encode()
    split = read_lcqmc_file(write(tmp_path, content), name="train")
    assert len(split) == 4
    assert split.duplicate_count() == 1
    assert split.conflicting_pairs() == [("乙", "甲")]
    assert "exact duplicates: 1, pairs with both labels: 1" in split.summary()


def test_missing_file_and_split(tmp_path: Path) -> None:
    with pytest.raises(CourseInputError, match="not found"):
        read_lcqmc_file(tmp_path / "nope.tsv")
    with pytest.raises(CourseInputError, match="no dev file"):
        find_split_file(tmp_path, "dev")
    with pytest.raises(CourseInputError, match="`split` must be one of"):
        find_split_file(tmp_path, "valid")


def test_finds_original_txt_names(tmp_path: Path) -> None:
    for split in ("train", "dev", "test"):
        write(tmp_path, "甲\t乙\t1\n".encode(), f"{split}.txt")
    data = load_lcqmc(tmp_path)
    assert data.source.origin == "argument" and len(data.test) == 1


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LCQMC_ENV_VAR, raising=False)
    assert resolve_data_dir().origin == "sample"
    assert resolve_data_dir().path == LCQMC_SAMPLE_DIR
    monkeypatch.setenv(LCQMC_ENV_VAR, str(tmp_path))
    assert resolve_data_dir().origin == "environment"
    assert resolve_data_dir(tmp_path).origin == "argument"
    monkeypatch.setenv(LCQMC_ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(CourseInputError, match=LCQMC_ENV_VAR):
        resolve_data_dir()
    with pytest.raises(CourseInputError, match="data_dir"):
        resolve_data_dir(tmp_path / "missing")


def test_shipped_sample_meets_its_promises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LCQMC_ENV_VAR, raising=False)
    data = load_lcqmc()
    assert data.source.is_sample and "样例" in data.source.describe()
    groups = read_question_groups()
    assert len(groups) >= 400 and all(len(g.questions) == 6 for g in groups)
    splits = {"train": data.train.examples, "dev": data.dev.examples, "test": data.test.examples}
    stats = split_statistics(splits)
    # LCQMC's label balance: train 58 % label 1, dev and test exactly half
    assert abs(stats.label_share("train") - LCQMC_MEASURED["label_1"]["train"]) <= 0.01
    assert stats.label_share("dev") == stats.label_share("test") == 0.5
    # LCQMC's recurrence of test questions in train, within 3 points
    for split in ("dev", "test"):
        against = stats.against_train[split]
        assert abs(against.seen_share - LCQMC_MEASURED["test_questions_seen"]) <= 0.03
        for share, key in zip(against.kind_shares(), ("test_both", "test_one", "test_neither")):
            assert abs(share - LCQMC_MEASURED[key]) <= 0.03, (split, key, share)
    # no pair twice, in either order, within or across splits; dev and test share no question
    assert set(stats.repeats.values()) == {0} and set(stats.duplicates.values()) == {0}
    assert stats.shared_dev_test_questions == 0
    # label 1 exactly when the two questions are in one group
    group_of = {q: g.index for g in groups for q in g.questions}
    for examples in splits.values():
        assert all((group_of[e.text_a] == group_of[e.text_b]) == bool(e.label) for e in examples)
    # unseen questions never reach train: an eval group is absent from train entirely ("new",
    # "decoy") or lacks at most one question there ("extended"); train groups are complete
    train_questions = {q for e in splits["train"] for q in (e.text_a, e.text_b)}
    eval_groups = {group_of[q] for s in ("dev", "test") for e in splits[s] for q in (e.text_a, e.text_b)}
    for group in groups:
        missing = sum(q not in train_questions for q in group.questions)
        assert missing in ((0, 1, 6) if group.index in eval_groups else (0,)), group.questions
    # hard negatives in every split, low-overlap positives overall
    assert min(stats.hard_negatives[s] for s in ("dev", "test")) >= 20 and stats.hard_negatives["train"] >= 100
    positives = [e for examples in splits.values() for e in examples if e.label == 1]
    assert sum(char_overlap(e.text_a, e.text_b) <= 0.2 for e in positives) >= 300


def test_build_is_deterministic_and_matches_shipped_files(tmp_path: Path) -> None:
    build_sample(out_dir=tmp_path)
    for split in ("train", "dev", "test"):
        assert (tmp_path / f"{split}.tsv").read_bytes() == (LCQMC_SAMPLE_DIR / f"{split}.tsv").read_bytes()


def test_source_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "## 话题\n问题一\n问题二\n\n问题三\n\n".encode(), "groups.txt")
    with pytest.raises(CourseInputError, match="line 5: a group needs at least 2"):
        read_question_groups(path)
    path = write(tmp_path, "## 话题\n问题一\n问题二\n\n问题一\n问题四\n".encode(), "groups.txt")
    with pytest.raises(CourseInputError, match="line 5: question '问题一' already on line 2"):
        read_question_groups(path)
    path = write(tmp_path, "问题一\n".encode(), "groups.txt")
    with pytest.raises(CourseInputError, match="before the first"):
        read_question_groups(path)


def test_two_candidate_files_for_one_split_are_an_error(tmp_path: Path) -> None:
    write(tmp_path, "甲\t乙\t1\n".encode(), "train.tsv")
    write(tmp_path, "甲\t乙\t1\n".encode(), "train.txt")
    with pytest.raises(CourseInputError, match=r"holds 2 train files \(train.tsv, train.txt\)"):
        find_split_file(tmp_path, "train")


def test_an_empty_split_is_an_error_naming_the_file(tmp_path: Path) -> None:
    for split in ("train", "dev"):
        write(tmp_path, "甲\t乙\t1\n".encode(), f"{split}.tsv")
    write(tmp_path, b"", "test.tsv")
    with pytest.raises(CourseInputError, match=r"test.tsv: the test split holds no pairs$"):
        load_lcqmc(tmp_path)
    write(tmp_path, "坏的一行\n".encode(), "test.tsv")
    with pytest.raises(CourseInputError, match=r"holds no pairs \(1 malformed lines skipped\)"):
        load_lcqmc(tmp_path, lenient=True)


def test_fingerprints_follow_the_pairs_not_the_file(tmp_path: Path) -> None:
    from lessons_lib.pairs.data import PairExample, examples_fingerprint

    a = read_lcqmc_file(write(tmp_path, "甲\t乙\t1\n丙\t丁\t0\n".encode(), "a.tsv"))
    b = read_lcqmc_file(write(tmp_path, "text_a\ttext_b\tlabel\r\n甲\t乙\t1\r\n丙\t丁\t0\r\n".encode(), "b.tsv"))
    assert a.fingerprint() == b.fingerprint() == examples_fingerprint([PairExample("甲", "乙", 1), PairExample("丙", "丁", 0)])
    assert examples_fingerprint(a.examples[:1]) != a.fingerprint()
    assert examples_fingerprint([PairExample("甲", "乙", 0), PairExample("丙", "丁", 0)]) != a.fingerprint()


def test_skipped_lines_are_written_with_file_line_and_reason(tmp_path: Path) -> None:
    from lessons_lib.pairs.data import write_skipped_lines

    split = read_lcqmc_file(write(tmp_path, "甲\t乙\t1\n坏\t行\t\\x\t9\n".encode()), lenient=True, name="train")
    count = write_skipped_lines([split], tmp_path / "skipped.tsv")
    rows = (tmp_path / "skipped.tsv").read_text(encoding="utf-8").splitlines()
    assert count == 1 and rows[0] == "file\tline\treason\ttext"
    assert rows[1].split("\t") == [str(tmp_path / "train.tsv"), "2", "expected 3 tab-separated columns (text_a, text_b, "
                                   "label), found 4", "坏\\t行\\t\\\\x\\t9"]
