"""BLEU and chrF come from sacreBLEU with their signatures; BLEU adds up from integer sentence
statistics; the paired bootstrap compares two systems sentence by sentence."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from sacrebleu.metrics import BLEU

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.translation import (SentenceStatistics, bleu_from_statistics, corpus_scores,
                                                paired_bootstrap, sentence_statistics)

WORDS = "the a cat dog sat ran on under mat house red big small quickly".split()


def _corpus(seed: int, n: int = 40) -> tuple[list[str], list[str]]:
    """References, and hypotheses that keep, drop or change some of their words."""
    rng = random.Random(seed)
    references, hypotheses = [], []
    for _ in range(n):
        reference = [rng.choice(WORDS) for _ in range(rng.randint(3, 12))]
        hypothesis = [w if rng.random() < 0.7 else rng.choice(WORDS) for w in reference if rng.random() < 0.9]
        references.append(" ".join(reference) + ".")
        hypotheses.append(" ".join(hypothesis) + ("." if rng.random() < 0.8 else ""))
    hypotheses[0] = ""  # an empty output still counts its reference's length
    return hypotheses, references


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bleu_from_sentence_statistics_equals_sacrebleus_corpus_score(seed):
    hypotheses, references = _corpus(seed)
    expected = BLEU().corpus_score(hypotheses, [references]).score
    assert bleu_from_statistics(sentence_statistics(hypotheses, references)) == pytest.approx(expected, abs=1e-9)
    scores = corpus_scores(hypotheses, references)
    assert scores.bleu == pytest.approx(expected, abs=1e-9)
    assert "tok:13a" in scores.bleu_signature and "version:" in scores.chrf_signature
    assert 0 < scores.chrf < 100


def test_statistics_survive_a_results_file_and_bad_ones_are_refused():
    stats = sentence_statistics(*_corpus(3, 5))
    assert [SentenceStatistics.from_list(s.to_list()) for s in stats] == stats
    for bad in ([1] * 9, [1] * 9 + [-1], [1] * 9 + [1.5], [True] * 10):
        with pytest.raises(CourseInputError, match="ten non-negative integers"):
            SentenceStatistics.from_list(bad)


def test_the_paired_bootstrap_reads_two_systems_on_the_same_resamples():
    hypotheses, references = _corpus(4)
    weaker = sentence_statistics(hypotheses, references)
    same = paired_bootstrap(weaker, weaker, resamples=200)
    assert same.difference == same.low == same.high == 0.0 and same.share_a_better == 0.0
    perfect = sentence_statistics(references, references)
    better = paired_bootstrap(perfect, weaker, resamples=200, seed=1)
    assert better.difference == pytest.approx(100.0 - bleu_from_statistics(weaker))
    assert better.share_a_better == 1.0 and 0 < better.low <= better.difference <= better.high
    assert "these two trained models" in better.describe()
    assert paired_bootstrap(perfect, weaker, resamples=200, seed=1) == better  # seeded
    with pytest.raises(CourseInputError, match="one test set"):
        paired_bootstrap(perfect, weaker[:-1])


def test_mismatched_inputs_are_one_clear_error():
    with pytest.raises(CourseInputError, match="2 hypotheses for 1 references"):
        corpus_scores(["a", "b"], ["a"])
    with pytest.raises(CourseInputError, match=r"`hypotheses`\[1\] must be a string"):
        sentence_statistics(["a", None], ["a", "b"])


def test_scoring_translations_needs_no_torch():
    code = ("import sys; from lessons_lib.evaluation.translation import corpus_scores; "
            "corpus_scores(['a cat'], ['a cat']); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
