"""Checkers for the lessons' exercises.

A check cell in a lesson calls one ``check_*`` function with the learner's function or
tensor. The checker runs it on fixed inputs, compares the result with the expected value
(computed by the package's reference implementation on the same inputs), **shape first,
then values with a tolerance**, and either prints one line ``✅ <exercise id>: 通过`` or
raises :class:`ExerciseCheckError` whose message says in words what is wrong: which
shape, which position, and the likely cause when the answer matches a known mistake
(a missing √d_k, a transposed mask, a softmax over the wrong axis, ...). A checker never
prints the expected values themselves, so it does not give the solution away. In a notebook
the error shows as that one line (``❌ …``, or ``⏳ …`` for :class:`ExerciseNotDone`, an
exercise still raising ``NotImplementedError``), not as a traceback that would print the
checker's code.

Prediction and explanation exercises ask for a number, a set or a choice (returned by the
learner's function); their checkers measure the answer themselves (:func:`compare_number`,
:func:`compare_choice`), give a hint without the value when it is wrong, and print the
measurement and the reason on the line after the pass mark.

Checkers are grouped by concept in the submodules (``lessons_lib.exercises.attention``,
...); :func:`checker_by_name` finds one by its name. Every checker takes a keyword
``seed``: ``None`` (what a lesson's check cell uses) checks on the lesson's fixed inputs;
an int draws fresh inputs of the same kind (:func:`check_generator`, :func:`check_random`).
The grader (``lessons grade``) calls the checkers in its own process with a seed of its
own, so the inputs it scores on are ones the learner's notebook never saw; a passed check
returns, a failed one raises :class:`ExerciseCheckError`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import random
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import torch

from lessons_lib.errors import CourseInputError

PASS_MARK = "✅"


FAIL_MARK = "❌"
NOT_DONE_MARK = "⏳"


class ExerciseCheckError(AssertionError):
    """The learner's answer is wrong; the message explains how, without the solution."""

    mark = FAIL_MARK

    def _render_traceback_(self) -> list[str]:
        """What IPython shows in place of a traceback: the explanation alone.

        A traceback would print the checker's own code (its reference computation and the
        known mistakes it tries), which is nearly the answer. The cell still fails, so
        "Run All" stops here and nbgrader records the failure.
        """
        return [self.feedback()]

    def feedback(self) -> str:
        """The one line a learner sees in a failed check cell: the mark and the explanation."""
        return f"{self.mark} {self}"


class ExerciseNotDone(ExerciseCheckError):
    """The learner's function still raises the student version's ``NotImplementedError``."""

    mark = NOT_DONE_MARK


@dataclass(frozen=True)
class KnownMistake:
    """A plausible wrong answer and how to explain it when the learner's output matches it.

    Attributes:
        expected: the output that the mistaken implementation produces on the check inputs.
        explanation: what the learner probably did, in words (Chinese, with the English term).
    """

    expected: torch.Tensor
    explanation: str


def check_generator(seed: int | None, lesson_seed: int) -> torch.Generator:
    """The generator of a check's inputs: seeded with the lesson's ``lesson_seed``, or with ``seed`` when given."""
    return torch.Generator().manual_seed(lesson_seed if seed is None else seed)


def check_random(seed: int) -> random.Random:
    """Python's RNG for drawing fresh check cases (lengths, trees, lists) from the grader's ``seed``."""
    return random.Random(seed)


def checker_by_name(name: str) -> Callable[..., None]:
    """The ``check_*`` function called ``name`` in one of this package's submodules.

    Raises:
        CourseInputError: no checker of that name.
    """
    if not name.startswith("check_"):
        raise CourseInputError(f"{name!r} is not a checker name (checkers are called check_…)")
    for module in pkgutil.iter_modules(__path__):
        found = getattr(importlib.import_module(f"{__name__}.{module.name}"), name, None)
        if inspect.isfunction(found) and found.__module__ == f"{__name__}.{module.name}":
            return found
    raise CourseInputError(f"no checker {name!r} in lessons_lib.exercises")


def passed(exercise_id: str, why: str = "") -> None:
    """Print the line that tells the learner (and the grader) that ``exercise_id`` passed.

    ``why`` (for prediction and explanation exercises) is printed on the next line: the
    measurement that confirms the answer, and the reason.
    """
    print(f"{PASS_MARK} {exercise_id}: 通过")
    if why:
        print(f"   为什么：{why}")


