"""Batch order: plain and length-bucketed training batches, length-sorted evaluation."""

from __future__ import annotations

import random

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PairClassifierConfig, TrainConfig
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import (POOL_BATCHES, batch_indices, encoded_length, length_sorted_order, make_batches,
                                        padded_positions)
from lessons_lib.evaluation.metrics import predict
from lessons_lib.pairs.vocab import Vocabulary

CHARS = "什么花四季开电脑怎样录像手机截图如何视频"


def _pairs(n: int, seed: int = 0) -> list[PairExample]:
    """Pairs of lengths spread like LCQMC's: mostly short, a long tail."""
    rng = random.Random(seed)
    out = []
    for line in range(n):
        len_a, len_b = (rng.randint(3, 12), rng.randint(3, 12)) if rng.random() < 0.9 else (rng.randint(15, 40), 5)
        out.append(PairExample("".join(rng.choices(CHARS, k=len_a)), "".join(rng.choices(CHARS, k=len_b)),
                               line % 2, line + 1))
    return out


PAIRS = _pairs(3 * POOL_BATCHES * 8 + 5)  # three pools of batches of 8 and a few pairs left over
LENGTHS = [encoded_length(ex) for ex in PAIRS]
VOCAB = Vocabulary.build(CHARS)


@pytest.mark.parametrize("batching", ["plain", "bucketed"])
@pytest.mark.parametrize("shuffle", [True, False])
def test_every_pair_is_in_exactly_one_batch(batching, shuffle):
    batches = batch_indices(LENGTHS, 8, shuffle=shuffle, seed=4, batching=batching)
    assert sorted(i for batch in batches for i in batch) == list(range(len(PAIRS)))
    assert len(batches) == -(-len(PAIRS) // 8)  # as many steps per epoch as the plain order
    assert sum(len(batch) < 8 for batch in batches) == 1


def test_bucketed_batches_are_deterministic_from_the_seed():
    first = batch_indices(LENGTHS, 8, shuffle=True, seed=4, batching="bucketed")
    assert first == batch_indices(LENGTHS, 8, shuffle=True, seed=4, batching="bucketed")
    assert first != batch_indices(LENGTHS, 8, shuffle=True, seed=5, batching="bucketed")
    made = [batch.pairs for batch in make_batches(PAIRS, VOCAB, 8, shuffle=True, seed=4, batching="bucketed")]
    assert made == [[PAIRS[i] for i in batch] for batch in first]


def test_bucketed_batches_hold_fewer_padded_positions_and_stay_shuffled():
    plain = batch_indices(LENGTHS, 8, shuffle=True, seed=4)
    bucketed = batch_indices(LENGTHS, 8, shuffle=True, seed=4, batching="bucketed")
    real = sum(LENGTHS)
    assert padded_positions(LENGTHS, bucketed) < 0.8 * padded_positions(LENGTHS, plain)
    assert padded_positions(LENGTHS, bucketed) < 1.1 * real
    # The batches' order is shuffled: the batch lengths do not increase along the epoch.
    longest = [max(LENGTHS[i] for i in batch) for batch in bucketed]
    assert longest != sorted(longest)
    # A pool is a random slice of the epoch, not the shortest pairs first.
    assert set(bucketed[0]) != set(length_sorted_order(LENGTHS)[:8])


def test_plain_batches_are_those_of_a_shuffled_order():
    order = list(range(len(PAIRS)))
    random.Random(4).shuffle(order)
    assert batch_indices(LENGTHS, 8, shuffle=True, seed=4) == [order[i:i + 8] for i in range(0, len(order), 8)]


def test_without_shuffle_bucketed_sorts_by_length():
    batches = batch_indices(LENGTHS, 8, batching="bucketed")
    flat = [LENGTHS[i] for batch in batches for i in batch]
    assert flat == sorted(LENGTHS)


def test_bad_batching_is_rejected():
    with pytest.raises(CourseInputError, match="batching"):
        batch_indices(LENGTHS, 8, batching="sorted")
    with pytest.raises(CourseInputError, match="batching"):
        TrainConfig(batching="random")


def test_encoded_length_is_the_padded_length_of_the_pair():
    batch = next(make_batches(PAIRS[:1], VOCAB, 1, max_len=20))
    assert encoded_length(PAIRS[0], max_len=20) == batch.token_ids.shape[1]
    long_pair = PairExample("什" * 50, "么" * 50, 1)
    assert encoded_length(long_pair, max_len=64) == 64


def test_sorted_evaluation_returns_the_logits_of_the_given_order():
    torch.manual_seed(0)
    model = PairClassifier(PairClassifierConfig.from_options(len(VOCAB), d_model=16, n_heads=2, d_ff=32)).eval()
    examples = PAIRS[:100]
    sorted_logits, sorted_labels = predict(model, examples, VOCAB, batch_size=16)
    plain_logits, plain_labels = predict(model, examples, VOCAB, batch_size=16, sort_by_length=False)
    assert torch.equal(sorted_labels, plain_labels)
    assert torch.equal(plain_labels, torch.tensor([ex.label for ex in examples]))
    torch.testing.assert_close(sorted_logits, plain_logits, atol=1e-5, rtol=0)
    one_by_one = torch.cat([model(next(make_batches([ex], VOCAB, 1))) for ex in examples[:10]]).detach()
    torch.testing.assert_close(sorted_logits[:10], one_by_one, atol=1e-5, rtol=0)


def test_the_command_line_takes_the_fast_paths_unless_told_otherwise():
    import argparse

    from lessons_lib.cli.experiment_commands import config_from_args
    from lessons_lib.cli.experiment_commands import register as register_experiment
    from lessons_lib.cli.options import add_preset_arguments, preset_overrides
    from lessons_lib.pairs.config import resolve_recipe

    parser = argparse.ArgumentParser()
    add_preset_arguments(parser)
    recipe = resolve_recipe("textbook", preset_overrides(parser.parse_args([])))
    assert (recipe.train.batching, recipe.model["attention"]) == ("bucketed", "sdpa")
    recipe = resolve_recipe("textbook", preset_overrides(parser.parse_args(["--batching", "plain",
                                                                           "--attention", "course"])))
    assert (recipe.train.batching, recipe.model["attention"]) == ("plain", "course")
    # The library (and so every lesson) keeps the plain order and the course's attention.
    recipe = resolve_recipe("textbook")
    assert (recipe.train.batching, recipe.model["attention"]) == ("plain", "course")
    commands = argparse.ArgumentParser().add_subparsers()
    register_experiment(commands)
    experiment = config_from_args(commands.choices["experiment"].parse_args(["--out", "x.json"]))
    assert experiment.train_config(0).batching == "bucketed"
    assert experiment.classifier_config(10).encoder.attention == "sdpa"
