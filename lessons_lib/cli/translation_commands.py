"""The translation commands: ``lessons build-translation-corpus`` (the course corpus), ``lessons
tatoeba-split`` (real pairs, prepared outside the repository) and ``lessons translate`` (training
translators on a folder of pairs).

``lessons build-translation-corpus --out-dir DIR`` writes ``train.tsv``, ``dev.tsv``,
``test.tsv``, ``trees.conllu`` and ``README.md`` (:mod:`lessons_lib.translation.course_corpus`);
without ``--out-dir`` it rebuilds the shipped ``data/translation_corpus``. Like
``lessons build-sample``, it replaces only files it wrote there itself (``--force`` for others).

``lessons tatoeba-split --source /path/to/cmn.txt --out-dir /path/outside/the/repo`` reads the
file (or the one ``$TATOEBA_FILE`` names), checks its SHA-256, converts the Chinese to
simplified characters and writes train/dev/test.tsv in the format of
:mod:`lessons_lib.translation.pairs_folder`, no sentence in two splits
(:mod:`lessons_lib.translation.tatoeba`). Both paths must lie outside the course's repository:
the sentences are Tatoeba's, and only numbers about them are ever committed. It prints what it
read, left out, converted and wrote (counts only, never a sentence).

``lessons translate`` trains on the course corpus (``--data-dir`` left out: the shipped
``data/translation_corpus``) or real pairs in the same format. Each (fraction, variant, trees,
seed) is one run and one JSON file in ``--out-dir``; a finished file of the same data and knobs
is kept and its run skipped, and a run saves itself after every epoch (``….checkpoint.pt``, removed
once its file is written), so an interrupted command resumes, the run it stopped in from its last
finished epoch, when started again with the same flags. The variants
come from the syntax-bias registry (those reading tree buckets); the training and model flags
from :mod:`lessons_lib.translation.config`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from lessons_lib.cli.options import (add_bias_arguments, add_config_arguments, add_force_argument, bias_overrides,
                                     config_from_arguments)
from lessons_lib.errors import CourseInputError
from lessons_lib.paths import TATOEBA_ENV_VAR, TRANSLATION_CORPUS_DIR
from lessons_lib.syntax_bias.registry import VARIANTS
from lessons_lib.translation.config import TranslationTrainConfig, TranslatorSizes

TREE_VARIANTS = sorted(name for name, entry in VARIANTS.items() if entry.buckets in (None, "tree"))
# The same as lessons_lib.translation.trees.TREE_SOURCES (written out: that module imports torch).
TREE_CHOICES = ("gold", "parser", "random", "scrambled", "sequence")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("tatoeba-split", help="Tatoeba's Chinese–English pairs (cmn.txt, checked by SHA-256) "
                                                    "as train/dev/test pairs files, no sentence in two splits")
    p.add_argument("--source", default=None, help=f"the Tatoeba cmn.txt, outside the repository (default: ${TATOEBA_ENV_VAR})")
    p.add_argument("--out-dir", required=True, help="output folder, outside the repository")
    add_force_argument(p, "--out-dir")
    p.add_argument("--seed", type=int, default=None, help="seed of the components' order (default: the module's DEFAULT_SEED)")
    p.set_defaults(handler=run_tatoeba_split)
    _register_build_corpus(subparsers)
    _register_translate(subparsers)
    _register_pilot(subparsers)
    _register_study(subparsers)


def _source(args: argparse.Namespace) -> Path:
    """``--source``, else ``$TATOEBA_FILE``; neither is one line saying how to give it."""
    if args.source not in (None, ""):
        return Path(args.source)
    from_environment = os.environ.get(TATOEBA_ENV_VAR, "")
    if not from_environment:
        raise CourseInputError(f"no Tatoeba file: give --source PATH or set {TATOEBA_ENV_VAR}")
    return Path(from_environment).expanduser()


def run_tatoeba_split(args: argparse.Namespace) -> int:
    from lessons_lib.files import check_output_folder
    from lessons_lib.translation import tatoeba
    from lessons_lib.translation.pairs_folder import SPLITS
    from lessons_lib.validation import check_int, check_not_a_file, check_outside_repository

    seed = tatoeba.DEFAULT_SEED if args.seed is None else check_int(args.seed, "--seed", minimum=0)
    source = check_outside_repository(_source(args), "--source", "Tatoeba's file")
    out_dir = check_outside_repository(check_not_a_file(args.out_dir, "--out-dir"), "--out-dir",
                                       "a split holding Tatoeba's sentences")
    names = [f"{name}.tsv" for name in SPLITS] + [tatoeba.SUMMARY_FILE]
    check_output_folder(out_dir, "--out-dir", names, kind=tatoeba.SPLIT_KIND, force=args.force)
    # Looked up at run time (not a default argument): the tests point it at their synthetic files.
    reading = tatoeba.read_tatoeba(source, expected_sha256=tatoeba.TATOEBA_SHA256)
    split = tatoeba.split_tatoeba(reading.pairs, seed=seed)
    summary = tatoeba.write_tatoeba_split(reading, split, out_dir)
    print(_report(summary, out_dir, tatoeba.SUMMARY_FILE))
    return 0


def _report(summary: dict, out_dir: Path, summary_file: str) -> str:
    """The summary's numbers, one fact a line (no sentence)."""
    opencc = summary["opencc"]
    lines = [
        f"read {summary['lines_read']:,} lines (SHA-256 {summary['source_sha256'][:12]}…, as expected)",
        f"kept {summary['pairs_kept']:,} pairs; left out {summary['left_out_repeated_ids']:,} repeating an id pair "
        f"and {summary['left_out_duplicate_texts']:,} repeating an English and a (converted) Chinese text",
        f"OpenCC {opencc['package_version']} ({opencc['config']}) changed {opencc['sentences_changed']:,} of "
        f"{opencc['chinese_sentences']:,} Chinese sentences, {opencc['characters_changed']:,} characters in all",
        f"{summary['components']:,} groups of pairs sharing a sentence (largest: {summary['largest_component']:,} pairs), "
        f"ordered with seed {summary['seed']}",
    ]
    for name, counts in summary["splits"].items():
        share = counts["pairs"] / summary["pairs_kept"]
        lines.append(f"{name:<5}: {counts['pairs']:>6,} pairs ({share:.1%}, target {summary['shares'][name]:.0%}), "
                     f"{counts['english_sentences']:,} English and {counts['chinese_sentences']:,} Chinese sentences")
    lines.append("checked on the written files: no English or Chinese sentence (text or id) is in two splits")
    lines.append(f"wrote {out_dir} (train.tsv, dev.tsv, test.tsv, {summary_file})")
    return "\n".join(lines)


