"""Every ``lessons`` command against bad input: exit status 2, one ``error:`` line naming the culprit, no traceback.

:data:`CASES` is a table of command lines; ``{name}`` in an argument is replaced by the path
of a prepared bad (or good) file of :func:`_prepare`. Each case runs in this process through
:func:`lessons_lib.cli.main` (an exception escaping it fails the test with its traceback);
:func:`test_the_console_command_prints_no_traceback` runs a few through the installed
``lessons`` script as a user would. Where an option is bad, the case also checks that no
work started: the output folder was not created.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch
from nbformat.v4 import new_code_cell, new_notebook

from lessons_lib.cli import main
from lessons_lib.paths import LCQMC_ENV_VAR, LCQMC_SAMPLE_DIR, NOTEBOOKS_DIR, TATOEBA_ENV_VAR

TINY = ["--limit-train", "24", "--d-model", "16", "--d-ff", "16", "--n-heads", "2", "--epochs", "1", "--no-progress"]
FAST_LESSON = NOTEBOOKS_DIR / "01_dot_product_attention.ipynb"


def _data(root: Path, name: str, edit=None) -> None:
    folder = root / name
    shutil.copytree(LCQMC_SAMPLE_DIR, folder)
    if edit:
        edit(folder)


def _notebooks(root: Path) -> None:
    (root / "bad.ipynb").write_text("{ not json", encoding="utf-8")
    (root / "list.ipynb").write_text("[]", encoding="utf-8")
    (root / "schema.ipynb").write_text('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": 7}', encoding="utf-8")
    (root / "latin1.ipynb").write_bytes(b'{"nbformat": 4, "caf\xe9": 1}')
    params = new_code_cell("n = 3\nepochs = 1")
    params.metadata["tags"] = ["parameters"]
    nbformat.write(new_notebook(cells=[params, new_code_cell("print(n)")]), root / "tiny.ipynb")
    nbformat.write(new_notebook(cells=[new_code_cell("print(1)")]), root / "noparams.ipynb")
    nbformat.write(new_notebook(cells=[new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1"),
                                       new_code_cell("check_f(f)")]), root / "unbalanced.ipynb")
    nbformat.write(new_notebook(cells=[new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"),
                                       new_code_cell("print('no check')")]), root / "nocheck.ipynb")
    for folder, files in (("bad_folder", ["bad.ipynb"]), ("empty_folder", []), ("lessons", [])):
        (root / folder).mkdir()
        for name in files:
            shutil.copy(root / name, root / folder / name)
    shutil.copy(FAST_LESSON, root / "lessons" / FAST_LESSON.name)
    (root / "users_executed").mkdir()  # a learner's own notebook where `lessons execute` would write its copy
    (root / "users_executed" / "tiny.ipynb").write_text("{}", encoding="utf-8")


def _runs(root: Path) -> None:
    """Run folders with broken checkpoints and predictions."""
    good = {"format": "lessons-predictions/1",
            "test": {"predictions": [1, 0], "labels": [1, 1], "fingerprint": "a" * 16},
            "dev": {"predictions": [1], "labels": [1], "fingerprint": "b" * 16}}
    predictions = {
        "pred_corrupt": "{ broken",
        "pred_list": "[]",
        "pred_old": json.dumps({"test": {"predictions": [1], "labels": [1]}}),
        "pred_values": json.dumps({**good, "test": {"predictions": [2, "x"], "labels": [1, 1], "fingerprint": "a" * 16}}),
        "pred_lengths": json.dumps({**good, "test": {"predictions": [1], "labels": [1, 0], "fingerprint": "a" * 16}}),
        "pred_nodev": json.dumps({"format": good["format"], "test": good["test"]}),
        "pred_a": json.dumps(good),
        "pred_b": json.dumps({**good, "test": {**good["test"], "fingerprint": "c" * 16}}),
        "pred_c": json.dumps({**good, "test": {**good["test"], "labels": [0, 1]}}),
    }
    for name, text in predictions.items():
        (root / name).mkdir()
        (root / name / "predictions.json").write_text(text, encoding="utf-8")
    (root / "pred_utf8").mkdir()
    (root / "pred_utf8" / "predictions.json").write_bytes(b'{"format": "\xff"}')
    real = {"epoch": 1, "model_state": {"w": torch.zeros(3)}, "run_identity": {}}
    for name, write in {
        "ckpt_truncated": lambda p: (torch.save(real, p), p.write_bytes(p.read_bytes()[:100])),
        "ckpt_garbage": lambda p: p.write_bytes(b"\x00garbage" * 100),
        "ckpt_foreign": lambda p: torch.save({"weights": [1, 2]}, p),
        "ckpt_old": lambda p: torch.save({"epoch": 1, "model_state": {}}, p),
        "ckpt_pickle": lambda p: torch.save({"model_state": {}, "x": _Payload(root / "payload-ran")}, p),
    }.items():
        (root / name).mkdir()
        write(root / name / "checkpoint.pt")


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _sources(root: Path) -> None:
    (root / "one_group.txt").write_text("## 天气\n[day] N: 今天 | 明天\n= {day}天气怎么样\nS: {day}天气如何\n", encoding="utf-8")
    (root / "latin1.txt").write_bytes("## caf\xe9\n".encode("latin-1"))
    (root / "ud_empty").mkdir()
    (root / "pipeline_empty").mkdir()
    (root / "pipeline_bad").mkdir()
    (root / "pipeline_bad" / "meta.json").write_text('{"lang": "zh", "name": "x", "version": "1"}', encoding="utf-8")
    (root / "pipeline_bad" / "config.cfg").write_text("garbage [[[", encoding="utf-8")
    (root / "cache_corrupt").mkdir()
    (root / "cache_corrupt" / "parses.sqlite").write_bytes(b"this is not an SQLite database" * 50)
    tiny = root / "tiny_data"
    tiny.mkdir()
    for split in ("train", "dev", "test"):
        (tiny / f"{split}.tsv").write_text("怎么做红烧肉\t红烧肉怎么做\t1\n手机没有信号\t电脑怎么录像\t0\n", encoding="utf-8")


def _grading(root: Path) -> None:
    (root / "subs_empty").mkdir()
    (root / "subs" / "alice").mkdir(parents=True)
    shutil.copy(FAST_LESSON, root / "subs" / "alice" / FAST_LESSON.name)
    (root / "ref_broken").mkdir()
    (root / "ref_broken" / FAST_LESSON.name).write_text("{ broken", encoding="utf-8")


# Lock files this test process holds (the kernel's flock) for as long as the module runs.
_HELD_LOCKS: list = []


def _hold_lock(lock: Path) -> None:
    """Hold ``lock`` as another command would: locked, with a process id (1) in it for the message."""
    handle = open(lock, "w", encoding="utf-8")
    handle.write("1\n")
    handle.flush()
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _HELD_LOCKS.append(handle)


def _folders(root: Path) -> None:
    """Output folders in use by another command, with a lock that is not a file, or holding files the course did not write."""
    for name in ("locked_run", "users_run", "users_notebooks", "folder_locked_run"):
        (root / name).mkdir()
    _hold_lock(root / "locked_run" / ".lessons.lock")
    _hold_lock(root / "locked.json.lock")
    (root / "folder_locked_run" / ".lessons.lock").mkdir()  # e.g. left by a full disk or a careless copy
    (root / "users_run" / "metrics.json").write_text('{"mine": 1}\n', encoding="utf-8")
    (root / "users_notebooks" / "notes.ipynb").write_text("{}", encoding="utf-8")


def _prepare(root: Path) -> dict[str, str]:
    (root / "afile").write_text("a file, not a folder", encoding="utf-8")
    (root / "empty.json").write_text("", encoding="utf-8")
    (root / "text_study").mkdir()  # a study folder holding a .json file that is plain text
    (root / "text_study" / "notes.json").write_text("notes on the study\n", encoding="utf-8")
    _data(root, "data_empty_test", lambda d: (d / "test.tsv").write_text("", encoding="utf-8"))
    _data(root, "data_two_trains", lambda d: shutil.copy(d / "train.tsv", d / "train.txt"))
    _data(root, "data_no_dev", lambda d: (d / "dev.tsv").unlink())
    _data(root, "data_bad_line", lambda d: (d / "dev.tsv").write_text("甲\t乙\t1\n只有两列\t1\n", encoding="utf-8"))
    _data(root, "data_bad_label", lambda d: (d / "test.tsv").write_text("甲\t乙\t1\n甲\t乙\t3\n", encoding="utf-8"))
    _data(root, "data_bad_utf8", lambda d: (d / "train.tsv").write_bytes("甲\t乙\t1\n".encode() + b"\xff\xfe\t\xc3\t0\n"))
    _data(root, "data_header_only", lambda d: (d / "dev.tsv").write_text("text_a\ttext_b\tlabel\n", encoding="utf-8"))
    _data(root, "data_all_bad", lambda d: (d / "test.tsv").write_text("坏\n坏\t行\n", encoding="utf-8"))
    _data(root, "data_invisible", lambda d: (d / "dev.tsv").write_text("甲\t乙\t1\n\x00\u200b\x00\t乙\t0\n",
                                                                      encoding="utf-8"))
    _data(root, "data_dir_file", lambda d: ((d / "train.tsv").unlink(), (d / "train.tsv").mkdir()))
    _data(root, "data_long_line", lambda d: (d / "test.tsv").write_text("甲\t乙\t1\n" + "长" * 100_000 + "\t乙\t0\n",
                                                                       encoding="utf-8"))
    _folders(root)
    _notebooks(root)
    _runs(root)
    _sources(root)
    _grading(root)
    return {p.name.replace(".", "_"): str(p) for p in root.iterdir()} | {"root": str(root)}


# (id, command line, text the error must contain). "{x}" is a prepared path (dots in its name
# written as "_": {bad_ipynb}), "{root}" the folder they are in, "{elsewhere}" a folder outside it.
CASES: list[tuple[str, list[str], str]] = [
    # --- the command line itself
    ("no-command", [], "required: COMMAND"),
    ("unknown-command", ["teach"], "invalid choice: 'teach'"),
    ("check-env-extra-argument", ["check-env", "now"], "unrecognized arguments: now"),
    # --- train: options, each refused before any work
    ("train-epochs-0", ["train", "--out", "{root}/o", *TINY, "--epochs", "0"], "--epochs must be a positive int"),
    ("train-epochs-negative", ["train", "--out", "{root}/o", *TINY, "--epochs", "-2"], "--epochs"),
    ("train-epochs-not-int", ["train", "--out", "{root}/o", "--epochs", "two"], "argument --epochs: invalid int"),
    ("train-lr-negative", ["train", "--out", "{root}/o", *TINY, "--lr", "-1"], "--lr must be > 0.0"),
    ("train-lr-zero", ["train", "--out", "{root}/o", *TINY, "--lr", "0"], "--lr must be > 0.0"),
    ("train-lr-inf", ["train", "--out", "{root}/o", *TINY, "--lr", "inf"], "--lr must be finite"),
    ("train-lr-nan", ["train", "--out", "{root}/o", *TINY, "--lr", "nan"], "--lr must be a number"),
    ("train-weight-decay-nan", ["train", "--out", "{root}/o", *TINY, "--weight-decay", "nan"], "--weight-decay must be a number"),
    ("train-weight-decay-negative", ["train", "--out", "{root}/o", *TINY, "--weight-decay", "-0.1"], "--weight-decay must be ≥ 0.0"),
    ("train-batch-size-0", ["train", "--out", "{root}/o", *TINY, "--batch-size", "0"], "--batch-size must be a positive int"),
    ("train-eval-batch-size-0", ["train", "--out", "{root}/o", *TINY, "--eval-batch-size", "0"], "--eval-batch-size"),
    ("train-heads-do-not-divide", ["train", "--out", "{root}/o", *TINY, "--d-model", "10", "--n-heads", "4"],
     "--d-model=10 must be divisible by --n-heads=4"),
    ("train-odd-width", ["train", "--out", "{root}/o", *TINY, "--d-model", "15", "--n-heads", "1"], "must be even"),
    ("train-layers-0", ["train", "--out", "{root}/o", *TINY, "--n-layers", "0"], "--n-layers must be a positive int"),
    ("train-dropout-1.5", ["train", "--out", "{root}/o", *TINY, "--dropout", "1.5"], "--dropout must be in [0, 1)"),
    ("train-dropout-nan", ["train", "--out", "{root}/o", *TINY, "--dropout", "nan"], "--dropout must be a number"),
    ("train-layer-norm-eps-0", ["train", "--out", "{root}/o", *TINY, "--layer-norm-eps", "0"], "--layer-norm-eps"),
    ("train-activation", ["train", "--out", "{root}/o", *TINY, "--activation", "tanh"], "argument --activation: invalid choice"),
    ("train-schedule", ["train", "--out", "{root}/o", *TINY, "--schedule", "cosine"], "argument --schedule: invalid choice"),
    ("train-warmup-1", ["train", "--out", "{root}/o", *TINY, "--warmup-ratio", "1"], "--warmup-ratio must be in [0, 1)"),
    ("train-swap-2", ["train", "--out", "{root}/o", *TINY, "--swap-probability", "2"], "--swap-probability must be ≤ 1.0"),
    ("train-clip-negative", ["train", "--out", "{root}/o", *TINY, "--clip-norm", "-1"], "--clip-norm must be ≥ 0.0"),
    ("train-max-len-3", ["train", "--out", "{root}/o", *TINY, "--max-len", "3"], "--max-len must be an int ≥ 5"),
    ("train-positions-short", ["train", "--out", "{root}/o", *TINY, "--max-positions", "16"], "max_positions=16 is shorter"),
    ("train-seed-negative", ["train", "--out", "{root}/o", *TINY, "--seed", "-1"], "--seed must be a non-negative int"),
    ("train-pad-id", ["train", "--out", "{root}/o", *TINY, "--pad-id", "5"], "--pad-id must be 0"),
    ("train-classes-3", ["train", "--out", "{root}/o", *TINY, "--n-classes", "3"], "--n-classes must be 2"),
    ("train-preset", ["train", "--out", "{root}/o", "--preset", "bert"], "argument --preset: invalid choice"),
    ("train-threads-0", ["train", "--out", "{root}/o", *TINY, "--threads", "0"], "--threads must be a positive int"),
    ("train-device-tpu", ["train", "--out", "{root}/o", *TINY, "--device", "tpu"], "argument --device: invalid choice: 'tpu'"),
    ("train-device-garbage", ["train", "--out", "{root}/o", *TINY, "--device", "cpu:x:y"], "argument --device: invalid choice"),
    ("train-limit-0", ["train", "--out", "{root}/o", *TINY, "--limit-train", "0"], "--limit-train must be a positive int"),
    ("train-limit-negative", ["train", "--out", "{root}/o", *TINY, "--limit-train", "-5"], "--limit-train must be a positive int"),
    ("train-out-is-a-file", ["train", "--out", "{afile}", *TINY], "--out {afile} is a file, not a folder"),
    ("train-out-below-a-file", ["train", "--out", "{afile}/run", *TINY], "{afile}"),
    ("train-unknown-flag", ["train", "--out", "{root}/o", "--epochz", "3"], "unrecognized arguments: --epochz"),
    # --- train: data
    ("train-data-missing", ["train", "--data-dir", "{root}/nowhere", "--out", "{root}/o", *TINY], "nowhere"),
    ("train-data-is-a-file", ["train", "--data-dir", "{afile}", "--out", "{root}/o", *TINY], "is not a directory: {afile}"),
    ("train-data-missing-names-the-flag", ["train", "--data-dir", "{root}/nowhere", "--out", "{root}/o", *TINY],
     "--data-dir is not a directory: {root}/nowhere"),
    ("data-stats-data-is-a-file", ["data-stats", "--data-dir", "{afile}"], "--data-dir is not a directory: {afile}"),
    ("train-empty-test", ["train", "--data-dir", "{data_empty_test}", "--out", "{root}/o", *TINY],
     "{data_empty_test}/test.tsv: the test split holds no pairs"),
    ("train-two-train-files", ["train", "--data-dir", "{data_two_trains}", "--out", "{root}/o", *TINY],
     "2 train files (train.tsv, train.txt)"),
    ("train-no-dev", ["train", "--data-dir", "{data_no_dev}", "--out", "{root}/o", *TINY], "no dev file in {data_no_dev}"),
    ("train-bad-line", ["train", "--data-dir", "{data_bad_line}", "--out", "{root}/o", *TINY],
     "{data_bad_line}/dev.tsv, line 2: expected 3 tab-separated columns"),
    ("train-bad-label", ["train", "--data-dir", "{data_bad_label}", "--out", "{root}/o", *TINY],
     "{data_bad_label}/test.tsv, line 2: label must be 0 or 1, found '3'"),
    ("train-bad-utf8", ["train", "--data-dir", "{data_bad_utf8}", "--out", "{root}/o", *TINY],
     "{data_bad_utf8}/train.tsv, line 2: not valid UTF-8"),
    ("train-header-only", ["train", "--data-dir", "{data_header_only}", "--out", "{root}/o", *TINY],
     "{data_header_only}/dev.tsv: the dev split holds no pairs"),
    ("train-lenient-nothing-left", ["train", "--data-dir", "{data_all_bad}", "--out", "{root}/o", "--lenient", *TINY],
     "the test split holds no pairs (2 malformed lines skipped)"),
    ("train-split-is-a-folder", ["train", "--data-dir", "{data_dir_file}", "--out", "{root}/o", *TINY],
     "{data_dir_file}/train.tsv is a folder, not a file: the train split must be a file of tab-separated pairs"),
    ("data-stats-split-is-a-folder", ["data-stats", "--data-dir", "{data_dir_file}"],
     "{data_dir_file}/train.tsv is a folder, not a file"),
    ("train-invisible-sentence", ["train", "--data-dir", "{data_invisible}", "--out", "{root}/o", *TINY],
     "{data_invisible}/dev.tsv, line 2: the first sentence (text_a) has no visible character"),
    ("train-huge-question", ["train", "--data-dir", "{data_long_line}", "--out", "{root}/o", *TINY],
     "{data_long_line}/test.tsv, line 2: the first sentence (text_a) has 100,000 characters, more than the 500"),
    # --- train: run folders
    ("train-truncated-checkpoint", ["train", "--out", "{ckpt_truncated}", *TINY], "{ckpt_truncated}/checkpoint.pt is not a readable"),
    ("train-garbage-checkpoint", ["train", "--out", "{ckpt_garbage}", *TINY], "{ckpt_garbage}/checkpoint.pt is not a readable"),
    ("train-foreign-checkpoint", ["train", "--out", "{ckpt_foreign}", *TINY], "is not a checkpoint written by"),
    ("train-old-checkpoint", ["train", "--out", "{ckpt_old}", *TINY], "data: missing in the checkpoint"),
    ("train-pickle-checkpoint", ["train", "--out", "{ckpt_pickle}", *TINY], "{ckpt_pickle}/checkpoint.pt is not a readable"),
    ("train-folder-in-use", ["train", "--out", "{locked_run}", *TINY], "{locked_run} is in use by another command (process 1)"),
    ("train-lock-is-a-folder", ["train", "--out", "{folder_locked_run}", *TINY],
     "{folder_locked_run}: its lock {folder_locked_run}/.lessons.lock is not a plain file; if no command is running "
     "there, remove it (rm -r '{folder_locked_run}/.lessons.lock')"),
    ("train-users-metrics", ["train", "--out", "{users_run}", *TINY], "{users_run} holds metrics.json, which the course did not"),
    # --- compare
    ("compare-missing-run", ["compare", "{root}/nowhere", "{pred_a}"], "run folder {root}/nowhere is not a folder"),
    ("compare-run-is-a-file", ["compare", "{afile}", "{pred_a}"], "run folder {afile} is not a folder"),
    ("compare-no-predictions", ["compare", "{empty_folder}", "{pred_a}"], "no predictions.json in {empty_folder}"),
    ("compare-corrupt-json", ["compare", "{pred_corrupt}", "{pred_a}"], "{pred_corrupt}/predictions.json: not valid JSON"),
    ("compare-not-utf8", ["compare", "{pred_utf8}", "{pred_a}"], "{pred_utf8}/predictions.json"),
    ("compare-json-list", ["compare", "{pred_list}", "{pred_a}"], "{pred_list}/predictions.json: not predictions written"),
    ("compare-old-format", ["compare", "{pred_old}", "{pred_a}"], "{pred_old}/predictions.json: not predictions written"),
    ("compare-bad-values", ["compare", "{pred_values}", "{pred_a}"], "{pred_values}/predictions.json: its test entry is malformed"),
    ("compare-lengths-differ", ["compare", "{pred_lengths}", "{pred_a}"], "its test entry is malformed"),
    ("compare-no-dev", ["compare", "{pred_nodev}", "{pred_a}", "--split", "dev"], "holds no dev predictions"),
    ("compare-other-test-set", ["compare", "{pred_a}", "{pred_b}"], "different test sets"),
    ("compare-labels-edited", ["compare", "{pred_a}", "{pred_c}"], "labels differ although the fingerprints agree"),
    ("compare-split", ["compare", "{pred_a}", "{pred_b}", "--split", "train"], "argument --split: invalid choice"),
    # --- data-stats, baseline
    ("data-stats-data-missing", ["data-stats", "--data-dir", "{root}/nowhere"], "nowhere"),
    ("data-stats-bad-label", ["data-stats", "--data-dir", "{data_bad_label}"],
     "{data_bad_label}/test.tsv, line 2: label must be 0 or 1, found '3'"),
    ("baseline-no-dev", ["baseline", "--data-dir", "{data_no_dev}"], "no dev file in {data_no_dev}"),
    ("baseline-empty-test", ["baseline", "--data-dir", "{data_empty_test}"],
     "{data_empty_test}/test.tsv: the test split holds no pairs"),
    # --- build-sample
    ("build-sample-source-missing", ["build-sample", "--source", "{root}/none.txt", "--out-dir", "{root}/o"], "--source {root}/none.txt"),
    ("build-sample-source-latin1", ["build-sample", "--source", "{latin1_txt}", "--out-dir", "{root}/o"], "{latin1_txt}: not UTF-8"),
    ("build-sample-too-few-groups", ["build-sample", "--source", "{one_group_txt}", "--out-dir", "{root}/o"],
     "{one_group_txt}: no question can start a pair of label 1 and kind"),
    ("build-sample-out-is-a-file", ["build-sample", "--out-dir", "{afile}"], "--out-dir {afile} is a file"),
    ("build-sample-seed-negative", ["build-sample", "--seed", "-3", "--out-dir", "{root}/o"], "--seed must be a non-negative int"),
    # --- tatoeba-split (the options and the output folder are checked before the file is read)
    ("tatoeba-split-no-source", ["tatoeba-split", "--out-dir", "{root}/o"], "no Tatoeba file: give --source PATH or set"),
    ("tatoeba-split-source-missing", ["tatoeba-split", "--source", "{root}/none.txt", "--out-dir", "{root}/o"],
     "{root}/none.txt: not a file (it does not exist)"),
    ("tatoeba-split-other-file", ["tatoeba-split", "--source", "{afile}", "--out-dir", "{root}/o"],
     "{afile}: SHA-256 "),
    ("tatoeba-split-out-is-a-file", ["tatoeba-split", "--source", "{afile}", "--out-dir", "{afile}"],
     "--out-dir {afile} is a file"),
    ("tatoeba-split-over-other-data", ["tatoeba-split", "--source", "{afile}", "--out-dir", "{tiny_data}"],
     "--out-dir {tiny_data} holds train.tsv, dev.tsv, test.tsv, which the course did not write as a split of "
     "`lessons tatoeba-split` (or which were changed since): choose a new or empty folder"),
    ("tatoeba-split-seed-negative", ["tatoeba-split", "--source", "{afile}", "--out-dir", "{root}/o", "--seed", "-2"],
     "--seed must be a non-negative int"),
    # --- translate
    ("translate-fraction-0", ["translate", "--data-dir", "{tiny_data}", "--out-dir", "{root}/o", "--fractions", "0"],
     "--fractions: 0 is not in (0, 1]"),
    ("translate-seed-negative", ["translate", "--out-dir", "{root}/o", "--seeds", "-1"], "--seeds must be a non-negative int"),
    ("translate-out-is-a-file", ["translate", "--out-dir", "{afile}", "--variants", "none"], "--out-dir {afile} is a file"),
    ("translate-heads-do-not-divide", ["translate", "--out-dir", "{root}/o", "--d-model", "30", "--n-heads", "4"],
     "--d-model=30 must be divisible by --n-heads=4"),
    ("translate-odd-width", ["translate", "--out-dir", "{root}/o", "--d-model", "15", "--n-heads", "3"],
     "--d-model=15 must be even"),
    ("translate-out-below-a-file", ["translate", "--out-dir", "{afile}/sub"],
     "--out-dir {afile}/sub lies below {afile}, which is a file, not a folder"),
    ("translate-data-without-splits", ["translate", "--data-dir", "{empty_folder}", "--out-dir", "{root}/o"],
     "{empty_folder}: no train.tsv file, so not a folder of translation pairs"),
    ("translate-lr-negative", ["translate", "--out-dir", "{root}/o", "--lr", "-1"], "--lr must be > 0.0"),
    ("translate-not-a-pairs-folder", ["translate", "--data-dir", "{tiny_data}", "--out-dir", "{root}/o"],
     "{tiny_data}/train.tsv"),
    # --- translation-pilot
    ("translation-pilot-missing", ["translation-pilot", "{root}/none"], "folder {root}/none is not a folder"),
    ("translation-pilot-no-results", ["translation-pilot", "{tiny_data}"], "{tiny_data}: no translation results files"),
    ("translation-pilot-a-file", ["translation-pilot", "{afile}"], "results folder {afile} is not a folder"),
    ("translation-pilot-family-0", ["translation-pilot", "{tiny_data}", "--family", "0"], "--family must be"),
    ("translation-pilot-effect-negative", ["translation-pilot", "{tiny_data}", "--effect", "-0.5"], "--effect must be"),
    # --- translation-study
    ("translation-study-missing", ["translation-study", "{root}/none", "--design", "{afile}"],
     "{afile}: not a JSON design file"),
    ("translation-study-no-design", ["translation-study", "{tiny_data}", "--design", "{root}/none.json"],
     "{root}/none.json: cannot read the design (No such file or directory)"),
    ("translation-study-list-design", ["translation-study", "{tiny_data}", "--design", "{list_ipynb}"],
     "{list_ipynb}: not a translation study design"),
    # --- build-translation-corpus
    ("build-translation-corpus-out-is-a-file", ["build-translation-corpus", "--out-dir", "{afile}"],
     "--out-dir {afile} is a file"),
    ("build-translation-corpus-out-below-a-file", ["build-translation-corpus", "--out-dir", "{afile}/x"],
     "--out-dir {afile}/x lies below {afile}, which is a file"),
    ("build-translation-corpus-seed-negative", ["build-translation-corpus", "--seed", "-1", "--out-dir", "{root}/o"],
     "--seed must be a non-negative int"),
    ("build-translation-corpus-too-few-pairs", ["build-translation-corpus", "--dev-pairs", "1", "--out-dir", "{root}/o"],
     "--dev-pairs must be"),
    # --- execute
    ("execute-missing", ["execute", "{root}/none.ipynb"], "not a notebook or a folder of notebooks: {root}/none.ipynb"),
    ("execute-invalid-json", ["execute", "{bad_ipynb}", "--output-dir", "{root}/o"], "{bad_ipynb}: not a notebook"),
    ("execute-json-list", ["execute", "{list_ipynb}", "--output-dir", "{root}/o"], "{list_ipynb}: not a Jupyter notebook"),
    ("execute-bad-schema", ["execute", "{schema_ipynb}", "--output-dir", "{root}/o"], "{schema_ipynb}: not a valid Jupyter"),
    ("execute-not-utf8", ["execute", "{latin1_ipynb}", "--output-dir", "{root}/o"], "{latin1_ipynb}: not a notebook"),
    ("execute-folder-with-a-bad-one", ["execute", "{bad_folder}", "--output-dir", "{root}/o"], "bad.ipynb: not a notebook"),
    ("execute-empty-folder", ["execute", "{empty_folder}"], "no notebooks (*.ipynb) in {empty_folder}"),
    ("execute-param-typo", ["execute", "{tiny_ipynb}", "--output-dir", "{root}/o", "-p", "epochz=3"],
     "tiny.ipynb has no parameter 'epochz' (did you mean epochs?)"),
    ("execute-param-dash", ["execute", "{tiny_ipynb}", "--output-dir", "{root}/o", "-p", "data-dir=/x"],
     "'data-dir' in 'data-dir=/x' is not a Python variable name (did you mean data_dir?)"),
    ("execute-param-no-value", ["execute", "{tiny_ipynb}", "--output-dir", "{root}/o", "-p", "epochs"], "'epochs' must look like NAME=VALUE"),
    ("execute-output-dir-holds-the-learners-notebook", ["execute", "{tiny_ipynb}", "--output-dir", "{users_executed}"],
     "--output-dir {users_executed} holds tiny.ipynb, which the course did not write as a notebook executed by "
     "`lessons execute` (or which was changed since): choose a new or empty folder, or add --force to replace them"),
    ("execute-param-in-place", ["execute", "{tiny_ipynb}", "-p", "n=2"], "--param needs --output-dir"),
    ("execute-param-no-cell", ["execute", "{noparams_ipynb}", "--output-dir", "{root}/o", "-p", "n=2"],
     "noparams.ipynb has no cell tagged 'parameters'"),
    ("execute-timeout-0", ["execute", "{tiny_ipynb}", "--timeout", "0"], "--timeout must be a positive int"),
    ("execute-output-is-a-file", ["execute", "{tiny_ipynb}", "--output-dir", "{afile}"], "--output-dir {afile} is a file"),
    # --- student
    ("site-out-is-a-file", ["site", "--out", "{afile}"], "--out {afile} is a file"),
    ("site-out-holds-the-learners-files", ["site", "--out", "{users_notebooks}"], "holds notes.ipynb, which the course did not write there"),
    ("student-invalid-json", ["student", "{bad_ipynb}", "--out", "{elsewhere}/o"], "{bad_ipynb}: not a notebook"),
    ("student-missing", ["student", "{root}/none.ipynb", "--out", "{elsewhere}/o"], "{root}/none.ipynb"),
    ("student-unbalanced", ["student", "{unbalanced_ipynb}", "--out", "{elsewhere}/o"], "without a matching ### END SOLUTION"),
    ("student-no-check-cell", ["student", "{nocheck_ipynb}", "--out", "{elsewhere}/o"], "nocheck.ipynb cell 0: exercise without a check cell"),
    ("student-out-is-input", ["student", "{lessons}", "--out", "{lessons}"], "--out {lessons} is the input folder"),
    ("student-out-inside-input", ["student", "{lessons}", "--out", "{lessons}/student"], "is inside the input folder"),
    ("student-out-next-to-input-file", ["student", "{lessons}/" + FAST_LESSON.name, "--out", "{lessons}"], "is the input folder"),
    ("student-out-is-a-file", ["student", "{lessons}", "--out", "{afile}"], "--out {afile} is a file"),
    ("student-out-below-a-file", ["student", "{lessons}", "--out", "{afile}/student"], "{afile}"),
    ("student-out-holds-the-learners-files", ["student", "{lessons}", "--out", "{users_notebooks}"],
     "--out {users_notebooks} holds notes.ipynb, which the course did not write there (or which was changed since): "
     "choose a new or empty folder, or add --force to replace them"),
    # --- workspace
    ("workspace-is-a-file", ["workspace", "{afile}"], "workspace {afile} is a file"),
    ("workspace-inside-the-course", ["workspace", str(NOTEBOOKS_DIR / "ws")], "is inside the input folder"),
    # --- nbgrader-course
    ("nbgrader-out-not-empty", ["nbgrader-course", "{lessons}", "--out", "{root}"], "is not empty"),
    ("nbgrader-invalid-json", ["nbgrader-course", "{bad_ipynb}", "--out", "{elsewhere}/o"], "{bad_ipynb}: not a notebook"),
    ("nbgrader-no-check-cell", ["nbgrader-course", "{nocheck_ipynb}", "--out", "{elsewhere}/o"], "exercise without a check cell"),
    ("nbgrader-out-inside-input", ["nbgrader-course", "{lessons}", "--out", "{lessons}/course"], "is inside the input folder"),
    ("nbgrader-out-is-a-file", ["nbgrader-course", "{lessons}", "--out", "{afile}"], "--out {afile} is a file"),
    # --- grade
    ("grade-missing", ["grade", "{root}/nowhere", "--out", "{root}/o"], "submissions folder {root}/nowhere is not a folder"),
    ("grade-is-a-file", ["grade", "{afile}", "--out", "{root}/o"], "submissions folder {afile} is not a folder"),
    ("grade-no-students", ["grade", "{subs_empty}", "--out", "{root}/o"], "{subs_empty}: expected one folder per student"),
    ("grade-reference-missing", ["grade", "{subs}", "--reference", "{root}/nowhere", "--out", "{root}/o"],
     "reference folder {root}/nowhere is not a folder"),
    ("grade-reference-broken", ["grade", "{subs}", "--reference", "{ref_broken}", "--out", "{root}/o",
                                "--isolation", "process"],  # the console test's PATH has no bwrap
     "{ref_broken}/01_dot_product_attention.ipynb: not a notebook"),
    ("grade-out-is-a-file", ["grade", "{subs}", "--out", "{afile}"], "--out {afile} is a file"),
    ("grade-out-inside-submissions", ["grade", "{subs}", "--out", "{subs}/grades"], "is inside the input folder {subs}"),
    ("grade-timeout-0", ["grade", "{subs}", "--out", "{root}/o", "--timeout", "0"], "--timeout must be a positive int"),
    ("grade-notebook-timeout", ["grade", "{subs}", "--out", "{root}/o", "--notebook-timeout", "-1"], "--notebook-timeout"),
    ("grade-memory-small", ["grade", "{subs}", "--out", "{root}/o", "--memory-mb", "10"], "--memory-mb must be an int ≥ 256"),
    ("grade-disk-0", ["grade", "{subs}", "--out", "{root}/o", "--disk-mb", "0"], "--disk-mb must be an int ≥ 16"),
    ("grade-seed-negative", ["grade", "{subs}", "--out", "{root}/o", "--seed", "-1"], "--seed must be a non-negative int"),
    ("grade-isolation", ["grade", "{subs}", "--isolation", "docker"], "argument --isolation: invalid choice"),
    # --- preparse
    ("preparse-data-missing", ["preparse", "--data-dir", "{root}/nowhere"], "{root}/nowhere"),
    ("preparse-data-required", ["preparse"], "the following arguments are required: --data-dir"),
    ("preparse-limit-negative", ["preparse", "--data-dir", "{tiny_data}", "--limit", "-1"], "--limit must be a positive int"),
    ("preparse-limit-0", ["preparse", "--data-dir", "{tiny_data}", "--limit", "0"], "--limit must be a positive int"),
    ("preparse-batch-0", ["preparse", "--data-dir", "{tiny_data}", "--batch-size", "0"], "--batch-size must be a positive int"),
    ("preparse-n-process-0", ["preparse", "--data-dir", "{tiny_data}", "--n-process", "0"], "--n-process must be a positive int"),
    ("preparse-fraction-0", ["preparse", "--data-dir", "{tiny_data}", "--train-fraction", "0"], "--train-fraction must be in (0, 1]"),
    ("preparse-fraction-big", ["preparse", "--data-dir", "{tiny_data}", "--train-fraction", "1.5"], "--train-fraction must be in (0, 1]"),
    ("preparse-subset-seed-negative", ["preparse", "--data-dir", "{tiny_data}", "--subset-seed", "-1"],
     "--subset-seed must be a non-negative int"),
    ("preparse-cache-is-a-file", ["preparse", "--data-dir", "{tiny_data}", "--cache-dir", "{afile}"], "--cache-dir {afile} is a file"),
    ("preparse-bad-data", ["preparse", "--data-dir", "{data_bad_line}"], "{data_bad_line}/dev.tsv, line 2"),
    ("preparse-huge-question", ["preparse", "--data-dir", "{data_long_line}"],
     "{data_long_line}/test.tsv, line 2: the first"),
    ("preparse-huge-question-advice", ["preparse", "--data-dir", "{data_long_line}"],
     "`lessons preparse` and `lessons experiment` read every line)"),
    ("preparse-parser-folder-missing", ["preparse", "--data-dir", "{tiny_data}", "--parser", "{root}/no_parser"],
     "parser folder not found: {root}/no_parser"),
    ("preparse-parser-not-installed", ["preparse", "--data-dir", "{tiny_data}", "--parser", "zh_core_web_nope"],
     "spaCy pipeline 'zh_core_web_nope' is not installed"),
    ("preparse-parser-empty-folder", ["preparse", "--data-dir", "{tiny_data}", "--parser", "{pipeline_empty}"],
     "cannot load the spaCy pipeline {pipeline_empty}"),
    ("preparse-parser-bad-config", ["preparse", "--data-dir", "{tiny_data}", "--parser", "{pipeline_bad}"],
     "cannot load the spaCy pipeline {pipeline_bad}"),
    ("preparse-corrupt-cache", ["preparse", "--data-dir", "{tiny_data}", "--cache-dir", "{cache_corrupt}"],
     "parse cache {cache_corrupt}/parses.sqlite is not a readable parse cache"),
    # --- build-treebank and train-parser (nothing is written or trained: the options are refused first)
    ("build-treebank-per-frame-0", ["build-treebank", "--per-frame", "0"], "--per-frame must be a positive int"),
    ("build-treebank-seed-negative", ["build-treebank", "--seed", "-1"], "--seed must be a non-negative int"),
    ("train-parser-ud-missing", ["train-parser", "--ud-dir", "{root}/no_ud"], "UD folder not found: {root}/no_ud"),
    ("train-parser-epochs-0", ["train-parser", "--ud-dir", "{ud_empty}", "--max-epochs", "0"], "--max-epochs must be a positive int"),
    ("train-parser-templates", ["train-parser", "--ud-dir", "{ud_empty}", "--templates-per-frame", "-1"],
     "--templates-per-frame must be a non-negative int"),
    ("train-parser-output-file", ["train-parser", "--ud-dir", "{ud_empty}", "--output", "{afile}"], "--output {afile} is a file"),
    ("train-parser-scores-folder", ["train-parser", "--ud-dir", "{ud_empty}", "--scores", "{root}"], "--scores {root} is a folder"),
    ("train-parser-ud-files-missing", ["train-parser", "--ud-dir", "{ud_empty}", "--output", "{root}/o"],
     "not found in {ud_empty} (see --ud-dir)"),
    # --- experiment
    ("grid-missing", ["grid", "{root}/nowhere.json"], "{root}/nowhere.json: cannot read the results"),
    ("grid-not-results", ["grid", "{bad_ipynb}"], "{bad_ipynb}: not a JSON results file (not valid JSON at line 1, column 3)"),
    ("grid-not-json", ["grid", "{afile}"], "error: {afile}: not a JSON results file\n"),
    ("grid-empty-file", ["grid", "{empty_json}"], "error: {empty_json}: not a JSON results file (the file is empty)\n"),
    ("grid-json-list", ["grid", "{pred_list}/predictions.json"],
     "{pred_list}/predictions.json: not the results of `lessons experiment` (a JSON list, not an object"),
    ("grid-json-other-object", ["grid", "{pred_a}/predictions.json"],
     "{pred_a}/predictions.json: not the results of `lessons experiment` (no 'config' entry)"),
    ("grid-empty-folder", ["grid", "{bad_folder}"], "{bad_folder}: a folder without results files"),
    ("grid-expect-unknown", ["grid", "{root}/r.json", "--expect", "sample"], "argument --expect: invalid choice"),
    # --- study (the data-size study's folder)
    ("study-missing", ["study", "{root}/nowhere"], "{root}/nowhere: not a folder of study results"),
    ("study-a-file", ["study", "{bad_ipynb}"], "{bad_ipynb}: not a folder of study results"),
    ("study-empty-folder", ["study", "{empty_folder}"], "{empty_folder}: a folder without results files"),
    ("study-not-results", ["study", "{pred_a}"], "{pred_a}/predictions.json: not the results of `lessons experiment`"),
    ("study-corrupt-json", ["study", "{pred_corrupt}"],
     "{pred_corrupt}/predictions.json: not a JSON results file (not valid JSON at line 1, column 3)\n"),
    ("study-text-file", ["study", "{text_study}"], "error: {text_study}/notes.json: not a JSON results file\n"),
    ("study-expect-unknown", ["study", "{root}", "--expect", "sample"], "argument --expect: invalid choice"),
    ("baseline-out-in-its-data", ["baseline", "--data-dir", "{tiny_data}", "--out", "{tiny_data}/train.tsv"],
     "--out {tiny_data}/train.tsv is inside the data folder {tiny_data} that the command reads"),
    ("baseline-out-over-a-users-file", ["baseline", "--data-dir", "{tiny_data}", "--out", "{afile}"],
     "--out {afile} already exists and is not a baselines file that the course wrote"),
    ("experiment-out-in-its-data", ["experiment", "--data-dir", "{tiny_data}", "--out", "{tiny_data}/test.tsv"],
     "--out {tiny_data}/test.tsv is inside the data folder {tiny_data} that the command reads"),
    ("experiment-out-not-utf8", ["experiment", "--out", "{root}/\udcff.json"],
     "--out '{root}/\\udcff.json' holds bytes that are not UTF-8"),
    ("baseline-data-dir-not-utf8", ["baseline", "--data-dir", "{root}/\udcfe"],
     "--data-dir '{root}/\\udcfe' holds bytes that are not UTF-8"),
    ("experiment-out-required", ["experiment"], "the following arguments are required: --out"),
    ("experiment-seed-negative", ["experiment", "--out", "{root}/r.json", "--seeds", "-1"], "each of --seeds must be a non-negative"),
    ("experiment-seed-repeated", ["experiment", "--out", "{root}/r.json", "--seeds", "0", "0"], "--seeds must be a non-empty list"),
    ("experiment-fraction-0", ["experiment", "--out", "{root}/r.json", "--train-fraction", "0"], "--train-fraction must be in (0, 1]"),
    ("experiment-fraction-nan", ["experiment", "--out", "{root}/r.json", "--train-fraction", "nan"], "--train-fraction must be a number"),
    ("experiment-noise-2", ["experiment", "--out", "{root}/r.json", "--parser-noise", "2"], "--parser-noise must be ≤ 1.0"),
    ("experiment-max-distance-0", ["experiment", "--out", "{root}/r.json", "--max-distance", "0"], "--max-distance must be a positive"),
    ("experiment-max-distance-int8", ["experiment", "--out", "{root}/r.json", "--max-distance", "125"], "--max-distance must be ≤ 124"),
    ("experiment-seed-not-seeds", ["experiment", "--out", "{root}/r.json", "--seed", "3"],
     "--seed does not apply to an experiment: every run takes its seed from --seeds"),
    ("experiment-one-layer", ["experiment", "--out", "{root}/r.json", "--n-layers", "1"], "at least 2 encoder blocks"),
    ("experiment-epochs-0", ["experiment", "--out", "{root}/r.json", "--epochs", "0"], "--epochs must be a positive int"),
    ("experiment-decay-nan", ["experiment", "--out", "{root}/r.json", "--decay", "nan"], "decay"),
    ("experiment-variant", ["experiment", "--out", "{root}/r.json", "--variants", "magic"], "argument --variants: invalid choice"),
    ("experiment-device", ["experiment", "--out", "{root}/r.json", "--device", "tpu"], "argument --device: invalid choice"),
    ("experiment-threads-0", ["experiment", "--out", "{root}/r.json", "--threads", "0"], "--threads must be a positive int"),
    ("experiment-out-is-a-folder", ["experiment", "--out", "{root}"], "--out {root} is a folder"),
    ("experiment-out-below-a-file", ["experiment", "--out", "{afile}/r.json"], "--out {afile}/r.json lies below {afile}"),
    ("experiment-work-dir-file", ["experiment", "--out", "{root}/r.json", "--work-dir", "{afile}"], "--work-dir {afile} is a file"),
    ("experiment-cache-dir-file", ["experiment", "--out", "{root}/r.json", "--cache-dir", "{afile}"], "--cache-dir {afile} is a file"),
    ("experiment-data-missing", ["experiment", "--out", "{root}/r.json", "--data-dir", "{root}/nowhere"], "{root}/nowhere"),
    ("experiment-bad-data", ["experiment", "--out", "{root}/r.json", "--data-dir", "{data_empty_test}"], "holds no pairs"),
    ("experiment-huge-question", ["experiment", "--out", "{root}/r.json", "--data-dir", "{data_long_line}"],
     "{data_long_line}/test.tsv, line 2: the first sentence (text_a) has 100,000 characters"),
]


def _shipped_files() -> dict[str, bytes]:
    from lessons_lib.paths import DATA_DIR

    return {str(p): p.read_bytes() for folder in ("treebank", "lcqmc_sample") for p in sorted((DATA_DIR / folder).rglob("*"))
            if p.is_file()}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict[str, str]:
    shipped = _shipped_files()
    paths = _prepare(tmp_path_factory.mktemp("bad")) | {"elsewhere": str(tmp_path_factory.mktemp("elsewhere"))}
    yield paths
    while _HELD_LOCKS:  # the other command's locks end with the cases that meet them
        _HELD_LOCKS.pop().close()
    assert _shipped_files() == shipped, "a bad-input case wrote over the course's shipped data"


@pytest.fixture(autouse=True)
def _no_lcqmc_variable(monkeypatch):
    monkeypatch.delenv(LCQMC_ENV_VAR, raising=False)
    monkeypatch.delenv(TATOEBA_ENV_VAR, raising=False)


def _fill(argv: list[str], paths: dict[str, str]) -> list[str]:
    return [arg.format(**paths) for arg in argv]


@pytest.mark.parametrize("argv, expected", [(argv, text) for _, argv, text in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_error_line_naming_the_culprit(prepared, cli, argv, expected):
    out = Path(prepared["root"]) / "o"
    shutil.rmtree(out, ignore_errors=True)
    code, _, err = cli(_fill(argv, prepared))
    assert code == 2, err
    assert "Traceback" not in err
    assert expected.format(**prepared) in err, err
    error_lines = [line for line in err.splitlines() if "error: " in line]
    assert len(error_lines) == 1 and err.rstrip().splitlines()[-1] == error_lines[0], err
    if argv and argv[0] in ("train", "experiment", "build-sample", "tatoeba-split", "build-translation-corpus"):
        assert not out.exists(), "a bad option or bad data must stop the command before it creates its output"
    assert not (Path(prepared["root"]) / "payload-ran").exists()


def test_a_cached_parse_edited_on_disk_is_an_error_naming_the_cache(cli, prepared, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["preparse", "--data-dir", prepared["tiny_data"], "--cache-dir", str(cache)]) == 0
    capsys.readouterr()
    with sqlite3.connect(cache / "parses.sqlite") as db:
        key, blob = db.execute("SELECT key, parse FROM parses LIMIT 1").fetchone()
        parse = json.loads(blob)
        parse["words"] = [parse["words"][0] + "改", *parse["words"][1:]]
        db.execute("UPDATE parses SET parse = ? WHERE key = ?", (json.dumps(parse, ensure_ascii=False), key))
    code, _, err = cli(["preparse", "--data-dir", prepared["tiny_data"], "--cache-dir", str(cache)])
    assert code == 2 and f"parse cache {cache / 'parses.sqlite'}, entry for {parse['text']!r}" in err
    assert "do not spell the text" in err and "Traceback" not in err


def test_a_cached_parse_replaced_by_another_valid_tree_is_an_error_naming_the_cache(cli, prepared, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["preparse", "--data-dir", prepared["tiny_data"], "--cache-dir", str(cache)]) == 0
    capsys.readouterr()
    with sqlite3.connect(cache / "parses.sqlite") as db:
        key, parse = next((key, json.loads(blob)) for key, blob in db.execute("SELECT key, parse FROM parses")
                          if len(json.loads(blob)["words"]) > 1)
        root = parse["heads"].index(-1)
        moved = 1 if root == 0 else 0  # another word becomes the root; the old root hangs from it: still one tree
        parse["heads"] = [-1 if i == moved else moved if i == root else h for i, h in enumerate(parse["heads"])]
        db.execute("UPDATE parses SET parse = ? WHERE key = ?", (json.dumps(parse, ensure_ascii=False), key))
    db.close()
    code, _, err = cli(["preparse", "--data-dir", prepared["tiny_data"], "--cache-dir", str(cache)])
    assert code == 2 and f"parse cache {cache / 'parses.sqlite'}, entry for {parse['text']!r}" in err, err
    assert "not the one written under its key" in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err


def test_a_run_folder_that_cannot_be_written_is_named(tmp_path, cli):
    """A run folder where the checkpoint's temporary file is a folder: the save fails, naming the file."""
    out = tmp_path / "run"
    (out / f".checkpoint.pt.{os.getpid()}.tmp").mkdir(parents=True)  # this process's temporary name
    code, _, err = cli(["train", "--out", str(out), *TINY, "--threads", "1"])
    assert code == 2 and "Traceback" not in err and str(out / "checkpoint.pt") in err, err


