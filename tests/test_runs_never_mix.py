"""A run never mixes data, options or predictions of another run (``lessons train`` / ``lessons compare``).

One finished tiny run on the course's sample (module fixture) is copied for each case, and
the command is started again with one thing changed: the resume must be refused, naming
the field, and leave the run folder as it was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from lessons_lib.cli import main
from lessons_lib.paths import LCQMC_ENV_VAR, LCQMC_SAMPLE_DIR

TINY = ["--limit-train", "48", "--d-model", "16", "--d-ff", "32", "--n-heads", "2", "--epochs", "1",
        "--threads", "1", "--no-progress"]


def _data_copy(root: Path, edit_split: str | None = None) -> Path:
    """A copy of the sample; ``edit_split``'s first pair gets other texts (same label, same size)."""
    folder = root / f"data-{edit_split or 'same'}"
    shutil.copytree(LCQMC_SAMPLE_DIR, folder)
    if edit_split:
        path = folder / f"{edit_split}.tsv"
        lines = path.read_text(encoding="utf-8").splitlines()
        label = lines[0].split("\t")[2]
        lines[0] = f"一个改过的问题\t另一个改过的问题\t{label}"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    data = _data_copy(root)
    assert main(["train", "--data-dir", str(data), "--out", str(root / "base"), *TINY]) == 0
    return root, data


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("change, field", [
    (["--limit-train", "40"], "limit_train: 48 in the checkpoint, 40 now"),
    (["--dropout", "0.2"], "model_config.encoder.dropout: 0.1 in the checkpoint, 0.2 now"),
    (["--d-model", "32"], "model_config.encoder.d_model: 16 in the checkpoint, 32 now"),
    (["--lr", "0.001"], "train_config.lr: 5e-05 in the checkpoint, 0.001 now"),
    (["--seed", "7"], "train_config.seed: 0 in the checkpoint, 7 now"),
    (["--match-flags"], "model_config.match_flags: False in the checkpoint, True now"),
    (["--lenient"], "lenient: False in the checkpoint, True now"),
    (["--preset", "matchflags", "--n-layers", "1"], "model_config.match_flags: False in the checkpoint, True now"),
    (["data:train"], "data.train: "),
    (["data:dev"], "data.dev: "),
    (["data:test"], "data.test: "),
])
def test_resume_is_refused_naming_the_field_that_differs(finished, tmp_path, cli, change, field):
    root, data = finished
    out = tmp_path / "run"
    shutil.copytree(root / "base", out)
    before = _snapshot(out)
    if change[0].startswith("data:"):
        data, change = _data_copy(tmp_path, change[0].split(":")[1]), []
    args = ["train", "--data-dir", str(data), "--out", str(out), *TINY, *change]
    code, _, err = cli(args)
    assert code == 2 and err.startswith("error: cannot resume from ") and field in err, err
    assert "--no-resume" in err and "Traceback" not in err
    assert _snapshot(out) == before  # refused before anything was written or removed


def test_the_vocabulary_is_part_of_the_identity(finished, tmp_path, cli):
    root, data = finished
    out = tmp_path / "run"
    shutil.copytree(root / "base", out)
    checkpoint = torch.load(out / "checkpoint.pt", weights_only=True)
    checkpoint["run_identity"]["vocabulary"] = "0" * 16  # as if built from other training pairs
    torch.save(checkpoint, out / "checkpoint.pt")
    code, _, err = cli(["train", "--data-dir", str(data), "--out", str(out), *TINY])
    assert code == 2 and "vocabulary: '0000000000000000' in the checkpoint" in err


def test_the_same_command_resumes_and_no_resume_starts_afresh(finished, tmp_path, cli):
    root, data = finished
    out = tmp_path / "run"
    shutil.copytree(root / "base", out)
    code, text, _ = cli(["train", "--data-dir", str(data), "--out", str(out), *TINY])
    assert code == 0 and "resuming from checkpoint.pt after epoch 1" in text
    code, text, _ = cli(["train", "--data-dir", str(data), "--out", str(out), *TINY, "--d-model", "32",
                          "--no-resume"])
    assert code == 0 and "starting afresh: removed checkpoint.pt" in text
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8"))["model_config"]["encoder"]["d_model"] == 32