def _register_build_corpus(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("build-translation-corpus",
                              help="rebuild data/translation_corpus: Chinese→English pairs whose gold tree "
                                   "decides part of the translation")
    p.add_argument("--out-dir", default=None, help="output folder (default: data/translation_corpus)")
    add_force_argument(p, "--out-dir")
    p.add_argument("--seed", type=int, default=0, help="seed of the phrase split and the draws (default 0)")
    for split, size in (("train", 4000), ("dev", 400), ("test", 800)):
        p.add_argument(f"--{split}-pairs", type=int, default=size,
                       help=f"pairs in {split}, half of them in the syntax group (default {size})")
    p.set_defaults(handler=run_build_translation_corpus)


def run_build_translation_corpus(args: argparse.Namespace) -> int:
    from lessons_lib.files import check_output_folder
    from lessons_lib.translation.course_corpus import CORPUS_FILES, CORPUS_KIND, write_course_corpus
    from lessons_lib.validation import check_int, check_not_a_file

    check_int(args.seed, "--seed", minimum=0)
    sizes = {f"n_{split}": check_int(getattr(args, f"{split}_pairs"), f"--{split}-pairs", minimum=2)
             for split in ("train", "dev", "test")}
    out_dir = check_not_a_file(args.out_dir or TRANSLATION_CORPUS_DIR, "--out-dir")
    # The course's own folder is rebuilt as it is (git keeps its committed files); any other must be its own output.
    own_folder = out_dir.resolve() == TRANSLATION_CORPUS_DIR.resolve()
    check_output_folder(out_dir, "--out-dir", CORPUS_FILES, kind=CORPUS_KIND, force=args.force or own_folder)
    corpus = write_course_corpus(out_dir, **sizes, seed=args.seed)
    for split in ("train", "dev", "test"):
        sentences = corpus.split(split)
        syntax = sum(s.group == "syntax" for s in sentences)
        print(f"{split}: {len(sentences):,} pairs ({syntax:,} syntax, {len(sentences) - syntax:,} plain)")
    print(f"written to {out_dir}")
    return 0


def _register_translate(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("translate", help="train translators (variants × trees × seeds × fractions), "
                                                "one results file per run", description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", type=Path, default=None,
                   help="a folder of translation pairs (train/dev/test.tsv, optional trees.conllu); "
                        "default: the course corpus")
    p.add_argument("--out-dir", type=Path, required=True, help="where the results files go")
    add_force_argument(p, "--out-dir")
    p.add_argument("--variants", nargs="+", choices=TREE_VARIANTS, default=["none", "learned", "hard_mask"],
                   help="the arms (default: none learned hard_mask)")
    p.add_argument("--trees", choices=TREE_CHOICES, default="gold",
                   help="where the biased arms' trees come from: the folder's gold trees, the course parser, or a "
                        "control over the gold (else the parser's) words: random trees, scrambled words with random "
                        "trees, or the words in sequence (tree distance = distance in words) (default gold)")
    p.add_argument("--seeds", nargs="+", type=int, default=[0], help="one run per seed (default 0)")
    p.add_argument("--fractions", nargs="+", type=float, default=[1.0],
                   help="shares of the training split; each seed draws its own subset (default 1.0)")
    p.add_argument("--numbers-only", action="store_true",
                   help="store each test sentence's statistics but not its translation (for data that may not be "
                        "redistributed)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    add_config_arguments(p, TranslationTrainConfig, "training")
    add_config_arguments(p, TranslatorSizes, "model sizes")
    add_bias_arguments(p)
    p.set_defaults(handler=run_translate_command)


def _register_pilot(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("translation-pilot", help="a pilot's translation runs read to size a study: cost, "
                                                        "dev-chosen epochs, the seed SD of each arm's gain, seeds needed")
    p.add_argument("folder", type=Path, help="the pilot's results files (every arm beside none, by seed)")
    p.add_argument("--effect", type=float, default=0.5, help="the smallest gain in BLEU the study must find (default 0.5)")
    p.add_argument("--family", type=int, default=1, help="contrasts in the study's Holm family (default 1)")
    p.add_argument("--confidence", type=float, default=0.8,
                   help="confidence of the SD's upper limit the study is sized at (default 0.8)")
    p.set_defaults(handler=run_translation_pilot)


def run_translation_pilot(args: argparse.Namespace) -> int:
    from lessons_lib.translation.pilot import format_pilot, pilot_fractions
    from lessons_lib.validation import check_input_dir, check_int, check_number

    check_number(args.effect, "--effect", minimum=0.0, strict_minimum=True)
    check_int(args.family, "--family", minimum=1)
    check_number(args.confidence, "--confidence", minimum=0.5, maximum=0.999)
    print(format_pilot(pilot_fractions(check_input_dir(args.folder, "results folder")), args.effect, args.family,
                       confidence=args.confidence))
    return 0


def _register_study(subparsers: argparse._SubParsersAction) -> None:
    from lessons_lib.paths import TRANSLATION_DESIGN_FILE

    p = subparsers.add_parser("translation-study", help="the translation study's runs read as its plan fixes it: the "
                                                        "curve, the primary family, A48, the 0.5–1 BLEU claim, the controls")
    p.add_argument("folder", type=Path, help="the study's results files (one per fraction, arm and seed)")
    p.add_argument("--design", type=Path, default=TRANSLATION_DESIGN_FILE,
                   help="the plan's design file (default: results/translation/design.json)")
    p.add_argument("--partial", action="store_true", help="read the runs written so far (every line then says so)")
    p.set_defaults(handler=run_translation_study)


def run_translation_study(args: argparse.Namespace) -> int:
    from lessons_lib.translation.study import format_study, load_design, load_study
    from lessons_lib.validation import check_input_dir

    design = load_design(args.design)
    print(format_study(load_study(check_input_dir(args.folder, "results folder"), design, partial=args.partial)))
    return 0


def _base_trees(args: argparse.Namespace, data, pairs, nlp) -> dict:
    """The trees every biased run starts from (parsed once per command): the parser's for ``--trees
    parser``, else the folder's gold trees, else (for a control on a folder without them) the parser's."""
    from lessons_lib.translation.trees import gold_trees, parser_trees

    import time

    if args.trees == "gold" or (args.trees != "parser" and data.trees_path is not None):
        return gold_trees(data, pairs)  # refused in one line when the folder has none
    started = time.perf_counter()
    trees = parser_trees(nlp, pairs)
    texts, seconds = len({pair.source for pair in pairs}), time.perf_counter() - started
    print(f"parsed {texts:,} distinct source sentences in {seconds:.0f} s ({texts / max(seconds, 1e-9):,.0f} a second); "
          "every tree's words spell its source")
    return trees


def _parser_if_needed(args: argparse.Namespace, data):
    """The course parser and its identity when the trees come from it, else ``(None, None)``."""
    parsed = args.trees == "parser" or (args.trees != "gold" and data.trees_path is None)
    if not parsed or args.variants == ["none"]:
        return None, None
    from lessons_lib.syntax.parser import load_parser, parser_identity

    nlp = load_parser()
    return nlp, list(parser_identity(nlp))


IDENTITY_KEYS = ("data", "train_config", "sizes", "bias_options", "parser")


def _check_same_run(path: Path, context: dict) -> None:
    """A results file kept on resuming must come from the same data and knobs as this command's runs."""
    from lessons_lib.translation.results import load_results

    record = load_results(path)
    differing = [key for key in IDENTITY_KEYS if record.get(key) != context[key]]
    if differing:
        raise CourseInputError(f"{path}: made with other {', '.join(differing)} than this command's runs; choose "
                               "another --out-dir, or add --force to replace it")


def run_translate_command(args: argparse.Namespace) -> int:
    import torch

    from lessons_lib.files import check_output_folder, folder_lock
    from lessons_lib.syntax_bias.registry import check_bias_options
    from lessons_lib.translation.pairs_folder import read_pairs_folder
    from lessons_lib.translation.results import RESULTS_KIND, results_name

    from lessons_lib.validation import check_int, check_not_a_file

    for seed in args.seeds:
        check_int(seed, "--seeds", minimum=0)
    check_not_a_file(args.out_dir, "--out-dir")
    train_config = config_from_arguments(args, TranslationTrainConfig)
    sizes = config_from_arguments(args, TranslatorSizes)
    bias = check_bias_options(bias_overrides(args))
    for fraction in args.fractions:
        if not 0.0 < fraction <= 1.0:
            raise CourseInputError(f"--fractions: {fraction:g} is not in (0, 1]")
    if args.threads is not None:
        if args.threads < 1:
            raise CourseInputError(f"--threads must be at least 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    data_dir = args.data_dir if args.data_dir is not None else TRANSLATION_CORPUS_DIR
    data = read_pairs_folder(data_dir)
    if Path(data_dir).resolve() in [args.out_dir.resolve(), *args.out_dir.resolve().parents]:
        raise CourseInputError(f"--out-dir {args.out_dir} is inside the data folder {data_dir}: choose a folder outside it")
    runs = [(fraction, variant, seed) for fraction in args.fractions for variant in args.variants for seed in args.seeds]
    names = [results_name(f, v, args.trees if v != "none" else "none", s) for f, v, s in runs]
    check_output_folder(args.out_dir, "--out-dir", names, kind=RESULTS_KIND, force=args.force)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(args.out_dir):  # one command per folder: runs of two commands never mix in it
        return _run_all(args, data, data_dir, runs, names, train_config, sizes, bias)


def _run_all(args: argparse.Namespace, data, data_dir: Path, runs: list, names: list[str], train_config, sizes,
             bias: dict) -> int:
    """Each run of the command, skipping those already written (checked to be the same run)."""
    import json

    from lessons_lib.files import record_written
    from lessons_lib.provenance import run_provenance
    from lessons_lib.syntax_bias.registry import options_for
    from lessons_lib.training.runs import clear_run_folder, shown_command
    from lessons_lib.translation.pairs_folder import pairs_sha256
    from lessons_lib.pairs.data import subsample
    from lessons_lib.translation.results import RESULTS_KIND, checkpoint_name, results_record
    from lessons_lib.translation.training import train_translator

    from lessons_lib.translation.trees import DERIVED_TREES, derived_trees

    everything = [*data.train, *data.dev, *data.test]
    nlp, parser = _parser_if_needed(args, data)
    base = None if args.variants == ["none"] else _base_trees(args, data, everything, nlp)
    context = {"command": shown_command(args.command_line), "parser": parser, "data": {"folder": Path(data_dir).name,
                                                             **{s: pairs_sha256(data.split(s)) for s in ("train", "dev", "test")}},
               "train_config": vars(train_config), "sizes": vars(sizes), "bias_options": bias,
               "provenance": run_provenance("cpu")}
    for (fraction, variant, seed), name in zip(runs, names):
        path = args.out_dir / name
        if path.exists() and not args.force:
            _check_same_run(path, context)
            print(f"{name}: already there, kept")
            continue
        trees, boundaries_kept = base, None
        if base is not None and variant != "none" and args.trees in DERIVED_TREES:
            trees, boundaries_kept = derived_trees(args.trees, base, seed)
        train = subsample(data.train, fraction, seed)
        facts = {"train_pairs": len(train), "train_subset_sha256": pairs_sha256(train)}
        checkpoint = args.out_dir / checkpoint_name(name)
        identity = {"results_file": name, "trees": args.trees, "provenance": context["provenance"], **facts,
                    **{key: context[key] for key in IDENTITY_KEYS}}
        if args.force:  # replacing the run: an interrupted one is started afresh too
            clear_run_folder(args.out_dir, [checkpoint.name])
        elif checkpoint.exists():
            print(f"{name}: resuming from {checkpoint.name}")
        run, _ = train_translator(train, data.dev, data.test, variant, seed, trees, args.trees, train_config, sizes,
                                  options_for(variant, bias), checkpoint=checkpoint, identity=identity)
        if boundaries_kept is not None:
            facts["word_boundaries_kept"] = boundaries_kept
        record = results_record(run, data.test, fraction, {**context, **facts}, args.numbers_only)
        record_written(path, json.dumps(record, ensure_ascii=False, indent=1) + "\n", kind=RESULTS_KIND)
        clear_run_folder(args.out_dir, [checkpoint.name])  # the run is finished: its file says everything
        scores = ", ".join(f"{group} {score.bleu:.2f}" for group, score in run.scores.items())
        print(f"{name}: BLEU {scores} (epoch {run.best_epoch}, {run.seconds:.0f} s)")
    return 0
