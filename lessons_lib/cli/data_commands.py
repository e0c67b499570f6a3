"""``lessons data-stats`` and ``lessons baseline``: what a data set is made of, and what a model must beat.

``lessons data-stats --data-dir DIR`` prints how the questions of dev and test recur in
train, the label shares, pair repeats across splits, hard negatives, the character Jaccard
of each label (mean and quartiles), pair lengths, pairs per question and connected
components, beside the real LCQMC's numbers (:mod:`lessons_lib.pairs.stats`), and whether
dev and test satisfy the independence the paired tests assume
(:func:`lessons_lib.evaluation.significance.check_independence`). ``lessons baseline --data-dir DIR`` prints
the majority class of train and the character-Jaccard rule tuned on dev, on dev and test
(:mod:`lessons_lib.evaluation.baselines`). Without ``--data-dir`` both use ``$LCQMC_DIR`` or else
the course's sample, and say which. :func:`print_baseline_comparison` is how ``lessons train``
reads its final predictions against the same baselines.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from lessons_lib.cli.options import add_force_argument
from lessons_lib.errors import file_errors
from lessons_lib.validation import check_not_a_file, check_not_a_folder

if TYPE_CHECKING:  # no torch at import time: `lessons --help` stays fast
    from lessons_lib.pairs.data import PairExample
    from lessons_lib.training.trainer import TrainResult


def register(subparsers: argparse._SubParsersAction) -> None:
    for name, help_text, handler in (
        ("data-stats", "recurrence of questions across splits, label shares, repeats, hard negatives, Jaccard by label, "
         "pairs per question, components, independence", run_data_stats),
        ("baseline", "majority class and the character-Jaccard rule (threshold tuned on dev), on dev and test",
         run_baseline),
    ):
        p = subparsers.add_parser(name, help=help_text)
        p.add_argument("--data-dir", default=None,
                       help="folder with train/dev/test files (default: $LCQMC_DIR, else the sample)")
        p.add_argument("--lenient", action="store_true", help="skip malformed lines (they are listed) instead of stopping")
        p.set_defaults(handler=handler)
    subparsers.choices["baseline"].add_argument(
        "--out", type=Path, default=None,
        help="also write the numbers (accuracies, threshold, the test comparison, the pairs' SHA-256; no text) as JSON")
    add_force_argument(subparsers.choices["baseline"], "--out")


def _load(args: argparse.Namespace):
    from lessons_lib.pairs.data import load_lcqmc

    data = load_lcqmc(args.data_dir, lenient=args.lenient)
    print(f"data: {data.source.origin} -> {data.source.path}" + (" (the course's sample, not LCQMC)" if data.source.is_sample else ""))
    print(data.summary())
    return data


def run_data_stats(args: argparse.Namespace) -> int:
    from lessons_lib.evaluation.significance import check_independence
    from lessons_lib.pairs.stats import split_statistics

    data = _load(args)
    print(split_statistics({"train": data.train.examples, "dev": data.dev.examples, "test": data.test.examples}).report())
    for split in ("dev", "test"):  # what the paired tests of lessons 06 and 08 assume about this split
        print(f"{split}: {check_independence(getattr(data, split).examples).describe()}")
    return 0


def run_baseline(args: argparse.Namespace) -> int:
    from lessons_lib.evaluation.baselines import compute_baselines

    if args.out is not None:  # before any work: a folder given as the file is one line now, not after reading
        from lessons_lib.evaluation.baselines import BASELINES_KIND, is_baselines_file
        from lessons_lib.files import check_output_file
        from lessons_lib.pairs.data import resolve_data_dir

        check_not_a_folder(args.out, "--out")
        check_output_file(args.out, "--out", [resolve_data_dir(args.data_dir).path], kind=BASELINES_KIND,
                          force=args.force, recognise=is_baselines_file)
    data = _load(args)
    baselines = compute_baselines(data.train.examples, data.dev.examples, data.test.examples)
    print(baselines.report())
    if args.out is not None:
        from lessons_lib.evaluation.baselines import save_baselines

        with file_errors(check_not_a_file(args.out.parent, "--out's folder"), "create the folder"):
            args.out.parent.mkdir(parents=True, exist_ok=True)
        print(f"wrote {save_baselines(baselines, args.out, data.pairs_sha256(), getattr(args, 'command_line', []))}")
    return 0


def print_baseline_comparison(train: Sequence[PairExample], dev: Sequence[PairExample],
                              test: Sequence[PairExample], result: TrainResult) -> None:
    """The baselines of this data, and a finished run's dev/test predictions read against them."""
    from lessons_lib.evaluation.baselines import compute_baselines

    baselines = compute_baselines(train, dev, test)
    print("baselines on the same data:")
    print(baselines.report())
    print(baselines.read_against("dev", result.dev.predictions))
    if result.test is not None:
        print(baselines.read_against("test", result.test.predictions))