def test_an_interrupted_run_leaves_no_predictions_to_compare(finished, tmp_path, cli, monkeypatch):
    from lessons_lib.training import trainer

    root, data = finished
    out = tmp_path / "run"
    shutil.copytree(root / "base", out)
    assert (out / "predictions.json").is_file()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(trainer._Trainer, "train_epoch", interrupt)
    code, text, _ = cli(["train", "--data-dir", str(data), "--out", str(out), *TINY, "--no-resume"])
    assert code == 130 and "interrupted" in text
    assert not (out / "predictions.json").exists() and not (out / "checkpoint.pt").exists()
    code, _, err = cli(["compare", str(root / "base"), str(out)])
    assert code == 2 and "no predictions.json in" in err and str(out) in err
    # A resumed run that is interrupted has no predictions either (they come only from a finished command).
    shutil.rmtree(out)
    shutil.copytree(root / "base", out)
    code, _, _ = cli(["train", "--data-dir", str(data), "--out", str(out), *TINY, "--epochs", "2"])
    assert code == 2  # other epochs: another run, refused
    monkeypatch.setattr(trainer._Trainer, "evaluate", interrupt)
    code, _, _ = cli(["train", "--data-dir", str(data), "--out", str(out), *TINY])
    assert code == 130 and not (out / "predictions.json").exists() and (out / "checkpoint.pt").exists()


def test_compare_refuses_runs_on_different_test_sets_even_with_the_same_labels(cli, finished, tmp_path, capsys):
    root, _ = finished
    other = _data_copy(tmp_path, "test")
    assert main(["train", "--data-dir", str(other), "--out", str(tmp_path / "other"), *TINY]) == 0
    capsys.readouterr()
    a = json.loads((root / "base" / "predictions.json").read_text(encoding="utf-8"))["test"]
    b = json.loads((tmp_path / "other" / "predictions.json").read_text(encoding="utf-8"))["test"]
    assert a["labels"] == b["labels"] and a["fingerprint"] != b["fingerprint"]
    code, _, err = cli(["compare", str(root / "base"), str(tmp_path / "other")])
    assert code == 2 and "different test sets" in err
    code, out, _ = cli(["compare", str(root / "base"), str(root / "base")])
    assert code == 0 and "exact McNemar p = 1" in out


def test_a_checkpoint_carrying_a_pickle_payload_is_refused_before_anything_runs(tmp_path, cli, monkeypatch):
    monkeypatch.delenv(LCQMC_ENV_VAR, raising=False)
    out = tmp_path / "run"
    out.mkdir()
    marker = tmp_path / "payload-ran"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (marker,))

    torch.save({"model_state": {}, "run_identity": {}, "payload": Payload()}, out / "checkpoint.pt")
    code, text, err = cli(["train", "--out", str(out), *TINY])
    assert code == 2 and "not a readable course checkpoint" in err and str(out / "checkpoint.pt") in err
    assert not marker.exists()
    assert "epoch 1:" not in text and not (out / "metrics.json").exists()  # no training happened


def test_lenient_reading_lists_every_skipped_line_with_its_reason(tmp_path, cli):
    data = tmp_path / "data"
    shutil.copytree(LCQMC_SAMPLE_DIR, data)
    first_bad = len((data / "train.tsv").read_text(encoding="utf-8").splitlines()) + 1
    with open(data / "train.tsv", "a", encoding="utf-8") as handle:
        handle.write("只有一列\n甲\t乙\t2\n\n" + "".join(f"坏\t行\t{i}x\n" for i in range(12)))
    code, text, _ = cli(["train", "--data-dir", str(data), "--out", str(tmp_path / "run"), "--lenient", *TINY])
    assert code == 0
    listed = tmp_path / "run" / "skipped_lines.tsv"
    assert f"skipped 15 malformed lines; each is listed (file, line, reason) in {listed}" in text
    rows = [line.split("\t") for line in listed.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["file", "line", "reason", "text"] and len(rows) == 16
    assert rows[1][0] == str(data / "train.tsv") and rows[1][1] == str(first_bad) and "found 1" in rows[1][2]
    assert "label must be 0 or 1, found '2'" in rows[2][2] and rows[3][2] == "empty line"
    code, _, _ = cli(["train", "--data-dir", str(data), "--out", str(tmp_path / "run"), *TINY, "--no-resume"])
    assert code == 2  # strict reading stops at the first malformed line
