"""Checkers for the syntax-biased attention exercises (bucket lookup, hard mask, the one-block
gradient, one change that breaks the positive control; bias dropout, the predictor's offset
yardstick, why the control cannot do without its tree).

The check inputs use the default bucket scheme of :mod:`lessons_lib.syntax.buckets`:
0 same word, 1–10 tree distances, 11 different sentences, 12 special tokens, -1 padding.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, Mapping, Sequence

import torch

from lessons_lib.exercises import (ExerciseCheckError, KnownMistake, call_learner, check_generator, check_random,
                                   compare_choice, compare_tensor, passed)
from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.config import MODEL_OPTIONS, TRAIN_OPTIONS, PairClassifierConfig, resolve_recipe
from lessons_lib.pairs.encoding import PairBatch
from lessons_lib.pairs.vocab import Vocabulary
from lessons_lib.syntax.attachment_control import make_attachment_control
from lessons_lib.syntax.buckets import (CROSS_SENTENCE_BUCKET, DEFAULT_MAX_DISTANCE, DEFAULT_SCHEME, NUM_BUCKETS,
                                        PAD_BUCKET, SPECIAL_BUCKET)
from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.ablation.experiment import run_experiment
from lessons_lib.syntax_bias.model import BUCKETS_KEY, SyntaxBiasedPairClassifier
from lessons_lib.syntax_bias.predictor import offset_baseline_accuracy
from lessons_lib.syntax_bias.registry import HardMaskOptions, LearnedOptions
from lessons_lib.syntax_bias.variants import HardMaskBias, LearnedBucketBias, lookup_bias

_SEED = 808  # seeds the check tables


def _lengths(seed: int | None) -> Sequence[tuple[int, int]]:
    """Sentence lengths of the two check pairs: the lesson's, or drawn from ``seed`` (each pair then padded)."""
    if seed is None:
        return ((4, 3), (3, 2))
    rng = check_random(seed)
    out = []
    for _ in range(2):
        len_a = rng.randint(1, 5)
        out.append((len_a, rng.randint(1, 6 - len_a)))  # at most 9 positions: padding in every row
    return out


def _buckets(seed: int | None = None) -> torch.Tensor:
    """``(2, 10, 10)`` bucket ids of two pairs ``[CLS] a [SEP] b [SEP]``, padded to 10 positions.

    Every character is its own word and each sentence is a chain, so the tree distance of
    two characters of a sentence is how far apart they are.
    """
    out = torch.full((2, 10, 10), PAD_BUCKET, dtype=torch.long)
    for row, (len_a, len_b) in enumerate(_lengths(seed)):
        part = [-1] + [0] * len_a + [-1] + [1] * len_b + [-1]
        n = len(part)
        for i in range(n):
            for j in range(n):
                if part[i] < 0 or part[j] < 0:
                    out[row, i, j] = SPECIAL_BUCKET
                elif part[i] != part[j]:
                    out[row, i, j] = CROSS_SENTENCE_BUCKET
                else:
                    out[row, i, j] = abs(i - j)
    return out


def _table(rows: int, seed: int | None = None) -> torch.Tensor:
    g = check_generator(None if seed is None else seed + rows, _SEED + rows)
    return torch.randn(rows, NUM_BUCKETS, generator=g)


def _hard_mask(buckets: torch.Tensor, radius: int) -> torch.Tensor:
    return HardMaskBias(DEFAULT_SCHEME, options=HardMaskOptions(hard_max_distance=radius))(buckets)[0]


