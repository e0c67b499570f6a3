"""One translation run as one results file: what was trained, where, and every test sentence's result.

A file holds the arm (variant, trees), the training fraction and seed, the training knobs, the
data's digests, the command, :func:`lessons_lib.provenance.run_provenance` (commit, device,
``cpu_capability``), the history with the dev-chosen epoch, corpus BLEU and chrF per group with
sacreBLEU's signatures, and per test sentence its id, group, BLEU statistics and (unless the
run was asked for numbers only, as for data that may not be redistributed) its hypothesis.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from lessons_lib.errors import CourseInputError
from lessons_lib.files import read_json_file
from lessons_lib.evaluation.translation import SentenceStatistics, bleu_from_statistics
from lessons_lib.translation.pairs_folder import TranslationPair
from lessons_lib.translation.training import TranslationRun

__all__ = ["RESULTS_FORMAT", "RESULTS_KIND", "results_name", "checkpoint_name", "results_record", "load_results"]

RESULTS_FORMAT = "lessons-translation-run/1"
RESULTS_KIND = "translation results"


def results_name(fraction: float, variant: str, trees: str, seed: int) -> str:
    """``f0.1-learned-gold-s3.json``: one file per (fraction, arm, seed)."""
    return f"f{fraction:g}-{variant}-{trees}-s{seed}.json"


def checkpoint_name(results_file: str) -> str:
    """``f0.1-learned-gold-s3.checkpoint.pt``: where the run of ``results_file`` is saved after every
    epoch until that file is written (then it is removed)."""
    return results_file.removesuffix(".json") + ".checkpoint.pt"


def results_record(run: TranslationRun, test: Sequence[TranslationPair], fraction: float, context: dict,
                   numbers_only: bool) -> dict:
    """The JSON object of one run (``context``: command, provenance, data digests, knobs)."""
    sentences = []
    for pair, hypothesis, statistics in zip(test, run.hypotheses, run.statistics):
        sentence = {"id": pair.id, "group": pair.group, "statistics": statistics.to_list()}
        if not numbers_only:
            sentence["hypothesis"] = hypothesis
        sentences.append(sentence)
    return {"format": RESULTS_FORMAT, "variant": run.variant, "trees": run.trees, "fraction": fraction,
            "seed": run.seed, **context, "history": run.history, "best_epoch": run.best_epoch,
            "scores": {group: {"bleu": s.bleu, "chrf": s.chrf} for group, s in run.scores.items()},
            "signatures": {"bleu": run.scores["all"].bleu_signature, "chrf": run.scores["all"].chrf_signature},
            "seconds": run.seconds, "sentences": sentences}


def load_results(path: str | Path) -> dict:
    """A results file, checked: its format, and its corpus BLEU equal to its sentences' statistics."""
    path = Path(path)
    record = read_json_file(path, "results file")
    if not isinstance(record, dict) or record.get("format") != RESULTS_FORMAT:
        raise CourseInputError(f"{path}: not a translation results file (format {RESULTS_FORMAT!r})")
    try:
        statistics = [SentenceStatistics.from_list(s["statistics"]) for s in record["sentences"]]
        stored = float(record["scores"]["all"]["bleu"])
    except (KeyError, TypeError, ValueError) as error:
        raise CourseInputError(f"{path}: a field is missing or malformed ({type(error).__name__}: {error})") from None
    if abs(bleu_from_statistics(statistics) - stored) > 1e-6:
        raise CourseInputError(f"{path}: its BLEU {stored} is not what its sentences' statistics give "
                               f"({bleu_from_statistics(statistics)}); the file was changed")
    return record
