"""Sinusoidal positional encoding: values, frequencies and the fixed linear shift."""

from __future__ import annotations

import math

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.transformer.positional import angular_frequencies, shift_matrix, sinusoidal_encoding


def test_formula_at_a_few_entries():
    pe = sinusoidal_encoding(50, 16)
    assert pe.shape == (50, 16) and pe.dtype == torch.float32
    t, i = 7, 3  # dimensions 6 (sin) and 7 (cos) of pair 3
    omega = 10000 ** (-2 * i / 16)
    assert math.isclose(float(pe[t, 2 * i]), math.sin(t * omega), abs_tol=1e-6)
    assert math.isclose(float(pe[t, 2 * i + 1]), math.cos(t * omega), abs_tol=1e-6)
    assert torch.equal(pe[0, 0::2], torch.zeros(8)) and torch.equal(pe[0, 1::2], torch.ones(8))


def test_values_are_bounded_and_pairs_lie_on_the_unit_circle():
    pe = sinusoidal_encoding(200, 64).double()
    assert pe.abs().max() <= 1.0
    torch.testing.assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(200, 32, dtype=torch.float64))
    # Every position vector has the same norm sqrt(D/2).
    torch.testing.assert_close(pe.norm(dim=1), torch.full((200,), math.sqrt(32.0), dtype=torch.float64))


def test_frequencies_fall_from_fast_to_slow():
    omega = angular_frequencies(64)
    assert float(omega[0]) == 1.0
    assert bool((omega[1:] < omega[:-1]).all())
    assert math.isclose(float(omega[-1]), 10000 ** (-62 / 64))


@pytest.mark.parametrize("offset", [1, 5, 17, -3])
def test_shift_is_a_fixed_linear_map(offset):
    pe = sinusoidal_encoding(120, 32).double()
    m = shift_matrix(offset, 32)
    start = max(0, -offset)
    stop = 120 - max(0, offset)
    t = torch.arange(start, stop)
    torch.testing.assert_close(pe[t] @ m.T, pe[t + offset], atol=1e-6, rtol=0)
    # M_k is a rotation: orthogonal, and M_{-k} is its inverse.
    torch.testing.assert_close(m @ m.T, torch.eye(32, dtype=torch.float64))
    torch.testing.assert_close(shift_matrix(-offset, 32), m.T)


def test_dot_product_depends_only_on_the_offset():
    pe = sinusoidal_encoding(100, 32).double()
    gram = pe @ pe.T
    for k in (0, 1, 4, 30):
        diagonal = torch.diagonal(gram, offset=k)
        assert float(diagonal.max() - diagonal.min()) < 1e-6
    # ... and is symmetric in the sign of the offset.
    torch.testing.assert_close(torch.diagonal(gram, 3), torch.diagonal(gram, -3))


@pytest.mark.parametrize(
    "args, message",
    [((10, 15), "even"), ((0, 16), "max_len"), ((10, 0), "d_model"), ((10, 16, 1.0), "base")],
)
def test_bad_sizes_are_rejected(args, message):
    with pytest.raises(CourseInputError, match=message):
        sinusoidal_encoding(*args)


def test_shift_rejects_a_float_offset():
    with pytest.raises(CourseInputError, match="offset"):
        shift_matrix(1.5, 16)
