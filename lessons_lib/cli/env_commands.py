"""``lessons check-env``: is this machine ready for the course?"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("check-env", help="check versions, the CJK font, the parser and the data")
    p.set_defaults(handler=run_check_env)


def run_check_env(args: argparse.Namespace) -> int:
    from lessons_lib.course.envcheck import check_environment, format_report

    checks = check_environment()
    print(format_report(checks))
    return 0 if all(c.ok for c in checks if c.required) else 1
