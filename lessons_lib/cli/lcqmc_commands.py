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

from lessons_lib.presets import PRESETS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("build-sample", help="rebuild data/lcqmc_sample from its question groups")
    p.add_argument("--source", default=None, help="question-group file (default: the shipped source)")
    p.add_argument("--out-dir", default=None, help="output folder (default: data/lcqmc_sample)")
    p.add_argument("--seed", type=int, default=20240601)
    p.set_defaults(handler=run_build_sample)

    p = subparsers.add_parser("train", help="train and evaluate a pair classifier on LCQMC-format data")
    p.add_argument("--preset", default="textbook", choices=sorted(PRESETS),
                   help="named recipe; the options below override its values")
    p.add_argument("--data-dir", default=None, help="folder with train/dev/test files (default: $LCQMC_DIR, else the sample)")
    p.add_argument("--out", required=True, help="output folder (checkpoint, metrics.json, vocab.json)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--lenient", action="store_true", help="skip malformed lines (they are listed) instead of stopping")
    p.add_argument("--no-resume", action="store_true", help="start afresh even if --out holds a checkpoint")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--limit-train", type=int, default=None, help="use only the first N training pairs (smoke tests)")
    for name, kind in (("epochs", int), ("batch-size", int), ("lr", float), ("warmup-ratio", float),
                       ("weight-decay", float), ("clip-norm", float), ("seed", int), ("max-len", int),
                       ("swap-probability", float)):
        p.add_argument(f"--{name}", type=kind, default=None, help="override the preset's value")
    p.add_argument("--schedule", choices=("constant", "linear"), default=None, help="override the preset's value")
    for name, kind in (("d-model", int), ("n-heads", int), ("n-layers", int), ("d-ff", int), ("dropout", float)):
        p.add_argument(f"--{name}", type=kind, default=None, help="override the preset's model value")
    p.add_argument("--norm", choices=("post", "pre"), default=None, help="Post-LN or Pre-LN blocks")
    p.set_defaults(handler=run_train)

    p = subparsers.add_parser("compare", help="exact McNemar test between two runs' test predictions")
    p.add_argument("run_a", help="output folder of a `lessons train` run")
    p.add_argument("run_b", help="output folder of another run on the same data")
    p.add_argument("--split", choices=("dev", "test"), default="test")
    p.set_defaults(handler=run_compare)


def run_build_sample(args: argparse.Namespace) -> int:
    from lessons_lib.sample_builder import LCQMC_SAMPLE_DIR, SOURCE_FILE, build_sample

    stats = build_sample(args.source or SOURCE_FILE, args.out_dir or LCQMC_SAMPLE_DIR, seed=args.seed)
    print(stats.report())
    return 0


def _configs(args: argparse.Namespace, vocab_size: int):
    from dataclasses import replace

    from lessons_lib.pair_classifier import PairClassifierConfig

    preset = PRESETS[args.preset]
    train_overrides = {
        field: getattr(args, field)
        for field in ("epochs", "batch_size", "lr", "warmup_ratio", "weight_decay", "clip_norm", "seed",
                      "max_len", "swap_probability", "schedule")
        if getattr(args, field) is not None
    }
    model_options = dict(preset.model)
    for field in ("d_model", "n_heads", "n_layers", "d_ff", "dropout"):
        if getattr(args, field) is not None:
            model_options[field] = getattr(args, field)
    if args.norm is not None:
        model_options["norm_first"] = args.norm == "pre"
    train_config = replace(preset.train, **train_overrides)
    model_options["max_len"] = max(model_options.get("max_len", 128), train_config.max_len)
    return PairClassifierConfig(vocab_size=vocab_size, **model_options), train_config


def run_train(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    import torch

    from lessons_lib.errors import CourseInputError
    from lessons_lib.lcqmc import load_lcqmc
    from lessons_lib.pair_classifier import PairClassifier
    from lessons_lib.reproducibility import set_seed
    from lessons_lib.training import CHECKPOINT_NAME, best_dev_epoch, load_checkpoint, train_pair_classifier
    from lessons_lib.vocab import Vocabulary

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    try:
        data = load_lcqmc(args.data_dir, lenient=args.lenient)
    except CourseInputError as error:
        print(f"error: {error}")
        return 2
    print(f"data: {data.source.origin} -> {data.source.path}" + (" (the course's sample, not LCQMC)" if data.source.is_sample else ""))
    print(data.summary())
    train_examples = data.train.examples[: args.limit_train] if args.limit_train else data.train.examples
    out = Path(args.out)
    checkpoint_path = out / CHECKPOINT_NAME
    resume = not args.no_resume and checkpoint_path.is_file()
    if resume:  # the checkpoint's vocabulary, checked against the file next to it
        vocab = Vocabulary.load(out / "vocab.json")
        load_checkpoint(checkpoint_path, vocab)
    else:
        vocab = Vocabulary.build(t for ex in train_examples for t in (ex.text_a, ex.text_b))
    model_config, train_config = _configs(args, len(vocab))
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
        print(f"interrupted; run the same command again to resume from {checkpoint_path}")
        return 130
    except CourseInputError as error:
        print(f"error: {error}")
        return 2
    saved = {"dev": {"predictions": result.dev.predictions, "labels": [ex.label for ex in data.dev.examples]}}
    if result.test is not None:
        saved["test"] = {"predictions": result.test.predictions, "labels": [ex.label for ex in data.test.examples]}
    (out / "predictions.json").write_text(json.dumps(saved) + "\n", encoding="utf-8")
    test_text = "" if result.test is None else f", test accuracy {result.test.accuracy:.4f} (F1 {result.test.f1:.4f})"
    print(f"final: dev accuracy {result.dev.accuracy:.4f} (F1 {result.dev.f1:.4f}){test_text}")
    best = result.history[best_dev_epoch(result.history) - 1]
    best_test = "" if best.test is None else f", test accuracy {best.test['accuracy']:.4f}"
    print(f"best dev epoch {best.epoch}: dev accuracy {best.dev['accuracy']:.4f}{best_test}")
    print(f"metrics: {out / 'metrics.json'}")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from lessons_lib.errors import CourseInputError
    from lessons_lib.training import mcnemar_exact

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
