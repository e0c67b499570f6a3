"""The LCQMC reader, the data-directory resolution and the shipped sample."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import find_split_file, load_lcqmc, read_lcqmc_file, resolve_data_dir
from lessons_lib.paths import LCQMC_ENV_VAR, LCQMC_SAMPLE_DIR
from lessons_lib.pairs.sample import build_sample, expand_meanings, pair_kind, read_question_families
from lessons_lib.evaluation.significance import check_independence
from lessons_lib.pairs.stats import LCQMC_KINDS, LCQMC_MEASURED, split_statistics


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
    meanings, by_text = expand_meanings(read_question_families())
    splits = {"train": data.train.examples, "dev": data.dev.examples, "test": data.test.examples}
    stats = split_statistics(splits)
    assert len(splits["train"]) <= 9_321 and min(len(splits["dev"]), len(splits["test"])) >= 1_000
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
    # LCQMC's task: per split and label, the Jaccard mean and quartiles within 0.05 of LCQMC's,
    # pair lengths within 3 characters
    for split in splits:
        for label in (0, 1):
            mine = stats.overlap[split][label]
            mean, *quartiles = LCQMC_MEASURED["jaccard"][split][label]
            assert all(abs(a - b) <= 0.05 for a, b in zip((mine.mean, *mine.quartiles), (mean, *quartiles))), (split, label)
            assert abs(mine.pair_chars - LCQMC_MEASURED["pair_chars"][split][label]) <= 3, (split, label)
    # train reuses questions as LCQMC does; dev and test are close to independent
    assert abs(stats.graph["train"].pairs_per_question - 1.94) <= 0.1
    for split in ("dev", "test"):
        check = check_independence(splits[split])
        assert check.holds and check.pairs_per_question <= 1.2 and check.largest_share <= 0.01
    # label 1 exactly within a meaning; each label's kinds in the shares counted on LCQMC's dev
    for split, examples in splits.items():
        assert all((by_text[e.text_a].meaning == by_text[e.text_b].meaning) == bool(e.label) for e in examples)
        for label, name in ((0, "negative"), (1, "positive")):
            kinds = Counter(pair_kind(meanings, by_text, e.text_a, e.text_b) for e in examples if e.label == label)
            n, counts = sum(kinds.values()), LCQMC_KINDS[name]
            for kind, count in counts.items():
                assert abs(kinds[kind] / n - count / sum(counts.values())) <= 0.01, (split, kind)


@pytest.mark.slow
def test_build_is_deterministic_and_matches_shipped_files(tmp_path: Path) -> None:
    build_sample(out_dir=tmp_path)
    for split in ("train", "dev", "test"):
        assert (tmp_path / f"{split}.tsv").read_bytes() == (LCQMC_SAMPLE_DIR / f"{split}.tsv").read_bytes()


def test_two_candidate_files_for_one_split_are_an_error(tmp_path: Path) -> None:
    write(tmp_path, "甲\t乙\t1\n".encode(), "train.tsv")
    write(tmp_path, "甲\t乙\t1\n".encode(), "train.txt")
    with pytest.raises(CourseInputError, match=r"holds 2 train files \(train.tsv, train.txt\)"):
        find_split_file(tmp_path, "train")


def test_the_public_copys_file_names_are_found_and_one_file_under_two_names_counts_once(tmp_path: Path) -> None:
    write(tmp_path, "text_a\ttext_b\tlabel\n甲\t乙\t1\n".encode(), "lcqmc_train.tsv")
    assert find_split_file(tmp_path, "train") == tmp_path / "lcqmc_train.tsv"
    # a case-insensitive file system shows LCQMC_train.tsv and lcqmc_train.tsv as one file; a hard link does too
    (tmp_path / "LCQMC_train.tsv").hardlink_to(tmp_path / "lcqmc_train.tsv")
    assert find_split_file(tmp_path, "train") == tmp_path / "LCQMC_train.tsv"
    write(tmp_path, "甲\t乙\t1\n".encode(), "train.tsv")  # a second, different file is still an error
    with pytest.raises(CourseInputError, match=r"holds 2 train files \(train.tsv, LCQMC_train.tsv\)"):
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
