"""``lessons translate``: one results file per run, resuming without mixing runs, refusals in one line."""

import json

import pytest

from lessons_lib.errors import CourseInputError

from lessons_lib.translation.results import load_results
from translation_folders import write_tiny_folder

pytestmark = pytest.mark.slow  # each case trains small translators


def _args(data, out, *extra):
    return ["translate", "--data-dir", data, "--out-dir", out, "--epochs", "1", "--batch-size", "8",
            "--d-model", "16", "--d-ff", "32", "--threads", "1", *extra]


def test_each_run_is_one_checked_file_and_a_rerun_keeps_it(tmp_path, cli):
    data = tmp_path / "pairs"
    write_tiny_folder(data)
    out = tmp_path / "results"
    done = cli(_args(data, out, "--variants", "none", "learned", "--seeds", "1", "2", "--fractions", "0.5"))
    assert done.code == 0, done.err
    names = sorted(p.name for p in out.glob("f*.json"))
    assert names == ["f0.5-learned-gold-s1.json", "f0.5-learned-gold-s2.json", "f0.5-none-none-s1.json",
                     "f0.5-none-none-s2.json"]
    assert not list(out.glob("*.checkpoint.pt"))  # a finished run's checkpoint is removed
    record = load_results(out / "f0.5-learned-gold-s1.json")
    assert record["train_pairs"] == 8 and record["seed"] == 1 and record["trees"] == "gold"
    assert record["provenance"]["cpu_capability"] and "translate" in record["command"]
    assert len(record["sentences"]) == 4 and "hypothesis" in record["sentences"][0]
    assert record["signatures"]["bleu"].startswith("nrefs:1")
    again = cli(_args(data, out, "--variants", "none", "--seeds", "1", "--fractions", "0.5"))
    assert again.code == 0 and "already there, kept" in again.out
    other = cli(_args(data, out, "--variants", "none", "--seeds", "1", "--fractions", "0.5", "--lr", "0.002"))
    assert other.code == 2 and "made with other train_config" in other.err


def test_the_controls_record_their_trees_the_subset_and_the_table(tmp_path, cli):
    data = tmp_path / "pairs"
    write_tiny_folder(data)
    out = tmp_path / "results"
    for trees in ("scrambled", "sequence"):
        done = cli(_args(data, out, "--variants", "learned", "--trees", trees, "--fractions", "0.5"))
        assert done.code == 0, done.err
    scrambled = load_results(out / "f0.5-learned-scrambled-s0.json")
    sequence = load_results(out / "f0.5-learned-sequence-s0.json")
    assert scrambled["trees"] == "scrambled" and 0.0 <= scrambled["word_boundaries_kept"] < 1.0
    assert "word_boundaries_kept" not in sequence
    assert scrambled["train_subset_sha256"] == sequence["train_subset_sha256"]  # one subset per seed
    assert all(epoch["bias_max_abs"] > 0.0 for epoch in sequence["history"])


def test_gold_trees_on_a_folder_without_them_are_refused(tmp_path, cli):
    data = tmp_path / "pairs"
    write_tiny_folder(data)
    (data / "trees.conllu").unlink()
    done = cli(_args(data, tmp_path / "r", "--variants", "learned", "--trees", "gold"))
    assert done.code == 2 and "no trees.conllu, so no gold trees" in done.err and "Traceback" not in done.err


def test_numbers_only_leaves_the_translations_out(tmp_path, cli):
    data = tmp_path / "pairs"
    write_tiny_folder(data)
    done = cli(_args(data, tmp_path / "r", "--variants", "none", "--numbers-only"))
    assert done.code == 0, done.err
    record = json.loads((tmp_path / "r" / "f1-none-none-s0.json").read_text(encoding="utf-8"))
    assert all("hypothesis" not in s and len(s["statistics"]) == 10 for s in record["sentences"])


def test_an_edited_score_is_refused(tmp_path, cli):
    data = tmp_path / "pairs"
    write_tiny_folder(data)
    assert cli(_args(data, tmp_path / "r", "--variants", "none")).code == 0
    path = tmp_path / "r" / "f1-none-none-s0.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["scores"]["all"]["bleu"] += 1
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(CourseInputError, match="not what its sentences' statistics give"):
        load_results(path)


@pytest.mark.parametrize("extra, message", [
    (["--fractions", "0"], "--fractions: 0 is not in (0, 1]"),
    (["--lr", "-1"], "--lr must be > 0.0"),
    (["--threads", "0"], "--threads must be at least 1"),
])
def test_bad_flags_get_one_line(tmp_path, cli, extra, message):
    data = tmp_path / "pairs"
    write_tiny_folder(data)
    done = cli(_args(data, tmp_path / "r", *extra))
    assert done.code == 2 and message in done.err and "Traceback" not in done.err


def test_an_output_inside_the_data_folder_is_refused(tmp_path, cli):
    data = tmp_path / "pairs"
    write_tiny_folder(data)
    done = cli(_args(data, data / "results"))
    assert done.code == 2 and "inside the data folder" in done.err


def test_a_checkpoint_the_course_did_not_write_is_refused_in_one_line(tmp_path, cli):
    data = tmp_path / "pairs"
    write_tiny_folder(data)
    out = tmp_path / "results"
    out.mkdir()
    (out / "f0.5-none-none-s1.checkpoint.pt").write_bytes(b"not a checkpoint")
    done = cli(_args(data, out, "--variants", "none", "--seeds", "1", "--fractions", "0.5"))
    assert done.code == 2 and "f0.5-none-none-s1.checkpoint.pt: not a checkpoint the course wrote" in done.err
    assert not (out / "f0.5-none-none-s1.json").exists()