def compare_choice(exercise_id: str, got: Any, options: Mapping[str, str], correct: str,
                   wrong: Mapping[str, str]) -> None:
    """The learner's answer must be the key ``correct`` of ``options`` (key → what the option says).

    Raises:
        ExerciseCheckError: not one of the options (they are listed), or a wrong option
            (``wrong[key]`` says what to reconsider, without naming the right one).
    """
    if correct not in options or set(wrong) != set(options) - {correct}:
        raise CourseInputError("`wrong` must explain every option except `correct`")
    if got not in options:
        listed = "；".join(f"{key!r} = {text}" for key, text in options.items())
        raise ExerciseCheckError(f"{exercise_id}: 请返回选项之一：{listed}。你返回的是 {got!r}")
    if got != correct:
        raise ExerciseCheckError(f"{exercise_id}: 你选了 {got!r}（{options[got]}）——不对。{wrong[got]}")


def compare_number(exercise_id: str, got: Any, expected: float, *, rel_tol: float, what: str,
                   too_low: str, too_high: str) -> None:
    """The learner's predicted number must be within ``rel_tol`` (relative) of the measured ``expected``.

    Raises:
        ExerciseCheckError: not a number, or too far off; ``too_low`` / ``too_high`` give a
            hint in words (never the value).
    """
    if isinstance(got, bool) or not isinstance(got, (int, float)) or got != got:
        raise ExerciseCheckError(f"{exercise_id}: {what} 应当是一个数，你返回的是 {got!r}")
    if abs(got - expected) > rel_tol * abs(expected):
        hint = too_low if got < expected else too_high
        raise ExerciseCheckError(f"{exercise_id}: 你预测的 {what} 是 {got:g}，与实测相差超过 {rel_tol:.0%}。{hint}")


