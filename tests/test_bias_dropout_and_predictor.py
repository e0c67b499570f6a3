"""Bias dropout and the distance predictor: what holds at p = 0 and p = 1, shapes, masking, the runner."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.data import PairExample, load_lcqmc
from lessons_lib.pairs.encoding import make_batches
from lessons_lib.pairs.vocab import Vocabulary
from lessons_lib.syntax.buckets import DEFAULT_SCHEME, PAD_BUCKET, layout_buckets
from lessons_lib.syntax.parser import Parse
from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.ablation.experiment import build_model, predictor_confusion, run_experiment
from lessons_lib.syntax_bias.model import BUCKETS_KEY, bucket_extras
from lessons_lib.syntax_bias.predictor import (DistancePredictor, bucket_confusion, offset_baseline_accuracy, open_pairs,
                                               predictor_loss)
from lessons_lib.ablation.results import ExperimentResult

TINY_MODEL = {"d_model": 16, "d_ff": 32, "n_heads": 2, "n_layers": 2}
SENTENCES = ["怎么学习英语", "如何学好英语", "英语怎么学", "怎么做红烧肉", "红烧肉的做法", "手机没电了怎么办",
             "手机电池不耐用", "哪里可以买到便宜的机票", "便宜机票去哪买", "今天天气怎么样"]


def _parse(text: str) -> Parse:
    """Two-character words, each headed by the next, the last one the root."""
    words = tuple(text[i : i + 2] for i in range(0, len(text), 2))
    return Parse(text, words, tuple(list(range(1, len(words))) + [-1]), tuple("dep" for _ in words))


PARSES = {t: _parse(t) for t in SENTENCES}


def _examples() -> list[PairExample]:
    return [PairExample(a, b, (i + j) % 2, i * 10 + j + 1)
            for i, a in enumerate(SENTENCES) for j, b in enumerate(SENTENCES) if i < j]


def _batch(examples=None, max_len=32):
    examples = examples or _examples()[:12]
    vocab = Vocabulary.build(t for t in SENTENCES)
    extras = bucket_extras(PARSES, DEFAULT_SCHEME, max_len)
    return vocab, next(make_batches(examples, vocab, len(examples), max_len=max_len, extras_fn=extras))


def _model(variant="learned", dropout=0.1, **syntax_model):
    vocab, _ = _batch()
    config = ExperimentConfig(model={**TINY_MODEL, "dropout": dropout}, syntax_model=syntax_model)
    model = build_model(config, variant, len(vocab), seed=0)
    if model.syntax_bias is not None and hasattr(model.syntax_bias, "table"):
        with torch.no_grad():  # a bias that changes the scores, or every check below is trivially true
            model.syntax_bias.table.copy_(torch.randn(model.syntax_bias.table.shape, generator=torch.Generator().manual_seed(1)))
    return model


def _train_forward(model, batch, seed=5):
    model.train()
    torch.manual_seed(seed)  # the same dropout draws for both models
    return model(batch)


# --- layout buckets ---------------------------------------------------------------------------------


def test_layout_decides_every_pair_but_two_characters_of_one_sentence():
    _, batch = _batch()
    layout, needs_tree = layout_buckets(batch.token_ids, batch.segment_ids, batch.key_mask)
    parsed = batch.extras[BUCKETS_KEY]
    assert torch.equal(layout[~needs_tree], parsed[~needs_tree])
    # The open pairs are exactly the within-sentence pairs of two different positions.
    within = (parsed >= 0) & (parsed <= DEFAULT_SCHEME.max_distance)
    diagonal = torch.eye(parsed.shape[1], dtype=torch.bool)[None]
    assert torch.equal(needs_tree, within & ~diagonal)
    assert (layout[~batch.key_mask[:, :, None].expand_as(layout)] == PAD_BUCKET).all()


def test_layout_checks_shapes():
    _, batch = _batch()
    with pytest.raises(CourseInputError, match="must all be"):
        layout_buckets(batch.token_ids, batch.segment_ids[:, :-1], batch.key_mask)


# --- bias dropout -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["learned", "hard_mask"])
def test_bias_dropout_zero_is_the_model_without_the_option_bit_for_bit(variant):
    _, batch = _batch()
    with_option, without = _model(variant, bias_dropout=0.0), _model(variant)
    without.load_state_dict(with_option.state_dict())
    assert torch.equal(_train_forward(with_option, batch), _train_forward(without, batch))


@pytest.mark.parametrize("variant", ["learned", "fixed_decay", "hard_mask"])
def test_bias_dropout_one_is_the_baseline_forward_pass_bit_for_bit(variant):
    _, batch = _batch()
    always_dropped, baseline = _model(variant, bias_dropout=1.0), _model("none")
    baseline.load_state_dict({k: v for k, v in always_dropped.state_dict().items() if not k.startswith("syntax_bias")})
    assert torch.equal(_train_forward(always_dropped, batch), _train_forward(baseline, batch))
    # ... and the bias did something: without dropout the output differs.
    assert not torch.equal(_train_forward(_model(variant), batch), _train_forward(baseline, batch))


def test_bias_dropout_leaves_out_whole_pairs_and_only_in_training():
    _, batch = _batch()
    half = _model(bias_dropout=0.5, dropout=0.0)  # no other dropout: each pair is either biased or not
    plain, baseline = _model(dropout=0.0), _model("none", dropout=0.0)
    plain.load_state_dict(half.state_dict())
    baseline.load_state_dict({k: v for k, v in half.state_dict().items() if not k.startswith("syntax_bias")})
    out, biased, unbiased = _train_forward(half, batch), _train_forward(plain, batch), _train_forward(baseline, batch)
    kept = (out == biased).all(dim=1)
    dropped = (out == unbiased).all(dim=1)
    assert bool((kept | dropped).all()) and bool(kept.any()) and bool(dropped.any())
    half.eval(), plain.eval()
    with torch.no_grad():
        assert torch.equal(half(batch), plain(batch))  # evaluation never drops the bias


def test_bias_dropout_is_checked():
    with pytest.raises(CourseInputError, match="bias_dropout"):
        ExperimentConfig(syntax_model={"bias_dropout": 1.5})
    with pytest.raises(CourseInputError, match="unknown `syntax_model` options"):
        ExperimentConfig(syntax_model={"dropout_of_bias": 0.5})


# --- the distance predictor -------------------------------------------------------------------------


def test_predictor_output_shape_and_classes():
    _, batch = _batch()
    predictor = DistancePredictor(DEFAULT_SCHEME, d_model=16, width=8, rank=4)
    x = torch.randn(*batch.token_ids.shape, 16)
    logits = predictor(x, batch.key_mask)
    B, L = batch.token_ids.shape
    assert logits.shape == (B, L, L, DEFAULT_SCHEME.max_distance + 1)
    assert predictor.class_ids.tolist() == list(range(DEFAULT_SCHEME.max_distance + 1))  # same word, d=1 … d≥10


def test_padding_is_never_predicted_never_biased_and_never_read():
    _, batch = _batch()
    model = _model(distance_predictor=True).eval()
    predicted, needs_tree = model.predicted_buckets(batch)
    padding_pair = ~(batch.key_mask[:, :, None] & batch.key_mask[:, None, :])
    assert (predicted[padding_pair] == PAD_BUCKET).all() and not needs_tree[padding_pair].any()
    bias = model.syntax_bias(predicted)[0]
    assert (bias[padding_pair[:, None].expand_as(bias)] == 0).all()
    # More padding changes nothing at the real positions (the convolutions never see padding).
    x = model.encoder.embeddings(batch.token_ids, model.segment_ids(batch))
    wider = torch.cat([x, torch.randn(x.shape[0], 5, x.shape[2])], dim=1)
    mask = torch.cat([batch.key_mask, torch.zeros(x.shape[0], 5, dtype=torch.bool)], dim=1)
    with torch.no_grad():
        short, long = model.distance_predictor(x, batch.key_mask), model.distance_predictor(wider, mask)
    L = x.shape[1]
    real = batch.key_mask[:, :, None] & batch.key_mask[:, None, :]
    assert torch.allclose(short[real], long[:, :L, :L][real], atol=1e-6)


def test_predicted_buckets_need_no_parser_and_no_buckets_mean_the_bare_encoder():
    _, batch = _batch()
    model = _model(distance_predictor=True).eval()
    bare = dict(batch.extras)
    batch.extras.clear()
    with pytest.raises(CourseInputError, match="syntax_buckets"):
        model(batch)
    with torch.no_grad():
        predicted = model.set_test_buckets("predicted")(batch)
        without = model.set_test_buckets("none")(batch)
    baseline = _model("none").eval()
    baseline.load_state_dict({k: v for k, v in model.state_dict().items()
                              if not k.startswith(("syntax_bias", "distance_predictor"))})
    with torch.no_grad():
        assert torch.equal(without, baseline(batch))
    assert predicted.shape == without.shape
    batch.extras.update(bare)
    model.set_test_buckets("trees")
    with pytest.raises(CourseInputError, match="for evaluation"):
        model.set_test_buckets("none").train()(batch)
    with pytest.raises(CourseInputError, match="no distance predictor"):
        _model().set_test_buckets("predicted")
    with pytest.raises(CourseInputError, match="baseline has no bias"):
        type(model)(model.config, None, predictor=model.distance_predictor)


def test_predictor_trains_jointly_and_only_on_open_pairs():
    _, batch = _batch()
    model = _model(distance_predictor=True, predictor_weight=2.0)
    model.train()
    torch.manual_seed(3)
    total = model.training_loss(batch)
    torch.manual_seed(3)
    task = torch.nn.functional.cross_entropy(model(batch), batch.labels)
    assert total.item() > task.item()
    total.backward()
    assert model.distance_predictor.query.weight.grad.abs().sum() > 0
    assert model.encoder.embeddings.token.weight.grad.abs().sum() > 0  # joint: it shapes the embeddings too
    # The step-0 forward pass is the plain learned model's: the predictor only adds a loss.
    plain = _model()
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("distance_predictor")})
    assert torch.equal(_train_forward(model, batch), _train_forward(plain, batch))


def test_predictor_loss_rejects_buckets_that_disagree_with_the_layout():
    _, batch = _batch()
    predictor = DistancePredictor(DEFAULT_SCHEME, d_model=16)
    layout, needs_tree = layout_buckets(batch.token_ids, batch.segment_ids, batch.key_mask)
    logits = predictor(torch.randn(*batch.token_ids.shape, 16), batch.key_mask)
    wrong = batch.extras[BUCKETS_KEY].clone()
    wrong[needs_tree] = DEFAULT_SCHEME.cross_sentence
    with pytest.raises(CourseInputError, match="disagree"):
        predictor_loss(predictor, logits, wrong, needs_tree)
    nothing = torch.zeros_like(needs_tree)
    assert predictor_loss(predictor, logits, batch.extras[BUCKETS_KEY], nothing).item() == 0.0


def test_bucket_confusion_counts_open_pairs_only():
    gold = torch.tensor([[[0, 1], [2, 12]]])
    guess = torch.tensor([[[0, 2], [2, 0]]])
    mask = torch.tensor([[[False, True], [True, False]]])
    confusion = bucket_confusion([gold], [guess], [mask], class_ids=[0, 1, 2])
    assert confusion.tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, 1]]
    with pytest.raises(CourseInputError, match="not one of"):
        bucket_confusion([gold], [guess], [torch.ones(1, 2, 2, dtype=torch.bool)], class_ids=[0, 1, 2])


def test_a_perfect_predictor_reproduces_the_parser_buckets():
    _, batch = _batch()
    predictor = DistancePredictor(DEFAULT_SCHEME, d_model=16)
    layout, needs_tree = layout_buckets(batch.token_ids, batch.segment_ids, batch.key_mask)
    parsed = batch.extras[BUCKETS_KEY]
    oracle = torch.nn.functional.one_hot(predictor.to_class[parsed.clamp(min=0)].clamp(min=0), predictor.n_classes)
    assert torch.equal(predictor.fill(oracle.float(), layout, needs_tree), parsed)


def test_open_pairs_and_the_offset_yardstick():
    _, batch = _batch()
    layout, needs_tree = layout_buckets(batch.token_ids, batch.segment_ids, batch.key_mask)
    offsets, buckets = open_pairs(batch.extras[BUCKETS_KEY], needs_tree)
    assert offsets.shape == buckets.shape == (int(needs_tree.sum()),)
    assert 0 not in offsets.tolist() and int(buckets.max()) <= DEFAULT_SCHEME.max_distance
    assert 0.0 < offset_baseline_accuracy(offsets, buckets, offsets, buckets) < 1.0  # two-character words: not all
    # One-character words in a chain: the tree distance is |j − i|, so the offset rule is perfect.
    chars = {t: Parse(t, tuple(t), tuple(list(range(1, len(t))) + [-1]), tuple("dep" for _ in t)) for t in SENTENCES}
    vocab = Vocabulary.build(SENTENCES)
    chain = next(make_batches(_examples()[:12], vocab, 12, max_len=32, extras_fn=bucket_extras(chars, DEFAULT_SCHEME, 32)))
    offsets, buckets = open_pairs(chain.extras[BUCKETS_KEY], needs_tree)
    assert torch.equal(buckets, offsets.abs().clamp(max=DEFAULT_SCHEME.max_distance))
    assert offset_baseline_accuracy(offsets, buckets, offsets, buckets) == 1.0
    with pytest.raises(CourseInputError, match="same"):
        open_pairs(batch.extras[BUCKETS_KEY], needs_tree[:, :-1])
    with pytest.raises(CourseInputError, match="at least one"):
        offset_baseline_accuracy(offsets[:0], buckets[:0], offsets, buckets)


def test_the_predictor_learns_at_its_own_rate():
    from lessons_lib.training.trainer import parameter_groups

    model = _model(distance_predictor=True, predictor_lr_multiplier=5.0)
    groups = parameter_groups(model, 0.01, lr=2e-3)
    own = {id(p) for g in groups if g.get("lr") == pytest.approx(1e-2) for p in g["params"]}
    assert own == {id(p) for p in model.distance_predictor.parameters()}


# --- the runner -------------------------------------------------------------------------------------


@pytest.fixture()
def data_dir(tmp_path):
    examples = _examples()
    folder = tmp_path / "lcqmc"
    folder.mkdir()
    for name, part in (("train", examples[:30]), ("dev", examples[30:38]), ("test", examples[38:])):
        (folder / f"{name}.txt").write_text("".join(f"{e.text_a}\t{e.text_b}\t{e.label}\n" for e in part),
                                            encoding="utf-8")
    return folder


def _run(data_dir, variants, **syntax_model):
    config = ExperimentConfig(variants=variants, seeds=[0], model=dict(TINY_MODEL),
                              train={"epochs": 1, "batch_size": 8, "lr": 1e-3, "max_len": 32},
                              syntax_model=syntax_model)
    return run_experiment(load_lcqmc(data_dir), PARSES, config, progress=False, log=None)


def test_runs_with_bias_dropout_zero_and_one_equal_the_plain_model_and_the_baseline(data_dir):
    plain = _run(data_dir, ["none", "learned"])
    zero, one = _run(data_dir, ["learned"], bias_dropout=0.0), _run(data_dir, ["learned"], bias_dropout=1.0)
    assert zero.run("learned", 0).test_predictions == plain.run("learned", 0).test_predictions
    assert one.run("learned", 0).test_predictions == plain.run("none", 0).test_predictions
    assert one.learned_bias[0].mean_over_heads_and_layers == [0.0] * DEFAULT_SCHEME.n_buckets  # never used, never moved


def test_runner_scores_without_trees_and_with_predicted_buckets(data_dir, tmp_path):
    results = _run(data_dir, ["none", "learned", "relative_position"], distance_predictor=True)
    learned = results.run("learned", 0)
    assert [i.buckets for i in learned.inference] == ["none", "predicted"]
    assert all(len(i.test_predictions) == len(learned.test_predictions) for i in learned.inference)
    record = learned.predictor
    n_open = sum(map(sum, record.confusion))
    assert n_open > 0 and 0.0 <= record.bucket_accuracy <= 1.0
    assert record.bucket_accuracy == pytest.approx(sum(record.confusion[i][i] for i in range(len(record.confusion))) / n_open)
    assert record.class_names[:2] == ["same word", "d=1"] and record.parameters > 0
    assert results.run("none", 0).inference == [] and results.run("none", 0).predictor is None
    # Relative-position buckets need no predicting: no predictor there, but a score without the bias.
    assert results.run("relative_position", 0).predictor is None
    assert [i.buckets for i in results.run("relative_position", 0).inference] == ["none"]
    assert set(results.summary["learned"].test_accuracy_by_buckets) == {"none", "predicted"}
    assert "predicted trees" in results.format_without_parser()
    assert ExperimentResult.load(results.save(tmp_path / "r.json")) == results


def test_predictor_confusion_needs_a_predictor():
    vocab, _ = _batch()
    with pytest.raises(CourseInputError, match="no distance predictor"):
        predictor_confusion(_model(), _examples()[:4], vocab, bucket_extras(PARSES, DEFAULT_SCHEME, 32), 32)


def test_command_line_flags_reach_the_config():
    from lessons_lib.cli import build_parser
    from lessons_lib.cli.experiment_commands import config_from_args

    args = build_parser().parse_args(["experiment", "--out", "x.json", "--bias-dropout", "0.25",
                                      "--distance-predictor", "--predictor-weight", "0.5"])
    config = config_from_args(args)
    assert config.syntax_model == {"bias_dropout": 0.25, "distance_predictor": True, "predictor_weight": 0.5}


def test_an_interrupted_run_with_bias_dropout_resumes_bit_for_bit(tmp_path):
    from lessons_lib.training.runs import RunFolder
    from lessons_lib.training.trainer import train_pair_classifier

    config = ExperimentConfig(model=dict(TINY_MODEL), train={"epochs": 2, "batch_size": 8, "lr": 1e-3, "max_len": 32},
                              syntax_model={"bias_dropout": 0.5, "distance_predictor": True})
    examples = _examples()
    vocab = Vocabulary.build(SENTENCES)
    extras = bucket_extras(PARSES, DEFAULT_SCHEME, 32)

    def train(out_dir, stop=None):
        model = build_model(config, "learned", len(vocab), seed=0)
        train_pair_classifier(model, examples[:30], examples[30:38], vocab, config.train_config(0), run_folder=RunFolder(out_dir),
                              progress=False, log=None, extras_fn=extras, stop_after_epoch=stop)
        model = build_model(config, "learned", len(vocab), seed=0)  # a fresh process: resume from the folder
        result = train_pair_classifier(model, examples[:30], examples[30:38], vocab, config.train_config(0),
                                       run_folder=RunFolder(out_dir), progress=False, log=None, extras_fn=extras)
        return model, result

    straight, _ = train(tmp_path / "straight")
    resumed, result = train(tmp_path / "resumed", stop=1)
    assert result.resumed_from_epoch == 1
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), name


def test_command_line_runs_bias_dropout_and_the_predictor(data_dir, tmp_path, capsys):
    import json

    from lessons_lib import paths
    from lessons_lib.cli import main

    out = tmp_path / "results.json"
    code = main(["experiment", "--data-dir", str(data_dir), "--out", str(out), "--variants", "none", "learned",
                 "--seeds", "0", "--epochs", "1", "--d-model", "16", "--d-ff", "32", "--n-heads", "2",
                 "--bias-dropout", "0.5", "--distance-predictor", "--parser", str(paths.PARSER_MODEL_DIR),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert code == 0
    results = ExperimentResult.load(out)
    learned = results.run("learned", 0)
    assert results.config.syntax_model == {"bias_dropout": 0.5, "distance_predictor": True}
    assert [i.buckets for i in learned.inference] == ["none", "predicted"] and learned.predictor is not None
    assert "predicted trees" in capsys.readouterr().out
    assert json.loads(out.read_text(encoding="utf-8"))["runs"][1]["predictor"]["parameters"] > 0
