"""Scoring translations with the field's library, sacreBLEU, and comparing two systems on one test set.

- :func:`corpus_scores`: corpus BLEU and chrF with sacreBLEU's defaults, and the signatures that
  say exactly how they were computed (tokeniser, smoothing, version): a BLEU without its
  signature cannot be compared with another.
- :func:`sentence_statistics` and :func:`bleu_from_statistics`: BLEU is not an average of sentence
  scores but a function of integer sums over the corpus (matched and proposed n-grams of each
  order, hypothesis and reference lengths). Kept per sentence, those integers let BLEU be
  recomputed for any subset or resample of the test sentences without the texts.
- :func:`paired_bootstrap`: resample test sentences with replacement, recompute both systems'
  BLEU on each resample from the integers, and read the spread of the difference. It describes
  *these two trained models* on *this test set*; whether a method helps is a question about
  seeds (and data draws), answered by the seed-level statistics, not by this.

Torch-free: a results file of translations is read and scored without it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Sequence

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.validation import check_int

__all__ = [
    "CorpusScores",
    "corpus_scores",
    "SentenceStatistics",
    "sentence_statistics",
    "bleu_from_statistics",
    "BootstrapComparison",
    "paired_bootstrap",
]


@dataclass(frozen=True)
class CorpusScores:
    """Corpus BLEU and chrF (0–100) with sacreBLEU's signatures."""

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str

    def describe(self) -> str:
        return f"BLEU {self.bleu:.2f} ({self.bleu_signature}); chrF {self.chrf:.2f} ({self.chrf_signature})"


def _check_pairs(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise CourseInputError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    if not references:
        raise CourseInputError("no sentences to score")
    for name, texts in (("hypotheses", hypotheses), ("references", references)):
        bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
        if bad is not None:
            raise input_error(FieldName(name), f"[{bad}] must be a string, got {type(texts[bad]).__name__}")


def corpus_scores(hypotheses: Sequence[str], references: Sequence[str]) -> CorpusScores:
    """Corpus BLEU and chrF of ``hypotheses`` against one reference each (sacreBLEU's defaults)."""
    from sacrebleu.metrics import BLEU, CHRF

    _check_pairs(hypotheses, references)
    # force: hypotheses written token by token (``"is important ."``) are meant; 13a splits the
    # references the same way, so the warning about a tokenized full stop does not apply
    bleu, chrf = BLEU(force=True), CHRF()
    return CorpusScores(bleu.corpus_score(list(hypotheses), [list(references)]).score,
                        chrf.corpus_score(list(hypotheses), [list(references)]).score,
                        str(bleu.get_signature()), str(chrf.get_signature()))


@dataclass(frozen=True)
class SentenceStatistics:
    """One sentence's share of corpus BLEU: integers that add up over sentences.

    Attributes:
        matches: n-grams of the hypothesis found in the reference, orders 1–4 (clipped counts).
        proposed: n-grams of the hypothesis, orders 1–4.
        hypothesis_length, reference_length: tokens after sacreBLEU's tokeniser.
    """

    matches: tuple[int, int, int, int]
    proposed: tuple[int, int, int, int]
    hypothesis_length: int
    reference_length: int

    def to_list(self) -> list[int]:
        """Ten integers, as a results file stores them."""
        return [*self.matches, *self.proposed, self.hypothesis_length, self.reference_length]

    @classmethod
    def from_list(cls, values: Sequence[int]) -> "SentenceStatistics":
        if len(values) != 10 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
            raise CourseInputError(f"sentence statistics are ten non-negative integers, got {list(values)!r}")
        m1, m2, m3, m4, p1, p2, p3, p4, hyp, ref = values
        return cls((m1, m2, m3, m4), (p1, p2, p3, p4), hyp, ref)


def sentence_statistics(hypotheses: Sequence[str], references: Sequence[str]) -> list[SentenceStatistics]:
    """:class:`SentenceStatistics` of each hypothesis against its reference, with the corpus BLEU's tokeniser."""
    from sacrebleu.metrics import BLEU

    _check_pairs(hypotheses, references)
    # effective_order only changes a sentence's own score, never its counts: it silences the advice
    bleu = BLEU(effective_order=True, force=True)
    out = []
    for hypothesis, reference in zip(hypotheses, references):
        score = bleu.sentence_score(hypothesis, [reference])
        m1, m2, m3, m4 = score.counts
        p1, p2, p3, p4 = score.totals
        out.append(SentenceStatistics((m1, m2, m3, m4), (p1, p2, p3, p4), score.sys_len, score.ref_len))
    return out


def bleu_from_statistics(statistics: Sequence[SentenceStatistics]) -> float:
    """Corpus BLEU (0–100) from summed sentence statistics: equal to sacreBLEU's corpus score."""
    from sacrebleu.metrics import BLEU

    if not statistics:
        raise CourseInputError("no sentence statistics to add up")
    matches = [sum(s.matches[k] for s in statistics) for k in range(4)]
    proposed = [sum(s.proposed[k] for s in statistics) for k in range(4)]
    return BLEU.compute_bleu(matches, proposed, sum(s.hypothesis_length for s in statistics),
                             sum(s.reference_length for s in statistics), smooth_method="exp").score


@dataclass(frozen=True)
class BootstrapComparison:
    """BLEU of system A minus system B on resamples of one test set (these two trained models).

    Attributes:
        difference: the difference on the test set itself.
        low, high: the 2.5 % and 97.5 % quantiles of the resampled differences.
        share_a_better: the share of resamples where A's BLEU is higher.
        resamples: how many.
    """

    difference: float
    low: float
    high: float
    share_a_better: float
    resamples: int

    def describe(self) -> str:
        return (f"BLEU A − B = {self.difference:+.2f} (95 % of {self.resamples} test-sentence resamples within "
                f"[{self.low:+.2f}, {self.high:+.2f}]; A higher in {self.share_a_better:.1%}) — these two trained "
                "models on this test set, not the method")


def paired_bootstrap(a: Sequence[SentenceStatistics], b: Sequence[SentenceStatistics], resamples: int = 1000,
                     seed: int = 0) -> BootstrapComparison:
    """Resample the test sentences (the same draw for both systems) and recompute both BLEUs each time."""
    if len(a) != len(b):
        raise CourseInputError(f"the two systems were scored on {len(a)} and {len(b)} sentences: one test set, please")
    check_int(resamples, FieldName("resamples"))
    rng = random.Random(seed)
    n = len(a)
    differences = []
    for _ in range(resamples):
        rows = [rng.randrange(n) for _ in range(n)]
        differences.append(bleu_from_statistics([a[i] for i in rows]) - bleu_from_statistics([b[i] for i in rows]))
    differences.sort()
    low = differences[math.floor(0.025 * (resamples - 1))]
    high = differences[math.ceil(0.975 * (resamples - 1))]
    return BootstrapComparison(bleu_from_statistics(a) - bleu_from_statistics(b), low, high,
                               sum(d > 0 for d in differences) / resamples, resamples)
