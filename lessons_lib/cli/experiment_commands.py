"""``lessons experiment``: the syntax-bias ablation on an LCQMC-format folder, written as one JSON.

It reads the three splits, parses every sentence through the parse cache (once; later
runs read the cache), trains each variant once per seed with the same seeds, and writes
dev/test accuracy per variant and seed, their spread, the exact McNemar test of every
variant against the baseline (same seed, test split) and the learned bias per bucket.
Each run checkpoints every epoch under ``--work-dir``, so an interrupted experiment
resumes where it stopped when started again with the same options.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    from lessons_lib.presets import SYNTAX_BIAS_VARIANTS as VARIANTS

    p = subparsers.add_parser(
        "experiment", help="train the syntax-bias variants with the same seeds and write one JSON of results",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("--data-dir", type=Path, default=None,
                   help="folder with train/dev/test (.txt or .tsv); default $LCQMC_DIR, else the shipped sample")
    p.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    p.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--train-fraction", type=float, default=1.0, help="share of the training split (low-resource runs)")
    p.add_argument("--subset-seed", type=int, default=0, help="which training subset (same for every run)")
    p.add_argument("--parser-noise", type=float, default=0.0,
                   help="probability of re-attaching each non-root word to a random head (default 0)")
    p.add_argument("--noise-seed", type=int, default=0)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--preset", default="textbook", help="training recipe of lessons_lib.training.PRESETS (default textbook)")
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--warmup-ratio", type=float, default=None)
    p.add_argument("--schedule", choices=("constant", "linear"), default=None)
    p.add_argument("--d-model", type=int, default=None)
    p.add_argument("--d-ff", type=int, default=None)
    p.add_argument("--heads", type=int, default=None)
    p.add_argument("--layers", type=int, default=2, help="encoder blocks (default 2; the bias needs at least 2)")
    p.add_argument("--match-flags", action="store_true", help="mark characters found in the other question")
    p.add_argument("--max-distance", type=int, default=10, help="clamp tree distances here (default 10)")
    p.add_argument("--log-buckets", action="store_true", help="log-spaced buckets for long distances")
    p.add_argument("--per-head", action="store_true", help="learned bias: one table row per head")
    p.add_argument("--learn-scale", action="store_true", help="learned bias: a learnable global scale (init 1)")
    p.add_argument("--per-layer-tables", action="store_true", help="learned bias: one table per block")
    p.add_argument("--bias-lr-multiplier", type=float, default=1.0,
                   help="learned bias: multiply the table's learning rate (reparametrised, default 1)")
    p.add_argument("--decay", type=float, default=0.5, help="fixed_decay: bias = -decay · distance (default 0.5)")
    p.add_argument("--hard-max-distance", type=int, default=1, help="hard_mask: largest tree distance allowed (default 1)")
    p.add_argument("--parser", default=None, help="spaCy pipeline name or folder (default: official if installed, else the course's)")
    p.add_argument("--cache-dir", type=Path, default=None, help="parse cache folder (default data/cache/parses)")
    p.add_argument("--work-dir", type=Path, default=None, help="checkpoints of every run (default: next to --out)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: torch's choice; 1 is often faster on a busy shared machine)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(handler=run_experiment_command)


def _config_from_args(args: argparse.Namespace):
    from lessons_lib.experiment import ExperimentConfig

    train = {key: value for key, value in (("epochs", args.epochs), ("lr", args.lr), ("batch_size", args.batch_size),
                                           ("warmup_ratio", args.warmup_ratio), ("schedule", args.schedule))
             if value is not None}
    model = {key: value for key, value in (("d_model", args.d_model), ("d_ff", args.d_ff), ("n_heads", args.heads),
                                           ("n_layers", args.layers)) if value is not None}
    if args.match_flags:
        model["match_flags"] = True
    return ExperimentConfig(
        variants=list(args.variants), seeds=list(args.seeds), preset=args.preset, model=model, train=train,
        train_fraction=args.train_fraction, subset_seed=args.subset_seed, parser_noise=args.parser_noise,
        noise_seed=args.noise_seed, max_distance=args.max_distance, log_buckets=args.log_buckets,
        per_head=args.per_head, learn_scale=args.learn_scale, share_layers=not args.per_layer_tables,
        bias_lr_multiplier=args.bias_lr_multiplier,
        decay=args.decay, hard_max_distance=args.hard_max_distance,
    )


def format_table(results: dict) -> str:
    """A plain-text table: variant, seed, dev and test accuracy, McNemar p against the baseline."""
    p_values = {(m["variant"], m["seed"]): m["p_value"] for m in results["mcnemar"]}
    lines = [f"{'variant':<12} {'seed':>4} {'dev acc':>8} {'test acc':>9} {'McNemar p':>10}"]
    for run in results["runs"]:
        p = p_values.get((run["variant"], run["seed"]))
        lines.append(f"{run['variant']:<12} {run['seed']:>4} {run['dev_accuracy']:>8.4f} {run['test_accuracy']:>9.4f} "
                     f"{'—' if p is None else f'{p:.3f}':>10}")
    lines.append("")
    for variant, summary in results["summary"].items():
        dev, test = summary["dev_accuracy"], summary["test_accuracy"]
        lines.append(f"{variant:<12} dev {dev['mean']:.4f} ± {dev['std']:.4f}   test {test['mean']:.4f} ± {test['std']:.4f}")
    return "\n".join(lines)


def run_experiment_command(args: argparse.Namespace) -> int:
    import torch

    from lessons_lib.errors import CourseInputError
    from lessons_lib.experiment import parse_corpus, run_experiment
    from lessons_lib.lcqmc import load_lcqmc

    config = _config_from_args(args)
    if args.threads is not None:
        if args.threads < 1:
            raise CourseInputError(f"--threads must be ≥ 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise CourseInputError("--device cuda was asked for but torch sees no CUDA device")
    data = load_lcqmc(args.data_dir)
    print(f"data: {data.source.origin} ({data.source.path}); train {len(data.train)}, dev {len(data.dev)}, "
          f"test {len(data.test)} pairs")
    parses = parse_corpus(data, args.parser, args.cache_dir, progress=not args.no_progress)
    work_dir = args.work_dir or args.out.with_name(args.out.stem + "_runs")
    results = run_experiment(data, parses, config, device=args.device, work_dir=work_dir,
                             progress=not args.no_progress)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(format_table(results))
    print(f"results written to {args.out}")
    return 0
