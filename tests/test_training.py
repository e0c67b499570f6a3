"""Optimiser groups, schedule, the training loop's checkpoints and resume, metrics, McNemar."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch import nn

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import LCQMC_SHA256, PairExample, examples_sha256, load_lcqmc
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PRESETS, PairClassifierConfig, TrainConfig, resolve_configs, resolve_recipe
from lessons_lib.evaluation.metrics import mcnemar_exact, metrics_from_logits
from lessons_lib.training.runs import RunFolder, load_checkpoint, load_metrics, load_pair_classifier, shown_command
from lessons_lib.training.trainer import (
    EpochMetrics,
    best_dev_epoch,
    build_optimizer,
    build_scheduler,
    parameter_groups,
    train_pair_classifier,
)
from lessons_lib.pairs.vocab import Vocabulary

QUESTIONS = ["花生几月种", "什么花四季开", "电脑怎么录像", "如何录视频", "手机怎么截图", "怎样截屏"]
TRAIN = [PairExample(a, b, int(i // 2 == j // 2)) for i, a in enumerate(QUESTIONS) for j, b in enumerate(QUESTIONS) if i != j]
DEV = TRAIN[:8]
VOCAB = Vocabulary.build(q for q in QUESTIONS)
CONFIG = TrainConfig(epochs=3, batch_size=8, lr=1e-3, warmup_ratio=0.2, schedule="linear", swap_probability=0.5, seed=3)


def tiny_model() -> PairClassifier:
    torch.manual_seed(1)
    return PairClassifier(PairClassifierConfig.from_options(len(VOCAB), d_model=16, n_heads=2, d_ff=32, match_flags=True))


def test_parameter_groups_exclude_biases_and_norm_weights() -> None:
    model = tiny_model()
    decay, no_decay = parameter_groups(model, 0.01)
    names = {id(p): n for n, p in model.named_parameters()}
    decay_names = {names[id(p)] for p in decay["params"]}
    no_decay_names = {names[id(p)] for p in no_decay["params"]}
    assert decay["weight_decay"] == 0.01 and no_decay["weight_decay"] == 0.0
    assert decay_names.isdisjoint(no_decay_names)
    assert decay_names | no_decay_names == set(names.values())
    assert all(n.endswith("bias") or "norm" in n for n in no_decay_names)
    assert "encoder.embeddings.norm.weight" in no_decay_names
    assert "encoder.blocks.0.norm1.weight" in no_decay_names
    assert "encoder.embeddings.token.weight" in decay_names and "classifier.weight" in decay_names
    assert not any(n.endswith("bias") for n in decay_names)
    optimizer = build_optimizer(model, CONFIG)
    assert isinstance(optimizer, torch.optim.AdamW) and len(optimizer.param_groups) == 2


def _course_models():
    from lessons_lib.ablation.config import ExperimentConfig
    from lessons_lib.ablation.experiment import build_model
    from lessons_lib.syntax_bias.registry import VARIANTS

    for preset in PRESETS:
        yield preset, PairClassifier(resolve_configs(preset, {}, 50)[0])
    every_table = {"per_head": True, "learn_scale": True, "per_layer_tables": True}
    for variant in VARIANTS:
        for options, syntax in (({}, {}), (every_table, {"distance_predictor": True})):
            config = ExperimentConfig(variants=[variant], seeds=[0], bias_options=options, syntax_model=syntax)
            yield f"{variant} {options} {syntax}", build_model(config, variant, 50, 0)


def test_the_decay_rule_spares_exactly_biases_norm_gains_and_bias_tables() -> None:
    """On every preset and variant: not decayed = each bias, each norm layer's parameter, each named table."""
    norms = (nn.LayerNorm, nn.GroupNorm, nn.modules.batchnorm._BatchNorm, nn.RMSNorm)
    for label, model in _course_models():
        spared = {id(p) for g in parameter_groups(model, 0.01, lr=1e-3) if g["weight_decay"] == 0 for p in g["params"]}
        expected = {id(p) for m in model.modules() for n, p in m.named_parameters(recurse=False)
                    if n.endswith("bias") or isinstance(m, norms) or n in getattr(m, "no_weight_decay", ())}
        assert spared == expected, label
        tables = [p for m in model.modules() for n, p in m.named_parameters(recurse=False) if n == "table"]
        assert all(p.dim() == 3 and id(p) in spared for p in tables), label  # p.dim() >= 2 alone would decay them


