"""``lessons build-sample``, ``lessons train`` and ``lessons compare``: LCQMC from the command line.

``lessons train --preset textbook --data-dir DIR --out runs/textbook`` is all it takes on the
real data (a folder with train/dev/test files); without ``--data-dir`` it uses ``$LCQMC_DIR``
or the course's sample and says which. The run writes ``metrics.json`` (per epoch: dev and
test accuracy/F1/confusion, loss, time, pairs per second), ``vocab.json``, ``checkpoint.pt``
(every epoch) and ``predictions.json``; started again with the same ``--out``, it resumes
from the checkpoint, but only a run of the same identity (data, limits, options,
vocabulary): anything else is refused naming the field that differs. ``lessons compare``
compares two runs only when their predictions were made on the same pairs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lessons_lib.cli.options import add_force_argument, add_preset_arguments, flag_names, preset_overrides
from lessons_lib.errors import CourseInputError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("build-sample", help="rebuild data/lcqmc_sample from its question families")
    p.add_argument("--source", default=None, help="question-family file (default: the shipped source)")
    p.add_argument("--out-dir", default=None, help="output folder (default: data/lcqmc_sample)")
    add_force_argument(p, "--out-dir")
    p.add_argument("--seed", type=int, default=20240601, help="seed of the split and the pairing (default 20240601)")
    p.set_defaults(handler=run_build_sample)

    p = subparsers.add_parser("train", help="train and evaluate a pair classifier on LCQMC-format data")
    p.add_argument("--data-dir", default=None, help="folder with train/dev/test files (default: $LCQMC_DIR, else the sample)")
    p.add_argument("--out", required=True, help="output folder (checkpoint, metrics.json, vocab.json)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="cpu (default) or cuda")
    p.add_argument("--lenient", action="store_true",
                   help="skip malformed lines instead of stopping; each is listed, with its reason, in --out/skipped_lines.tsv")
    p.add_argument("--no-resume", action="store_true",
                   help="start afresh even if --out holds a checkpoint (the previous run's files there are removed)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--limit-train", type=int, default=None, help="use only the first N training pairs (smoke tests)")
    add_preset_arguments(p)
    p.set_defaults(handler=run_train)

    p = subparsers.add_parser("compare", help="exact McNemar test between two runs' test predictions")
    p.add_argument("run_a", help="output folder of a `lessons train` run")
    p.add_argument("run_b", help="output folder of another run on the same data")
    p.add_argument("--split", choices=("dev", "test"), default="test")
    p.set_defaults(handler=run_compare)


def run_build_sample(args: argparse.Namespace) -> int:
    from lessons_lib.files import check_output_folder
    from lessons_lib.pairs.sample import LCQMC_SAMPLE_DIR, SAMPLE_FILES, SAMPLE_KIND, SOURCE_FILE, build_sample
    from lessons_lib.validation import check_int, check_not_a_file

    check_int(args.seed, "--seed", minimum=0)
    source = Path(args.source) if args.source else SOURCE_FILE
    if not source.is_file():
        raise CourseInputError(f"--source {source} is not a file")
    out_dir = check_not_a_file(args.out_dir or LCQMC_SAMPLE_DIR, "--out-dir")  # created once the sample is drawn
    # The course's own sample folder is rebuilt as it is (git keeps its committed files); any other must be its own output.
    own_sample = out_dir.resolve() == LCQMC_SAMPLE_DIR.resolve()
    check_output_folder(out_dir, "--out-dir", SAMPLE_FILES, kind=SAMPLE_KIND, force=args.force or own_sample)
    stats = build_sample(source, out_dir, seed=args.seed)
    print(stats.report())
    return 0


def _check_train_options(args: argparse.Namespace):
    """Every option of ``lessons train``, checked before any data is read: ``(device, limit, recipe, run folder)``.

    The device is resolved and the run folder checked here, once: the trainer takes both as they are.
    """
    import torch

    from lessons_lib.pairs.config import resolve_recipe
    from lessons_lib.training.runs import RunFolder
    from lessons_lib.training.trainer import resolve_device
    from lessons_lib.validation import check_int

    threads = None if args.threads is None else check_int(args.threads, "--threads")
    limit = None if args.limit_train is None else check_int(args.limit_train, "--limit-train")
    device = resolve_device(args.device)
    with flag_names():
        recipe = resolve_recipe(args.preset, preset_overrides(args))
    folder = RunFolder.checked(
        args.out, "--out", resume=not args.no_resume,
        identity={"limit_train": limit, "lenient": args.lenient},  # the trainer adds the pairs' fingerprints
        command=getattr(args, "command_line", None),
        restart_hint="another --out, or start afresh (`lessons train --no-resume`)")
    if threads is not None:
        torch.set_num_threads(threads)
    return device, limit, recipe, folder


def run_train(args: argparse.Namespace) -> int:
    from lessons_lib.pairs.data import load_lcqmc

    device, limit, recipe, folder = _check_train_options(args)
    data = load_lcqmc(args.data_dir, lenient=args.lenient)
    with folder.locked():  # the whole command: a second one on this folder is refused
        return _train_into(args, data, folder, device, limit, recipe)


def _train_into(args: argparse.Namespace, data, folder, device, limit: int | None, recipe) -> int:
    from lessons_lib.pairs.classifier import PairClassifier
    from lessons_lib.training.trainer import train_pair_classifier
    from lessons_lib.pairs.vocab import Vocabulary
    from lessons_lib.seeding import set_seed

    print(f"data: {data.source.origin} -> {data.source.path}" + (" (the course's sample, not LCQMC)" if data.source.is_sample else ""))
    print(data.summary())
    train_examples = data.train.examples[:limit] if limit else data.train.examples
    vocab = Vocabulary.build(t for ex in train_examples for t in (ex.text_a, ex.text_b))
    model_config, train_config = recipe.classifier(len(vocab)), recipe.train
    print(f"preset {args.preset}: model {model_config.to_dict()}")
    print(f"training {train_config.to_dict()}")
    set_seed(train_config.seed)
    model = PairClassifier(model_config)
    print(f"parameters: {sum(p.numel() for p in model.parameters()):,}, vocabulary: {len(vocab)} tokens")
    out = folder.path
    try:
        result = train_pair_classifier(
            model, train_examples, data.dev.examples, vocab, train_config, test_examples=data.test.examples,
            run_folder=folder, device=device, progress=not args.no_progress, model_config=model_config.to_dict(),
            on_start=lambda: _record_skipped_lines(out, data, args.lenient),
        )
    except KeyboardInterrupt:
        if not folder.checkpoint.is_file():
            print("interrupted before the first epoch ended; nothing was kept: run the same command again to start")
            return 130
        again = "the command again without --no-resume" if not folder.resume else "the same command again"
        print(f"interrupted; the epochs finished so far are kept: run {again} to resume from {folder.checkpoint}")
        return 130
    _write_predictions(out, result, data)
    _print_summary(out, result)
    from lessons_lib.cli.data_commands import print_baseline_comparison

    print_baseline_comparison(train_examples, data.dev.examples, data.test.examples, result)
    return 0


def _record_skipped_lines(out: Path, data, lenient: bool) -> None:
    """With ``--lenient``, every skipped line goes to ``out/skipped_lines.tsv``; without, no stale list stays."""
    from lessons_lib.training.runs import SKIPPED_LINES_NAME, clear_run_folder, save_skipped_lines

    if not lenient:
        clear_run_folder(out, [SKIPPED_LINES_NAME])
        return
    path, count = save_skipped_lines(out, [data.train, data.dev, data.test])
    print(f"skipped {count} malformed line{'' if count == 1 else 's'}; each is listed (file, line, reason) in {path}")


def _write_predictions(out: Path, result, data) -> None:
    from lessons_lib.training.runs import PREDICTIONS_NAME, save_predictions

    splits = {"dev": (result.dev.predictions, [ex.label for ex in data.dev.examples], data.dev.fingerprint())}
    if result.test is not None:
        splits["test"] = (result.test.predictions, [ex.label for ex in data.test.examples], data.test.fingerprint())
    save_predictions(out / PREDICTIONS_NAME, splits)


def _print_summary(out: Path, result) -> None:
    from lessons_lib.training.runs import METRICS_NAME
    from lessons_lib.training.trainer import best_dev_epoch

    test_text = "" if result.test is None else f", test accuracy {result.test.accuracy:.4f} (F1 {result.test.f1:.4f})"
    print(f"final: dev accuracy {result.dev.accuracy:.4f} (F1 {result.dev.f1:.4f}){test_text}")
    best = result.history[best_dev_epoch(result.history) - 1]
    best_test = "" if best.test is None else f", test accuracy {best.test['accuracy']:.4f}"
    print(f"best dev epoch {best.epoch}: dev accuracy {best.dev['accuracy']:.4f}{best_test}")
    print(f"metrics: {out / METRICS_NAME}")


def run_compare(args: argparse.Namespace) -> int:
    from lessons_lib.evaluation.pair_tests import mcnemar_exact
    from lessons_lib.training.runs import PREDICTIONS_NAME, load_predictions
    from lessons_lib.validation import check_input_dir

    runs = [load_predictions(check_input_dir(run, "run folder") / PREDICTIONS_NAME, args.split)
            for run in (args.run_a, args.run_b)]
    if runs[0]["fingerprint"] != runs[1]["fingerprint"]:
        raise CourseInputError(
            f"{args.run_a} and {args.run_b} were evaluated on different {args.split} sets (fingerprints "
            f"{runs[0]['fingerprint']} and {runs[1]['fingerprint']}): McNemar's test needs the same pairs"
        )
    if runs[0]["labels"] != runs[1]["labels"]:
        raise CourseInputError(f"{args.run_a} and {args.run_b}: the {args.split} labels differ although the "
                               "fingerprints agree (a predictions.json was edited?)")
    result = mcnemar_exact(runs[0]["predictions"], runs[1]["predictions"], runs[0]["labels"])
    print(f"{args.split}: A right & B wrong: {result.only_a}, B right & A wrong: {result.only_b}, "
          f"exact McNemar p = {result.p_value:.4g}")
    return 0
