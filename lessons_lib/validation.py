"""Input checks shared by the whole package, so that every argument error reads the same.

Each helper returns the checked value (so it can be used inline) or raises
:class:`~lessons_lib.errors.CourseInputError` naming the argument. A name given as a
:class:`~lessons_lib.errors.FieldName` makes an error that knows its field (the command line
shows it as the field's flag). ``bool`` is never accepted as a number: ``True`` is an
``int`` to Python, but ``epochs=True`` is a mistake.
"""

from __future__ import annotations

import math
from dataclasses import fields
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, TypeVar

from lessons_lib.errors import CourseInputError, file_errors, input_error
from lessons_lib.paths import REPO_ROOT

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")
Record = TypeVar("Record", bound="DataclassInstance")

__all__ = [
    "exact",
    "check_int", "check_number", "check_probability", "check_choice", "strict_from_dict",
    "check_not_a_file", "check_not_a_folder", "check_output_dir", "check_input_dir", "check_outside_repository",
    "check_tensor", "check_mask", "check_bias", "check_divisible", "check_lengths",
    "check_attention_inputs", "check_scores_and_values",
]


def check_int(value: Any, name: str, *, minimum: int | None = 1, maximum: int | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]`` (default: a positive int)."""
    kind = "an int" if minimum is None else {1: "a positive int", 0: "a non-negative int"}.get(minimum, f"an int ≥ {minimum}")
    if maximum is not None:
        kind += f" ≤ {maximum}"
    if (not isinstance(value, int) or isinstance(value, bool) or (minimum is not None and value < minimum)
            or (maximum is not None and value > maximum)):
        raise input_error(name, f" must be {kind}, got {value!r}")
    return value


def check_number(value: Any, name: str, *, minimum: float | None = None, maximum: float | None = None,
                 strict_minimum: bool = False, finite: bool = True) -> float:
    """``value`` as a float: finite (unless ``finite=False``; NaN never passes) and within bounds.

    Args:
        minimum, maximum: inclusive bounds (``None``: unbounded).
        strict_minimum: the value must be greater than ``minimum``, not equal to it.
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        raise input_error(name, f" must be a number, got {value!r}")
    if finite and math.isinf(value):
        raise input_error(name, f" must be finite, got {value!r}")
    if minimum is not None and (value <= minimum if strict_minimum else value < minimum):
        raise input_error(name, f" must be {'>' if strict_minimum else '≥'} {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise input_error(name, f" must be ≤ {maximum}, got {value!r}")
    return float(value)


def check_probability(value: Any, name: str) -> float:
    """``value`` as a float in ``[0, 1]``."""
    return check_number(value, name, minimum=0.0, maximum=1.0)


def check_choice(value: T, name: str, options: Iterable[T]) -> T:
    """``value`` if it is one of ``options``."""
    options = tuple(options)
    if value not in options:
        raise input_error(name, f" must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def strict_from_dict(cls: type[Record], data: dict[str, Any]) -> Record:
    """Build the dataclass ``cls`` from ``data``; an unknown key is an error, not ignored.

    A checkpoint or preset written by another version of the course fails loudly instead
    of silently losing a setting.
    """
    if not isinstance(data, dict):
        raise CourseInputError(f"{cls.__name__} needs a dict of fields, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise CourseInputError(f"unknown {cls.__name__} fields: {unknown}")
    return cls(**data)


def check_not_a_file(path: Any, name: str) -> Path:
    """``path`` as a folder to be written later: missing or a folder (nothing is created); a file there is an error."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise CourseInputError(f"{name} {path} is a file, not a folder")
    _check_no_file_above(path, name)
    return path


def check_not_a_folder(path: Any, name: str) -> Path:
    """``path`` as a file to be written later: missing or a file; a folder there is an error."""
    path = Path(path)
    if path.is_dir():
        raise CourseInputError(f"{name} {path} is a folder, not a file")
    _check_no_file_above(path, name)
    return path


def _check_no_file_above(path: Path, name: str) -> None:
    """Refuse a path below a file (``notes.txt/run``): no folder can be created there."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise CourseInputError(f"{name} {path} lies below {parent}, which is a file, not a folder: "
                                       "choose another path")
            return


def check_output_dir(path: Any, name: str) -> Path:
    """``path`` as a folder that can be written to: created when missing; a file there is an error."""
    path = check_not_a_file(path, name)
    with file_errors(path, "create the folder"):
        path.mkdir(parents=True, exist_ok=True)
    return path


def check_input_dir(path: Any, name: str) -> Path:
    """``path`` as an existing folder."""
    path = Path(path)
    if not path.is_dir():
        raise CourseInputError(f"{name} {path} is not a folder" + ("" if path.exists() else " (it does not exist)"))
    return path


def check_outside_repository(path: Any, name: str, what: str = "data that is not the course's") -> Path:
    """``path`` if it lies outside the course's repository (symbolic links followed); else one line naming it.

    For third parties' data (and anything holding their text), which may be read and written
    only where the user keeps it, never inside the checkout that git tracks.
    """
    path = Path(path)
    resolved, repository = path.expanduser().resolve(), REPO_ROOT.resolve()
    if resolved == repository or repository in resolved.parents:
        raise CourseInputError(f"{name} {path} is inside the course's repository ({repository}): {what} "
                               "may not be kept there; choose a path outside it")
    return path


# --- Tensors. torch is imported inside each check, not at the top: the configs and the
# command line's parser import this module and must stay torch-free (`lessons --help`).


def check_tensor(value: Any, name: str, *, min_dim: int | None = None, width: int | None = None) -> Any:
    """``value`` if it is a floating-point ``torch.Tensor``, with at least ``min_dim`` dimensions
    (read as ``(..., positions, features)``) and ``width`` features in the last one, when given."""
    import torch

    if not isinstance(value, torch.Tensor):
        raise CourseInputError(f"`{name}` must be a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise CourseInputError(f"`{name}` must be a floating-point tensor, got dtype {value.dtype}")
    if min_dim is not None and value.dim() < min_dim:
        raise CourseInputError(
            f"`{name}` must have at least {min_dim} dimensions (..., positions, features), "
            f"got shape {tuple(value.shape)}"
        )
    if width is not None and value.shape[-1] != width:
        raise CourseInputError(
            f"`{name}` must have width {width} in its last dimension, got shape {tuple(value.shape)}"
        )
    return value


def check_mask(mask: Any, scores_shape: tuple[int, ...] | None = None, *, torch_hint: bool = False) -> Any:
    """``mask`` if it is the course's boolean mask (``True`` = may attend) that broadcasts *to* ``scores_shape``.

    Args:
        scores_shape: ``(..., L_q, L_k)``; ``None`` checks the dtype only (the caller reads the layout).
        torch_hint: advise against ``torch.nn.MultiheadAttention``'s ``key_padding_mask`` (the
            opposite convention) instead of against ``mask == 0`` — what a multi-head caller confuses.
    """
    import torch

    if torch_hint and not (isinstance(mask, torch.Tensor) and mask.dtype == torch.bool):
        got = mask.dtype if isinstance(mask, torch.Tensor) else type(mask).__name__
        raise CourseInputError(
            f"`mask` must be a boolean tensor (True = may attend), got {got}; "
            "from a 0/1 tensor use `mask == 1` (note: torch's key_padding_mask means the opposite)"
        )
    if not isinstance(mask, torch.Tensor):
        raise CourseInputError(f"`mask` must be a boolean torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise CourseInputError(
            f"`mask` must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "convert a 0/1 mask with `mask == 1` — not `mask == 0`, which inverts it"
        )
    if scores_shape is None:
        return mask
    try:
        shape = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        raise CourseInputError(
            f"`mask` of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
            f"{tuple(scores_shape)} (..., L_q, L_k); a key-padding mask (B, L_k) needs "
            "`mask[:, None, :]` (and one more `None` for heads)"
        ) from None
    if shape != scores_shape:
        raise CourseInputError(
            f"`mask` of shape {tuple(mask.shape)} would enlarge the scores' shape "
            f"{tuple(scores_shape)}; it must broadcast *to* it"
        )
    return mask


def check_bias(attn_bias: Any, scores_shape: tuple[int, ...]) -> Any:
    """``attn_bias`` if it is a floating-point tensor that broadcasts *to* the scores' ``(B, H, L_q, L_k)``."""
    import torch

    if not isinstance(attn_bias, torch.Tensor) or not attn_bias.is_floating_point():
        raise CourseInputError("`attn_bias` must be a floating-point tensor broadcastable to (B, H, L_q, L_k)")
    try:
        shape = torch.broadcast_shapes(attn_bias.shape, scores_shape)
    except RuntimeError:
        shape = None
    if shape != tuple(scores_shape):
        raise CourseInputError(
            f"`attn_bias` of shape {tuple(attn_bias.shape)} does not broadcast to the scores' "
            f"shape {tuple(scores_shape)} (B, H, L_q, L_k)"
        )
    return attn_bias


def check_divisible(value: int, name: str, divisor: int, divisor_name: str) -> int:
    """``value`` if ``divisor`` divides it (a width split into heads: ``D`` by ``H``)."""
    if value % divisor:
        raise input_error(name, f"={value} must be divisible by ", divisor_name, f"={divisor}")
    return value


def check_lengths(lengths: Any, max_len: int | None) -> tuple[Any, int]:
    """``(lengths as a (B,) integer tensor, max_len)``: non-negative lengths, ``max_len`` (default: the
    longest) at least the longest."""
    import torch

    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise CourseInputError(
            f"`lengths` must be a 1-D integer tensor or list, got shape {tuple(lengths.shape)} "
            f"and dtype {lengths.dtype}"
        )
    if lengths.numel() and int(lengths.min()) < 0:
        raise CourseInputError(f"`lengths` must be non-negative, got {lengths.tolist()}")
    longest = int(lengths.max()) if lengths.numel() else 0
    if max_len is None:
        max_len = longest
    if max_len < longest:
        raise CourseInputError(f"`max_len`={max_len} is shorter than the longest length {longest}")
    return lengths, max_len


# Dot-product attention's inputs (lessons_lib.attention): the messages say what to change.


def check_attention_inputs(query: Any, key: Any, value: Any = None, mask: Any = None) -> None:
    """Queries, keys (and values, a mask) that dot-product attention can combine: each a float tensor
    ``(..., positions, features)``, queries and keys of one width, keys and values of one length,
    a mask that broadcasts to the scores ``(..., L_q, L_k)``."""
    import torch

    check_tensor(query, "query", min_dim=2)
    check_tensor(key, "key", min_dim=2)
    if query.shape[-1] != key.shape[-1]:
        raise CourseInputError(
            "dot-product attention needs queries and keys of the same width: "
            f"query has d_k={query.shape[-1]} (shape {tuple(query.shape)}), "
            f"key has d_k={key.shape[-1]} (shape {tuple(key.shape)}); "
            "project one of them (bilinear or additive attention) when the widths differ"
        )
    if value is None:
        return
    check_tensor(value, "value", min_dim=2)
    if key.shape[-2] != value.shape[-2]:
        raise CourseInputError(
            f"`key` and `value` must have the same number of positions: key has "
            f"L_k={key.shape[-2]} (shape {tuple(key.shape)}), value has "
            f"{value.shape[-2]} (shape {tuple(value.shape)})"
        )
    if mask is not None:
        leading = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])
        check_mask(mask, (*leading, query.shape[-2], key.shape[-2]))


def check_scores_and_values(scores: Any, value: Any, mask: Any) -> None:
    """Scores ``(..., L_q, L_k)`` and values ``(..., L_k, d_v)`` over the same keys, and a mask fitting the scores."""
    check_tensor(scores, "scores")
    check_tensor(value, "value", min_dim=2)
    if scores.shape[-1] != value.shape[-2]:
        raise CourseInputError(
            f"scores cover L_k={scores.shape[-1]} keys but `value` has {value.shape[-2]} positions"
        )
    if mask is not None:
        check_mask(mask, scores.shape)


def exact(value: float | Fraction) -> Fraction:
    """A number read from a results file (a training fraction, a parser-noise share) as the exact
    decimal it was written as (``0.1`` → 1/10), so that keys and comparisons never hang on a float's
    last bit; a :class:`~fractions.Fraction` is returned as it is."""
    return value if isinstance(value, Fraction) else Fraction(repr(value))
