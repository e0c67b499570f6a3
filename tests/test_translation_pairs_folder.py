"""The translation pairs folder: round trip and the refusals that name file and line."""

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.translation.pairs_folder import (TranslationPair, pairs_sha256, read_pairs_file, read_pairs_folder,
                                                  write_pairs_file)


def _folder(tmp_path, test_pairs=None):
    write_pairs_file([TranslationPair("t1", "我爱你。", "I love you.", "plain")], tmp_path / "train.tsv")
    write_pairs_file([TranslationPair("d1", "你好。", "Hello.", "plain")], tmp_path / "dev.tsv")
    write_pairs_file(test_pairs or [TranslationPair("e1", "谢谢。", "Thanks.", "syntax")], tmp_path / "test.tsv")
    return tmp_path


def test_round_trip_keeps_every_field(tmp_path):
    data = read_pairs_folder(_folder(tmp_path))
    assert data.train == (TranslationPair("t1", "我爱你。", "I love you.", "plain"),)
    assert data.test[0].group == "syntax"
    assert data.groups("test") == ["syntax"]
    assert data.trees_path is None


def test_an_id_on_two_splits_is_refused(tmp_path):
    _folder(tmp_path, [TranslationPair("t1", "谢谢。", "Thanks.", "plain")])
    with pytest.raises(CourseInputError, match=r"test\.tsv: the id 't1' is also in train\.tsv"):
        read_pairs_folder(tmp_path)


@pytest.mark.parametrize("body, message", [
    ("id\tsource\treference\tgroup\nx\t我\n", r"bad\.tsv:2: expected 4 tab-separated fields"),
    ("id\tsource\treference\tgroup\nx\t我\t\tall\n", r"bad\.tsv:2: the field `reference` is empty"),
    ("source\treference\n", r"bad\.tsv:1: the first line must be the header"),
    ("id\tsource\treference\tgroup\n", r"bad\.tsv: no pairs after the header"),
])
def test_a_malformed_file_names_its_line(tmp_path, body, message):
    path = tmp_path / "bad.tsv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(CourseInputError, match=message):
        read_pairs_file(path)


def test_the_digest_follows_the_content():
    a = [TranslationPair("1", "我", "I")]
    assert pairs_sha256(a) == pairs_sha256(list(a))
    assert pairs_sha256(a) != pairs_sha256([TranslationPair("1", "我", "me")])
