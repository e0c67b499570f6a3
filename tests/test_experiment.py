"""The syntax-bias experiment: the biased classifier, bucket extras, parser noise, the runner and its command."""

from __future__ import annotations

import json
import random

import pytest
import torch

from lessons_lib import paths
from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import PairExample, examples_sha256, load_lcqmc
from lessons_lib.pairs.encoding import make_batches
from lessons_lib.pairs.vocab import Vocabulary
from lessons_lib.syntax.buckets import DEFAULT_SCHEME, batch_pair_distance_buckets
from lessons_lib.syntax.noise import noisy_parses, perturb_heads, random_heads, scrambled_parses
from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax.trees import validate_heads
from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.ablation.experiment import build_model, load_trained, run_experiment, subsample
from lessons_lib.syntax_bias.model import BUCKETS_KEY, bucket_extras, check_parse_alignment
from lessons_lib.ablation.results import ExperimentResult

TINY_MODEL = {"d_model": 16, "d_ff": 32, "n_heads": 2, "n_layers": 2}
TINY_TRAIN = {"epochs": 1, "batch_size": 8, "lr": 1e-3, "max_len": 32}

SENTENCES = [
    "怎么学习英语", "如何学好英语", "英语怎么学", "怎么做红烧肉", "红烧肉的做法", "红烧肉怎么做才好吃",
    "手机没电了怎么办", "手机电池不耐用", "哪里可以买到便宜的机票", "便宜机票去哪买", "今天天气怎么样", "明天会下雨吗",
]


def _chain_parse(text: str) -> Parse:
    """A hand-made parse: two-character words, each headed by the next, the last one the root."""
    chars = [c for c in text if not c.isspace()]
    words = tuple("".join(chars[i : i + 2]) for i in range(0, len(chars), 2))
    heads = tuple(list(range(1, len(words))) + [-1])
    return Parse(text, words, heads, tuple("dep" for _ in words))


