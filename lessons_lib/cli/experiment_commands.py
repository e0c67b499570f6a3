"""``lessons experiment``: the syntax-bias ablation on an LCQMC-format folder, written as one JSON.

It reads the three splits (or, with ``--control attachment``, generates the course's
positive control: one string, two trees, the label only in the tree), parses the sentences
it uses through the parse cache (once; later runs read the cache; the control brings its
gold trees), trains each variant once per seed with the same seeds, and writes
dev/test accuracy per variant and seed, their spread, the exact McNemar test of every
variant against the baseline (same seed, test split) and the learned bias per bucket.
Each run checkpoints every epoch under ``--work-dir``, so an interrupted experiment
resumes where it stopped when started again with the same options. The variants and
their flags come from :data:`lessons_lib.syntax_bias.registry.VARIANTS`.
"""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path
from typing import Any

from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.cli.options import (add_bias_arguments, add_config_arguments, add_expect_argument, add_force_argument,
                                     add_preset_arguments, add_syntax_model_arguments, bias_overrides, config_arguments,
                                     flag_names, preset_overrides, syntax_model_overrides)
from lessons_lib.syntax_bias.registry import VARIANTS

# The command's default depth: one block cannot use the bias (see ExperimentConfig).
DEFAULT_LAYERS = 2
# Generated tasks --control can run, and the preset each one uses unless --preset is given.
CONTROLS = {"attachment": "control"}
DEFAULT_PRESET = "textbook"
# The fields of ExperimentConfig that are one flag each, named, typed, documented and defaulted by the
# dataclass itself; its other fields take flags of their own: --variants and --seeds (lists), --preset,
# and the model, training, variant and syntax-model options (dictionaries of those flags).
OWN_FLAGS = ("train_fraction", "subset_seed", "parser_noise", "scramble_words", "noise_seed", "max_distance",
             "log_buckets", "epoch_choice")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "experiment", help="train the syntax-bias variants with the same seeds and write one JSON of results",
        description=__doc__.splitlines()[0],
        epilog=f"Here --n-layers defaults to {DEFAULT_LAYERS}, not the preset's: one block cannot use the bias.",
    )
    p.add_argument("--data-dir", type=Path, default=None,
                   help="folder with train/dev/test (.txt or .tsv); default $LCQMC_DIR, else the shipped sample")
    p.add_argument("--control", choices=sorted(CONTROLS), default=None,
                   help="instead of --data-dir: the course's generated positive control 'attachment' (V N1 的 N2 "
                        "questions whose reading is only in the gold tree; 1500/300/1000 pairs; lesson 08)")
    p.add_argument("--control-trees", choices=("gold", "parser"), default=None,
                   help="with --control: its gold trees (default) or the trees of --parser")
    p.add_argument("--control-seed", type=int, default=None, help="with --control: the generation seed (default 0)")
    p.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    add_force_argument(p, "--out")
    p.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=None,
                   help="; ".join(f"{v.name}: {v.description}" for v in VARIANTS.values())
                        + f" (default: {_default_list('variants')})")
    p.add_argument("--seeds", nargs="+", type=int, default=None,
                   help=f"every variant is trained once per seed (default: {_default_list('seeds')})")
    add_config_arguments(p, ExperimentConfig, None, OWN_FLAGS)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--parser", default=None, help="spaCy pipeline name or folder (default: official if installed, else the course's)")
    p.add_argument("--cache-dir", type=Path, default=None, help="parse cache folder (default data/cache/parses)")
    p.add_argument("--work-dir", type=Path, default=None, help="checkpoints of every run (default: next to --out)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: torch's choice; 1 is often faster on a busy shared machine)")
    p.add_argument("--workers", type=int, default=1,
                   help="runs trained at once, each in its own process with --threads threads (default 1); "
                        "the results do not depend on it")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_preset_arguments(p, default_preset=None,
                         default_help=f"{DEFAULT_PRESET}; with --control: " + ", ".join(
                             f"{name} → {preset}" for name, preset in CONTROLS.items()))
    add_bias_arguments(p)
    add_syntax_model_arguments(p)
    p.set_defaults(handler=run_experiment_command, interrupted=interrupted_hint)

    g = subparsers.add_parser(
        "grid", help="read several `lessons experiment` files of the same pairs: per arm, per seed against the "
                     "baseline, and the contrasts that decide whether a gain is the tree's",
        description="Print the grid of several `lessons experiment` files (lessons_lib.ablation.grid).",
    )
    g.add_argument("results", nargs="+", type=Path,
                   help="JSON files written by `lessons experiment`, or folders of them (their *.json, sorted)")
    add_expect_argument(g)
    g.add_argument("--per-seed", action="store_true",
                   help="every contrast seed by seed with its exact McNemar test, instead of the compact tables")
    g.set_defaults(handler=run_grid_command)


def _default_list(name: str) -> str:
    """The default of the list field ``name`` of :class:`ExperimentConfig`, as the flag would take it
    (read from the field: building a config at start-up would import torch for its bucket scheme)."""
    spec = next(spec for spec in fields(ExperimentConfig) if spec.name == name)
    assert callable(spec.default_factory)  # a list field's default is a factory
    return " ".join(map(str, spec.default_factory()))


def run_grid_command(args: argparse.Namespace) -> int:
    from lessons_lib.errors import CourseInputError
    from lessons_lib.pairs.data import LCQMC_SHA256
    from lessons_lib.ablation.grid import load_grid
    from lessons_lib.ablation.results import results_paths

    paths: list[Path] = []
    for given in args.results:
        found = results_paths(given) if given.is_dir() else [given]
        if not found:
            raise CourseInputError(f"{given}: a folder without results files (*.json)")
        paths += found
    grid = load_grid(paths, LCQMC_SHA256 if args.expect == "lcqmc" else None)
    print(grid.format() if args.per_seed else grid.format_table())
    return 0


def config_from_args(args: argparse.Namespace) -> ExperimentConfig:
    """The :class:`~lessons_lib.ablation.config.ExperimentConfig` the flags describe (a flag not given
    leaves the dataclass's default)."""
    from lessons_lib.pairs.config import MODEL_OPTIONS

    overrides = preset_overrides(args)
    model = {"n_layers": DEFAULT_LAYERS, **{k: v for k, v in overrides.items() if k in MODEL_OPTIONS}}
    train = {k: v for k, v in overrides.items() if k not in MODEL_OPTIONS}
    preset = args.preset or (CONTROLS[args.control] if args.control else DEFAULT_PRESET)
    lists: dict[str, Any] = {name: list(getattr(args, name)) for name in ("variants", "seeds")
                             if getattr(args, name) is not None}
    with flag_names(vars(args)):
        return ExperimentConfig(
            preset=preset, model=model, train=train, bias_options=bias_overrides(args),
            syntax_model=syntax_model_overrides(args), **lists, **config_arguments(args, ExperimentConfig, OWN_FLAGS),
        )


def run_experiment_command(args: argparse.Namespace) -> int:
    import torch

    from lessons_lib.errors import CourseInputError, file_errors
    from lessons_lib.files import check_output_file, file_lock, record_via
    from lessons_lib.pairs.data import resolve_data_dir
    from lessons_lib.ablation.experiment import run_experiment
    from lessons_lib.ablation.results import RESULTS_KIND, is_results_file
    from lessons_lib.validation import check_int, check_not_a_file, check_not_a_folder

    config = config_from_args(args)
    if args.threads is not None:
        torch.set_num_threads(check_int(args.threads, "--threads"))
    workers = check_int(args.workers, "--workers", minimum=1)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise CourseInputError("--device cuda was asked for but torch sees no CUDA device")
    check_not_a_folder(args.out, "--out")
    check_output_file(args.out, "--out", [] if args.control is not None else [resolve_data_dir(args.data_dir).path],
                      kind=RESULTS_KIND, force=args.force, recognise=is_results_file)
    work_dir = _work_dir(args)
    for flag, folder in (("--work-dir", work_dir), ("--cache-dir", args.cache_dir)):
        if folder is not None:
            check_not_a_file(folder, flag)
    data, parses = _data_and_parses(args, config)
    with file_errors(args.out.parent, "create the folder"):
        args.out.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(args.out):  # one experiment at a time writes this JSON (its runs lock their own folders)
        results = run_experiment(data, parses, config, device=args.device, work_dir=work_dir,
                                 progress=not args.no_progress, workers=workers)
        results.command = list(getattr(args, "command_line", []))
        record_via(args.out, results.save, RESULTS_KIND)
    print(results.format_table())
    print()
    print(results.format_without_parser())
    print(f"results written to {args.out}")
    return 0


def _work_dir(args: argparse.Namespace) -> Path:
    """Where the runs keep their checkpoints: ``--work-dir``, else ``<out stem>_runs`` next to ``--out``."""
    return args.work_dir or args.out.with_name(args.out.stem + "_runs")


def interrupted_hint(args: argparse.Namespace) -> str:
    """What an interrupted experiment leaves behind, and how to go on."""
    return (f"every finished epoch of every run is checkpointed under {_work_dir(args)} and {args.out} is "
            "unchanged: run the same command again to resume")


def _data_and_parses(args: argparse.Namespace, config):
    """The splits and the trees the experiment reads: a data folder parsed by the parser, or a generated control."""
    from lessons_lib.errors import CourseInputError
    from lessons_lib.pairs.data import load_lcqmc
    from lessons_lib.syntax.attachment_control import make_attachment_control
    from lessons_lib.ablation.experiment import parse_corpus

    progress = not args.no_progress
    if args.control is None:
        if args.control_trees is not None or args.control_seed is not None:
            raise CourseInputError("--control-trees and --control-seed need --control")
        data = load_lcqmc(args.data_dir)
        print(f"data: {data.source.origin} ({data.source.path}); train {len(data.train)}, dev {len(data.dev)}, "
              f"test {len(data.test)} pairs")
        return data, parse_corpus(data, args.parser, args.cache_dir, progress=progress, config=config)
    if args.data_dir is not None:
        raise CourseInputError("--control and --data-dir exclude each other: the control generates its own pairs")
    seed = 0 if args.control_seed is None else args.control_seed
    if seed < 0:
        raise CourseInputError(f"--control-seed must be ≥ 0, got {seed}")
    task = make_attachment_control(seed=seed)
    data = task.as_data()
    print(f"data: {data.source.describe()}; train {len(data.train)}, dev {len(data.dev)}, test {len(data.test)} pairs, "
          f"{args.control_trees or 'gold'} trees")
    if args.control_trees == "parser":
        return data, parse_corpus(data, args.parser, args.cache_dir, progress=progress, config=config)
    return data, task.parses
