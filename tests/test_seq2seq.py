"""The GRU encoder–decoder with attention."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.seq2seq.model import Seq2Seq, Seq2SeqConfig
from lessons_lib.seq2seq.training import exact_match, run_trial, train_seq2seq
from lessons_lib.seq2seq.numerals import numeral_split


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Small GRUs run faster on one thread, much faster on a busy machine; restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def split():
    return numeral_split(400, 100, max_value=999, seed=0)


def _config(split, **overrides):
    values = dict(src_vocab_size=len(split.source_vocab), tgt_vocab_size=len(split.target_vocab),
                  emb_dim=8, enc_hidden=8, dec_hidden=12)
    values.update(overrides)
    return Seq2SeqConfig(**values)


def test_identity_bridge_and_dot_score_need_equal_widths(split):
    with pytest.raises(CourseInputError, match="d_enc=16.*d_dec=12"):
        _config(split, bridge="identity")  # bidirectional: d_enc = 2 × 8
    with pytest.raises(CourseInputError, match="d_query == d_key"):
        Seq2Seq(_config(split, score="dot"))
    model = Seq2Seq(_config(split, score="dot", bridge="identity", dec_hidden=16))
    assert model.config.d_enc == 16


@pytest.mark.parametrize("score", ["general", "additive"])
def test_shapes_and_attention_rows(split, score):
    torch.manual_seed(0)
    model = Seq2Seq(_config(split, score=score)).eval()
    src, lengths = split.source_vocab.batch([s for s, _ in split.test[:4]])
    tgt, _ = split.target_vocab.batch([t for _, t in split.test[:4]], bos=True, eos=True)
    assert model(src, lengths, tgt[:, :-1]).shape == (4, tgt.shape[1] - 1, len(split.target_vocab))
    ids, weights = model.greedy_decode(src, lengths, max_steps=5)
    assert ids.shape == (4, 5) and weights.shape == (4, 5, src.shape[1])
    torch.testing.assert_close(weights.sum(-1), torch.ones(4, 5))
    for row, n in zip(weights, lengths.tolist()):
        assert torch.all(row[:, n:] == 0)  # no weight on source padding


def test_padding_does_not_change_a_sentence(split):
    torch.manual_seed(1)
    model = Seq2Seq(_config(split)).eval()
    texts = [split.test[0][0], "九百九十九"]
    src, lengths = split.source_vocab.batch(texts)
    alone, alone_len = split.source_vocab.batch(texts[:1])
    tgt, _ = split.target_vocab.batch(["123"], bos=True)
    together = model(src, lengths, tgt.expand(2, -1))[0]
    torch.testing.assert_close(together, model(alone, alone_len, tgt)[0], atol=1e-6, rtol=0)


def test_training_reduces_the_loss_and_is_reproducible(split):
    config = _config(split)
    first = run_trial(config, split, steps=40, seed=5, batch_size=32)
    again = run_trial(config, split, steps=40, seed=5, batch_size=32)
    assert first.losses == again.losses
    assert sum(first.losses[-5:]) / 5 < 0.8 * sum(first.losses[:5]) / 5
    assert 0.0 <= first.exact_match <= 1.0 and first.max_grad_norm > 0
    assert len(first.grad_norms) == 40 and max(first.grad_norms) == first.max_grad_norm


def test_the_clipping_threshold_reaches_the_optimiser(split):
    config = _config(split)
    loose = run_trial(config, split, steps=10, seed=5, batch_size=32, clip=1e6)
    tight = run_trial(config, split, steps=10, seed=5, batch_size=32, clip=1e-3)
    assert loose.grad_norms[0] == tight.grad_norms[0]          # the first norm is measured before any step
    assert loose.losses[1:] != tight.losses[1:]
    with pytest.raises(CourseInputError, match="clip"):
        run_trial(config, split, steps=1, seed=5, clip=0.0)


def test_exact_match_counts_whole_strings(split):
    torch.manual_seed(2)
    model = Seq2Seq(_config(split))
    score = exact_match(model, split.test[:20], split.source_vocab, split.target_vocab)
    assert score * 20 == round(score * 20)


def test_bad_inputs(split):
    model = Seq2Seq(_config(split))
    src, lengths = split.source_vocab.batch(["一百"])
    with pytest.raises(CourseInputError, match="lengths"):
        model(src, torch.tensor([5]), src)
    with pytest.raises(CourseInputError, match="src"):
        model(src.float(), lengths, src)
    with pytest.raises(CourseInputError, match="score"):
        _config(split, score="cosine")
    with pytest.raises(CourseInputError, match="empty"):
        train_seq2seq(model, [], split.source_vocab, split.target_vocab, steps=1)


def test_seed_groups_are_compared_in_standard_errors_and_by_permutation():
    from lessons_lib.seq2seq.training import compare_seed_groups

    result = compare_seed_groups([0.90, 0.91, 0.92], [0.95, 0.96, 0.97])
    assert result.difference == pytest.approx(0.05)
    assert result.standard_error == pytest.approx((2 * 0.01 ** 2 / 3) ** 0.5)
    assert result.standard_errors == pytest.approx(0.05 / result.standard_error)
    # Complete separation of 3 against 3 is the most extreme of the 20 splits, and so is its mirror.
    assert result.p_value == pytest.approx(0.1) and result.smallest_p == pytest.approx(0.1)
    overlap = compare_seed_groups([0.90, 0.95, 0.92], [0.91, 0.96, 0.93])
    assert overlap.p_value > 0.5 and overlap.difference > 0
    five = compare_seed_groups([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert five.p_value == pytest.approx(2 / 252) and five.smallest_p == pytest.approx(2 / 252)
    assert compare_seed_groups([1, 2], [1, 2, 3]).smallest_p == pytest.approx(1 / 10)


@pytest.mark.parametrize("a, b, message", [([0.9], [0.8, 0.7], "`a` needs at least 2"),
                                           ([0.9, 0.8], [0.7, float("nan")], "`b` holds a score")])
def test_seed_groups_refuse_bad_input(a, b, message):
    from lessons_lib.seq2seq.training import compare_seed_groups

    with pytest.raises(CourseInputError, match=message):
        compare_seed_groups(a, b)