def test_a_module_can_ask_for_its_own_learning_rate() -> None:
    model = tiny_model()
    model.pooler.param_lr_multiplier = 10.0
    groups = parameter_groups(model, 0.01, lr=1e-3)
    names = {id(p): n for n, p in model.named_parameters()}
    own = [g for g in groups if "lr" in g]
    assert {names[id(p)] for g in own for p in g["params"]} == {"pooler.weight", "pooler.bias"}
    assert all(g["lr"] == pytest.approx(1e-2) for g in own)
    assert sorted(g["weight_decay"] for g in own) == [0.0, 0.01]  # its bias is still not decayed
    assert sum(len(g["params"]) for g in groups) == len(names)
    optimizer = build_optimizer(model, CONFIG)
    assert sorted(g["lr"] for g in optimizer.param_groups) == pytest.approx([CONFIG.lr] * 2 + [10 * CONFIG.lr] * 2)
    with pytest.raises(CourseInputError, match="pass `lr`"):
        parameter_groups(model, 0.01)


def test_schedule_warms_up_then_decays() -> None:
    optimizer = torch.optim.AdamW([nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = build_scheduler(optimizer, replace(CONFIG, warmup_ratio=0.2), total_steps=10)
    lrs = []
    for _ in range(10):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert lrs[:3] == pytest.approx([0.5, 1.0, 1.0])
    assert lrs[2] > lrs[5] > lrs[9] > 0
    constant = build_scheduler(torch.optim.AdamW([nn.Parameter(torch.zeros(1))], lr=1.0),
                               replace(CONFIG, warmup_ratio=0.0, schedule="constant"), 10)
    assert constant.get_last_lr() == [1.0]


def test_resume_gives_the_same_result_as_an_uninterrupted_run(tmp_path: Path) -> None:
    straight = tiny_model()
    full = train_pair_classifier(straight, TRAIN, DEV, VOCAB, CONFIG, test_examples=DEV, run_folder=RunFolder(tmp_path / "a"),
                                 progress=False, log=None)
    interrupted = tiny_model()
    train_pair_classifier(interrupted, TRAIN, DEV, VOCAB, CONFIG, run_folder=RunFolder(tmp_path / "b"), test_examples=DEV,
                          progress=False, stop_after_epoch=1, log=None)
    resumed_model = tiny_model()  # a fresh process: new model, state comes from the checkpoint
    resumed = train_pair_classifier(resumed_model, TRAIN, DEV, VOCAB, CONFIG, test_examples=DEV,
                                    run_folder=RunFolder(tmp_path / "b"), progress=False, log=None)
    assert resumed.resumed_from_epoch == 1
    assert [h.epoch for h in resumed.history] == [1, 2, 3]
    for (name, a), b in zip(straight.state_dict().items(), resumed_model.state_dict().values()):
        assert torch.equal(a, b), name
    assert [h.train_loss for h in full.history] == [h.train_loss for h in resumed.history]
    assert full.dev.predictions == resumed.dev.predictions
    assert (tmp_path / "b" / "metrics.json").is_file() and (tmp_path / "b" / "vocab.json").is_file()


def test_resume_refuses_other_options_or_vocabulary(tmp_path: Path) -> None:
    train_pair_classifier(tiny_model(), TRAIN, DEV, VOCAB, replace(CONFIG, epochs=1), run_folder=RunFolder(tmp_path),
                          progress=False, log=None)
    before = (tmp_path / "checkpoint.pt").read_bytes()
    with pytest.raises(CourseInputError, match=r"another run \(train_config.lr: 0.001 in the checkpoint, 0.5 now\)"):
        train_pair_classifier(tiny_model(), TRAIN, DEV, VOCAB, replace(CONFIG, epochs=1, lr=0.5), run_folder=RunFolder(tmp_path),
                              progress=False, log=None)
    other_vocab = Vocabulary.build(["别的字", *QUESTIONS])
    with pytest.raises(CourseInputError, match=r"vocabulary: '[0-9a-f]{16}' in the checkpoint"):
        train_pair_classifier(tiny_model(), TRAIN, DEV, other_vocab, replace(CONFIG, epochs=1), run_folder=RunFolder(tmp_path),
                              progress=False, log=None)
    with pytest.raises(CourseInputError, match="data.dev: "):
        train_pair_classifier(tiny_model(), TRAIN, DEV[:4], VOCAB, replace(CONFIG, epochs=1), run_folder=RunFolder(tmp_path),
                              progress=False, log=None)
    with pytest.raises(CourseInputError, match="parameters: "):  # another architecture, even without a model config
        bigger = PairClassifier(PairClassifierConfig.from_options(len(VOCAB), d_model=32, n_heads=2, d_ff=32,
                                                                  match_flags=True))
        train_pair_classifier(bigger, TRAIN, DEV, VOCAB, replace(CONFIG, epochs=1), run_folder=RunFolder(tmp_path),
                              progress=False, log=None)
    assert (tmp_path / "checkpoint.pt").read_bytes() == before  # a refused resume changes nothing
    with pytest.raises(CourseInputError, match="vocabulary mismatch"):
        load_checkpoint(tmp_path / "checkpoint.pt", Vocabulary.build(["别的字"]))


def test_a_loss_that_is_not_finite_stops_training_naming_epoch_and_step(tmp_path: Path) -> None:
    with pytest.raises(CourseInputError, match=r"training diverged: the loss is (nan|inf) at epoch 1, step \d+ of 4"):
        train_pair_classifier(tiny_model(), TRAIN, DEV, VOCAB, replace(CONFIG, lr=1e30, warmup_ratio=0.0, clip_norm=0.0),
                              run_folder=RunFolder(tmp_path), progress=False, log=None)
    assert not (tmp_path / "checkpoint.pt").exists()  # nothing of the diverged epoch is kept


def test_starting_afresh_removes_the_previous_runs_files(tmp_path: Path) -> None:
    from lessons_lib.training.runs import PREDICTIONS_NAME, save_predictions

    train_pair_classifier(tiny_model(), TRAIN, DEV, VOCAB, replace(CONFIG, epochs=1), run_folder=RunFolder(tmp_path),
                          progress=False, log=None)
    save_predictions(tmp_path / PREDICTIONS_NAME, {"dev": ([1], [1], "a" * 16)})
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    messages: list[str] = []
    train_pair_classifier(tiny_model(), TRAIN, DEV, VOCAB, replace(CONFIG, epochs=1), run_folder=RunFolder(tmp_path, resume=False),
                          progress=False, stop_after_epoch=0, log=messages.append)
    assert "starting afresh: removed checkpoint.pt, metrics.json, vocab.json, predictions.json" in messages[0]
    assert not (tmp_path / "checkpoint.pt").exists() and not (tmp_path / PREDICTIONS_NAME).exists()
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"  # not a run file: left alone


def test_a_finished_run_reloads_and_predicts_the_same(tmp_path: Path) -> None:
    model = tiny_model()
    result = train_pair_classifier(model, TRAIN, DEV, VOCAB, replace(CONFIG, epochs=1), run_folder=RunFolder(tmp_path),
                                   progress=False, log=None, model_config=model.config.to_dict())
    reloaded, vocab, run = load_pair_classifier(tmp_path)
    assert vocab.fingerprint() == VOCAB.fingerprint() and run.epoch == 1
    from lessons_lib.evaluation.metrics import evaluate

    assert evaluate(reloaded, DEV, vocab).predictions == result.dev.predictions


def test_checkpoints_are_loaded_without_running_code(tmp_path: Path) -> None:
    class Payload:
        def __reduce__(self):
            return (Path.touch, (tmp_path / "pwned",))

    torch.save({"model_state": {}, "payload": Payload()}, tmp_path / "checkpoint.pt")
    with pytest.raises(CourseInputError, match="not a readable course checkpoint"):
        load_checkpoint(tmp_path / "checkpoint.pt")
    assert not (tmp_path / "pwned").exists()
    (tmp_path / "truncated.pt").write_bytes((tmp_path / "checkpoint.pt").read_bytes()[:20])
    with pytest.raises(CourseInputError, match="truncated.pt"):
        load_checkpoint(tmp_path / "truncated.pt")


def test_training_learns_the_toy_task() -> None:
    result = train_pair_classifier(tiny_model(), TRAIN, TRAIN, VOCAB, replace(CONFIG, epochs=10), progress=False, log=None)
    assert result.history[-1].train_loss < result.history[0].train_loss
    assert result.dev.accuracy > 0.8


def test_best_dev_epoch_selects_by_dev_only() -> None:
    def epoch(n, dev_right, test_right):  # of 20 pairs each: [[true 0 right, wrong], [wrong, true 1 right]]
        def split(right):
            return {"accuracy": right / 20, "confusion": [[right // 2, 10 - right // 2], [10 - (right - right // 2), right - right // 2]]}
        return EpochMetrics(n, 0.5, split(dev_right), split(test_right), 1.0, 1.0, 10.0, 1e-3)

    # By correct dev pairs, the earliest epoch on a tie; test never counts.
    assert best_dev_epoch([epoch(1, 14, 18), epoch(2, 15, 12), epoch(3, 15, 19)]) == 2
    with pytest.raises(CourseInputError, match="empty"):
        best_dev_epoch([])


def test_metrics_accuracy_f1_confusion() -> None:
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 3.0]])
    labels = torch.tensor([0, 1, 0, 1, 1])
    result = metrics_from_logits(logits, labels)  # predictions 0 1 1 0 1
    assert result.confusion == [[1, 1], [1, 2]]
    assert result.accuracy == pytest.approx(3 / 5)
    assert result.f1 == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))


