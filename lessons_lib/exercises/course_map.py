"""The course map (which lesson builds on which) and the checker of lesson 00's exercise.

:data:`PREREQUISITES` lists each lesson's *direct* prerequisites: the lessons its
「先修知识」 section names. ``tests/test_notebook_prose.py`` checks that every lesson's
section names exactly these, so the map cannot drift from the lessons. Lesson 00 prints it.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from lessons_lib.errors import CourseInputError
from lessons_lib.exercises import ExerciseCheckError, call_learner, passed

PREREQUISITES: dict[str, tuple[str, ...]] = {
    "00": (),
    "01": (),
    "02": ("01",),
    "03": ("01",),
    "04": ("03",),
    "05": ("03", "04"),
    "06": ("03", "04", "05"),
    "07": ("01", "06"),
    "08": ("03", "06", "07"),
    "09": ("07", "08"),
    "10": ("06", "08"),
    "11": ("08", "10"),
    "12": ("02", "05"),
}
# What each direct dependency is used for, in the checker's explanations.
WHY = {
    ("12", "05"): "第 12 课的解码器块沿用第 05 课编码器块的 Add&Norm、FFN 与 Post-LN / Pre-LN，模型的编码器就是第 05 课的",
    ("12", "02"): "第 12 课的跨注意力就是第 02 课的编码器–解码器注意力，教师强制与逐词生成也从第 02 课来",
    ("11", "10"): "第 11 课用第 10 课的两种读法（测试句对上的 bootstrap 与以种子为单位的 t 检验）、Holm 校正和森林图读一个研究",
    ("11", "08"): "第 11 课研究的是第 08 课的句法偏置（learned、hard_mask）和它的对照在不同数据量上的收益",
    ("10", "08"): "第 10 课读的是第 08 课的句法偏置模型和它的对照在真实 LCQMC 上的运行",
    ("10", "06"): "第 10 课从第 06 课的两个基线和两个训练配方出发，读它们在真实 LCQMC 上的结果",
    ("09", "08"): "第 09 课训练的是第 08 课的句法偏置模型，并用第 08 课的阳性对照检验每种做法",
    ("09", "07"): "第 09 课比较的是第 07 课的句法分析器、解析缓存和距离桶",
    ("07", "06"): "第 07 课用第 06 课的 `encode_pair` 把句对编码成 `[CLS] s1 [SEP] s2 [SEP]`，并沿用它的截断规则",
    ("07", "01"): "第 07 课的桶号最终要加到注意力分数上（第 01 课）",
    ("06", "05"): "第 06 课的分类器由第 05 课的编码器块堆成",
    ("06", "04"): "第 06 课的嵌入层加的是第 04 课的正弦位置编码",
    ("06", "03"): "第 06 课的每个编码器块里是第 03 课的多头自注意力",
    ("05", "04"): "第 05 课的嵌入层用到第 04 课的位置编码与 √D 缩放",
    ("05", "03"): "第 05 课的编码器块以第 03 课的多头自注意力为第一步",
    ("04", "03"): "第 04 课要解决的正是第 03 课的置换等变性",
    ("03", "01"): "第 03 课的每个头做的是第 01 课的缩放点积注意力",
}


def all_prerequisites(lesson: str) -> set[str]:
    """Every lesson that ``lesson`` builds on, directly or through another lesson."""
    if lesson not in PREREQUISITES:
        raise CourseInputError(f"unknown lesson {lesson!r}; the course map has {', '.join(PREREQUISITES)}")
    found: set[str] = set()
    todo = list(PREREQUISITES[lesson])
    while todo:
        current = todo.pop()
        if current not in found:
            found.add(current)
            todo += PREREQUISITES[current]
    return found


def _lesson_numbers(exercise: str, got: Any) -> set[str]:
    if got is None or isinstance(got, (str, int)) or not isinstance(got, Iterable):
        raise ExerciseCheckError(f"{exercise}: 请返回课号的集合或列表，如 {{1, 2}} 或 [\"01\", \"02\"]；你返回的是 {got!r}")
    numbers = set()
    for item in got:
        if isinstance(item, bool) or not isinstance(item, (int, str)) or not str(item).isdigit():
            raise ExerciseCheckError(f"{exercise}: {item!r} 不是课号（写成 6 或 \"06\"）")
        numbers.add(f"{int(item):02d}")
    return numbers


def _path(lesson: str, target: str) -> list[str]:
    """A chain of direct dependencies from ``lesson`` down to ``target`` (both included)."""
    for direct in PREREQUISITES[lesson]:
        if direct == target:
            return [lesson, target]
        if target in all_prerequisites(direct):
            return [lesson] + _path(direct, target)
    raise CourseInputError(f"lesson {target} is not a prerequisite of lesson {lesson}")


def check_prerequisites(fn: Callable[[], Any], lesson: str = "07", *, seed: int | None = None) -> None:
    """Exercise 00-1: ``fn()`` returns every lesson to finish before ``lesson`` (directly or not).

    ``seed`` (the grader's) is accepted and unused: a prediction has no inputs to redraw.
    """
    exercise = f"练习 00-1 第 {lesson} 课的全部先修课"
    got = _lesson_numbers(exercise, call_learner(exercise, fn))
    needed = all_prerequisites(lesson)
    missing, extra = sorted(needed - got), sorted(got - needed)
    if missing:
        chain = _path(lesson, missing[0])
        steps = "；".join(WHY.get((a, b), f"第 {a} 课建立在第 {b} 课之上") for a, b in zip(chain, chain[1:]))
        raise ExerciseCheckError(f"{exercise}: 少了第 {missing[0]} 课（共少 {len(missing)} 课）。沿着依赖链看：{steps}。")
    if extra:
        raise ExerciseCheckError(
            f"{exercise}: 第 {extra[0]} 课不在任何一条通往第 {lesson} 课的依赖链上（共多 {len(extra)} 课）："
            "从上面打印的直接依赖出发，一层一层往下找，只收集走得到的课。")
    passed(exercise, f"第 {lesson} 课直接依赖 {', '.join(PREREQUISITES[lesson])}，沿着每一课的直接依赖一直找下去，"
                     f"就得到这 {len(needed)} 课；没有列出的课可以以后再学。")
