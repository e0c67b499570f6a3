"""``lessons execute``: run notebooks headless and report each one's wall time; ``lessons site``: the course as a website."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lessons_lib.cli.options import add_force_argument


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "execute",
        help="execute notebooks headless (in place, or into a folder) and report their times",
        description="Run each notebook top to bottom in a fresh python3 kernel. This is the only "
        "way committed notebook outputs are produced.",
    )
    p.add_argument("paths", nargs="*", help="notebooks or folders (default: the course's notebooks/)")
    p.add_argument("--output-dir", type=Path, help="write executed copies here instead of in place")
    add_force_argument(p, "--output-dir")
    p.add_argument("-p", "--param", action="append", metavar="NAME=VALUE",
                   help="set a value of the notebook's `parameters` cell (needs --output-dir); repeatable")
    p.add_argument("--timeout", type=int, default=900, help="seconds allowed per cell (default 900)")
    p.set_defaults(handler=run_execute)

    p = subparsers.add_parser(
        "site",
        help="build the course's static website from the committed notebooks (nothing is executed)",
        description="Write the course as a static website: the lessons in course order with their committed "
        "outputs, the exercises with their answers folded, the glossary, the data cards and a search page. "
        "It needs no network and loads nothing from another host; publish the folder as it is (GitHub Pages, "
        "or `python -m http.server` in it).",
    )
    p.add_argument("--out", type=Path, default=Path("site"), help="the folder to write (default: site/)")
    add_force_argument(p, "--out")
    p.add_argument("--repo-url", help="the course repository's address, shown on the home page and in each lesson's "
                   "\"run it yourself\" box (default: the Repository or Homepage URL of pyproject.toml's "
                   "[project.urls], as the installed package records it)")
    p.set_defaults(handler=run_site)


def run_execute(args: argparse.Namespace) -> int:
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    from lessons_lib.course.notebooks import (EXECUTED_KIND, check_parameters, execute_notebook, notebook_paths,
                                              parse_parameters, read_notebook)
    from lessons_lib.files import check_output_folder
    from lessons_lib.errors import CourseInputError
    from lessons_lib.paths import NOTEBOOKS_DIR
    from lessons_lib.validation import check_int, check_output_dir

    check_int(args.timeout, "--timeout")
    parameters = parse_parameters(args.param)
    if parameters and args.output_dir is None:
        raise CourseInputError("--param needs --output-dir (committed notebooks keep their default parameters)")
    paths = notebook_paths(args.paths, NOTEBOOKS_DIR)
    for path in paths:  # every notebook readable and every parameter known, before any runs
        check_parameters(read_notebook(path), parameters, path.name)
    if args.output_dir is not None:  # before any notebook runs: a copy there is replaced only if the course wrote it
        check_output_folder(args.output_dir, "--output-dir", [path.name for path in paths], kind=EXECUTED_KIND,
                            force=args.force)
        check_output_dir(args.output_dir, "--output-dir")
    failures = 0
    total = 0.0
    for path in paths:
        output = args.output_dir / path.name if args.output_dir else None
        print(f"executing {path.name} ...", flush=True)
        try:
            result = execute_notebook(path, output, parameters=parameters, timeout=args.timeout)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
            failures += 1
            print(f"FAILED {path.name}: {str(error).splitlines()[0] if str(error) else type(error).__name__}", file=sys.stderr)
            print(str(error)[-3000:], file=sys.stderr)
            continue
        total += result.seconds
        print(f"  {path.name}: {result.seconds:7.1f} s  ({result.cells} cells) -> {result.output}", flush=True)
    print(f"{len(paths) - failures} of {len(paths)} notebooks executed, {total:.1f} s in all")
    return 1 if failures else 0


def run_site(args: argparse.Namespace) -> int:
    from lessons_lib.website.site import build_site
    from lessons_lib.validation import check_not_a_file

    report = build_site(check_not_a_file(args.out, "--out"), repo_url=args.repo_url, force=args.force)
    print(f"wrote {len(report.pages)} pages ({len(report.files)} files, {report.size_bytes / 1e6:.1f} MB) "
          f"to {args.out} in {report.seconds:.1f} s; open {args.out / 'index.html'}")
    return 0
