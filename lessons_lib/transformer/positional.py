"""Sinusoidal positional encoding (Vaswani et al., 2017) and its linear-shift property.

``PE[t, 2i] = sin(t · ω_i)`` and ``PE[t, 2i+1] = cos(t · ω_i)`` with
``ω_i = base^(-2i / D)``: every pair of dimensions ``(2i, 2i+1)`` is a point turning on the
unit circle at its own angular speed, fast for the low dimensions and slow for the high
ones. Because a shift by ``k`` positions turns every pair by the fixed angle ``k · ω_i``,
``PE[t + k] = M_k · PE[t]`` for a block-diagonal rotation matrix ``M_k`` that does not
depend on ``t`` (:func:`shift_matrix`).
"""

from __future__ import annotations

import torch

from lessons_lib.errors import FieldName, input_error
from lessons_lib.validation import check_int

__all__ = ["angular_frequencies", "sinusoidal_encoding", "shift_matrix"]

DEFAULT_BASE = 10000.0


def _check_sizes(max_len: int, d_model: int, base: float) -> None:
    check_int(max_len, FieldName("max_len"))
    check_int(d_model, FieldName("d_model"))
    if d_model % 2:
        raise input_error(
            FieldName("d_model"), f" must be even (dimensions come in sin/cos pairs), got {d_model}"
        )
    if not base > 1:
        raise input_error(FieldName("base"), f" must be greater than 1, got {base!r}")


def angular_frequencies(d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """Angular speed ``ω_i = base^(-2i / D)`` of each sin/cos pair.

    Returns:
        ``(D / 2,)`` float64 tensor, from 1 (pair 0, the fastest) down to about ``1 / base``.
    """
    _check_sizes(1, d_model, base)
    exponents = torch.arange(0, d_model, 2, dtype=torch.float64) / d_model
    return base ** (-exponents)


def sinusoidal_encoding(max_len: int, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The table of sinusoidal position vectors.

    Args:
        max_len: number of positions ``L`` (rows, positions ``0 … L-1``).
        d_model: width ``D`` (even).
        base: the wavelength base (10000 in the Transformer paper).

    Returns:
        ``(max_len, d_model)`` float32 tensor; even columns are sines, odd columns cosines,
        all values in ``[-1, 1]``.
    """
    _check_sizes(max_len, d_model, base)
    # Angles in float64: t · ω for t up to a few thousand loses digits in float32.
    angles = torch.arange(max_len, dtype=torch.float64)[:, None] * angular_frequencies(d_model, base)[None, :]
    table = torch.empty(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()


def shift_matrix(offset: int, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The fixed matrix ``M_k`` with ``PE[t + k] = M_k @ PE[t]`` for every position ``t``.

    Each pair ``(sin tω, cos tω)`` becomes ``(sin (t+k)ω, cos (t+k)ω)`` by the angle-sum
    formulas, i.e. by the 2×2 block ``[[cos kω, sin kω], [-sin kω, cos kω]]``.

    Args:
        offset: the shift ``k`` (any integer, negative shifts go backwards).
        d_model: width ``D`` (even).
        base: as in :func:`sinusoidal_encoding`.

    Returns:
        ``(d_model, d_model)`` float64 block-diagonal orthogonal matrix. Apply it to row
        vectors as ``PE[t] @ M_k.T``.
    """
    check_int(offset, FieldName("offset"), minimum=None)
    omega = angular_frequencies(d_model, base)
    cos, sin = torch.cos(offset * omega), torch.sin(offset * omega)
    matrix = torch.zeros(d_model, d_model, dtype=torch.float64)
    even = torch.arange(0, d_model, 2)
    matrix[even, even] = cos
    matrix[even, even + 1] = sin
    matrix[even + 1, even] = -sin
    matrix[even + 1, even + 1] = cos
    return matrix
