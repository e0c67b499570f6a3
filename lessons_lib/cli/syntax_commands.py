"""``lessons build-treebank``, ``lessons train-parser`` and ``lessons preparse``.

- ``build-treebank`` regenerates the template part of the course's question treebank
  (deterministic) from :mod:`lessons_lib.syntax.question_grammar`.
- ``train-parser`` trains the course's spaCy parser on the course treebank and the CC BY-SA
  UD files, saves it to ``data/parser/zh_course_parser`` and prints UAS/LAS on gold words
  and under jieba segmentation, on the Beginner evaluation file and the held-out tenth.
- ``preparse`` parses the sentences of an LCQMC-format folder into the parse cache: every one, or
  with ``--train-fraction`` / ``--subset-seed`` only those ``lessons experiment`` reads with the same flags.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from lessons_lib.cli.options import add_force_argument, flag_names
from lessons_lib.errors import CourseInputError
from lessons_lib.validation import check_int, check_not_a_file, check_not_a_folder


def register(subparsers: argparse._SubParsersAction) -> None:
    from lessons_lib.syntax.cache import PARSE_BATCH_SIZE
    from lessons_lib.syntax.parser_training import CONFIG_FILE, DEFAULT_UD_DIR, MODEL_NAME

    p = subparsers.add_parser("build-treebank", help="regenerate the template part of the course treebank")
    p.add_argument("--per-frame", type=int, default=60, help="sentences per grammar frame (default 60)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(handler=run_build_treebank)

    p = subparsers.add_parser("train-parser", help="train and evaluate the course's spaCy parser (CPU)")
    p.add_argument("--ud-dir", type=Path, default=DEFAULT_UD_DIR,
                   help="folder with the UD Chinese CoNLL-U files (default ../shared/data/ud)")
    p.add_argument("--output", type=Path, default=None, help="where to save the pipeline (default data/parser/zh_course_parser)")
    p.add_argument("--work-dir", type=Path, default=None, help="keep DocBins and spaCy checkpoints here")
    p.add_argument("--config", type=Path, default=CONFIG_FILE,
                   help="spaCy training config (default data/parser/parser_config.cfg; the smaller, faster "
                        "one is data/parser/parser_config_small.cfg)")
    p.add_argument("--name", default=MODEL_NAME,
                   help=f"the pipeline's name, which keys its parses in the parse cache (default {MODEL_NAME})")
    p.add_argument("--max-epochs", type=int, default=None, help="override the config's epochs")
    p.add_argument("--no-templates", action="store_true", help="leave out the template-generated treebank")
    p.add_argument("--templates-per-frame", type=int, default=15,
                   help="train on at most N template sentences per grammar frame (default 15; 0 = all)")
    p.add_argument("--select", choices=("last", "best"), default="last",
                   help="ship the last epoch's model (default) or the best dev checkpoint")
    p.add_argument("--no-course", action="store_true", help="leave out the whole course treebank")
    p.add_argument("--no-ud", action="store_true", help="leave out the UD treebanks")
    p.add_argument("--scores", type=Path, default=None, help="write the scores as JSON here (default data/parser/scores.json for the shipped model)")
    add_force_argument(p, "--output and --scores")
    p.set_defaults(handler=run_train_parser)

    p = subparsers.add_parser("preparse", help="parse an LCQMC-format folder into the parse cache")
    p.add_argument("--data-dir", type=Path, required=True, help="folder with train/dev/test .txt or .tsv files")
    p.add_argument("--cache-dir", type=Path, default=None, help="parse cache folder (default data/cache/parses)")
    p.add_argument("--parser", default=None, help="spaCy pipeline name or folder (default: official if installed, else the course's)")
    p.add_argument("--train-fraction", type=float, default=1.0,
                   help="parse only this share of the training split (the subset `lessons experiment` draws with the "
                        "same --train-fraction and --subset-seed), plus dev and test (default 1: everything)")
    p.add_argument("--subset-seed", type=int, default=0, help="which training subset (default 0, as lessons experiment)")
    p.add_argument("--batch-size", type=int, default=PARSE_BATCH_SIZE,
                   help=f"sentences per parser batch and cache write (default {PARSE_BATCH_SIZE})")
    p.add_argument("--n-process", type=int, default=1,
                   help="parser worker processes (default 1: on a busy 2-core machine 2 were slower; try 2 on idle cores)")
    p.add_argument("--limit", type=int, default=None, help="parse only the first N distinct sentences")
    p.set_defaults(handler=run_preparse, interrupted=_preparse_interrupted)


def run_build_treebank(args: argparse.Namespace) -> int:
    from lessons_lib.syntax.question_grammar import generate
    from lessons_lib.syntax.parser_training import HANDWRITTEN_FILE, TEMPLATE_FILE
    from lessons_lib.syntax.treebank import read_conllu, write_conllu

    check_int(args.per_frame, "--per-frame")
    check_int(args.seed, "--seed", minimum=0)
    hand = read_conllu(HANDWRITTEN_FILE)
    sentences, report = generate(per_frame=args.per_frame, seed=args.seed, exclude=[s.text for s in hand])
    write_conllu(sentences, TEMPLATE_FILE)
    print(f"{report.kept} template sentences written to {TEMPLATE_FILE.name} "
          f"({report.generated} generated, {report.rejected_segmentation} rejected because jieba "
          f"segments them differently, {report.excluded} skipped as hand-written duplicates)")
    return 0


def run_train_parser(args: argparse.Namespace) -> int:
    from lessons_lib import paths
    from lessons_lib.files import check_output_file
    from lessons_lib.syntax.parser_training import (COMMITTED_SCORES, SCORES_FILE, SCORES_KIND, check_parser_output,
                                                    save_scores, train_parser)

    if not args.ud_dir.is_dir():
        raise CourseInputError(f"UD folder not found: {args.ud_dir} (give it with --ud-dir)")
    if args.max_epochs is not None:
        check_int(args.max_epochs, "--max-epochs")
    check_int(args.templates_per_frame, "--templates-per-frame", minimum=0)
    for flag, folder in (("--output", args.output), ("--work-dir", args.work_dir)):
        if folder is not None:
            check_not_a_file(folder, flag)
    if args.scores is not None:
        check_not_a_folder(args.scores, "--scores")
        committed = args.scores.resolve() in [p.resolve() for p in COMMITTED_SCORES]
        check_output_file(args.scores, "--scores", kind=SCORES_KIND, force=args.force or committed)
    output = check_parser_output(args.output or paths.PARSER_MODEL_DIR, args.force)  # before hours of training
    run = train_parser(ud_dir=args.ud_dir, output=output, work_dir=args.work_dir, config=args.config,
                       model_name=args.name, max_epochs=args.max_epochs,
                       use_course=not args.no_course, use_templates=not args.no_templates, use_ud=not args.no_ud,
                       templates_per_frame=args.templates_per_frame or None, select=args.select, force=args.force)
    print(f"trained in {run.seconds:.0f} s; model {run.model_bytes / 1e6:.2f} MB at {run.output}")
    print(f"{'evaluation set':28} {'seg':6} {'UAS':>6} {'LAS':>6} {'n':>6}")
    for name, by_seg in run.scores.items():
        for seg, s in by_seg.items():
            print(f"{name:28} {seg:6} {s['uas']:6.1f} {s['las']:6.1f} {s['sentences']:6d}")
    print("best UAS any parser can reach on jieba's words (oracle, spaCy's aligned scoring):",
          ", ".join(f"{name} {value:.1f}" for name, value in run.jieba_ceilings.items()))
    scores_path = args.scores or (SCORES_FILE if args.output is None else None)
    if scores_path is not None:
        save_scores(run, scores_path)
        print(f"scores written to {scores_path}")
    return 0


def _preparse_interrupted(args: argparse.Namespace) -> str:
    from lessons_lib.syntax.cache import DEFAULT_CACHE_DIR

    return (f"the sentences parsed so far are kept in the parse cache {args.cache_dir or DEFAULT_CACHE_DIR}: "
            "run the same command again to parse the rest")


def run_preparse(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from tqdm import tqdm

    from lessons_lib.syntax.cache import DEFAULT_CACHE_DIR, ParseCache, lcqmc_sentences, parse_with_cache
    from lessons_lib.syntax.parser import load_parser, parser_identity

    check_int(args.batch_size, "--batch-size")
    check_int(args.n_process, "--n-process")
    check_int(args.subset_seed, "--subset-seed", minimum=0)
    if args.limit is not None:
        check_int(args.limit, "--limit")
    cache_dir = args.cache_dir or DEFAULT_CACHE_DIR
    check_not_a_file(cache_dir, "--cache-dir")
    with flag_names(["train_fraction"]):
        texts, counts = lcqmc_sentences(args.data_dir, args.train_fraction, args.subset_seed)
    if args.limit is not None:
        texts = texts[: args.limit]
    nlp = load_parser(args.parser)
    name, version = parser_identity(nlp)
    cache = ParseCache(cache_dir, name, version)
    print(f"{len(texts)} distinct sentences to parse or read from {counts}; parser {name} {version}; cache {cache.path}")
    start = time.perf_counter()
    with cache, tqdm(total=len(texts), unit="sent") as bar:
        _, stats = parse_with_cache(texts, nlp, cache, batch_size=args.batch_size, progress=bar.update,
                                    n_process=args.n_process)
    seconds = time.perf_counter() - start
    print(json.dumps({**asdict(stats), "seconds": round(seconds, 1)}))
    return 0
