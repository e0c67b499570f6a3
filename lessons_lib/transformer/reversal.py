"""Digit-string reversal: the encoder lesson's toy task.

Each output position must copy another input position (position ``n - 1 - i`` of a string
of length ``n``), a lookup by position that only attention plus positional information
can do; small enough to train encoder stacks in seconds on a CPU.
"""

from __future__ import annotations

import torch

from lessons_lib.errors import CourseInputError, FieldName
from lessons_lib.validation import check_int

__all__ = ["reversal_batch"]


def reversal_batch(
    batch_size: int, min_len: int, max_len: int, n_symbols: int = 10, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random symbol strings of random length and their reversals, padded.

    Symbols are ids ``1 … n_symbols`` (0 is padding). Output position ``i`` of a string
    of length ``n`` must copy input position ``n - 1 - i``: a lookup by position that
    only attention plus positional information can do.

    Returns:
        ``(inputs (B, L) long, targets (B, L) long, key_mask (B, L) bool)`` with
        ``L = max_len``; targets are 0 at padding.
    """
    check_int(batch_size, FieldName("batch_size"))
    check_int(n_symbols, FieldName("n_symbols"), minimum=2)
    if not 1 <= check_int(min_len, FieldName("min_len")) <= check_int(max_len, FieldName("max_len")):
        raise CourseInputError(f"need 1 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}")
    lengths = torch.randint(min_len, max_len + 1, (batch_size,), generator=generator)
    positions = torch.arange(max_len)
    key_mask = positions[None, :] < lengths[:, None]
    inputs = torch.randint(1, n_symbols + 1, (batch_size, max_len), generator=generator) * key_mask
    source_index = (lengths[:, None] - 1 - positions[None, :]).clamp(min=0)
    targets = torch.gather(inputs, 1, source_index) * key_mask
    return inputs, targets, key_mask