def test_mcnemar_exact() -> None:
    labels = [1] * 20
    a = [1] * 20
    b = [1] * 10 + [0] * 10  # A wins 10 discordant pairs, B none
    result = mcnemar_exact(a, b, labels)
    assert (result.only_a, result.only_b) == (10, 0)
    assert result.p_value == pytest.approx(2 * 0.5**10)
    assert mcnemar_exact(a, a, labels).p_value == 1.0
    balanced = mcnemar_exact([1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0])
    assert (balanced.only_a, balanced.only_b) == (2, 2) and balanced.p_value == 1.0
    with pytest.raises(CourseInputError, match="one entry per pair"):
        mcnemar_exact([1], [1, 0], [1])


def test_config_validation_and_presets() -> None:
    with pytest.raises(CourseInputError, match="schedule"):
        TrainConfig(schedule="cosine")
    with pytest.raises(CourseInputError, match="lr"):
        TrainConfig(lr=0)
    model, train = resolve_configs("textbook", None, vocab_size=100)
    assert (model.encoder.n_layers, model.encoder.n_heads, model.encoder.norm_first) == (1, 4, False)
    assert (train.lr, train.epochs, train.batch_size, train.clip_norm) == (5e-5, 3, 32, 1.0)
    assert TrainConfig.from_dict(train.to_dict()) == train
    assert PairClassifierConfig.from_dict(model.to_dict()) == model
    assert set(PRESETS) == {"textbook", "matchflags", "control"}