@pytest.mark.slow
@pytest.mark.parametrize("case", ["train-lr-inf", "compare-corrupt-json", "execute-invalid-json", "student-invalid-json",
                                  "grade-reference-broken", "train-truncated-checkpoint"])
def test_the_console_command_prints_no_traceback(prepared, case):
    argv, expected = next((argv, text) for name, argv, text in CASES if name == case)
    script = Path(sys.executable).with_name("lessons")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "lessons_lib.cli"]
    done = subprocess.run([*command, *_fill(argv, prepared)], capture_output=True, text=True, timeout=300,
                          env={"PATH": str(Path(sys.executable).parent), "TQDM_DISABLE": "1", "HOME": prepared["root"]})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and expected.format(**prepared) in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_table_covers_every_command():
    import argparse

    from lessons_lib.cli import build_parser

    commands = {argv[0] for _, argv, _ in CASES if argv}
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) <= commands, set(subparsers.choices) - commands
    assert len(CASES) >= 100 and len({name for name, _, _ in CASES}) == len(CASES)


def test_an_unexpected_bug_keeps_its_traceback(monkeypatch):
    """Only the course's input errors become an error line: a bug must stay visible."""
    from lessons_lib.cli import lcqmc_commands

    def broken(args):
        raise ZeroDivisionError("a bug, not bad input")

    monkeypatch.setattr(lcqmc_commands, "run_compare", broken)
    with pytest.raises(ZeroDivisionError, match="a bug"):
        main(["compare", "a", "b"])
