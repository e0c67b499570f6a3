"""``lessons workspace``, ``lessons student``, ``lessons grade`` and ``lessons nbgrader-course``: exercises as assignments.

``lessons grade`` runs every submitted notebook in a sandbox of its own (bubblewrap; a weaker
level, without file isolation, only when ``--isolation`` names it) and scores it on the grader's side; see
:mod:`lessons_lib.grader.grading` for what that means and :mod:`lessons_lib.grader.sandbox`
for what each isolation level gives.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lessons_lib.cli.options import add_force_argument
from lessons_lib.grader.sandbox import ISOLATIONS, Limits

_DEFAULTS = Limits()


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("workspace", help="make (or complete) your own copy of the course to work in: "
                                                "the lessons without their solutions, outputs cleared")
    p.add_argument("folder", nargs="?", type=Path, default=Path("workspace"),
                   help="where (default: workspace/ in the current folder); files already there are never overwritten")
    p.set_defaults(handler=run_workspace)

    p = subparsers.add_parser("student", help="build the student version of notebooks (solutions removed, outputs cleared)")
    p.add_argument("paths", nargs="*", help="notebooks or folders (default: the course's notebooks/)")
    p.add_argument("--out", type=Path, default=Path("student"),
                   help="output folder (default: student/); never a folder the notebooks are read from")
    add_force_argument(p, "--out")
    p.set_defaults(handler=run_student)

    p = subparsers.add_parser("grade", help="execute completed student notebooks in a sandbox and write a score report")
    p.add_argument("submissions", type=Path, help="folder with one sub-folder of notebooks per student")
    p.add_argument("--out", type=Path, default=Path("grades"), help="where grades.json and grades.txt go")
    add_force_argument(p, "--out")
    p.add_argument("--reference", type=Path, default=None,
                   help="folder of the solution notebooks (default: the course's notebooks/)")
    p.add_argument("--timeout", type=int, default=int(_DEFAULTS.cell_seconds),
                   help=f"seconds allowed per cell (default {_DEFAULTS.cell_seconds:g})")
    p.add_argument("--notebook-timeout", type=int, default=int(_DEFAULTS.notebook_seconds),
                   help=f"seconds allowed per notebook, execution and grading together (default {_DEFAULTS.notebook_seconds:g})")
    p.add_argument("--memory-mb", type=int, default=_DEFAULTS.memory_mb,
                   help=f"address space per process of a submission, MiB (default {_DEFAULTS.memory_mb})")
    p.add_argument("--disk-mb", type=int, default=_DEFAULTS.disk_mb,
                   help=f"a submission's private disk (bubblewrap) and largest file, MiB (default {_DEFAULTS.disk_mb})")
    p.add_argument("--isolation", choices=("auto", *ISOLATIONS), default="auto",
                   help="auto (default): bubblewrap, and an error where it does not work; namespaces or process "
                        "grade without file isolation (trusted submissions) and must be named here. The report "
                        "says which level was used")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the grader's check inputs (default: a fresh one, written in the report)")
    p.set_defaults(handler=run_grade, interrupted=_grade_interrupted)

    p = subparsers.add_parser("nbgrader-course", help="lay the notebooks out as an nbgrader course directory")
    p.add_argument("paths", nargs="*", help="notebooks or folders (default: the course's notebooks/)")
    p.add_argument("--out", type=Path, default=Path("nbgrader_course"), help="course directory to create (must be new or empty)")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty course directory (replaces its source/ notebooks and nbgrader_config.py)")
    p.set_defaults(handler=run_nbgrader_course)


def _paths(args: argparse.Namespace) -> list[Path]:
    from lessons_lib.course.notebooks import notebook_paths
    from lessons_lib.paths import NOTEBOOKS_DIR

    return notebook_paths(args.paths, NOTEBOOKS_DIR)


def _check_out(args: argparse.Namespace) -> None:
    from lessons_lib.validation import check_not_a_file

    check_not_a_file(args.out, "--out")


def run_workspace(args: argparse.Namespace) -> int:
    from lessons_lib.course.assignments import build_workspace
    from lessons_lib.paths import NOTEBOOKS_DIR

    from lessons_lib.validation import check_not_a_file

    check_not_a_file(args.folder, "workspace")
    lessons = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    report = build_workspace(lessons, args.folder, extra_files=[NOTEBOOKS_DIR / "GLOSSARY.md"])
    where = args.folder.resolve()
    print(f"workspace {where}")
    if report.written:
        print(f"  wrote {len(report.written)}: {', '.join(p.name for p in report.written)}")
    if report.kept:
        print(f"  kept {len(report.kept)} you already have, untouched: {', '.join(p.name for p in report.kept)}")
        print("  (delete a file and run this again to get a fresh copy of it)")
    print(f"open it: jupyter lab {where}   — start with 00_start_here.ipynb")
    return 0


def run_student(args: argparse.Namespace) -> int:
    from lessons_lib.course.assignments import build_student_version

    _check_out(args)
    for path in build_student_version(_paths(args), args.out, force=args.force):
        print(f"wrote {path}")
    return 0


def _grade_interrupted(args: argparse.Namespace) -> str:
    from lessons_lib.grader.grading import GRADES_JSON

    return (f"{args.out / GRADES_JSON} holds the notebooks graded so far (no submission was changed): run the same "
            "command again to grade them all")


def run_grade(args: argparse.Namespace) -> int:
    from lessons_lib.grader.grading import GRADES_JSON, GRADES_TXT, format_grades, grade_submissions
    from lessons_lib.paths import NOTEBOOKS_DIR
    from lessons_lib.validation import check_int

    limits = Limits(notebook_seconds=check_int(args.notebook_timeout, "--notebook-timeout"),
                    cell_seconds=check_int(args.timeout, "--timeout"),
                    call_seconds=min(_DEFAULTS.call_seconds, args.timeout),
                    memory_mb=check_int(args.memory_mb, "--memory-mb", minimum=256),
                    disk_mb=check_int(args.disk_mb, "--disk-mb", minimum=16))
    if args.seed is not None:
        check_int(args.seed, "--seed", minimum=0)
    _check_out(args)
    report = grade_submissions(args.submissions, args.out, args.reference or NOTEBOOKS_DIR, limits=limits,
                               isolation=args.isolation, seed=args.seed, log=print, force=args.force)
    print(format_grades(report), end="")
    print(f"report written to {args.out / GRADES_JSON} and {args.out / GRADES_TXT}")
    return 0


def run_nbgrader_course(args: argparse.Namespace) -> int:
    from lessons_lib.course.assignments import build_nbgrader_course

    _check_out(args)
    names = build_nbgrader_course(_paths(args), args.out, force=args.force)
    print(f"course directory {args.out}: assignments {', '.join(names)}")
    print(f"next: cd {args.out} && nbgrader generate_assignment ASSIGNMENT")
    return 0
