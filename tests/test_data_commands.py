"""``lessons data-stats`` and ``lessons baseline`` on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessons_lib.cli import main


def write_folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "train.tsv").write_text("猫能吃葡萄吗\t猫可以吃葡萄吗\t1\n明天下雨吗\t今天几号\t0\n", encoding="utf-8")
    (folder / "dev.tsv").write_text("猫能吃葡萄吗\t狗能吃葡萄吗\t0\n狗能吃葡萄吗\t狗可以吃葡萄吗\t1\n", encoding="utf-8")
    (folder / "test.txt").write_text("猫可以吃葡萄吗\t猫能吃葡萄吗\t1\n明天下雨吗\t狗可以吃葡萄吗\t0\n", encoding="utf-8")
    return folder


def test_data_stats_command(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = write_folder(tmp_path / "data")
    assert main(["data-stats", "--data-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("data: argument -> ") and "LCQMC (measured by the maintainers)" in out
    assert "test questions seen in train" in out and "75.0% of 4" in out
    assert "pair repeats train&dev / train&test / dev&test" in out and "0 / 1 / 0" in out
    assert "test Jaccard label 1: mean (q1 / median / q3)" in out and "test distinct questions / pairs per question" in out
    # dev: 3 questions, 2 pairs sharing 狗能吃葡萄吗: one web of both pairs, so the paired tests' assumption fails
    assert "dev: 2 pairs of 3 distinct questions: 1.33 pairs per question" in out and "shared questions beyond the limits" in out


def test_baseline_command(tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch) -> None:
    folder = write_folder(tmp_path / "data")
    assert main(["baseline", "--data-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "majority class (label 1, from train): dev accuracy 0.5000, test accuracy 0.5000" in out
    assert "character Jaccard > " in out and "exact McNemar p =" in out


@pytest.mark.parametrize("command", ["data-stats", "baseline"])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture, command: str) -> None:
    assert main([command, "--data-dir", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "missing" in err and err.count("\n") == 1
    folder = write_folder(tmp_path / "data")
    (folder / "dev.tsv").write_text("猫\t狗\t2\n", encoding="utf-8")
    assert main([command, "--data-dir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "dev.tsv, line 1" in err and "label must be 0 or 1" in err
    assert main([command, "--data-dir", str(folder), "--lenient"]) == 2  # dev is then empty
    assert "dev.tsv: the dev split holds no pairs (1 malformed lines skipped)" in capsys.readouterr().err