def test_overrides_mean_the_same_everywhere() -> None:
    model, train = resolve_configs("matchflags", {"d_model": 64, "epochs": 2, "lr": None, "pad_id": 0}, vocab_size=50)
    assert (model.encoder.d_model, train.epochs, train.lr) == (64, 2, 3e-4)  # None = not set: the preset's lr
    assert model.match_flags and model.encoder.n_segments == 4
    assert model.options()["d_model"] == 64 and "vocab_size" not in model.options()
    with pytest.raises(CourseInputError, match="unknown options"):
        resolve_recipe("textbook", {"epochz": 3})
    with pytest.raises(CourseInputError, match="preset"):
        resolve_recipe("nope")
    with pytest.raises(CourseInputError, match="max_positions"):
        resolve_recipe("textbook", {"max_positions": 32, "max_len": 64})
    # the recipe is checked once, without a vocabulary; its configs follow for any vocabulary's size
    recipe = resolve_recipe("matchflags", {"d_model": 64, "epochs": 2})
    assert recipe.classifier(50) == model and recipe.train == train
    assert recipe.model["n_layers"] == model.encoder.n_layers  # every option, the defaults filled in
    with pytest.raises(CourseInputError, match="n_segments"):
        PairClassifierConfig(encoder=model.encoder, match_flags=False)
    with pytest.raises(CourseInputError, match="lr must be finite"):
        TrainConfig(lr=float("inf"))
    with pytest.raises(CourseInputError, match="weight_decay must be a number"):
        TrainConfig(weight_decay=float("nan"))


