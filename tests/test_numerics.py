"""The lessons' numeric mode: set before torch loads, refused in one line after."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lessons_lib.numerics import NUMERIC_MODE

pytestmark = pytest.mark.slow

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
PINNED_LESSONS = ("02_encoder_decoder_attention", "05_encoder_block", "06_lcqmc_pair_classification",
                  "08_syntax_biased_attention", "09_syntax_without_a_parser", "12_transformer_decoder")


def test_the_training_lessons_pin_the_mode_before_importing_torch():
    import json

    from lessons_lib.paths import NOTEBOOKS_DIR

    for name in PINNED_LESSONS:
        cells = json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert "pin_numerics()" in code and code.index("pin_numerics()") < code.index("import torch"), name


# --- The same bits on CPUs with other vector units --------------------------------------------
# The lessons' digits must not depend on the CPU. qemu's user-mode emulator runs this Python on
# an emulated CPU, so one machine can compare its own vector units (whatever they are) with an
# AVX2 CPU (Haswell) and an AVX-only one (Sandy Bridge): torch, MKL and oneDNN each choose their
# kernels by what the emulated CPU reports.
PROBE = Path(__file__).with_name("numerics_probe.py")
EMULATED_CPUS = ("Haswell", "SandyBridge")


def _probe(*emulator: str) -> dict[str, str]:
    done = subprocess.run([*emulator, sys.executable, str(PROBE)], capture_output=True, text=True, env=CLEAN_ENV,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())


@pytest.fixture(scope="module")
def digests() -> dict[str, dict[str, str]]:
    qemu = shutil.which("qemu-x86_64")
    if platform.machine() != "x86_64" or qemu is None:
        if os.environ.get("COURSE_EMULATION_TESTS") == "required":
            pytest.fail("qemu-x86_64 (Debian's qemu-user) is required on an x86-64 machine for the CPU comparison")
        pytest.skip("needs an x86-64 machine with qemu-x86_64 (Debian's qemu-user)")
    found = {"this CPU": _probe()}
    for cpu in EMULATED_CPUS:
        found[cpu] = _probe(qemu, "-cpu", cpu)
    return found


def test_the_numeric_mode_trains_to_the_same_bits_on_cpus_with_other_vector_units(digests):
    course = {cpu: found["course"] for cpu, found in digests.items()}
    assert len(set(course.values())) == 1, course


def test_the_comparison_sees_the_difference_the_mode_removes(digests):
    """Positive control: F.gelu and AdamW's default square root give other bits on AVX-512 than on AVX2."""
    native = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                            capture_output=True, text=True, env=CLEAN_ENV).stdout.strip()
    if native != "AVX512":
        pytest.skip(f"this CPU's torch capability is {native}; the kernels differ between AVX-512 and the rest")
    assert digests["this CPU"]["torch defaults"] != digests["Haswell"]["torch defaults"]
