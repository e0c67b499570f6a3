"""`lessons baseline --out`: the baselines as numbers, refused when read against other pairs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.baselines import compute_baselines, load_baselines, save_baselines
from lessons_lib.pairs.data import LCQMC_SHA256, examples_sha256, load_lcqmc
from lessons_lib.training.runs import load_metrics
from lessons_lib.paths import LCQMC_BASELINES_FILE, LCQMC_TRAINING_RUNS_DIR, REPO_ROOT


@pytest.fixture(scope="module")
def sample():
    data = load_lcqmc(None)
    baselines = compute_baselines(data.train.examples, data.dev.examples, data.test.examples)
    sha = {split: examples_sha256(getattr(data, split).examples) for split in ("train", "dev", "test")}
    return baselines, sha


def test_the_file_holds_the_numbers_and_no_text(sample, tmp_path):
    baselines, sha = sample
    path = save_baselines(baselines, tmp_path / "b.json", sha, ["lessons", "baseline"])
    record = load_baselines(path, expected_sha256=sha)
    assert record["jaccard"]["threshold"] == baselines.jaccard.threshold
    assert record["jaccard"]["test_accuracy"] == baselines.accuracy("jaccard", "test")
    assert record["majority"]["dev_accuracy"] == baselines.accuracy("majority", "dev")
    assert record["data"]["pairs"] == {"dev": len(baselines.labels["dev"]), "test": len(baselines.labels["test"])}
    text = path.read_text(encoding="utf-8")
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in text)  # no Chinese character: no question's text


def test_a_file_of_other_pairs_is_refused_in_one_line(sample, tmp_path):
    baselines, sha = sample
    path = save_baselines(baselines, tmp_path / "b.json", sha)
    with pytest.raises(CourseInputError, match=r"made on other data: its train pairs have SHA-256"):
        load_baselines(path, expected_sha256=LCQMC_SHA256)
    (tmp_path / "broken.json").write_text('{"data": {}}', encoding="utf-8")
    with pytest.raises(CourseInputError, match="not a baselines file"):
        load_baselines(tmp_path / "broken.json")


@pytest.mark.slow
def test_the_command_writes_the_file_and_refuses_a_folder(tmp_path):
    out = tmp_path / "out" / "baselines.json"
    done = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "baseline", "--out", str(out)],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["command"][:2] == ["lessons", "baseline"]
    done = subprocess.run([sys.executable, "-m", "lessons_lib.cli", "baseline", "--out", str(tmp_path)],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "is a folder" in done.stderr


def test_the_shipped_real_lcqmc_baselines_are_lcqmcs():
    record = load_baselines(LCQMC_BASELINES_FILE, expected_sha256=LCQMC_SHA256)
    assert record["data"]["pairs"] == {"dev": 8802, "test": 12500}
    assert 0.5 < record["jaccard"]["test_accuracy"] < 1


def test_the_shipped_real_lcqmc_training_runs_are_lcqmcs_and_hold_no_text():
    folders = sorted(path for path in LCQMC_TRAINING_RUNS_DIR.iterdir() if path.is_dir())
    assert {path.name for path in folders} >= {"textbook", "matchflags_epochs2"}  # lesson 06 reads these
    for folder in folders:
        assert [path.name for path in folder.iterdir()] == ["metrics.json"]  # no vocabulary, no weights
        record = load_metrics(folder / "metrics.json", expected_sha256=LCQMC_SHA256)
        assert record["command"][:2] == ["lessons", "train"] and record["run_identity"]["limit_train"] is None
        assert 1 <= len(record["epochs"]) <= record["train_config"]["epochs"]
        text = (folder / "metrics.json").read_text(encoding="utf-8")
        assert not any("\u4e00" <= ch <= "\u9fff" for ch in text)


@pytest.mark.parametrize("keys, value, message", [
    (("jaccard", "test_accuracy"), float("nan"), "jaccard.test_accuracy is nan, not a number in [0, 1]"),
    (("jaccard", "test_accuracy"), "0.9", "jaccard.test_accuracy is '0.9', not a number in [0, 1]"),
    (("majority", "dev_accuracy"), 7.5, "majority.dev_accuracy is 7.5, not a number in [0, 1]"),
    (("majority", "test_accuracy"), True, "majority.test_accuracy is True, not a number in [0, 1]"),
    (("majority", "label"), 2, "majority.label is 2, not 0 or 1"),
    (("jaccard", "threshold"), float("inf"), "jaccard.threshold is inf, not a number in [-1, 1]"),
    (("data", "pairs", "test"), 0, "data.pairs.test is 0, not a whole number of pairs above 0"),
    (("test_jaccard_vs_majority", "only_jaccard_right"), -3, "test_jaccard_vs_majority.only_jaccard_right is -3"),
    (("test_jaccard_vs_majority", "p_value"), 1.5, "test_jaccard_vs_majority.p_value is 1.5, not a number in [0, 1]"),
])
def test_a_number_the_course_does_not_write_is_refused_naming_file_and_key(tmp_path, keys, value, message):
    record = json.loads(LCQMC_BASELINES_FILE.read_text(encoding="utf-8"))
    target = record
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    path = tmp_path / "baselines.json"
    path.write_text(json.dumps(record), encoding="utf-8")  # NaN and Infinity as Python's json writes them
    with pytest.raises(CourseInputError) as error:
        load_baselines(path, expected_sha256=LCQMC_SHA256)
    line = str(error.value)
    assert line.startswith(f"{path}: {message}") and "\n" not in line, line