@pytest.mark.slow
def test_command_line_trains_resumes_and_compares(tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch) -> None:
    from lessons_lib.cli import main
    from lessons_lib.paths import LCQMC_ENV_VAR

    monkeypatch.delenv(LCQMC_ENV_VAR, raising=False)
    tiny = ["--limit-train", "48", "--d-model", "16", "--d-ff", "32", "--n-heads", "2", "--epochs", "2",
            "--threads", "1", "--no-progress"]
    assert main(["train", "--preset", "textbook", "--out", str(tmp_path / "a"), *tiny]) == 0
    out = capsys.readouterr().out
    assert "data: sample" in out and "final: dev accuracy" in out
    # the final numbers are read against the baselines of the same data
    assert "baselines on the same data:" in out and "majority class (label 1, from train)" in out
    assert out.count(" vs majority ") == 3 and out.count(" vs jaccard ") == 2  # Jaccard-vs-majority, dev, test
    metrics = json.loads((tmp_path / "a" / "metrics.json").read_text(encoding="utf-8"))
    assert [e["epoch"] for e in metrics["epochs"]] == [1, 2]
    assert metrics["best_dev_epoch"] in (1, 2) and "best dev epoch" in out
    first = metrics["epochs"][0]
    assert {"train_loss", "dev", "test", "train_seconds", "pairs_per_second"} <= set(first)
    assert {"accuracy", "f1", "confusion", "loss"} <= set(first["test"])
    # the file says what it measured: the command, and the pairs it read (refused against other data)
    assert metrics["command"][:4] == ["lessons", "train", "--preset", "textbook"]
    shown = shown_command(metrics["command"])  # as a lesson prints it: no folder of this machine
    assert str(tmp_path) in " ".join(metrics["command"]) and str(tmp_path) not in shown
    assert shown.startswith("lessons train --preset textbook") and " …/a" in shown
    sample = load_lcqmc(None)
    sample_sha = {**sample.pairs_sha256(), "train": examples_sha256(sample.train.examples[:48])}  # --limit-train 48
    assert load_metrics(tmp_path / "a" / "metrics.json", sample_sha)["epochs"] == metrics["epochs"]
    with pytest.raises(CourseInputError, match=r"metrics.json: made on other data: its train pairs have SHA-256"):
        load_metrics(tmp_path / "a" / "metrics.json", LCQMC_SHA256)
    (tmp_path / "old.json").write_text(json.dumps({k: v for k, v in metrics.items() if k != "run_identity"}), encoding="utf-8")
    with pytest.raises(CourseInputError, match=r"old.json: not a metrics.json of a training run with its data's fingerprints"):
        load_metrics(tmp_path / "old.json")
    # run again: resumes from the finished checkpoint, trains nothing more
    assert main(["train", "--preset", "textbook", "--out", str(tmp_path / "a"), *tiny]) == 0
    assert "resuming from checkpoint.pt after epoch 2" in capsys.readouterr().out
    assert main(["train", "--preset", "matchflags", "--out", str(tmp_path / "b"), *tiny, "--n-layers", "1"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "exact McNemar p =" in capsys.readouterr().out


@pytest.mark.slow
def test_command_line_build_sample(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from lessons_lib.cli import main
    from lessons_lib.paths import LCQMC_SAMPLE_DIR

    assert main(["build-sample", "--out-dir", str(tmp_path)]) == 0
    from lessons_lib.pairs.sample import expand_meanings, read_question_families

    families = read_question_families()
    meanings, by_text = expand_meanings(families)
    expected = f"{len(by_text):,} possible questions ({len(meanings):,} meanings)"
    assert expected in capsys.readouterr().out
    assert (tmp_path / "dev.tsv").read_bytes() == (LCQMC_SAMPLE_DIR / "dev.tsv").read_bytes()


def test_command_line_reports_bad_lines_and_lenient_mode_skips_them(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from lessons_lib.cli import main

    data = tmp_path / "data"
    data.mkdir()
    good = "".join(f"问题{i}\t问句{i % 3}\t{i % 2}\n" for i in range(12))
    (data / "train.tsv").write_text(good + "坏的一行\n", encoding="utf-8")
    (data / "dev.tsv").write_text(good, encoding="utf-8")
    (data / "test.tsv").write_text(good, encoding="utf-8")
    tiny = ["--data-dir", str(data), "--d-model", "16", "--d-ff", "32", "--n-heads", "2", "--epochs", "1",
            "--threads", "1", "--no-progress"]
    assert main(["train", "--out", str(tmp_path / "strict"), *tiny]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "train.tsv, line 13" in err and "lenient" in err
    assert main(["train", "--out", str(tmp_path / "lenient"), "--lenient", *tiny]) == 0
    out = capsys.readouterr().out
    assert "data: argument" in out and "skipped lines: 1 (lines 13)" in out


def test_identity_differences_name_every_field() -> None:
    from lessons_lib.training.runs import identity_differences

    saved = {"a": 1, "model": {"d": 16, "h": 2}, "gone": True}
    current = {"a": 1, "model": {"d": 32, "h": 2}, "new": [1]}
    assert identity_differences(saved, current) == [
        "gone: True in the checkpoint, missing now",
        "model.d: 16 in the checkpoint, 32 now",
        "new: missing in the checkpoint, [1] now",
    ]
    assert identity_differences(saved, saved) == []


def test_predictions_round_trip_and_malformed_files_are_named(tmp_path: Path) -> None:
    from lessons_lib.training.runs import load_predictions, save_predictions

    path = save_predictions(tmp_path / "predictions.json", {"test": ([1, 0], [1, 1], "f" * 16)})
    assert load_predictions(path, "test") == {"predictions": [1, 0], "labels": [1, 1], "fingerprint": "f" * 16}
    with pytest.raises(CourseInputError, match="holds no dev predictions"):
        load_predictions(path, "dev")
    with pytest.raises(CourseInputError, match="2 predictions for 1 labels"):
        save_predictions(tmp_path / "x.json", {"dev": ([1, 0], [1], "f" * 16)})
    path.write_text('{"format": "lessons-predictions/1", "test": {"predictions": [true], "labels": [1], '
                    '"fingerprint": "x"}}', encoding="utf-8")
    with pytest.raises(CourseInputError, match="its test entry is malformed"):
        load_predictions(path, "test")


def test_weights_of_another_shape_are_an_error_naming_the_file(tmp_path: Path) -> None:
    from lessons_lib.training.runs import load_weights

    with pytest.raises(CourseInputError, match="run/checkpoint.pt: its weights do not fit this model"):
        load_weights(tiny_model(), {"classifier.weight": torch.zeros(1)}, tmp_path / "run" / "checkpoint.pt")


def test_the_optimiser_is_adamws_fused_kernel_and_updates_as_the_plain_adamw_loop_does():
    from lessons_lib.pairs.encoding import make_batches
    from lessons_lib.training.trainer import _training_loss

    weights = []
    for make in (lambda model: build_optimizer(model, CONFIG),
                 lambda model: torch.optim.AdamW(parameter_groups(model, CONFIG.weight_decay, CONFIG.lr), lr=CONFIG.lr,
                                                 foreach=False)):
        model = tiny_model()
        optimizer = make(model)
        for batch in make_batches(TRAIN, VOCAB, 8, shuffle=True, seed=1):
            optimizer.zero_grad()
            _training_loss(model, batch).backward()
            optimizer.step()
        weights.append([p.detach().clone() for p in model.parameters()])
    # The same algorithm, rounded differently (CONTRIBUTING.md, "Digits that travel"): every weight within a
    # tenth of one step (lr 1e-3); Adam's early steps are about lr each, so a wrong update would be off by ~1e-3.
    assert all(torch.allclose(a, b, rtol=0, atol=1e-4) for a, b in zip(*weights))
    assert build_optimizer(tiny_model(), CONFIG).defaults["fused"] is True
    assert not torch.equal(weights[0][0], tiny_model().encoder.embeddings.token.weight)  # it did train


# Pairs of a sentence with itself (label 1) or with another (label 0): the toy model learns them in
# a few epochs, and with this seed and learning rate its dev accuracy is best first at epoch 1.
SAME_OR_NOT = [PairExample(a, a if k % 2 == 0 else b, int(k % 2 == 0))
               for k, (a, b) in enumerate((a, b) for a in QUESTIONS for b in QUESTIONS if a != b)]
BEST_EARLY = replace(CONFIG, epochs=6, seed=3, lr=1e-2)


def _same_weights(a: nn.Module, b: nn.Module) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_keep_best_dev_ends_with_the_weights_of_the_epoch_with_most_correct_dev_pairs() -> None:
    train, dev = SAME_OR_NOT[:20], SAME_OR_NOT[20:]
    model = tiny_model()
    result = train_pair_classifier(model, train, dev, VOCAB, BEST_EARLY, progress=False, log=None, keep_best_dev=True)
    correct = [h.dev["confusion"][0][0] + h.dev["confusion"][1][1] for h in result.history]
    assert result.chosen_epoch == best_dev_epoch(result.history) == 1 + correct.index(max(correct))
    assert result.chosen_epoch < BEST_EARLY.epochs and correct[-1] == max(correct)  # a tie the earliest epoch wins
    assert result.optimizer_steps == BEST_EARLY.epochs * 3  # the whole schedule ran: 20 pairs, batches of 8
    stopped = tiny_model()  # the same run stopped after the chosen epoch holds that epoch's weights
    train_pair_classifier(stopped, train, dev, VOCAB, BEST_EARLY, progress=False, log=None,
                          stop_after_epoch=result.chosen_epoch)
    assert _same_weights(model, stopped)
    assert result.dev.correct == max(correct) and len(result.dev.probabilities) == len(dev)
    last = tiny_model()
    plain = train_pair_classifier(last, train, dev, VOCAB, BEST_EARLY, progress=False, log=None)
    assert plain.chosen_epoch == BEST_EARLY.epochs and not _same_weights(model, last)


def test_keep_best_dev_survives_an_interruption(tmp_path: Path) -> None:
    train, dev = SAME_OR_NOT[:20], SAME_OR_NOT[20:]
    straight = tiny_model()
    full = train_pair_classifier(straight, train, dev, VOCAB, BEST_EARLY, test_examples=dev, progress=False, log=None,
                                 keep_best_dev=True)
    train_pair_classifier(tiny_model(), train, dev, VOCAB, BEST_EARLY, test_examples=dev, run_folder=RunFolder(tmp_path),
                          progress=False, log=None, keep_best_dev=True, stop_after_epoch=3)
    resumed_model = tiny_model()
    resumed = train_pair_classifier(resumed_model, train, dev, VOCAB, BEST_EARLY, test_examples=dev, run_folder=RunFolder(tmp_path),
                                    progress=False, log=None, keep_best_dev=True)
    assert resumed.resumed_from_epoch == 3 and resumed.chosen_epoch == full.chosen_epoch
    assert _same_weights(straight, resumed_model) and resumed.test.predictions == full.test.predictions
    with pytest.raises(CourseInputError, match="keep_best_dev"):  # a checkpoint kept without the best weights
        train_pair_classifier(tiny_model(), train, dev, VOCAB, BEST_EARLY, run_folder=RunFolder(tmp_path), progress=False, log=None)


def test_a_models_epoch_summary_is_recorded_after_every_epoch() -> None:
    class Counting(PairClassifier):
        calls = 0

        def epoch_summary(self) -> dict:
            Counting.calls += 1
            return {"calls": Counting.calls}

    torch.manual_seed(1)
    model = Counting(PairClassifierConfig.from_options(len(VOCAB), d_model=16, n_heads=2, d_ff=32))
    result = train_pair_classifier(model, TRAIN, DEV, VOCAB, CONFIG, progress=False, log=None)
    assert [h.model_summary for h in result.history] == [{"calls": 1}, {"calls": 2}, {"calls": 3}]
    plain = train_pair_classifier(tiny_model(), TRAIN, DEV, VOCAB, CONFIG, progress=False, log=None)
    assert all(h.model_summary is None for h in plain.history)


def test_probabilities_of_label_one_agree_with_the_predictions() -> None:
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-1.0, 3.0]])
    result = metrics_from_logits(logits, torch.tensor([0, 1, 1, 1]))
    expected = torch.softmax(logits, dim=1)[:, 1].tolist()
    assert result.probabilities == expected and result.probabilities[2] == 0.5
    assert result.predictions == [0, 1, 0, 1]  # a tie goes to label 0, as argmax does
    assert result.correct == 3