def call_learner(exercise_id: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call the learner's function; turn a crash into a readable failure.

    Raises:
        ExerciseNotDone: ``fn`` raised ``NotImplementedError`` (the student version's placeholder).
        ExerciseCheckError: ``fn`` is not callable or raised anything else (named, with the
            shapes of the tensors it was given and, for a batched-matrix mistake, a hint).
    """
    if not callable(fn):
        raise ExerciseCheckError(f"{exercise_id}: 需要传入一个函数 (function)，收到的是 {type(fn).__name__}")
    try:
        with warnings.catch_warnings():
            # torch's deprecation warning for `.T` on a 3-D tensor would print above the checker's own,
            # clearer explanation of the same mistake (see _batched_matrix_hint).
            warnings.filterwarnings("ignore", message=r".*\.T.*", category=UserWarning)
            return fn(*args, **kwargs)
    except NotImplementedError as error:
        raise ExerciseNotDone(
            f"{exercise_id}: 还没有完成。在上面的练习单元里把 `raise NotImplementedError()` 换成你的代码，"
            "运行那个单元，再运行这个检查单元。"
        ) from error
    except Exception as error:  # the learner's code may raise anything
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ExerciseCheckError(
            f"{exercise_id}: 你的函数在检查输入{_tensor_shapes(args)}上抛出了 {type(error).__name__}: {first_line}"
            f"{_batched_matrix_hint(error, args)}"
        ) from error


def global_numbers_read(fn: Callable[..., Any]) -> dict[str, float]:
    """The notebook's global numbers ``fn`` reads by name (``d_k`` left behind by a loop), ``{name: value}``.

    A function written in a notebook sees every global of it; one that reads ``d_k`` there
    instead of taking it from its inputs works on the lesson's tensors and fails on others.
    Functions that are not plain Python functions (the grader's sandboxed proxies) read none.
    """
    code, namespace = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or not isinstance(namespace, dict):
        return {}
    return {name: namespace[name] for name in code.co_names
            if isinstance(namespace.get(name), (int, float)) and not isinstance(namespace.get(name), bool)}


def _tensor_shapes(args: Sequence[Any]) -> str:
    """`` (形状 (2, 3, 16), (2, 5, 16))`` for the tensor arguments, or nothing when there are none."""
    shapes = [str(tuple(a.shape)) for a in args if isinstance(a, torch.Tensor)]
    return f"（张量形状 {', '.join(shapes)}）" if shapes else ""


def _batched_matrix_hint(error: Exception, args: Sequence[Any]) -> str:
    """A hint when a size mismatch meets batched (≥ 3-D) inputs: ``.T`` reverses every dimension."""
    batched = any(isinstance(a, torch.Tensor) and a.dim() >= 3 for a in args)
    size_mismatch = isinstance(error, RuntimeError) and ("size of tensor" in str(error) or "shape" in str(error))
    if not (batched and size_mismatch):
        return ""
    return ("。提示：输入是带批量维的三维张量 (B, L, d)；`.T` 会把所有维度倒过来，"
            "只交换最后两维请用 `transpose(-2, -1)`。")


def compare_tensor(
    exercise_id: str,
    got: Any,
    expected: torch.Tensor,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    mistakes: Sequence[KnownMistake] = (),
    what: str = "输出 (output)",
    steps: str | None = None,
) -> None:
    """Compare a learner's tensor with the expected one; raise an explanatory error if wrong.

    Args:
        exercise_id: shown in every message, e.g. ``"01-1 scaled scores"``.
        got: the learner's result (a tensor, or something ``torch.as_tensor`` accepts).
        expected: the reference result, any shape.
        atol, rtol: tolerances for :func:`torch.isclose`.
        mistakes: known wrong answers, tried in order when the values differ.
        what: the name of the compared thing in messages.
        steps: the exercise's own steps, named in the hint when no known mistake matches
            (``"缩放、遮蔽 (mask)、softmax 所在的维度 (dim)"``); ``None``: a hint naming none.

    Raises:
        ExerciseCheckError: wrong type, shape, dtype kind, non-finite values or values.
    """
    if not isinstance(expected, torch.Tensor):
        raise CourseInputError("`expected` must be a torch.Tensor")
    got = _learner_tensor(exercise_id, got, expected, what)
    expected = expected.detach().to(torch.float64) if expected.is_floating_point() else expected.detach()
    close = _close(exercise_id, got, expected, atol, rtol, what)
    if bool(close.all()):
        return
    for mistake in mistakes:
        candidate = torch.as_tensor(mistake.expected).detach()
        if candidate.shape == got.shape and bool(
            torch.isclose(got.to(torch.float64), candidate.to(torch.float64), atol=atol, rtol=rtol, equal_nan=True).all()
        ):
            raise ExerciseCheckError(f"{exercise_id}: 形状正确，但数值不对。{mistake.explanation}")
    pos = tuple(int(i) for i in (~close).nonzero()[0])
    count = int((~close).sum())
    value = f"{float(got[pos]):.4f}" if got.is_floating_point() else str(got[pos].item())  # an integer head stays 0, not 0.0000
    raise ExerciseCheckError(
        f"{exercise_id}: 形状正确，但有 {count} / {close.numel()} 个数值与期望不符；"
        f"第一个不符的位置是 {pos}，你的值为 {value}。"
        + (f"逐步检查：{steps}。" if steps else "对照练习说明，一步一步检查你的计算。")
    )


def _learner_tensor(exercise_id: str, got: Any, expected: torch.Tensor, what: str) -> torch.Tensor:
    """The learner's result as a detached tensor of the expected shape and kind (float64 if floating)."""
    if got is None:
        raise ExerciseCheckError(f"{exercise_id}: 你的函数没有返回值 (returned None)，是不是忘了 `return`？")
    try:
        got = torch.as_tensor(got)
    except Exception as error:
        raise ExerciseCheckError(
            f"{exercise_id}: {what} 应当是张量 (tensor)，收到的是 {type(got).__name__}"
        ) from error
    if tuple(got.shape) != tuple(expected.shape):
        hint = ""
        if tuple(got.shape) == tuple(reversed(expected.shape)):
            hint = " 形状正好是反过来的：是否转置 (transpose) 错了一次？"
        raise ExerciseCheckError(
            f"{exercise_id}: {what} 的形状 (shape) 应为 {tuple(expected.shape)}，"
            f"你的是 {tuple(got.shape)}。{hint}"
        )
    if got.is_floating_point() != expected.is_floating_point():
        raise ExerciseCheckError(
            f"{exercise_id}: {what} 的数据类型不对：应为{'浮点' if expected.is_floating_point() else '整数/布尔'}张量，"
            f"你的是 {got.dtype}"
        )
    return got.detach().to(torch.float64) if got.is_floating_point() else got.detach()


def _close(exercise_id: str, got: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float,
           what: str) -> torch.Tensor:
    """Element-wise agreement; a NaN where the expected value has none is an error of its own."""
    if not got.is_floating_point():
        return got == expected
    new_nan = torch.isnan(got) & ~torch.isnan(expected)
    if new_nan.any():
        pos = tuple(int(i) for i in new_nan.nonzero()[0])
        raise ExerciseCheckError(
            f"{exercise_id}: {what} 在位置 {pos} 出现了 NaN。常见原因：整行都被遮蔽 (masked) 后做 softmax，"
            "或除以了 0。"
        )
    return torch.isclose(got, expected.to(got.dtype), atol=atol, rtol=rtol, equal_nan=True)
