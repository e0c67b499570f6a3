"""``lessons study FOLDER``: the data-size study's reading (results/lcqmc/PLAN.md), as its plan fixes it."""

from __future__ import annotations

import argparse
from pathlib import Path

from lessons_lib.cli.options import add_expect_argument


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "study", help="read the data-size study's folder: the curve, the 8 primary contrasts and A48, "
                      "the secondary readings, the controls and A43",
        description="Print the data-size study's analysis (lessons_lib.ablation.study_report).",
    )
    p.add_argument("folder", type=Path, help="the study's folder (every *.json under it: fF/ and controls/fF/)")
    add_expect_argument(p)
    p.add_argument("--partial", action="store_true",
                   help="read only the seeds that have none, learned and hard_mask (every printout says 'partial')")
    p.add_argument("--unplanned", action="store_true",
                   help="the folder is not the plan's: read fractions and seeds results/lcqmc/PLAN.md does not name "
                        "(without it such a file is refused)")
    p.add_argument("--mixed-kernels", action="store_true",
                   help="read contrasts whose runs used different CPU kernel sets (provenance.cpu_capability; "
                        "without it such a folder is refused) and print which file used which")
    p.set_defaults(handler=run_study_command)


def run_study_command(args: argparse.Namespace) -> int:
    from lessons_lib.pairs.data import LCQMC_SHA256
    from lessons_lib.ablation.study_files import format_kernel_sets, kernel_sets, load_study
    from lessons_lib.ablation.study_report import (format_a43, format_a48, format_controls, format_curve, format_power,
                                                   format_secondary)

    study = load_study(args.folder, LCQMC_SHA256 if args.expect == "lcqmc" else None, partial=args.partial,
                       unplanned=args.unplanned, mixed_kernels=args.mixed_kernels)
    if args.mixed_kernels:  # every reading of a mixed folder says so first
        print(f"== kernel sets (read with --mixed-kernels)\n{format_kernel_sets(kernel_sets(study))}\n")
    for title, text in (("curve", format_curve(study)), ("primary", format_a48(study)),
                        ("power at the spread measured", format_power(study)),
                        ("secondary, descriptive", format_secondary(study)), ("controls", format_controls(study)),
                        ("A43, the full split", format_a43(study))):
        print(f"== {title}\n{text}\n")
    return 0
