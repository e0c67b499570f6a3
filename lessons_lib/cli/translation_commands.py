"""``lessons build-translation-corpus``: write the course's Chinese→English corpus with its gold trees.

``lessons build-translation-corpus --out-dir DIR`` writes ``train.tsv``, ``dev.tsv``,
``test.tsv``, ``trees.conllu`` and ``README.md`` (:mod:`lessons_lib.translation.course_corpus`);
without ``--out-dir`` it rebuilds the shipped ``data/translation_corpus``. Like
``lessons build-sample``, it replaces only files it wrote there itself (``--force`` for others).
"""

from __future__ import annotations

import argparse

from lessons_lib.cli.options import add_force_argument


def register(subparsers: argparse._SubParsersAction) -> None:
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
    from lessons_lib.paths import TRANSLATION_CORPUS_DIR
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