def _examples() -> list[PairExample]:
    out = []
    for i, a in enumerate(SENTENCES):
        for j, b in enumerate(SENTENCES):
            if i < j and (j - i) % 3 != 2:
                out.append(PairExample(a, b, int(i // 3 == j // 3), len(out) + 1))
    return out


@pytest.fixture()
def data_dir(tmp_path):
    examples = _examples()
    rng = random.Random(0)
    rng.shuffle(examples)
    folder = tmp_path / "lcqmc"
    folder.mkdir()
    for name, part in (("train", examples[:30]), ("dev", examples[30:38]), ("test", examples[38:])):
        (folder / f"{name}.txt").write_text("".join(f"{e.text_a}\t{e.text_b}\t{e.label}\n" for e in part), encoding="utf-8")
    return folder


def _config(**overrides) -> ExperimentConfig:
    values = dict(variants=["none", "learned", "fixed_decay", "hard_mask"], seeds=[0, 1], model=dict(TINY_MODEL),
                  train=dict(TINY_TRAIN))
    values.update(overrides)
    return ExperimentConfig(**values)


# --- parser noise -------------------------------------------------------------------------------


def test_perturb_heads_keeps_a_tree_and_its_root():
    rng = random.Random(3)
    for n in range(1, 12):
        for _ in range(20):
            heads = [-1] + [rng.randrange(i) for i in range(1, n)]  # random tree, root 0
            for p in (0.0, 0.3, 1.0):
                noisy = perturb_heads(heads, p, random.Random(n))
                validate_heads(noisy)
                assert noisy.index(-1) == 0
                if p == 0.0:
                    assert noisy == heads


def test_perturb_heads_with_probability_one_moves_every_movable_word():
    heads = [1, -1, 1, 2, 3]  # a chain below the root, plus word 0
    noisy = perturb_heads(heads, 1.0, random.Random(0))
    moved = [i for i, (a, b) in enumerate(zip(heads, noisy)) if a != b]
    # Word 0 can go to 2, 3 or 4; word 2 to 0 (not its head 1, not its descendants 3, 4) ...
    assert 0 in moved and len(moved) >= 2


def test_noisy_parses_is_deterministic_and_counts_the_share():
    parses = {t: _chain_parse(t) for t in SENTENCES}
    first, share = noisy_parses(parses, 0.5, seed=1)
    again, share_again = noisy_parses(parses, 0.5, seed=1)
    assert first == again and share == share_again and 0 < share < 1
    clean, zero = noisy_parses(parses, 0.0)
    assert clean == parses and zero == 0.0
    with pytest.raises(CourseInputError, match="parser noise"):
        noisy_parses(parses, 1.5)


def test_random_heads_draws_every_tree_shape():
    rng = random.Random(0)
    for n in range(1, 9):
        for _ in range(10):
            validate_heads(random_heads(rng, n))
    # all three trees of three words with root 0 appear (0→1→2, 0→2→1, 0→{1, 2})
    shapes = {random_heads(random.Random(s), 3) for s in range(200)}
    assert {(-1, 0, 1), (-1, 2, 0), (-1, 0, 0)} <= shapes


def _lengths(parse: Parse) -> list[int]:
    return [len(w) for w in parse.words]


def test_scrambled_parses_recut_the_characters_with_the_same_word_lengths():
    parses = {t: _chain_parse(t) for t in SENTENCES}
    parses["怎么学习英语"] = Parse("怎么学习英语", ("怎么", "学习", "英", "语"), (1, -1, 3, 1), ("advmod", "root", "x", "obj"))
    scrambled, kept = scrambled_parses(parses, seed=4)
    assert set(scrambled) == set(parses)
    for text, parse in scrambled.items():
        original = parses[text]
        assert "".join(parse.words) == "".join(original.words)
        assert sorted(_lengths(parse)) == sorted(_lengths(original))
        validate_heads(parse.heads)
        check_parse_alignment(text, parse)
    # The chain parses cut every sentence into equal lengths but the last: a shuffle moves few
    # boundaries; the mixed sentence's lengths (2, 2, 1, 1) must move in some seed.
    assert 0 < kept < 1
    assert any(_lengths(scrambled_parses(parses, seed=s)[0]["怎么学习英语"]) != [2, 2, 1, 1] for s in range(10))


def test_scrambled_parses_depend_only_on_seed_and_sentence():
    parses = {t: _chain_parse(t) for t in SENTENCES}
    whole, _ = scrambled_parses(parses, seed=1)
    part, _ = scrambled_parses({t: parses[t] for t in SENTENCES[:3]}, seed=1)
    assert all(part[t] == whole[t] for t in part)
    assert scrambled_parses(parses, seed=1) == scrambled_parses(parses, seed=1)
    other, _ = scrambled_parses(parses, seed=2)
    assert any(other[t] != whole[t] for t in parses)


def test_subsample_keeps_order_and_size():
    examples = _examples()
    part = subsample(examples, 0.25, seed=0)
    assert len(part) == round(0.25 * len(examples))
    assert [examples.index(e) for e in part] == sorted(examples.index(e) for e in part)
    assert part == subsample(examples, 0.25, seed=0) != subsample(examples, 0.25, seed=1)
    assert subsample(examples, 1.0) == examples
    with pytest.raises(CourseInputError, match="train_fraction"):
        subsample(examples, 0.0)


# --- the biased classifier and its batches --------------------------------------------------------


def _batch(examples, parses=None, max_len=32):
    vocab = Vocabulary.build(t for e in examples for t in (e.text_a, e.text_b))
    parses = parses or {t: _chain_parse(t) for t in SENTENCES}
    extras = bucket_extras(parses, DEFAULT_SCHEME, max_len)
    return vocab, next(make_batches(examples, vocab, len(examples), max_len=max_len, extras_fn=extras))


def test_bucket_extras_equal_the_direct_computation_and_survive_repadding():
    examples = _examples()[:6]
    parses = {t: _chain_parse(t) for t in SENTENCES}
    _, batch = _batch(examples)
    direct = batch_pair_distance_buckets(
        [(parses[e.text_a].words, parses[e.text_a].heads, parses[e.text_b].words, parses[e.text_b].heads) for e in examples],
        max_len=32, pad_to=batch.token_ids.shape[1])
    assert torch.equal(batch.extras[BUCKETS_KEY], direct)
    # The memo serves a later batch with another padding length.
    extras = bucket_extras(parses, DEFAULT_SCHEME, 32)
    vocab, _ = _batch(examples)
    long_batch = next(make_batches(examples, vocab, 6, max_len=32, extras_fn=extras))
    short_batch = next(make_batches(examples[:1], vocab, 1, max_len=32, extras_fn=extras))
    n = short_batch.token_ids.shape[1]
    assert torch.equal(short_batch.extras[BUCKETS_KEY][0], long_batch.extras[BUCKETS_KEY][0, :n, :n])


def test_truncated_pairs_get_matching_buckets():
    long_text = "怎么学习英语" * 6
    examples = [PairExample(long_text, "英语怎么学", 1, 1)]
    parses = {long_text: _chain_parse(long_text), "英语怎么学": _chain_parse("英语怎么学")}
    _, batch = _batch(examples, parses, max_len=16)
    assert batch.token_ids.shape == (1, 16)
    assert torch.equal(batch.extras[BUCKETS_KEY][0] >= 0, torch.ones(16, 16, dtype=torch.bool))


def test_variants_start_equal_to_the_baseline():
    examples = _examples()[:8]
    vocab, batch = _batch(examples)
    config = _config()
    torch.manual_seed(0)
    outputs = {}
    for variant in ("none", "learned"):
        model = build_model(config, variant, len(vocab), seed=0).eval()
        with torch.no_grad():
            outputs[variant] = model(batch)
    assert torch.equal(outputs["none"], outputs["learned"])


def test_a_forward_pass_checks_the_key_mask_and_the_buckets_once(monkeypatch):
    import lessons_lib.attention.multihead as multihead
    import lessons_lib.syntax_bias.model as biased_model
    import lessons_lib.syntax_bias.variants as variants
    import lessons_lib.transformer.encoder as encoder

    examples = _examples()[:8]
    vocab, batch = _batch(examples)
    config = _config(model={**TINY_MODEL, "n_layers": 3}, variants=["none", "learned"])
    model = build_model(config, "learned", len(vocab), seed=0).train()
    calls = {"key mask": 0, "mask in a block": 0, "buckets": 0}

    def counted(name, check):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return check(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(encoder, "_check_key_mask", counted("key mask", encoder._check_key_mask))
    monkeypatch.setattr(multihead, "check_mask", counted("mask in a block", multihead.check_mask))
    for module in (biased_model, variants):
        monkeypatch.setattr(module, "check_buckets", counted("buckets", variants.check_buckets))
    model.training_loss(batch).backward()
    assert calls == {"key mask": 1, "mask in a block": 0, "buckets": 1}  # three blocks, one check of each
    # the public modules still check what they are given
    with pytest.raises(CourseInputError, match="key_mask"):
        model.encoder.run_blocks(torch.zeros(2, 5, model.encoder.config.d_model), torch.ones(2, 5))


def test_one_block_cannot_use_the_bias_and_is_refused():
    examples = _examples()[:8]
    vocab, batch = _batch(examples)
    # The reason, measured: one block, a non-zero table, and the [CLS] logits do not move.
    config = _config(model={**TINY_MODEL, "n_layers": 1}, variants=["none"])
    base = build_model(config, "none", len(vocab), 0).eval()
    config.variants = ["learned"]
    biased = build_model(config, "learned", len(vocab), 0).eval()
    with torch.no_grad():
        biased.syntax_bias.table.normal_()
        assert torch.allclose(base(batch), biased(batch), atol=1e-6)
    with pytest.raises(CourseInputError, match="at least 2 encoder blocks"):
        _config(model={**TINY_MODEL, "n_layers": 1})


def test_biased_model_needs_aligned_buckets():
    examples = _examples()[:4]
    vocab, batch = _batch(examples)
    model = build_model(_config(), "learned", len(vocab), 0)
    missing = type(batch)(batch.token_ids, batch.segment_ids, batch.key_mask, batch.labels, {}, batch.pairs)
    with pytest.raises(CourseInputError, match="extras"):
        model(missing)
    shifted = batch.extras[BUCKETS_KEY].roll(1, dims=1)
    wrong = type(batch)(batch.token_ids, batch.segment_ids, batch.key_mask, batch.labels, {BUCKETS_KEY: shifted})
    with pytest.raises(CourseInputError, match="line up"):
        model(wrong)


def test_parse_alignment_is_checked():
    check_parse_alignment("怎么 学", Parse("怎么 学", ("怎么", "学"), (1, -1), ("advmod", "root")))
    with pytest.raises(CourseInputError, match="do not spell"):
        check_parse_alignment("怎么学", Parse("怎么学", ("怎么",), (-1,), ("root",)))


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(variants=["soft"]), "variants"),
        (dict(seeds=[]), "seeds"),
        (dict(preset="nope"), "preset"),
        (dict(train_fraction=0.0), "train_fraction"),
        (dict(parser_noise=2.0), "parser_noise"),
        (dict(epoch_choice="best"), "epoch_choice"),
        (dict(scramble_words=1), "scramble_words"),
        (dict(scramble_words=True, parser_noise=0.5), "parser_noise"),
        (dict(train={"epochs": 0}), "epochs"),
        (dict(max_distance=0), "max_distance"),
        (dict(bias_options={"decay": -1.0}), "decay"),
        (dict(bias_options={"decay_rate": 1.0}), "unknown bias options"),
        (dict(model={"n_layers": 2, "widht": 3}), "unknown options"),
    ],
)
def test_bad_experiment_options(overrides, message):
    with pytest.raises(CourseInputError, match=message):
        _config(**overrides)


# --- the runner -------------------------------------------------------------------------------


@pytest.mark.slow
def test_run_experiment_writes_every_variant_and_seed_and_resumes(data_dir, tmp_path):
    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    config = _config(parser_noise=0.2)
    results = run_experiment(data, parses, config, work_dir=tmp_path / "runs", progress=False, log=None)
    assert [(r.variant, r.seed) for r in results.runs] == [
        (v, s) for s in (0, 1) for v in ("none", "learned", "fixed_decay", "hard_mask")]
    assert {(m.variant, m.seed) for m in results.mcnemar} == {
        (v, s) for s in (0, 1) for v in ("learned", "fixed_decay", "hard_mask")}
    assert all(0.0 <= m.p_value <= 1.0 for m in results.mcnemar)
    assert len(results.learned_bias) == 2
    assert len(results.learned_bias[0].mean_over_heads_and_layers) == DEFAULT_SCHEME.n_buckets
    assert results.buckets["names"][1] == "d=1"
    assert results.data.train_pairs == 30 and 0 < results.data.parser_noise_words_reattached < 1
    assert set(results.summary) == {"none", "learned", "fixed_decay", "hard_mask"}
    again = run_experiment(data, parses, config, work_dir=tmp_path / "runs", progress=False, log=None)
    assert [r.test_accuracy for r in again.runs] == [r.test_accuracy for r in results.runs]
    assert again.learned_bias == results.learned_bias


def test_each_run_records_its_chosen_epoch_probabilities_subset_and_provenance(data_dir):
    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    config = _config(variants=["none", "learned"], seeds=[0], train={**TINY_TRAIN, "epochs": 3}, epoch_choice="best_dev",
                     train_fraction=0.8, subset_seed=5)
    results = run_experiment(data, parses, config, progress=False, log=None)
    assert results.data.train_subset_sha256 == examples_sha256(subsample(data.train.examples, 0.8, 5))
    assert results.dev_labels == [ex.label for ex in data.dev.examples]
    assert {"code_commit", "device", "device_name", "cpu_capability", "torch", "threads"} <= set(results.provenance)
    assert results.provenance["device"] == "cpu" and results.provenance["threads"] == torch.get_num_threads()
    for run in results.runs:
        chosen = run.epochs[run.chosen_epoch - 1]
        dev_right = [round(a * len(data.dev)) for a in (e.dev_accuracy for e in run.epochs)]
        assert run.chosen_epoch == 1 + dev_right.index(max(dev_right))  # the most correct dev pairs, earliest on ties
        assert run.dev_accuracy == chosen.dev_accuracy and run.optimizer_steps == 3 * 3  # 24 pairs, batches of 8
        assert len(run.dev_probabilities) == len(run.dev_predictions) == len(data.dev)
        assert len(run.test_probabilities) == len(run.test_predictions) == len(data.test)
        for probability, call in zip(run.test_probabilities + run.dev_probabilities,
                                     run.test_predictions + run.dev_predictions):
            assert 0.0 <= probability <= 1.0 and (probability == 0.5 or call == int(probability > 0.5))
    none, learned = results.run("none", 0), results.run("learned", 0)
    assert all(e.bias_max_abs is None for e in none.epochs)
    table = torch.tensor(results.learned_bias[0].bias)  # the table at the chosen epoch
    assert learned.epochs[learned.chosen_epoch - 1].bias_max_abs == pytest.approx(float(table.abs().max()), rel=1e-6)
    assert all(e.bias_max_abs > 0 for e in learned.epochs)
    again = ExperimentResult.from_json(json.loads(json.dumps(results.to_json())))
    assert again == results


def test_the_scrambled_control_trains_on_other_words_and_records_how_many_boundaries_stayed(data_dir):
    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    plain = run_experiment(data, parses, _config(variants=["hard_mask"], seeds=[0]), progress=False, log=None)
    scrambled = run_experiment(data, parses, _config(variants=["hard_mask"], seeds=[0], scramble_words=True, noise_seed=3),
                               progress=False, log=None)
    assert plain.data.word_boundaries_kept is None
    assert scrambled.data.word_boundaries_kept == scrambled_parses(parses, seed=3)[1]
    assert 0 < scrambled.data.word_boundaries_kept < 1
    assert 0 < scrambled.data.parser_noise_words_reattached <= 1 and plain.data.parser_noise_words_reattached == 0


@pytest.mark.slow
def test_runs_in_worker_processes_give_the_same_results_and_random_streams(data_dir):
    # Each run seeds itself, so two workers reproduce one worker digit for digit, and the
    # parent's random streams end where the last run left them in either case.
    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    config = _config(parser_noise=0.2)
    alone = run_experiment(data, parses, config, progress=False, log=None)
    after_alone = (random.random(), torch.rand(3))
    torch.manual_seed(123)  # a different state before the second experiment: it must not matter
    random.seed(123)
    together = run_experiment(data, parses, config, progress=False, log=None, workers=2)
    after_together = (random.random(), torch.rand(3))
    for result in (alone, together):  # throughput is a wall-clock measurement, the one field that may differ
        for run in result.runs:
            for epoch in run.epochs:
                epoch.pairs_per_second = 0.0
    assert together == alone
    assert after_together[0] == after_alone[0] and torch.equal(after_together[1], after_alone[1])


@pytest.mark.parametrize("workers", [0, 1.5, "2"])
def test_workers_must_be_a_positive_integer(data_dir, workers):
    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    with pytest.raises(CourseInputError, match="workers"):
        run_experiment(data, parses, _config(seeds=[0]), progress=False, log=None, workers=workers)


def test_results_round_trip_through_json(data_dir, tmp_path):
    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    results = run_experiment(data, parses, _config(seeds=[0]), progress=False, log=None)
    text = json.dumps(results.to_json())
    assert ExperimentResult.from_json(json.loads(text)) == results
    path = results.save(tmp_path / "r.json")
    assert ExperimentResult.load(path) == results
    assert "McNemar p" in results.format_table()
    assert results.run("learned", 0).variant == "learned"
    with pytest.raises(CourseInputError, match="no run"):
        results.run("learned", 7)
    with pytest.raises(CourseInputError, match="not the results"):
        ExperimentResult.from_json({"config": {}})


def test_a_finished_run_reloads_to_the_same_predictions(data_dir, tmp_path):
    from lessons_lib.evaluation.metrics import evaluate

    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    config = _config(seeds=[0], variants=["none", "learned"], bias_options={"bias_lr_multiplier": 10.0})
    results = run_experiment(data, parses, config, work_dir=tmp_path / "runs", progress=False, log=None)
    record = results.run("learned", 0)
    model, vocab = load_trained(tmp_path / "runs" / record.run_dir)
    extras = bucket_extras(parses, DEFAULT_SCHEME, config.train_config(0).max_len)
    again = evaluate(model, data.test.examples, vocab, max_len=config.train_config(0).max_len, extras_fn=extras)
    assert again.predictions == record.test_predictions
    assert model.syntax_bias.lr_multiplier == 10.0
    with pytest.raises(CourseInputError, match="run folder not found"):
        load_trained(tmp_path / "nowhere")


def test_run_experiment_names_a_missing_parse(data_dir):
    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES[:-1]}
    with pytest.raises(CourseInputError, match="no parse"):
        run_experiment(data, parses, _config(), progress=False, log=None)


