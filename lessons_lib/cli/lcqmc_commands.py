"""``lessons build-sample``, ``lessons train`` and ``lessons compare``: LCQMC from the command line.

``lessons train --preset textbook --data-dir DIR --out runs/textbook`` is all it takes on the
real data (a folder with train/dev/test files); without ``--data-dir`` it uses ``$LCQMC_DIR``
or the course's sample and says which. The run writes ``metrics.json`` (per epoch: dev and
test accuracy/F1/confusion, loss, time, pairs per second), ``vocab.json``, ``checkpoint.pt``
(every epoch) and ``predictions.json``; started again with the same ``--out``, it resumes
from the checkpoint.
"""

from __future__ import annotations

import argparse

from lessons_lib.cli.options import add_preset_arguments, preset_overrides


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("build-sample", help="rebuild data/lcqmc_sample from its question groups")
    p.add_argument("--source", default=None, help="question-group file (default: the shipped source)")
    p.add_argument("--out-dir", default=None, help="output folder (default: data/lcqmc_sample)")
    p.add_argument("--seed", type=int, default=20240601)
    p.set_defaults(handler=run_build_sample)

    p = subparsers.add_parser("train", help="train and evaluate a pair classifier on LCQMC-format data")
    p.add_argument("--data-dir", default=None, help="folder with train/dev/test files (default: $LCQMC_DIR, else the sample)")
    p.add_argument("--out", required=True, help="output folder (checkpoint, metrics.json, vocab.json)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--lenient", action="store_true", help="skip malformed lines (they are listed) instead of stopping")
    p.add_argument("--no-resume", action="store_true", help="start afresh even if --out holds a checkpoint")
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
    from lessons_lib.pairs.sample import LCQMC_SAMPLE_DIR, SOURCE_FILE, build_sample

    stats = build_sample(args.source or SOURCE_FILE, args.out_dir or LCQMC_SAMPLE_DIR, seed=args.seed)
    print(stats.report())
    return 0


def run_train(args: argparse.Namespace) -> int:
    from pathlib import Path

    import torch

    from lessons_lib.course.reproducibility import set_seed
    from lessons_lib.pairs.classifier import PairClassifier
    from lessons_lib.pairs.config import resolve_configs
    from lessons_lib.pairs.data import load_lcqmc
    from lessons_lib.pairs.runs import CHECKPOINT_NAME
    from lessons_lib.pairs.trainer import train_pair_classifier

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    data = load_lcqmc(args.data_dir, lenient=args.lenient)
    print(f"data: {data.source.origin} -> {data.source.path}" + (" (the course's sample, not LCQMC)" if data.source.is_sample else ""))
    print(data.summary())
    train_examples = data.train.examples[: args.limit_train] if args.limit_train else data.train.examples
    out = Path(args.out)
    vocab = _vocabulary(out, train_examples, resume=not args.no_resume)
    model_config, train_config = resolve_configs(args.preset, preset_overrides(args), len(vocab))
    print(f"preset {args.preset}: model {model_config.to_dict()}")
    print(f"training {train_config.to_dict()}")
    set_seed(train_config.seed)
    model = PairClassifier(model_config)
    print(f"parameters: {sum(p.numel() for p in model.parameters()):,}, vocabulary: {len(vocab)} tokens")
    try:
        result = train_pair_classifier(
            model, train_examples, data.dev.examples, vocab, train_config, test_examples=data.test.examples,
            out_dir=out, resume=not args.no_resume, device=args.device, progress=not args.no_progress,
            model_config=model_config.to_dict(),
        )
    except KeyboardInterrupt:
        print(f"interrupted; run the same command again to resume from {out / CHECKPOINT_NAME}")
        return 130
    _write_predictions(out, result, data)
    _print_summary(out, result)
    from lessons_lib.cli.data_commands import print_baseline_comparison

    print_baseline_comparison(train_examples, data.dev.examples, data.test.examples, result)
    return 0


def _vocabulary(out, train_examples, resume: bool):
    """The vocabulary of a resumed run (checked against its checkpoint), else one built from the training pairs."""
    from lessons_lib.pairs.runs import CHECKPOINT_NAME, VOCAB_NAME, load_checkpoint
    from lessons_lib.pairs.vocab import Vocabulary

    if resume and (out / CHECKPOINT_NAME).is_file():
        vocab = Vocabulary.load(out / VOCAB_NAME)
        load_checkpoint(out / CHECKPOINT_NAME, vocab)
        return vocab
    return Vocabulary.build(t for ex in train_examples for t in (ex.text_a, ex.text_b))


def _write_predictions(out, result, data) -> None:
    import json

    from lessons_lib.pairs.runs import PREDICTIONS_NAME

    saved = {"dev": {"predictions": result.dev.predictions, "labels": [ex.label for ex in data.dev.examples]}}
    if result.test is not None:
        saved["test"] = {"predictions": result.test.predictions, "labels": [ex.label for ex in data.test.examples]}
    (out / PREDICTIONS_NAME).write_text(json.dumps(saved) + "\n", encoding="utf-8")


def _print_summary(out, result) -> None:
    from lessons_lib.pairs.runs import METRICS_NAME
    from lessons_lib.pairs.trainer import best_dev_epoch

    test_text = "" if result.test is None else f", test accuracy {result.test.accuracy:.4f} (F1 {result.test.f1:.4f})"
    print(f"final: dev accuracy {result.dev.accuracy:.4f} (F1 {result.dev.f1:.4f}){test_text}")
    best = result.history[best_dev_epoch(result.history) - 1]
    best_test = "" if best.test is None else f", test accuracy {best.test['accuracy']:.4f}"
    print(f"best dev epoch {best.epoch}: dev accuracy {best.dev['accuracy']:.4f}{best_test}")
    print(f"metrics: {out / METRICS_NAME}")


def run_compare(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from lessons_lib.errors import CourseInputError
    from lessons_lib.pairs.metrics import mcnemar_exact

    runs = []
    for run in (args.run_a, args.run_b):
        path = Path(run) / "predictions.json"
        if not path.is_file():
            raise CourseInputError(f"no predictions.json in {run}: finish a `lessons train` run there first")
        saved = json.loads(path.read_text(encoding="utf-8"))
        if args.split not in saved:
            raise CourseInputError(f"{path} holds no {args.split} predictions")
        runs.append(saved[args.split])
    if runs[0]["labels"] != runs[1]["labels"]:
        raise CourseInputError(f"the two runs were evaluated on different {args.split} sets (their labels differ)")
    result = mcnemar_exact(runs[0]["predictions"], runs[1]["predictions"], runs[0]["labels"])
    print(f"{args.split}: A right & B wrong: {result.only_a}, B right & A wrong: {result.only_b}, "
          f"exact McNemar p = {result.p_value:.4g}")
    return 0
