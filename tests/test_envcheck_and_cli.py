"""Environment check, reproducibility helpers and the command line's wiring."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from lessons_lib.cli import build_parser, main
from lessons_lib.course.envcheck import Check, check_cjk_font, check_environment, format_report
from lessons_lib.course import reproducibility
from lessons_lib.course.reproducibility import setup_reproducible
from lessons_lib.seeding import set_seed


def test_environment_check_passes_here():
    checks = check_environment()
    names = [c.name for c in checks]
    assert {"python", "torch", "spacy", "CJK font", "spaCy + jieba segmentation"} <= set(names)
    assert all(c.ok for c in checks if c.required), format_report(checks)


def test_cjk_font_check_reports_ok():
    result = check_cjk_font()
    assert result.ok and result.name == "CJK font"


def test_report_marks_failures():
    text = format_report([Check("a", True, "1"), Check("b", False, "gone"), Check("c", False, "later", required=False)])
    assert text.splitlines()[1].startswith("MISSING") and text.splitlines()[2].startswith("optional")


def test_check_env_command(capsys):
    assert main(["check-env"]) == 0
    assert "CJK font" in capsys.readouterr().out


def test_help_lists_commands_and_import_stays_light():
    help_text = build_parser().format_help()
    assert "execute" in help_text and "check-env" in help_text
    code = "import sys, lessons_lib; print(sorted(m for m in ('matplotlib', 'spacy', 'pandas') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    # `lessons --help` builds every command's parser; heavy imports wait for the handlers.
    code = ("import sys; from lessons_lib.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('torch', 'matplotlib', 'spacy', 'nbclient') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_help_groups_every_command_once_under_who_uses_it():
    from lessons_lib.cli import AUDIENCES

    parser = build_parser()
    help_text = parser.format_help()
    commands = set(parser._subparsers._group_actions[0].choices)  # what argparse would run
    grouped = [name for names in AUDIENCES.values() for name in names]
    assert sorted(grouped) == sorted(commands)
    positions = [help_text.index(f"commands {heading}:") for heading in AUDIENCES]
    assert positions == sorted(positions)
    for heading, names in AUDIENCES.items():
        block = help_text.split(f"commands {heading}:")[1].split("\n\n")[0]
        listed = [line.split()[0] for line in block.splitlines() if line.startswith("  ") and line[2] != " "]
        assert listed == list(names), heading
    assert help_text.startswith("usage: lessons [-h] COMMAND ...")
    assert parser._subparsers._group_actions[0].choices["grid"].format_usage().startswith("usage: lessons grid ")


def test_seeding_repeats():
    set_seed(3)
    a = torch.randn(4)
    set_seed(3)
    assert torch.equal(a, torch.randn(4))
    g = setup_reproducible(5, threads=2)
    assert torch.get_num_threads() == 2
    assert torch.equal(torch.randn(2, generator=g), torch.randn(2, generator=torch.Generator().manual_seed(5)))
    setup_reproducible(0)
    torch.set_num_threads(1)  # back to the tests' setting (conftest.py)


def test_lesson_08s_seed_import_is_the_leaf():
    # Lesson 08 imports set_seed from course.reproducibility; it must be the one seeding function.
    assert reproducibility.set_seed is set_seed


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        set_seed(seed)


def test_bad_threads():
    with pytest.raises(ValueError, match="threads"):
        setup_reproducible(0, threads=0)