@pytest.mark.slow
def test_command_line_runs_end_to_end_with_the_real_parser(data_dir, tmp_path, capsys):
    from lessons_lib.cli import main

    out = tmp_path / "results.json"
    code = main(["experiment", "--data-dir", str(data_dir), "--out", str(out), "--variants", "none", "learned",
                 "--seeds", "0", "--epochs", "1", "--d-model", "16", "--d-ff", "32", "--n-heads", "2",
                 "--parser", str(paths.PARSER_MODEL_DIR), "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert code == 0
    results = json.loads(out.read_text(encoding="utf-8"))
    assert [r["variant"] for r in results["runs"]] == ["none", "learned"]
    assert results["data"]["parsed_sentences"] == len(SENTENCES)
    assert results["command"][:4] == ["lessons", "experiment", "--data-dir", str(data_dir)]  # the command that wrote it
    assert "McNemar p" in capsys.readouterr().out


# --- the relative-position control, intervals, paired differences --------------------------------


def test_relative_position_runs_on_position_buckets_and_reports_intervals(data_dir):
    data = load_lcqmc(data_dir)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    config = _config(variants=["none", "learned", "relative_position"], seeds=[0, 1])
    results = run_experiment(data, parses, config, progress=False, log=None)
    tables = {t.variant: t for t in results.learned_bias if t.seed == 0}
    assert tables["relative_position"].bucket_names[:2] == ["same position", "|i−j|=1"]
    assert tables["learned"].bucket_names[:2] == ["same word", "d=1"]
    assert results.buckets["position_names"]["word"][0] == "same word"
    summary = results.summary
    assert summary["none"].test_difference is None
    for name in ("learned", "relative_position"):
        diff = [results.run(name, s).test_accuracy - results.run("none", s).test_accuracy for s in (0, 1)]
        assert summary[name].test_difference.mean == pytest.approx(sum(diff) / 2)
        accuracy = summary[name].test_accuracy
        seeds = [results.run(name, s).test_accuracy for s in (0, 1)]
        assert (accuracy.n, accuracy.min, accuracy.max) == (2, min(seeds), max(seeds))
        assert 0 <= accuracy.min <= accuracy.mean <= accuracy.max <= 1  # a range never leaves [0, 1]
    table = results.format_table()
    assert "[min, max] n" in table and "only v / only b" in table and "relative_position" in table
    assert f"[{summary['learned'].test_accuracy.min:.4f}, {summary['learned'].test_accuracy.max:.4f}] n=2" in table
    assert results.data.pairs_sha256["test"] == examples_sha256(data.test.examples)
    assert ExperimentResult.from_json(json.loads(json.dumps(results.to_json()))) == results


def test_extras_of_each_variant_read_the_source_the_registry_names():
    from lessons_lib.syntax.attachment_control import ambiguous_question, probe_question
    from lessons_lib.syntax_bias.model import extras_for
    from lessons_lib.syntax_bias.registry import RelativePositionOptions

    readings = [ambiguous_question("关心", "学生", "老师", r) for r in (0, 1)]
    probe = probe_question("关心", "学生", "老师")
    vocab = Vocabulary.build([readings[0].text, probe.text])
    pair = [PairExample(readings[0].text, probe.text, 1)]
    matrices = {}
    for reading, parse in enumerate(readings):
        parses = {parse.text: parse, probe.text: probe}
        for variant in ("learned", "relative_position"):
            options = RelativePositionOptions(position_unit="word") if variant == "relative_position" else None
            fn = extras_for(variant, parses, DEFAULT_SCHEME, 32, options)
            matrices[variant, reading] = next(make_batches(pair, vocab, 1, max_len=32, extras_fn=fn)).extras[BUCKETS_KEY]
    assert not torch.equal(matrices["learned", 0], matrices["learned", 1])
    assert torch.equal(matrices["relative_position", 0], matrices["relative_position", 1])
    assert extras_for("none", {}, DEFAULT_SCHEME, 32) is None


def test_only_the_used_sentences_are_parsed_and_other_parses_never_resume(data_dir, tmp_path):
    from lessons_lib.ablation.experiment import needed_texts

    data = load_lcqmc(data_dir)
    config = _config(variants=["none", "learned"], seeds=[0], train_fraction=0.2)
    subset = subsample(data.train.examples, 0.2, 0)
    expected = {t for split in (subset, data.dev.examples, data.test.examples) for ex in split
                for t in (ex.text_a, ex.text_b)}
    assert set(needed_texts(data, config)) == expected
    assert len(needed_texts(data)) >= len(expected)
    parses = {t: _chain_parse(t) for t in SENTENCES}
    first = run_experiment(data, parses, config, work_dir=tmp_path / "runs", progress=False, log=None)
    flat = {t: Parse(p.text, p.words, tuple(-1 if i == len(p.heads) - 1 else len(p.heads) - 1
                                             for i in range(len(p.heads))), p.deprels) for t, p in parses.items()}
    second = run_experiment(data, flat, config, work_dir=tmp_path / "runs", progress=False, log=None)
    assert first.run("learned", 0).run_dir != second.run("learned", 0).run_dir


@pytest.mark.slow
def test_command_line_runs_the_positive_control(tmp_path, capsys):
    from lessons_lib.cli import main

    out = tmp_path / "control.json"
    code = main(["experiment", "--control", "attachment", "--out", str(out), "--variants", "none", "relative_position",
                 "--seeds", "0", "--epochs", "1", "--train-fraction", "0.1", "--position-unit", "word",
                 "--bias-lr-multiplier", "10", "--no-progress"])
    assert code == 0
    results = ExperimentResult.load(out)
    assert results.config.preset == "control" and results.data.source == "generated"
    assert results.data.train_pairs == 150 and results.data.test_pairs == 1000
    assert results.config.variant_options("relative_position").bias_lr_multiplier == 10.0
    assert results.learned_bias[0].bucket_names[0] == "same word"
    assert "attachment_control-seed0" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--control", "attachment", "--data-dir", "."], "exclude each other"),
    (["--control-trees", "parser"], "need --control"),
    (["--control", "attachment", "--control-seed", "-1"], "control-seed"),
])
def test_command_line_control_bad_input(tmp_path, capsys, argv, message):
    from lessons_lib.cli import main

    assert main(["experiment", "--out", str(tmp_path / "x.json"), "--no-progress", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("variant", ["none", "learned", "fixed_decay", "hard_mask", "window_mask"])
def test_fused_attention_gives_the_course_paths_logits_and_gradients(variant):
    examples = _examples()[:8]
    vocab, batch = _batch(examples)
    models = []
    for attention in ("course", "sdpa"):
        model = build_model(_config(model={**TINY_MODEL, "attention": attention}), variant, len(vocab), seed=0).eval()
        if variant == "learned":
            with torch.no_grad():  # a table that changes the scores (at step 0 it is all zeros)
                model.syntax_bias.table.normal_(generator=torch.Generator().manual_seed(1))
        model.training_loss(batch).backward()
        models.append(model)
    course, fused = models
    with torch.no_grad():
        torch.testing.assert_close(fused(batch), course(batch), atol=1e-5, rtol=0)
    course_grads = dict(course.named_parameters())
    for name, param in fused.named_parameters():
        if param.grad is not None or course_grads[name].grad is not None:
            torch.testing.assert_close(param.grad, course_grads[name].grad, atol=1e-5, rtol=0, msg=name)


@pytest.mark.slow
def test_the_training_subset_is_drawn_once_from_parsing_to_the_last_run(data_dir, tmp_path, monkeypatch):
    import lessons_lib.ablation.experiment as experiment

    data = load_lcqmc(data_dir)
    config = _config(variants=["none", "learned"], seeds=[0, 1], train_fraction=0.5, subset_seed=2)
    draws = []
    real_subsample = experiment.subsample

    def counted(examples, fraction, seed=0):
        draws.append((fraction, seed))
        return real_subsample(examples, fraction, seed)

    monkeypatch.setattr(experiment, "subsample", counted)
    parses = experiment.parse_corpus(data, cache_dir=tmp_path / "parses", progress=False, log=None, config=config)
    assert isinstance(parses, dict) and parses.subset is not None
    carried = run_experiment(data, parses, config, progress=False, log=None)
    assert draws == [(0.5, 2)]
    # The same trees as a plain mapping: the runner draws the subset itself, once, and trains the same runs.
    draws.clear()
    drawn_here = run_experiment(data, dict(parses), config, progress=False, log=None)
    assert draws == [(0.5, 2)]
    assert carried.data == drawn_here.data
    assert carried.data.train_subset_sha256 == examples_sha256(real_subsample(data.train.examples, 0.5, 2))
    assert [(r.variant, r.seed, r.test_predictions, r.dev_probabilities) for r in carried.runs] == \
        [(r.variant, r.seed, r.test_predictions, r.dev_probabilities) for r in drawn_here.runs]
    # Parsed for another subset (here every training pair): the runner draws the config's own subset.
    everything = experiment.parse_corpus(data, cache_dir=tmp_path / "parses", progress=False, log=None)
    draws.clear()
    other = run_experiment(data, everything, _config(variants=["none"], seeds=[0], train_fraction=0.5, subset_seed=2),
                           progress=False, log=None)
    assert draws == [(0.5, 2)] and other.data.train_subset_sha256 == carried.data.train_subset_sha256
