"""``lessons student``, ``lessons grade`` and ``lessons nbgrader-course``: exercises as assignments."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("student", help="build the student version of notebooks (solutions removed, outputs cleared)")
    p.add_argument("paths", nargs="*", help="notebooks or folders (default: the course's notebooks/)")
    p.add_argument("--out", type=Path, default=Path("student"), help="output folder (default: student/)")
    p.set_defaults(handler=run_student)

    p = subparsers.add_parser("grade", help="execute completed student notebooks and write a score report")
    p.add_argument("submissions", type=Path, help="folder with one sub-folder of notebooks per student")
    p.add_argument("--out", type=Path, default=Path("grades"), help="where grades.json and grades.txt go")
    p.add_argument("--reference", type=Path, default=None,
                   help="folder of the solution notebooks (default: the course's notebooks/)")
    p.add_argument("--timeout", type=int, default=900, help="seconds allowed per cell")
    p.set_defaults(handler=run_grade)

    p = subparsers.add_parser("nbgrader-course", help="lay the notebooks out as an nbgrader course directory")
    p.add_argument("paths", nargs="*", help="notebooks or folders (default: the course's notebooks/)")
    p.add_argument("--out", type=Path, default=Path("nbgrader_course"), help="course directory to create")
    p.set_defaults(handler=run_nbgrader_course)


def _paths(args: argparse.Namespace) -> list[Path]:
    from lessons_lib.course.notebooks import notebook_paths
    from lessons_lib.paths import NOTEBOOKS_DIR

    return notebook_paths(args.paths, NOTEBOOKS_DIR)


def run_student(args: argparse.Namespace) -> int:
    from lessons_lib.course.assignments import build_student_version

    for path in build_student_version(_paths(args), args.out):
        print(f"wrote {path}")
    return 0


def run_grade(args: argparse.Namespace) -> int:
    from lessons_lib.course.assignments import format_grades, grade_submissions
    from lessons_lib.paths import NOTEBOOKS_DIR

    report = grade_submissions(args.submissions, args.out, args.reference or NOTEBOOKS_DIR, timeout=args.timeout)
    print(format_grades(report), end="")
    print(f"report written to {args.out / 'grades.json'} and {args.out / 'grades.txt'}")
    return 0


def run_nbgrader_course(args: argparse.Namespace) -> int:
    from lessons_lib.course.assignments import build_nbgrader_course

    names = build_nbgrader_course(_paths(args), args.out)
    print(f"course directory {args.out}: assignments {', '.join(names)}")
    print(f"next: cd {args.out} && nbgrader generate_assignment ASSIGNMENT")
    return 0
