"""The Tatoeba reader and ``lessons tatoeba-split``, on synthetic files written here (the course's own toy sentences).

Only :func:`test_the_real_file_splits_without_leakage` reads the real ``cmn.txt``, where
``$TATOEBA_FILE`` names it, and it checks counts only: it prints no sentence.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.paths import REPO_ROOT, TATOEBA_ENV_VAR
from lessons_lib.translation import tatoeba
from lessons_lib.translation.pairs_folder import HEADER, SPLITS, TranslationPair, read_pairs_folder
from lessons_lib.translation.tatoeba import (TatoebaPair, changed_characters, check_no_shared_sentences, read_tatoeba,
                                             sentence_components, split_tatoeba, write_tatoeba_split)

COLOURS = ["红", "绿", "蓝", "黄", "黑", "白", "紫", "灰"]
THINGS = ["风筝", "杯子", "椅子", "雨伞", "帽子", "箱子", "铅笔", "手套"]
THINGS_EN = ["kite", "cup", "chair", "umbrella", "hat", "box", "pencil", "glove"]
COLOURS_EN = ["red", "green", "blue", "yellow", "black", "white", "purple", "grey"]


def _line(english: str, chinese: str, english_id: int, chinese_id: int) -> str:
    return (f"{english}\t{chinese}\tCC-BY 2.0 (France) Attribution: tatoeba.org #{english_id} (toy_writer) "
            f"& #{chinese_id} (another_writer)")


def _toy_lines(count: int = 64) -> list[str]:
    """``count`` pairs with distinct sentences: toy pair ``i`` has English id ``1000 + i`` and Chinese id ``5000 + i``."""
    lines = []
    for i in range(count):
        colour, thing = i % len(COLOURS), (i // len(COLOURS)) % len(THINGS)
        english = f"Toy number {i}: the {COLOURS_EN[colour]} {THINGS_EN[thing]}."
        chinese = f"第{i}号玩具：{COLOURS[colour]}色的{THINGS[thing]}。"
        lines.append(_line(english, chinese, 1000 + i, 5000 + i))
    return lines


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _read(path: Path) -> tatoeba.TatoebaReading:
    return read_tatoeba(path, expected_sha256=None)  # a synthetic file: no digest to check


def _pair(line: int, english_id: str, chinese_id: str, english: str, chinese: str) -> TatoebaPair:
    return TatoebaPair(line, english_id, chinese_id, english, chinese, chinese)


# --- reading


def test_each_line_becomes_a_pair_with_its_two_ids(tmp_path):
    reading = _read(_write(tmp_path / "toy.txt", _toy_lines(5)))
    assert reading.lines_read == 5 and len(reading.pairs) == 5
    first = reading.pairs[0]
    assert (first.line, first.english_id, first.chinese_id) == (1, "1000", "5000")
    assert first.english == "Toy number 0: the red kite." and first.chinese == "第0号玩具：红色的风筝。"
    assert first.pair_id == "tatoeba-1000-5000"
    assert first.translation_pair() == TranslationPair("tatoeba-1000-5000", "第0号玩具：红色的风筝。",
                                                       "Toy number 0: the red kite.", "all")
    assert reading.sha256 == hashlib.sha256((tmp_path / "toy.txt").read_bytes()).hexdigest()
    assert (reading.repeated_ids, reading.duplicate_texts, reading.converted_sentences) == (0, 0, 0)


def test_traditional_chinese_becomes_simplified_and_is_counted(tmp_path):
    lines = [_line("This is a book.", "這是書", 1, 2), _line("Already simplified.", "这是书", 3, 4)]
    reading = _read(_write(tmp_path / "toy.txt", lines))
    assert [pair.chinese for pair in reading.pairs] == ["这是书", "这是书"]
    assert reading.pairs[0].chinese_original == "這是書"
    assert (reading.converted_sentences, reading.converted_characters) == (1, 2)  # 這→这 and 書→书, 是 unchanged


def test_changed_characters_counts_what_differs():
    assert changed_characters("這是書", "这是书") == 2
    assert changed_characters("abc", "abc") == 0
    assert changed_characters("abcd", "abXd") == 1
    assert changed_characters("abc", "aXYc") == 2  # lengths differ: the aligned change


def test_repeated_pairs_are_left_out_and_counted(tmp_path):
    lines = _toy_lines(3)
    lines.append(lines[1])  # the same two ids again
    lines.append(_line("Toy number 2: the blue kite.", "第2号玩具：蓝色的风筝。", 7777, 8888))  # same texts, other ids
    lines.append(_line("Toy number 0: the red kite.", "第0號玩具：紅色的風箏。", 7778, 8889))  # same once converted
    reading = _read(_write(tmp_path / "toy.txt", lines))
    assert reading.lines_read == 6 and len(reading.pairs) == 3
    assert (reading.repeated_ids, reading.duplicate_texts) == (1, 2)


def test_the_wrong_digest_is_one_line_naming_file_and_both_digests(tmp_path):
    path = _write(tmp_path / "toy.txt", _toy_lines(3))
    found = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(CourseInputError) as caught:
        read_tatoeba(path)  # the default: the real file's digest
    message = str(caught.value)
    assert str(path) in message and found in message and tatoeba.TATOEBA_SHA256 in message
    assert "\n" not in message
    assert read_tatoeba(path, expected_sha256=found).lines_read == 3


@pytest.mark.parametrize("bad_line, message", [
    ("Only English here", r"toy\.txt:3: expected 3 tab-separated fields \(English, Chinese, attribution\), found 1"),
    ("", r"toy\.txt:3: expected 3 tab-separated fields"),
    ("Hello there.\t\t" + _line("x", "y", 1, 2).split("\t")[2], r"toy\.txt:3: the Chinese field is empty"),
    ("Hello there.\t你好。\tCC-BY 2.0 (France) Attribution: someone", r"toy\.txt:3: the attribution does not name"),
    ("Hello there.\t你好。\tCC-BY 2.0 (France) Attribution: tatoeba.org #12 (a) & #x (b)", r"toy\.txt:3: the attribution"),
    (_line("Another text for id 1000.", "另一句。", 1000, 9999), r"toy\.txt:3: the English sentence #1000 has another "
                                                            r"text on line 1"),
    (_line("Another English.", "另一句。", 9999, 5001), r"toy\.txt:3: the Chinese sentence #5001 has another text on line 2"),
])
def test_a_malformed_line_names_file_and_line_not_its_text(tmp_path, bad_line, message):
    lines = _toy_lines(2) + [bad_line] + _toy_lines(4)[2:]
    with pytest.raises(CourseInputError, match=message) as caught:
        _read(_write(tmp_path / "toy.txt", lines))
    assert "Hello there" not in str(caught.value) and "Another" not in str(caught.value)


def test_bytes_that_are_not_utf8_name_their_line(tmp_path):
    path = tmp_path / "toy.txt"
    path.write_bytes(("\n".join(_toy_lines(2)) + "\n").encode("utf-8") + b"caf\xe9\t\xe4\xbd\n")
    with pytest.raises(CourseInputError, match=r"toy\.txt:3: not UTF-8"):
        _read(path)


def test_an_empty_or_missing_file_is_named(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(CourseInputError, match=r"empty\.txt: the file is empty"):
        _read(tmp_path / "empty.txt")
    with pytest.raises(CourseInputError, match=r"none\.txt: not a file \(it does not exist\)"):
        _read(tmp_path / "none.txt")


# --- components and splits


def test_pairs_sharing_a_sentence_by_id_or_text_form_one_component():
    pairs = [
        _pair(1, "1", "11", "A cat.", "一只猫。"),
        _pair(2, "1", "12", "A cat.", "一只小猫。"),  # the same English sentence (id 1)
        _pair(3, "2", "13", "A dog.", "一只狗。"),
        _pair(4, "3", "14", "A dog.", "一条狗。"),  # the same English text under another id
        _pair(5, "4", "13", "One dog.", "一只狗。"),  # the same Chinese sentence as line 3
        _pair(6, "5", "15", "A bird.", "一只鸟。"),
        _pair(7, "6", "16", "One bird.", "一只鸟。"),  # the same (converted) Chinese text under another id
        _pair(8, "7", "17", "A fish.", "一条鱼。"),
    ]
    components = [[pair.line for pair in component] for component in sentence_components(pairs)]
    assert components == [[1, 2], [3, 4, 5], [6, 7], [8]]


def _shared_pairs(count: int = 90) -> list[TatoebaPair]:
    """``count`` pairs where every third pair shares its English sentence with the next one, every fifth its Chinese."""
    pairs = []
    for i in range(count):
        english_id = str(100 + i - (1 if i % 3 == 1 else 0))
        chinese_id = str(500 + i - (1 if i % 5 == 1 else 0))
        english = f"Toy sentence {english_id}."
        chinese = f"玩具句子{chinese_id}。"
        pairs.append(_pair(i + 1, english_id, chinese_id, english, chinese))
    return pairs


@pytest.mark.parametrize("seed", range(8))
def test_a_shared_sentence_keeps_its_pairs_on_one_side(seed):
    pairs = _shared_pairs()
    split = split_tatoeba(pairs, seed=seed)
    side = {pair.line: name for name, members in split.splits.items() for pair in members}
    assert sorted(side) == [pair.line for pair in pairs]  # every pair in exactly one split
    for first, second in zip(pairs, pairs[1:]):
        if first.english_id == second.english_id or first.chinese_id == second.chinese_id:
            assert side[first.line] == side[second.line], (first.line, second.line)
    check_no_shared_sentences({name: [p.translation_pair() for p in members] for name, members in split.splits.items()})


def test_the_split_is_deterministic_and_the_seed_matters():
    pairs = _shared_pairs()

    def lines(seed: int) -> dict[str, list[int]]:
        return {name: [p.line for p in members] for name, members in split_tatoeba(pairs, seed=seed).splits.items()}

    assert lines(3) == lines(3)
    assert lines(3) != lines(4)


def test_each_split_is_within_one_component_of_its_share():
    pairs = _shared_pairs(300)
    split = split_tatoeba(pairs, seed=0)
    for name, members in split.splits.items():
        assert abs(len(members) - tatoeba.SPLIT_SHARES[name] * len(pairs)) <= split.largest_component
    assert split.components == len(sentence_components(pairs)) and split.largest_component >= 2
    assert all(members == sorted(members, key=lambda p: p.line) for members in split.splits.values())


def test_too_few_components_for_three_splits_is_refused():
    pairs = [_pair(i + 1, "1", str(10 + i), "Same English.", f"句子{i}。") for i in range(6)]  # one component
    with pytest.raises(CourseInputError, match=r"too few groups of pairs sharing no sentence \(1\) to fill dev, test"):
        split_tatoeba(pairs)


def test_a_sentence_in_two_splits_is_caught():
    train = [TranslationPair("tatoeba-1-2", "一只猫。", "A cat.")]
    with pytest.raises(CourseInputError, match="1 English sentence"):
        check_no_shared_sentences({"train": train, "test": [TranslationPair("tatoeba-3-4", "猫。", "A cat.")]})
    with pytest.raises(CourseInputError, match="in both train and dev"):  # by id, with other texts
        check_no_shared_sentences({"train": train, "dev": [TranslationPair("tatoeba-5-2", "猫。", "Cat.")]})
    check_no_shared_sentences({"train": train, "dev": [TranslationPair("tatoeba-5-6", "狗。", "A dog.")]})


# --- writing the folder


def test_the_folder_is_the_pairs_format_and_its_numbers(tmp_path):
    reading = _read(_write(tmp_path / "toy.txt", _toy_lines(40)))
    split = split_tatoeba(reading.pairs, seed=1)
    summary = write_tatoeba_split(reading, split, tmp_path / "out")
    data = read_pairs_folder(tmp_path / "out")
    for name in SPLITS:
        text = (tmp_path / "out" / f"{name}.tsv").read_text(encoding="utf-8")
        assert text.splitlines()[0] == "\t".join(HEADER)
        assert [pair.id for pair in data.split(name)] == [pair.pair_id for pair in split.splits[name]]
        assert {pair.group for pair in data.split(name)} == {"all"}
        assert summary["splits"][name]["pairs"] == len(split.splits[name])
    assert sum(summary["splits"][name]["pairs"] for name in SPLITS) == summary["pairs_kept"] == 40
    on_disk = json.loads((tmp_path / "out" / tatoeba.SUMMARY_FILE).read_text(encoding="utf-8"))
    assert on_disk == summary and "Toy" not in json.dumps(on_disk)
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".tatoeba-")]  # the scratch folder went


def test_a_path_inside_the_repository_is_refused_even_through_a_link(tmp_path):
    from lessons_lib.validation import check_outside_repository

    assert check_outside_repository(tmp_path / "split", "--out-dir") == tmp_path / "split"
    (tmp_path / "link").symlink_to(REPO_ROOT / "data", target_is_directory=True)
    for path in (REPO_ROOT, REPO_ROOT / "results" / "split", tmp_path / "link" / "split"):
        with pytest.raises(CourseInputError, match=r"^--out-dir .* is inside the course's repository"):
            check_outside_repository(path, "--out-dir")


# --- the command


@pytest.fixture
def toy_source(tmp_path, monkeypatch):
    """A synthetic file whose digest the command is told to expect."""
    path = _write(tmp_path / "toy.txt", _toy_lines(48) + [_line("Toy in traditional script.", "這是書", 9, 19)])
    monkeypatch.setattr(tatoeba, "TATOEBA_SHA256", hashlib.sha256(path.read_bytes()).hexdigest())
    monkeypatch.delenv(TATOEBA_ENV_VAR, raising=False)
    return path


def test_the_command_writes_the_split_and_prints_counts_only(cli, toy_source, tmp_path):
    code, out, err = cli(["tatoeba-split", "--source", toy_source, "--out-dir", tmp_path / "split", "--seed", "5"])
    assert code == 0, err
    assert "read 49 lines" in out and "kept 49 pairs" in out
    assert "changed 1 of 49 Chinese sentences, 2 characters" in out
    assert "no English or Chinese sentence (text or id) is in two splits" in out
    assert "Toy" not in out and "玩具" not in out
    first = {name: (tmp_path / "split" / f"{name}.tsv").read_bytes() for name in SPLITS}
    again = cli(["tatoeba-split", "--source", toy_source, "--out-dir", tmp_path / "split", "--seed", "5"])
    assert again.code == 0, again.err  # its own output, unchanged: replaced
    assert {name: (tmp_path / "split" / f"{name}.tsv").read_bytes() for name in SPLITS} == first


def test_the_command_reads_the_environment_variable(cli, toy_source, tmp_path, monkeypatch):
    monkeypatch.setenv(TATOEBA_ENV_VAR, str(toy_source))
    code, out, err = cli(["tatoeba-split", "--out-dir", tmp_path / "split"])
    assert code == 0 and "read 49 lines" in out, err
    monkeypatch.delenv(TATOEBA_ENV_VAR)
    code, _, err = cli(["tatoeba-split", "--out-dir", tmp_path / "split2"])
    assert code == 2 and err.strip() == f"error: no Tatoeba file: give --source PATH or set {TATOEBA_ENV_VAR}"


@pytest.mark.parametrize("where", ["out-dir", "source"])
def test_the_command_refuses_paths_inside_the_repository(cli, toy_source, tmp_path, where):
    inside = REPO_ROOT / "data" / "tatoeba_must_not_exist"
    argv = {"out-dir": ["--source", toy_source, "--out-dir", inside],
            "source": ["--source", inside / "cmn.txt", "--out-dir", tmp_path / "split"]}[where]
    code, _, err = cli(["tatoeba-split", *argv])
    assert code == 2 and f"--{where} {inside}" in err and "is inside the course's repository" in err, err
    assert len(err.strip().splitlines()) == 1 and not inside.exists() and not (tmp_path / "split").exists()


def test_the_command_never_replaces_files_it_did_not_write(cli, toy_source, tmp_path):
    (tmp_path / "split").mkdir()
    (tmp_path / "split" / "test.tsv").write_text("the user's own file\n", encoding="utf-8")
    code, _, err = cli(["tatoeba-split", "--source", toy_source, "--out-dir", tmp_path / "split"])
    assert code == 2 and "holds test.tsv, which the course did not write as a split of `lessons tatoeba-split`" in err
    assert (tmp_path / "split" / "test.tsv").read_text(encoding="utf-8") == "the user's own file\n"


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "--seed must be a non-negative int, got -1"),
    (["--source", "{tmp}/none.txt"], "{tmp}/none.txt: not a file (it does not exist)"),
    (["--source", "{tmp}/other.txt"], "{tmp}/other.txt: SHA-256 "),
])
def test_the_command_refuses_bad_input_in_one_line(cli, toy_source, tmp_path, argv, message):
    (tmp_path / "other.txt").write_text(_toy_lines(3)[0] + "\n", encoding="utf-8")
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    full = ["tatoeba-split", "--source", str(toy_source), "--out-dir", str(tmp_path / "split"), *argv]
    code, out, err = cli(full)
    assert code == 2 and err.startswith("error: ") and message.replace("{tmp}", str(tmp_path)) in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "split").exists()


# --- the real file, where the environment names it


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get(TATOEBA_ENV_VAR), reason=f"${TATOEBA_ENV_VAR} does not name the real cmn.txt")
def test_the_real_file_splits_without_leakage():
    """Counts and leakage only: nothing here prints or reports a sentence."""
    reading = read_tatoeba(os.environ[TATOEBA_ENV_VAR])  # checked against TATOEBA_SHA256
    assert reading.lines_read == tatoeba.TATOEBA_LINES
    assert len(reading.pairs) + reading.repeated_ids + reading.duplicate_texts == reading.lines_read
    split = split_tatoeba(reading.pairs)
    sizes = {name: len(members) for name, members in split.splits.items()}
    assert sum(sizes.values()) == len(reading.pairs)
    for name, size in sizes.items():
        assert abs(size - tatoeba.SPLIT_SHARES[name] * len(reading.pairs)) <= split.largest_component
    ids = [pair.pair_id for members in split.splits.values() for pair in members]
    assert len(ids) == len(set(ids))
    check_no_shared_sentences({name: [p.translation_pair() for p in members] for name, members in split.splits.items()})