def check_bucket_bias(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 08-1: ``fn(table (h, n_buckets), buckets (B, L, L))`` → bias ``(B, h, L, L)``, 0 at padding."""
    exercise = "练习 08-1 查表得到句法偏置"
    buckets = _buckets(seed)
    for rows in (1, 4):
        table = _table(rows, seed)
        got = call_learner(exercise, fn, table.clone(), buckets.clone())
        wrapped = table[:, buckets].transpose(0, 1)  # padding (-1) reads the last bucket
        minus_inf_pad = lookup_bias(table, buckets).masked_fill((buckets < 0)[:, None], float("-inf"))
        compare_tensor(
            exercise, got, lookup_bias(table, buckets),
            mistakes=[
                KnownMistake(wrapped, "填充位置 (padding, 桶号 -1) 的偏置不是 0：在 PyTorch 里 table[..., -1] "
                                      "取到的是最后一个桶（“特殊符号”桶），不会报错。先把 -1 换成任意合法桶号再查表，"
                                      "然后把这些位置置为 0。"),
                KnownMistake(minus_inf_pad, "你把填充位置设成了 -inf。填充的键已经由 key mask 遮蔽；"
                                            "而填充的查询行如果整行都是 -inf，softmax 会得到 NaN。偏置在填充处应为 0。"),
            ],
            what=f"偏置 (bias)，table 有 {rows} 行",
        )
    passed(exercise)


def check_hard_mask(fn: Callable[[torch.Tensor, int], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 08-2: ``fn(buckets (B, L, L), max_distance)`` → ``(B, 1, L, L)`` bias: -inf beyond the radius, else 0."""
    exercise = "练习 08-2 硬遮蔽 (hard mask)"
    buckets = _buckets(seed)
    radii = (1, 2) if seed is None else sorted(check_random(seed).sample(range(1, 6), 2))
    for radius in radii:
        got = call_learner(exercise, fn, buckets.clone(), radius)
        expected = _hard_mask(buckets, radius)
        far = (buckets > radius)[:, None]
        closes_all = torch.zeros_like(expected).masked_fill(far, float("-inf"))  # cross/special closed too
        closes_pad = expected.masked_fill((buckets < 0)[:, None], float("-inf"))
        off_by_one = _hard_mask(buckets, radius - 1)
        compare_tensor(
            exercise, got, expected,
            mistakes=[
                KnownMistake(closes_all, f"你把“跨句”({CROSS_SENTENCE_BUCKET}) 和“特殊符号”({SPECIAL_BUCKET}) 两个桶也遮住了：它们的桶号比距离大，"
                                         "但不是距离。跨句注意力被关掉，一个块就无法比较两个问句；[CLS] 也看不到句子。"),
                KnownMistake(closes_pad, "填充位置 (-1) 应为 0，不是 -inf：填充的查询行会整行 -inf，softmax 得到 NaN。"),
                KnownMistake(off_by_one, f"差一 (off-by-one)：距离恰好等于 max_distance={radius} 的词对应当保留。"),
                KnownMistake(expected.masked_fill(torch.isneginf(expected), -1e9),
                             "远处的字对应当恰好是 -inf（float(\"-inf\")）；你用的是一个有限的大负数（如 -1e9）。"
                             "它在 softmax 之后仍留下一点权重，与 -inf 的“完全关上”不是一回事。"),
            ],
            what=f"硬遮蔽偏置，max_distance={radius}",
            steps="哪些桶是句内距离（1–10）、哪些要保持 0（同词、跨句、特殊符号、填充）、距离等于 max_distance 时保留",
        )
    passed(exercise)


def _batch_of(buckets: torch.Tensor) -> PairBatch:
    """A labelled batch whose tokens follow the layout of ``buckets`` ((B, L, L), -1 = padding)."""
    real = buckets[:, 0] >= 0  # (B, L)
    special = (buckets.diagonal(dim1=1, dim2=2) == SPECIAL_BUCKET) & real
    g = torch.Generator().manual_seed(_SEED)
    vocab = Vocabulary.build([])  # only its special ids are used
    token_ids = torch.where(special, vocab.sep_id, torch.randint(4, 30, real.shape, generator=g))
    token_ids[:, 0] = vocab.cls_id
    token_ids = token_ids.masked_fill(~real, vocab.pad_id)
    specials_before = special.long().cumsum(1) - special.long()  # [CLS] 0, sentence a and its [SEP] 1, then 2
    segment_ids = ((specials_before >= 2) & real).long()
    return PairBatch(token_ids, segment_ids, real, torch.tensor([0, 1]), {BUCKETS_KEY: buckets})


def one_block_table_gradient() -> torch.Tensor:
    """``|∂loss/∂table|`` per bucket of a zero table in a one-block biased classifier, on the fixed check batch: ``(n_buckets,)``."""
    buckets = _buckets()
    with torch.random.fork_rng():  # the check must not move the lesson's random stream
        torch.manual_seed(_SEED)
        config = PairClassifierConfig.from_options(30, d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0)
        bias = LearnedBucketBias(DEFAULT_SCHEME, 2, 1, LearnedOptions(bias_lr_multiplier=1.0))
        model = SyntaxBiasedPairClassifier(config, bias)
    batch = _batch_of(buckets)
    torch.nn.functional.cross_entropy(model(batch), batch.required_labels()).backward()
    assert bias.table.grad is not None  # a learned table, after backward()
    return bias.table.grad.abs()[0, 0]


def _id_set(exercise: str, answer: Any, key: str) -> set[int]:
    if not isinstance(answer, dict) or key not in answer:
        raise ExerciseCheckError(f"{exercise}: 请返回一个字典，含键 {key!r}（值为桶号的集合）")
    try:
        ids = {int(b) for b in answer[key]}
    except (TypeError, ValueError):
        raise ExerciseCheckError(f"{exercise}: {key!r} 应当是桶号（整数）的集合，收到 {answer[key]!r}") from None
    outside = sorted(ids - set(range(NUM_BUCKETS)))
    if outside:
        raise ExerciseCheckError(f"{exercise}: {key!r} 里的桶号 {outside} 不存在（默认方案的桶号是 0–{NUM_BUCKETS - 1}）")
    return ids


def check_one_block_gradients(fn: Callable[[], dict], *, seed: int | None = None) -> None:
    """Exercise 08-3 (a prediction): with one encoder block, which buckets of a zero table get a
    gradient of exactly 0.0, and which only a rounding-error-sized one?

    ``fn()`` returns ``{"exactly_zero": {ids}, "rounding_only": {ids}}``; the checker measures the
    gradient on a fixed batch and compares. ``seed`` (the grader's) is accepted and unused: a
    prediction has no inputs to redraw, and the batch is the fixed one the lesson measures.
    """
    exercise = "练习 08-3 一个块时哪些桶拿不到梯度"
    answer = call_learner(exercise, fn)
    zero, rounding = _id_set(exercise, answer, "exactly_zero"), _id_set(exercise, answer, "rounding_only")
    grad = one_block_table_gradient()
    true_zero = {b for b in range(NUM_BUCKETS) if grad[b] == 0.0}
    true_rounding = {b for b in range(NUM_BUCKETS) if 0.0 < grad[b] < 1e-6}
    assert true_zero | true_rounding == set(range(NUM_BUCKETS)), "a one-block table got a real gradient"
    if SPECIAL_BUCKET in zero:
        raise ExerciseCheckError(
            f"{exercise}: “特殊符号”桶 ({SPECIAL_BUCKET}) 的梯度并不精确为 0。[CLS] 这一行的每个键都在这个桶里，"
            "它的梯度是整行 softmax 导数之和：数学上是 0（softmax 对整行加同一个常数不变），浮点求和却只能得到舍入误差大小的数。")
    if rounding - true_rounding:
        raise ExerciseCheckError(
            f"{exercise}: 桶 {sorted(rounding - true_rounding)} 的梯度精确为 0，不只是舍入误差：只有一个块时分类器只读 "
            "[CLS] 的输出，其余查询行的注意力影响不到它；这些桶只出现在那些行里，反向传播给它们的是精确的 0。")
    if zero != true_zero or rounding != true_rounding:
        missing = sorted((true_zero - zero) | (true_rounding - rounding))
        raise ExerciseCheckError(f"{exercise}: 还有桶没有归类或归错了：{missing}。每个桶号都属于两类之一。")
    passed(exercise)


# Exercise 08-4: the positive control of lesson 08 (1,500 training pairs, preset ``control``, gold
# trees, table multiplier 100), the learned tree bias, and where each setting a learner may change lives.
CONTROL_MULTIPLIER = 100.0
CONTROL_LEARNED = 0.9
"""Test accuracy from which the control counts as learned (lesson 08 asserts the same bound)."""
CONTROL_BROKEN = 0.6
"""Test accuracy up to which the control counts as broken (chance is 0.5; lesson 08's baseline bound)."""
_BIAS_SETTINGS = tuple(f.name for f in fields(LearnedOptions))
_SCHEME_SETTINGS = {"parser_noise": 0.0, "max_distance": DEFAULT_MAX_DISTANCE, "log_buckets": False}
CONTROL_CHECK_SEEDS = 3
"""Exercise 08-4 counts a change as breaking the control only if it fails on this many seeds."""
# Why a change broke the control, by setting and by direction ("lower"/"higher" than the lesson's value;
# "any" for a setting that is not a number). A direction without an entry gets the generic explanation.
_WHY_IT_BROKE = {
    ("bias_lr_multiplier", "lower"): "表从 0 出发；乘数小了，这两百多步里表挪不到解需要的大小（第 6 节）。",
    ("bias_lr_multiplier", "higher"): "乘数大了：表每一步挪得太远，越过解来回摆动或把注意力推到极端，"
                                      "表的有效学习率是乘数 × 学习率（第 6 节）。",
    ("parser_noise", "higher"): "重挂的词多了，读法不再写在桶里：树里没有了信息，表学不到它（第 7 节）。",
    ("max_distance", "lower"): "封顶以上的距离都并进最后一个桶：两种读法字对数不同的那些距离（第 6 节打印了）被并到一起，"
                               "桶号里区分读法的信息少了；封顶为 1 时一点不剩：句内不同词的字对全在同一个桶里。",
    ("epochs", "lower"): "训练太短：表要等模型其余部分开始用它才有像样的梯度，学会本来就是一次较晚的跳变（第 5、6 节）。",
    ("lr", "lower"): "学习率小了：每一步挪得太近，表的有效学习率是乘数 × 学习率（第 6 节），这两百多步里走不到解。",
    ("lr", "higher"): "学习率大了：每一步挪得太远，训练不稳，整个模型（不只是表）都学不稳（第 6 节）。",
}
_GENERIC_WHY = ("你找到了一种本课没有列出的失效方式。它为什么让机制失效？用第 5–7 节的办法"
                "（看学到的表、看损失曲线）查一查再下结论。")


def _direction(value: Any, lesson: Any) -> str:
    """"lower" or "higher" when both are numbers (booleans excluded), else "any"."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, lesson))
    return ("lower" if value < lesson else "higher") if numbers else "any"


def control_seeds(seed: int | None) -> tuple[int, ...]:
    """The seeds exercise 08-4 trains on: the lesson's 0, 1, 2, or the grader's ``seed`` and the next two."""
    first = 0 if seed is None else seed
    return tuple(range(first, first + CONTROL_CHECK_SEEDS))


def _control_config(change: Mapping[str, Any], seed: int) -> ExperimentConfig:
    """Lesson 08's control run of the learned bias with ``change`` (settings → values; ``{}``: none) applied."""
    bias = {"bias_lr_multiplier": CONTROL_MULTIPLIER}
    model, train, scheme = {}, {}, {}
    for name, value in change.items():
        if name in _BIAS_SETTINGS:
            bias[name] = value
        elif name in _SCHEME_SETTINGS:
            scheme[name] = value
        elif name in MODEL_OPTIONS:
            model[name] = value
        else:
            train[name] = value
    return ExperimentConfig(variants=["learned"], seeds=[seed], preset="control", model=model, train=train,
                            bias_options=bias, **scheme)


def _lesson_value(name: str) -> Any:
    """The lesson's own value of a setting of the control (what a change must differ from)."""
    if name == "bias_lr_multiplier":
        return CONTROL_MULTIPLIER
    if name in _BIAS_SETTINGS:
        return getattr(LearnedOptions(), name)
    if name in _SCHEME_SETTINGS:
        return _SCHEME_SETTINGS[name]
    recipe = resolve_recipe("control")
    if name in TRAIN_OPTIONS:
        return getattr(recipe.train, name)
    return recipe.model.get(name)


def control_accuracy_with(change: Mapping[str, Any], seed: int = 0) -> float:
    """Test accuracy of the learned tree bias on lesson 08's positive control with one setting changed.

    ``change`` maps one setting (a learned-bias option, ``parser_noise``, ``max_distance``,
    ``log_buckets``, a model option or a training option) to its value; ``{}`` is the lesson's
    run. Trains one model (about 10 s on one core).

    Raises:
        CourseInputError: the setting or its value is refused by the run's configuration.
    """
    task = make_attachment_control(n_train=1500)
    config = _control_config(change, seed)
    with torch.random.fork_rng():  # the check must not move the lesson's random stream
        result = run_experiment(task.as_data(), task.parses, config, device="cpu", progress=False, log=None)
    return result.runs[0].test_accuracy


def check_one_change_breaks_control(fn: Callable[[], dict], *, seed: int | None = None) -> None:
    """Exercise 08-4 (open): ``fn()`` returns ``{setting: value}``, one change that should stop the
    learned tree bias from learning lesson 08's positive control.

    The checker trains the control with that change on :data:`CONTROL_CHECK_SEEDS` seeds
    (:func:`control_seeds`: the lesson's 0, 1, 2, or the grader's ``seed`` and the next two) and
    accepts only if the test accuracy is at most :data:`CONTROL_BROKEN` on every one of them: a
    change that fails on one seed and learns on another (the multiplier ×30 fails on seed 0) has
    not broken the mechanism. It stops at the first seed that still learns. With the grader's
    seeds it first trains the unchanged control on each: a seed on which even the lesson's
    settings fail proves nothing, and is reported as such. ``n_layers`` below 2 is refused
    before any training: the run refuses it (lesson 08, section 2: with one block the bias
    cannot act), which is not the control failing to learn. Each run trains one model.
    """
    exercise = "练习 08-4 只改一处，让阳性对照失败"
    change = call_learner(exercise, fn)
    if not isinstance(change, dict) or len(change) != 1:
        raise ExerciseCheckError(f"{exercise}: 请返回恰好含一个键的字典 {{设置名: 新值}}，你返回的是 {change!r}")
    (name, value), = change.items()
    settings = (*_BIAS_SETTINGS, *_SCHEME_SETTINGS, *MODEL_OPTIONS, *TRAIN_OPTIONS)
    if name not in settings or name == "seed":
        raise ExerciseCheckError(f"{exercise}: {name!r} 不是对照运行的一项设置；可以改的有：{', '.join(s for s in settings if s != 'seed')}")
    lesson_value = _lesson_value(name)
    if value == lesson_value:
        raise ExerciseCheckError(f"{exercise}: {name} = {value!r} 就是本课自己的设置，什么也没改。")
    if name == "n_layers" and isinstance(value, int) and not isinstance(value, bool) and value < 2:
        raise ExerciseCheckError(
            f"{exercise}: n_layers = {value!r} 不算答案：运行拒绝少于 2 个块的句法偏置模型。第 2 节讲过原因：一个块时只有 "
            "[CLS] 的查询行到达分类器，它的键全在“特殊符号”桶里，偏置只给整行加一个常数，softmax 把它抵消。"
            "那是偏置根本接不上，不是对照学不会；请找一种运行接受、却让表学不会的改动。")
    try:
        _control_config(change, 0)
    except CourseInputError as error:
        raise ExerciseCheckError(f"{exercise}: 运行拒绝了这个设置：{error}") from None
    seeds = control_seeds(seed)
    accuracies = []
    for run_seed in seeds:
        if seed is not None and control_accuracy_with({}, run_seed) < CONTROL_LEARNED:
            raise ExerciseCheckError(f"{exercise}: 种子 {run_seed} 上，不改任何设置的对照本身就没有学会，"
                                     "这个种子检验不了你的改动；换一个种子再判。")
        accuracy = control_accuracy_with(change, run_seed)
        accuracies.append(accuracy)
        if accuracy > CONTROL_BROKEN:
            state = "仍然学会了" if accuracy >= CONTROL_LEARNED else "只学会了一部分"
            before = (f"前面的种子上它确实失败了（{', '.join(f'{a:.3f}' for a in accuracies[:-1])}），"
                      "但一个种子上的失败可能只是运气；" if len(accuracies) > 1 else "")
            raise ExerciseCheckError(
                f"{exercise}: 改成 {name} = {value!r} 之后，可学习的树偏置在种子 {run_seed} 上的测试准确率是 {accuracy:.3f}，"
                f"{state}（要在 {len(seeds)} 个种子上都 ≤ {CONTROL_BROKEN} 才算失败）。{before}这一处改动既没有拿走树里的信息，"
                "也没有让表动不了：想想第 6 节（表的学习率）和第 7 节（树的质量），或者想想桶号本身。")
    why = _WHY_IT_BROKE.get((name, _direction(value, lesson_value)), _GENERIC_WHY)
    passed(exercise, f"{name} = {value!r} 时，对照的测试准确率在种子 {', '.join(map(str, seeds))} 上是 "
                     f"{', '.join(f'{a:.3f}' for a in accuracies)}，都 ≤ {CONTROL_BROKEN}（不改设置时第 6 节的每个种子都学会了）。{why}")


def check_drop_bias(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int | None = None) -> None:
    """Exercise 09-1: ``fn(bias (B, h, L, L), dropped (B,) bool)`` → the bias with every dropped pair's entries 0.

    With the grader's ``seed`` the pairs' lengths and the bias table are drawn afresh.
    """
    exercise = "练习 09-1 偏置 dropout"
    buckets = _buckets(seed)
    hard = _hard_mask(buckets, 1)  # holds -inf: the case a multiplication gets wrong
    learned = lookup_bias(_table(4, seed), buckets)
    for bias in (learned, hard):
        for dropped in (torch.tensor([True, False]), torch.tensor([False, True])):
            got = call_learner(exercise, fn, bias.clone(), dropped.clone())
            flag = dropped[:, None, None, None]
            expected = torch.where(flag, torch.zeros(()), bias)
            multiplied = bias * (~flag).float()
            if isinstance(got, torch.Tensor) and got.shape == bias.shape and bool(torch.isnan(got).any()):
                if bool(torch.isclose(got, multiplied, equal_nan=True).all()):
                    raise ExerciseCheckError(
                        f"{exercise}: 结果里出现了 NaN。你把偏置乘以了 0/1 的遮蔽：硬遮蔽的偏置里有 -inf，"
                        "而 -inf × 0 = NaN。丢弃要“换成 0”（torch.where），不要“乘以 0”。")
            compare_tensor(
                exercise, got, expected,
                mistakes=[
                    KnownMistake(torch.where(~flag, torch.zeros(()), bias),
                                 "你把保留的句对置 0、丢弃的句对原样保留了：dropped 为 True 的句对才去掉偏置。"),
                    KnownMistake(bias.masked_fill(flag, float("-inf")),
                                 "丢弃偏置是让这个句对“没有偏置”（加 0），不是 -inf：-inf 会遮住所有键。"),
                    KnownMistake(bias, "你没有去掉任何偏置：dropped 为 True 的句对，整块 (h, L, L) 偏置都应为 0。"),
                ],
                what="丢弃后的偏置",
            )
    passed(exercise)


def _offset_cases(seed: int | None = None) -> list[tuple[torch.Tensor, ...]]:
    g = check_generator(seed, _SEED + 9)
    cases: list[tuple[torch.Tensor, ...]] = []
    for n_train, n_test in ((200, 80), (50, 40)):
        train_offsets = torch.randint(-6, 7, (n_train,), generator=g)
        train_buckets = (train_offsets.abs() // 2 + torch.randint(0, 2, (n_train,), generator=g)).clamp(max=10)
        test_offsets = torch.randint(-8, 9, (n_test,), generator=g)  # some offsets unseen in training
        test_buckets = (test_offsets.abs() // 2).clamp(max=10)
        cases.append((train_offsets, train_buckets, test_offsets, test_buckets))
    # A tie: offset 1 holds buckets 3 and 1 once each; the smallest id wins.
    cases.append((torch.tensor([1, 1, 2]), torch.tensor([3, 1, 2]), torch.tensor([1, 2]), torch.tensor([1, 2])))
    return cases


def check_offset_baseline(fn: Callable[..., float], *, seed: int | None = None) -> None:
    """Exercise 09-2: ``fn(train_offsets, train_buckets, test_offsets, test_buckets)`` → accuracy (float).

    With the grader's ``seed`` the random offset lists are drawn afresh (the tie case stays).
    """
    exercise = "练习 09-2 只看偏移的基准"
    for train_offsets, train_buckets, test_offsets, test_buckets in _offset_cases(seed):
        got = call_learner(exercise, fn, train_offsets.clone(), train_buckets.clone(), test_offsets.clone(),
                           test_buckets.clone())
        expected = offset_baseline_accuracy(train_offsets, train_buckets, test_offsets, test_buckets)
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise ExerciseCheckError(f"{exercise}: 应当返回一个数（准确率），收到的是 {type(got).__name__}") from None
        if abs(value - expected) <= 1e-6:
            continue
        absolute = _absolute_offset_rule(train_offsets, train_buckets, test_offsets, test_buckets)
        if abs(value - absolute) <= 1e-6:
            raise ExerciseCheckError(f"{exercise}: 你按 |j − i| 分组了。偏移有正负：j 在 i 之前还是之后，"
                                     "在依存树里并不对称（中心词常在后面），按有符号的 j − i 分组。")
        if not 0.0 <= value <= 1.0:
            raise ExerciseCheckError(f"{exercise}: 准确率应在 [0, 1] 内，你的是 {value:.4f}：是不是返回了答对的个数？")
        raise ExerciseCheckError(
            f"{exercise}: 你的准确率 {value:.4f} 不对。规则只从训练对学：每个偏移取出现最多的桶号（并列取较小的），"
            "训练中没见过的偏移取训练中整体最多的桶号；然后在测试对上数猜对的比例。")
    passed(exercise)


def _absolute_offset_rule(train_offsets, train_buckets, test_offsets, test_buckets) -> float:
    return offset_baseline_accuracy(train_offsets.abs(), train_buckets, test_offsets.abs(), test_buckets)


# Exercise 09-3: why the positive control cannot do without its tree. One right answer;
# each wrong one gets the reason it does not explain the measurement.
CONTROL_EXPLANATIONS = {
    "A": "预测器太小：换一个更大、看得更远的预测器，就能把读法预测出来。",
    "B": "句子 A 的读法是生成时随机抽取的，与文字无关：同一串字有两棵树，只读文字的预测器（或分析器）"
         "对同一串字只能给出同一个答案。",
    "C": "训练时没有用偏置 dropout，模型没学会不靠树做判断。",
    "D": "预测器的桶准确率太低：句子 B 和句子 A 的大部分字对都预测错了。",
}
_WRONG = {
    "A": "不是大小的问题：两种读法的字和字序完全相同，任何只读文字的函数对这两棵树都给出同一个输出，"
         "预测器再大也只能猜中一半。",
    "C": "偏置 dropout 帮不了这里：文字里没有读法的信息，模型不靠树也无从得知答案——本课的曲线上，"
         "任何 p 下“没有树”的准确率都在 0.5 附近。",
    "D": "桶准确率并不低：句子 B 没有歧义，句子 A 的字对也有很多在两种读法下同桶；预测器错在两种读法不同桶的"
         "那些字对上，而它们恰恰是文字决定不了的。",
}


def check_control_explanation(fn: Callable[[], str], *, seed: int | None = None) -> None:
    """Exercise 09-3: ``fn()`` returns the letter of :data:`CONTROL_EXPLANATIONS` that explains the
    control's 0.5 without trees.

    ``seed`` (the grader's) is accepted and unused: an explanation has no inputs to redraw.
    """
    exercise = "练习 09-3 对照任务为什么离不开树"
    answer = call_learner(exercise, fn)
    letter = answer.strip().upper() if isinstance(answer, str) else answer
    compare_choice(exercise, letter, CONTROL_EXPLANATIONS, "B", _WRONG)
    passed(exercise, "两种读法的字和字序完全相同，模型读到的文字对两棵树是同一个输入；读法只写在金标准树里。"
                     "所以分析器、预测器、去掉偏置，凡是不用金标准树的做法，都只能回到一半左右。")
