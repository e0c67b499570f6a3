"""A set of pairs with the length distribution of the real LCQMC training split, for benchmarks.

The shipped sample's pairs are much narrower than LCQMC's (mean 23.9 positions, 95th percentile
30, longest 41; random batches of 32 padded to 1.33× their real positions), so padding costs far
less on it than on the real data. The maintainers measured the real training split: a pair
``[CLS] a [SEP] b [SEP]`` is 24.9 positions on average, 95th percentile 40, longest 163
(truncated to 64), and random batches of 32 hold 2.06× the real positions (the figures below).

:func:`lcqmc_length_pairs` draws pair lengths from a mixture fitted to those figures — a
log-normal body (median 23, σ 0.3) and a 2 % tail of 40 + Exponential(mean 30) positions,
capped at 163 — and fills each pair with characters of the sample's questions (so the
vocabulary is the sample's), sentence lengths split at random between the two questions.
:func:`length_figures` prints what the drawn set holds, beside the targets.
"""

from __future__ import annotations

import math
import random
import statistics
from typing import Sequence

from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import batch_indices, encoded_length, padded_positions

# The maintainers' figures of the real LCQMC training split (positions per pair, special tokens included).
LCQMC_TARGET = {"mean": 24.9, "p95": 40, "longest": 163, "padding_factor": 2.06}
_MEDIAN, _SIGMA, _TAIL_SHARE, _TAIL_MEAN, _LONGEST = 23.0, 0.3, 0.02, 30.0, 163


def _pair_length(rng: random.Random) -> int:
    if rng.random() < _TAIL_SHARE:
        raw = 40 + rng.expovariate(1 / _TAIL_MEAN)
    else:
        raw = rng.lognormvariate(math.log(_MEDIAN), _SIGMA)
    return min(_LONGEST, max(5, round(raw)))


def _text(rng: random.Random, questions: Sequence[str], length: int) -> str:
    """``length`` characters: a random question of the sample, repeated and cut to length."""
    question = rng.choice(questions)
    return (question * (length // len(question) + 1))[:length]


def lcqmc_length_pairs(sample: Sequence[PairExample], n: int, seed: int = 0) -> list[PairExample]:
    """``n`` labelled pairs of LCQMC's length distribution (untruncated lengths; the encoder truncates at 64)."""
    rng = random.Random(seed)
    questions = [t for ex in sample for t in (ex.text_a, ex.text_b)]
    labels = [ex.label for ex in sample]
    pairs = []
    for line in range(n):
        characters = _pair_length(rng) - 3
        len_a = min(characters - 1, max(1, round(characters * rng.uniform(0.35, 0.65))))
        pairs.append(PairExample(_text(rng, questions, len_a), _text(rng, questions, characters - len_a),
                                 rng.choice(labels), line + 1))
    return pairs


def length_figures(pairs: Sequence[PairExample], batch_size: int = 32, max_len: int = 64) -> dict[str, float]:
    """Mean, 95th percentile and longest untruncated pair, and the padding factor of random batches."""
    raw = sorted(encoded_length(ex, max_len=10**6) for ex in pairs)
    truncated = [encoded_length(ex, max_len) for ex in pairs]
    batches = batch_indices(truncated, batch_size, shuffle=True, seed=0)
    return {"mean": statistics.mean(raw), "p95": raw[int(0.95 * len(raw))], "longest": raw[-1],
            "padding_factor": padded_positions(truncated, batches) / sum(truncated)}
