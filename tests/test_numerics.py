"""The lessons' numeric mode: set before torch loads, refused in one line after."""

from __future__ import annotations

import os
import subprocess
import sys

from lessons_lib.numerics import NUMERIC_MODE

CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in NUMERIC_MODE}


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=CLEAN_ENV)


def test_pinned_before_torch_loads_torch_uses_its_portable_kernels_and_one_thread():
    done = _run("from lessons_lib.numerics import pin_numerics, numerics_pinned\n"
                "assert pin_numerics()\n"
                "import torch, os\n"
                "print(torch.backends.cpu.get_cpu_capability(), torch.get_num_threads(), os.environ['MKL_CBWR'], numerics_pinned())")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["DEFAULT", "1", "COMPATIBLE", "True"]


def test_after_torch_loaded_without_it_nothing_changes_and_one_line_says_so():
    done = _run("import torch\n"
                "from lessons_lib.numerics import pin_numerics, numerics_pinned\n"
                "print(pin_numerics(), numerics_pinned())")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("numerics: torch was loaded before") and lines[1] == "False False"


def test_a_second_call_in_a_pinned_kernel_is_silent():
    done = _run("from lessons_lib.numerics import pin_numerics\n"
                "pin_numerics()\nimport torch\nprint(pin_numerics())")
    assert done.stdout.strip() == "True"


# The lessons whose compared digits come from training runs.
PINNED_LESSONS = ("02_encoder_decoder_attention", "06_lcqmc_pair_classification",
                  "08_syntax_biased_attention", "09_syntax_without_a_parser")


def test_the_training_lessons_pin_the_mode_before_importing_torch():
    import json

    from lessons_lib.paths import NOTEBOOKS_DIR

    for name in PINNED_LESSONS:
        cells = json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert "pin_numerics()" in code and code.index("pin_numerics()") < code.index("import torch"), name
