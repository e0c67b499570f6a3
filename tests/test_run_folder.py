"""A run folder as one value: checked, locked, resumed or cleared in one place, by the trainer and ``lessons train`` alike."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.files import record_written
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PairClassifierConfig, TrainConfig
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.vocab import Vocabulary
from lessons_lib.paths import LCQMC_SAMPLE_DIR
from lessons_lib.training import runs, trainer
from lessons_lib.training.runs import (CHECKPOINT_NAME, DEFAULT_RESTART_HINT, METRICS_NAME, PREDICTIONS_NAME,
                                       RunFolder)
from lessons_lib.training.trainer import train_pair_classifier

QUESTIONS = ["花生几月种", "什么花四季开", "电脑怎么录像", "如何录视频"]
PAIRS = [PairExample(a, b, int(i // 2 == j // 2)) for i, a in enumerate(QUESTIONS) for j, b in enumerate(QUESTIONS) if i != j]
VOCAB = Vocabulary.build(QUESTIONS)
CONFIG = TrainConfig(epochs=1, batch_size=4, lr=1e-3, seed=3)


def _tiny_model() -> PairClassifier:
    torch.manual_seed(1)
    return PairClassifier(PairClassifierConfig.from_options(len(VOCAB), d_model=16, n_heads=2, d_ff=32))


def _hold_lock_elsewhere(folder: Path):
    """Lock ``folder`` as another command would (its own open file, process id 1 written in it); returns the handle."""
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / ".lessons.lock", "w", encoding="utf-8")
    handle.write("1\n")
    handle.flush()
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return handle


def test_a_path_string_becomes_a_path_and_the_checkpoint_lies_in_it(tmp_path):
    folder = RunFolder(str(tmp_path / "run"))
    assert folder.path == tmp_path / "run" and folder.checkpoint == tmp_path / "run" / CHECKPOINT_NAME
    assert folder.resume and folder.restart_hint == DEFAULT_RESTART_HINT


def test_checked_refuses_a_file_naming_the_argument_and_creates_nothing(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(CourseInputError, match=r"^--out .*notes\.txt is a file, not a folder$"):
        RunFolder.checked(tmp_path / "notes.txt", "--out")
    folder = RunFolder.checked(tmp_path / "new", "--out", resume=False)
    assert not folder.resume and not folder.path.exists()  # checked only: created once it is locked


def test_locked_creates_the_folder_and_removes_its_lock_afterwards(tmp_path):
    folder = RunFolder(tmp_path / "a" / "run")
    with folder.locked() as path:
        assert path == folder.path and (path / ".lessons.lock").is_file()
    assert folder.path.is_dir() and not (folder.path / ".lessons.lock").exists()


def test_a_folder_another_command_holds_is_refused_naming_it(tmp_path):
    folder = RunFolder(tmp_path / "run")
    handle = _hold_lock_elsewhere(folder.path)
    try:
        with pytest.raises(CourseInputError, match=r"run is in use by another command \(process 1\)"):
            with folder.locked():
                pytest.fail("the block ran although another command holds the folder")
        with pytest.raises(CourseInputError, match="in use by another command"):
            train_pair_classifier(_tiny_model(), PAIRS, PAIRS, VOCAB, CONFIG, run_folder=folder, progress=False,
                                  log=None)
    finally:
        handle.close()
    assert sorted(p.name for p in folder.path.iterdir()) == [".lessons.lock"]  # nothing was written


def test_a_block_inside_one_holding_the_folder_takes_no_second_lock(tmp_path, monkeypatch):
    taken = []
    real_lock = runs.run_folder_lock
    monkeypatch.setattr(runs, "run_folder_lock", lambda path: taken.append(path) or real_lock(path))
    folder = RunFolder(tmp_path / "run")
    with folder.locked():
        with folder.locked():
            assert (folder.path / ".lessons.lock").is_file()
        assert (folder.path / ".lessons.lock").is_file()  # the inner block left the outer one's lock alone
    assert taken == [folder.path]
    with folder.locked():  # released: the next run takes it afresh
        pass
    assert taken == [folder.path, folder.path]


def test_check_identity_names_every_differing_field_and_the_restart_hint(tmp_path):
    folder = RunFolder(tmp_path, restart_hint="another --out, or start afresh (`lessons train --no-resume`)")
    saved = {"data": {"train": "aaaa", "dev": "bbbb"}, "limit_train": 48}
    folder.check_identity(saved, json.loads(json.dumps(saved)))  # the same identity: nothing to refuse
    with pytest.raises(CourseInputError) as refused:
        folder.check_identity(saved, {"data": {"train": "aaaa", "dev": "cccc"}, "limit_train": 40, "lenient": True})
    message = str(refused.value)
    assert message.startswith(f"cannot resume from {tmp_path / CHECKPOINT_NAME}: it was written by another run (")
    assert "data.dev: 'bbbb' in the checkpoint, 'cccc' now" in message
    assert "limit_train: 48 in the checkpoint, 40 now" in message
    assert "lenient: missing in the checkpoint, True now" in message and "data.train" not in message
    assert message.endswith("Use the same data and options, another --out, or start afresh (`lessons train --no-resume`)")


def test_check_identity_shows_six_fields_and_counts_the_rest(tmp_path):
    saved = {f"field{i}": i for i in range(9)}
    with pytest.raises(CourseInputError, match=r"field5: 5 in the checkpoint, 6 now; and 3 more\)") as refused:
        RunFolder(tmp_path).check_identity(saved, {key: value + 1 for key, value in saved.items()})
    assert "field6" not in str(refused.value)


def _course_files(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in (CHECKPOINT_NAME, METRICS_NAME, PREDICTIONS_NAME):
        record_written(folder / name, f"{name} of the previous run\n")


def test_settle_resumes_from_the_checkpoint_and_drops_the_old_predictions(tmp_path):
    folder = RunFolder(tmp_path)
    _course_files(tmp_path)
    resumed: list[Path] = []
    folder.settle(resumed.append, log=None)
    assert resumed == [tmp_path / CHECKPOINT_NAME]
    assert (tmp_path / METRICS_NAME).is_file() and not (tmp_path / PREDICTIONS_NAME).exists()


def test_settle_without_resume_removes_the_previous_runs_files_and_says_so(tmp_path):
    folder = RunFolder(tmp_path, resume=False)
    _course_files(tmp_path)
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    messages: list[str] = []
    folder.settle(lambda checkpoint: pytest.fail("resumed although resume=False"), log=messages.append)
    assert messages == [f"starting afresh: removed checkpoint.pt, metrics.json, predictions.json of the previous run "
                        f"in {tmp_path}"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["notes.txt"]


def test_settle_refuses_a_run_file_the_course_did_not_write_before_removing_anything(tmp_path):
    _course_files(tmp_path)
    (tmp_path / METRICS_NAME).write_text('{"mine": 1}\n', encoding="utf-8")
    for folder in (RunFolder(tmp_path), RunFolder(tmp_path, resume=False)):
        with pytest.raises(CourseInputError, match=r"holds metrics\.json, which the course did not write"):
            folder.settle(lambda checkpoint: None, log=None)
        assert (tmp_path / CHECKPOINT_NAME).is_file() and (tmp_path / PREDICTIONS_NAME).is_file()


def test_the_trainer_refuses_another_runs_checkpoint_with_the_folders_hint(tmp_path):
    folder = RunFolder(tmp_path, identity={"limit_train": 8}, restart_hint="move it away")
    train_pair_classifier(_tiny_model(), PAIRS, PAIRS, VOCAB, CONFIG, run_folder=folder, progress=False, log=None)
    before = (tmp_path / CHECKPOINT_NAME).read_bytes()
    other = RunFolder(tmp_path, identity={"limit_train": 9}, restart_hint="move it away")
    with pytest.raises(CourseInputError, match=r"another run \(limit_train: 8 in the checkpoint, 9 now\)\. "
                                               r"Use the same data and options, move it away$"):
        train_pair_classifier(_tiny_model(), PAIRS, PAIRS, VOCAB, CONFIG, run_folder=other, progress=False, log=None)
    assert (tmp_path / CHECKPOINT_NAME).read_bytes() == before


def test_the_folders_command_is_recorded_but_is_no_part_of_the_identity(tmp_path):
    first = RunFolder(tmp_path, command=["lessons", "train", "--out", str(tmp_path)])
    train_pair_classifier(_tiny_model(), PAIRS, PAIRS, VOCAB, CONFIG, run_folder=first, progress=False, log=None)
    metrics = json.loads((tmp_path / METRICS_NAME).read_text(encoding="utf-8"))
    assert metrics["command"] == ["lessons", "train", "--out", str(tmp_path)] and "command" not in metrics["run_identity"]
    again = RunFolder(tmp_path, command=["lessons", "train", "--out", str(tmp_path), "--no-progress"])
    result = train_pair_classifier(_tiny_model(), PAIRS, PAIRS, VOCAB, CONFIG, run_folder=again, progress=False, log=None)
    assert result.resumed_from_epoch == 1
    assert json.loads((tmp_path / METRICS_NAME).read_text(encoding="utf-8"))["command"][-1] == "--no-progress"


@pytest.mark.slow
def test_lessons_train_resolves_its_device_and_locks_its_folder_once(tmp_path, cli, monkeypatch):
    locks, devices = [], []
    real_lock, real_resolve = runs.run_folder_lock, trainer.resolve_device
    monkeypatch.setattr(runs, "run_folder_lock", lambda path: locks.append(Path(path)) or real_lock(path))
    monkeypatch.setattr(trainer, "resolve_device", lambda device: devices.append(device) or real_resolve(device))
    result = cli(["train", "--data-dir", LCQMC_SAMPLE_DIR, "--out", tmp_path / "run", "--limit-train", "16",
                  "--d-model", "16", "--d-ff", "16", "--n-heads", "2", "--epochs", "1", "--threads", "1",
                  "--no-progress"])
    assert result.code == 0, result.err
    assert locks == [tmp_path / "run"] and devices == ["cpu"]
    assert (tmp_path / "run" / PREDICTIONS_NAME).is_file()  # written inside the command's one lock
