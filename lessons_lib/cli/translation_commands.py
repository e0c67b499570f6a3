"""``lessons tatoeba-split``: Tatoeba's Chinese–English pairs as a folder of translation pairs, outside the repository.

``lessons tatoeba-split --source /path/to/cmn.txt --out-dir /path/outside/the/repo`` reads the
file (or the one ``$TATOEBA_FILE`` names), checks its SHA-256, converts the Chinese to
simplified characters and writes train/dev/test.tsv in the format of
:mod:`lessons_lib.translation.pairs_folder`, no sentence in two splits
(:mod:`lessons_lib.translation.tatoeba`). Both paths must lie outside the course's repository:
the sentences are Tatoeba's, and only numbers about them are ever committed. It prints what it
read, left out, converted and wrote (counts only, never a sentence).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from lessons_lib.cli.options import add_force_argument
from lessons_lib.errors import CourseInputError
from lessons_lib.paths import TATOEBA_ENV_VAR


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("tatoeba-split", help="Tatoeba's Chinese–English pairs (cmn.txt, checked by SHA-256) "
                                                    "as train/dev/test pairs files, no sentence in two splits")
    p.add_argument("--source", default=None, help=f"the Tatoeba cmn.txt, outside the repository (default: ${TATOEBA_ENV_VAR})")
    p.add_argument("--out-dir", required=True, help="output folder, outside the repository")
    add_force_argument(p, "--out-dir")
    p.add_argument("--seed", type=int, default=None, help="seed of the components' order (default: the module's DEFAULT_SEED)")
    p.set_defaults(handler=run_tatoeba_split)


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
