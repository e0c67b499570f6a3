"""The ``lessons`` console command.

Each command group lives in its own module of this package and exposes
``register(subparsers)``; :data:`COMMAND_MODULES` lists them. Heavy imports (torch,
spaCy, nbclient) happen inside the command handlers, so ``lessons --help`` stays fast.

One error path: a :class:`~lessons_lib.errors.CourseInputError` raised anywhere in a
command (bad data, a bad option, a mismatched checkpoint) ends the command with one line
``error: …`` on stderr and exit status 2; any other exception is a bug and keeps its traceback.
Ctrl-C ends any command with one line ``interrupted; …`` and exit status 130: a command that
registers ``interrupted=function(args)`` with ``set_defaults`` says there what it left behind.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import textwrap
import threading
from pathlib import Path
from typing import Iterator

from lessons_lib.errors import CourseInputError

COMMAND_MODULES = (
    "lessons_lib.cli.notebook_commands",
    "lessons_lib.cli.env_commands",
    "lessons_lib.cli.lcqmc_commands",
    "lessons_lib.cli.data_commands",
    "lessons_lib.cli.translation_commands",
    "lessons_lib.cli.syntax_commands",
    "lessons_lib.cli.assignment_commands",
    "lessons_lib.cli.experiment_commands",
    "lessons_lib.cli.study_commands",
)

# Who each command is for: `lessons --help` lists the commands under these headings, in this order.
AUDIENCES = {
    "for learners": ("workspace", "check-env", "execute"),
    "for teachers": ("student", "grade", "nbgrader-course", "site"),
    "to measure and read results": ("train", "compare", "baseline", "data-stats", "experiment", "grid", "study",
                                    "tatoeba-split", "translate", "translation-pilot",
                                    "translation-study"),
    "for maintainers (the course's own data and parser)": ("build-sample", "build-treebank", "train-parser",
                                                            "preparse", "build-translation-corpus"),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="lessons",
        usage="lessons [-h] COMMAND ...",
        description="Companion command of the course 'attention, from dot products to\nsyntax-biased Transformers'.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, prog="lessons")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    parser.epilog = _commands_by_audience(subparsers)
    subparsers.help = argparse.SUPPRESS  # listed once, in the epilog's groups
    return parser


def _commands_by_audience(subparsers: argparse._SubParsersAction) -> str:
    """The commands' one-line helps under the headings of :data:`AUDIENCES`."""
    # argparse keeps each command's help only on these pseudo-actions (the same since Python 2.7)
    helps = {action.dest: action.help or "" for action in subparsers._choices_actions}
    grouped = [name for names in AUDIENCES.values() for name in names]
    if sorted(grouped) != sorted(helps):
        raise AssertionError(f"AUDIENCES and the registered commands differ: {sorted(set(grouped) ^ set(helps))}")
    width = max(map(len, helps)) + 2
    blocks = []
    for heading, names in AUDIENCES.items():
        lines = [f"commands {heading}:"]
        for name in names:
            wrapped = textwrap.wrap(helps[name], 78 - width - 2) or [""]
            lines.append(f"  {name:<{width}}{wrapped[0]}")
            lines += [f"  {'':<{width}}{more}" for more in wrapped[1:]]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n\n`lessons COMMAND --help` describes a command's options."


def _check_encodable(args: argparse.Namespace) -> None:
    """Refuse, before any work, an argument with bytes that are not UTF-8 (a file name from another system).

    Python keeps such bytes as lone surrogates, which every file the course writes (JSON,
    notebooks) would refuse later, after the work was done.
    """
    for name, value in vars(args).items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (str, Path)) and any("\udc80" <= ch <= "\udcff" for ch in str(item)):
                raise CourseInputError(f"--{name.replace('_', '-')} {str(item)!r} holds bytes that are not UTF-8 "
                                       f"(shown as \\udcXX): rename the file or folder, or choose another")


@contextlib.contextmanager
def _noting_interrupts(interrupted: list[bool]) -> Iterator[None]:
    """Record a Ctrl-C (SIGINT) in ``interrupted``, then raise ``KeyboardInterrupt`` as Python does.

    A Ctrl-C inside an asyncio loop (nbclient's) surfaces as ``CancelledError``; the record
    lets :func:`main` still end with one line.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        interrupted.append(True)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _option_names(parser: argparse.ArgumentParser, command: str) -> list[str]:
    """The options of ``command`` whose flag spells the option's name (``data_dir`` is ``--data-dir``)."""
    from lessons_lib.cli.options import flag

    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [action.dest for action in subparsers.choices[command]._actions if flag(action.dest) in action.option_strings]


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse ``argv`` and run the chosen command; returns the exit status.

    An error that names an option as the library spells it (```data_dir```, ``EncoderConfig.d_model``)
    is shown with the flag the user types (``--data-dir``, ``--d-model``).
    """
    from lessons_lib.cli.options import flag_names

    parser = build_parser()
    args = parser.parse_args(argv)
    args.command_line = ["lessons", *(sys.argv[1:] if argv is None else argv)]  # recorded in results files
    interrupted: list[bool] = []
    try:
        _check_encodable(args)
        with _noting_interrupts(interrupted), flag_names(_option_names(parser, args.command)):
            return int(args.handler(args) or 0)
    except CourseInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BaseException as error:
        if not (isinstance(error, KeyboardInterrupt) or interrupted):
            raise
        hint = getattr(args, "interrupted", None)
        print("interrupted; " + (hint(args) if hint else "nothing the command wrote is half-written"))
        return 130


if __name__ == "__main__":
    sys.exit(main())
