"""The data-size study's tables: the curve, the primary family and A48, the power at the spread
measured, the secondary readings, the controls and A43, as ``lessons study`` prints them.

Each ``format_…`` function takes a :class:`~lessons_lib.ablation.study_analysis.Study` and
returns plain text; every printout of a partial study (``--partial``) opens with a line saying so.
"""

from __future__ import annotations

import math
import statistics
from fractions import Fraction
from typing import Mapping

from lessons_lib.evaluation.pair_tests import mcnemar_exact
from lessons_lib.evaluation.seed_tests import detectable_mean, significant
from lessons_lib.ablation.results import format_p
from lessons_lib.ablation.study_analysis import (ALPHA, BARELY_MOVED, BIASED_ARMS, CURVE_ARMS, FULL, HARD_MASK, LARGE,
                                                 LEARNED, NONE, PLAN_SEEDS, PRIMARY_FRACTIONS, Study, StudyContrast,
                                                 a48_verdict, fraction_name)

__all__ = ["format_curve", "format_a48", "format_runs", "format_discrimination", "format_exact_and_bootstrap",
           "format_power", "format_movement", "format_secondary", "format_controls", "format_a43"]

JACCARD_DEV = 0.6559  # the Jaccard rule's dev accuracy, shown beside none's
PLAN_SD = 0.002  # the per-seed SD the plan's power figures assumed (3 seeds on one 10 % subset)
BOOTSTRAP_LABEL = "these trained models, on other pairs like these"


def _partial_note(study: Study) -> list[str]:
    if not study.partial:
        return []
    counts = ", ".join(f"{fraction_name(f)}: seeds {', '.join(map(str, s))}" for f, s in study.complete_seeds.items())
    return [f"partial: only complete seeds read ({counts}); not the plan's analysis"]


def _p(value: float) -> str:
    return "—" if value != value else format_p(value)


def _interval(c: StudyContrast) -> str:
    if c.low != c.low:
        return f"{c.mean:+.4f} [—]"
    return f"{c.mean:+.4f} [{c.low:+.4f}, {c.high:+.4f}]"


def format_curve(study: Study) -> str:
    """Accuracy per fraction and arm (mean over complete seeds), none's dev beside the Jaccard rule's."""
    lines = _partial_note(study)
    lines.append(f"{'fraction':>8} {'seeds':>5} {'arm':<10} {'dev':>7} {'test':>7}")
    for f in study.fractions():
        seeds = study.complete_seeds[f]
        for arm in CURVE_ARMS:
            runs = [study.run(f, arm, s) for s in seeds]
            dev = statistics.fmean(r.dev_correct / len(r.dev_labels) for r in runs)
            test = statistics.fmean(r.test_correct_count / study.n_test for r in runs)
            note = f"  (Jaccard rule: {JACCARD_DEV})" if arm == NONE else ""
            lines.append(f"{fraction_name(f):>8} {len(seeds):>5} {arm:<10} {dev:7.4f} {test:7.4f}{note}")
    lines += [_unfinished_line(study, f) for f in study.unfinished if f != FULL]
    return "\n".join(lines)


def _unfinished_line(study: Study, fraction: Fraction) -> str:
    written, planned = study.unfinished[fraction]
    seeds = PLAN_SEEDS[fraction]
    name = "the full split" if fraction == FULL else fraction_name(fraction)
    which = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}–{seeds[-1]}"
    return f"{name}: {written} of {planned} runs written ({which}); nothing is read before all are"


def format_a48(study: Study, per_seed: bool = True) -> str:
    """The primary family: per contrast the number of seeds, mean [95 % t-interval], the test, p, Holm
    p and the verdict, then (``per_seed``) each seed's test pairs won and their SD; below it, once
    30 % is read, its two contrasts with the same columns and no Holm (descriptive); then A48."""
    contrasts = study.primary()
    beyond = [c for c in study.beyond_curve() if c.fraction != FULL]  # the full split's one seed is A43's
    rows = [(c, c.verdict()) for c in contrasts] + [(c, "descriptive (not in the family)") for c in beyond]
    lines = _partial_note(study)
    width = max(len(c.name) for c, _ in rows)
    lines.append(f"{'contrast':<{width}} {'seeds':>7}  {'mean [95 % t-interval]':<28} {'test':<9} {'p':>7} {'Holm p':>7}  "
                 f"verdict" + ("   per-seed test pairs won (seed SD)" if per_seed else ""))
    for c, verdict in rows:
        test = "paired t" if c.fraction is not None else f"Welch {c.df}"
        n = f"{len(c.wins)}" if c.fraction is not None else f"{len(c.wins)}+{len(c.wins_other)}"
        line = (f"{c.name:<{width}} {n:>7}  {_interval(c):<28} {test:<9} {_p(c.p_value):>7} {_p(c.holm_p):>7}  "
                f"{verdict}")
        if per_seed:
            wins = " ".join(f"{w:+d}" for w in c.wins) + ("  vs  " + " ".join(f"{w:+d}" for w in c.wins_other)
                                                           if c.fraction is None else "")
            spread = [w / study.n_test for w in c.wins]
            sd = f"  (SD {statistics.stdev(spread):.4f})" if c.fraction is not None and len(spread) > 1 else ""
            line += f"   {wins}{sd}"
        lines.append(line)
    lines.append(f"Holm over the {sum(c.p_value == c.p_value for c in contrasts)} testable contrasts; "
                 f"significant when Holm p ≤ {ALPHA}; intervals unadjusted.")
    lines.append(f"A48 (learned): {a48_verdict(contrasts, LEARNED)}; hard_mask beside it: "
                 f"{a48_verdict(contrasts, HARD_MASK)}")
    lines.append(f"(the plan's power figures assumed a seed SD of {PLAN_SD}; the power table reads them at the spread "
                 "measured)")
    return "\n".join(lines)


def format_power(study: Study) -> str:
    """The plan's power, at the spread the seeds showed: per primary contrast the SD of its per-seed
    differences and the true mean it would detect with 80 % power at α and at Holm's strictest
    level α / k (k: the testable contrasts), beside the mean it measured."""
    contrasts = [c for c in study.primary() if c.p_value == c.p_value]
    lines = _partial_note(study)
    if not contrasts:  # one complete seed per fraction (--partial): no spread, so no power to read
        lines.append("power: no primary contrast has two complete seeds yet, so there is no spread to read the "
                     "plan's power at")
        return "\n".join(lines)
    strictest = ALPHA / len(contrasts)
    width = max(len(c.name) for c in contrasts)
    lines.append(f"{'':<{width}} {'':>7} {'':>7}  {'detected 4 in 5 at':>18}")
    lines.append(f"{'contrast':<{width}} {'seed SD':>7} {'SE':>7}  {f'α {ALPHA}':>8} {f'α {strictest:.4f}':>9}  "
                 f"{'|mean|':>7}")
    for c in contrasts:
        se = c.standard_error
        sd = statistics.stdev([w / study.n_test for w in c.wins]) if c.fraction is not None else math.nan
        sd_text = f"{sd:7.4f}" if sd == sd else f"{'—':>7}"
        lines.append(f"{c.name:<{width}} {sd_text} {se:7.4f}  {detectable_mean(se, c.df, ALPHA):>8.4f} "
                     f"{detectable_mean(se, c.df, strictest):>9.4f}  {abs(c.mean):7.4f}")
    lines.append(f"(the true mean gain a two-sided t-test calls significant with 80 % power, at α and at Holm's "
                 f"strictest level α / {len(contrasts)}; the plan assumed a seed SD of {PLAN_SD})")
    return "\n".join(lines)


SECONDARY_KEYS = ("test_accuracy", "auc", "tuned_accuracy", "dev_ones", "test_ones")
SECONDARY_HEADER = f"{'test acc':>8} {'AUC':>7} {'tuned acc':>9} {'dev 1s':>6} {'test 1s':>7}"


def _secondary_cells(values: Mapping[str, float], signed: bool = False) -> str:
    # round before formatting so that a tiny negative mean prints +0.000, not -0.000
    fmt = (lambda v, w, d: f"{round(v, d) + 0.0:+{w}.{d}f}") if signed else (lambda v, w, d: f"{v:{w}.{d}f}")
    return " ".join(fmt(values[k], w, d) for k, w, d in zip(SECONDARY_KEYS, (8, 7, 9, 6, 7), (4, 4, 4, 3, 3)))


def format_runs(study: Study) -> str:
    """Per run (curve and controls): test accuracy, AUC, the dev-tuned threshold and its test accuracy, label-1 shares."""
    lines = _partial_note(study)
    lines.append(f"{'fraction':>8} {'arm':<34} {'seed':>5} {'tuned t':>7} {SECONDARY_HEADER}")
    for row in study.secondary_runs():
        lines.append(f"{fraction_name(row['fraction']):>8} {row['arm']:<34} {row['seed']:>5} {row['threshold']:7.4f} "
                     f"{_secondary_cells(row)}")
    return "\n".join(lines)


def format_discrimination(study: Study) -> str:
    """Per fraction and arm, means over seeds of plain accuracy, AUC, accuracy at the dev-tuned
    threshold and the label-1 shares; under each arm but none, its mean difference from none on
    the same seeds (a threshold shift moves the shares and plain accuracy, discrimination moves AUC)."""
    rows = {(r["fraction"], r["arm"], r["seed"]): r for r in study.secondary_runs()}
    lines = _partial_note(study)
    lines.append(f"{'fraction':>8} {'arm':<34} {'seeds':>5} {SECONDARY_HEADER}")
    for f in study.fractions():
        for arm in study.arms_at(f):
            seeds = study.paired(f, arm, NONE)[0]
            mean = {k: statistics.fmean(rows[f, arm, s][k] for s in seeds) for k in SECONDARY_KEYS}
            lines.append(f"{fraction_name(f):>8} {arm:<34} {len(seeds):>5} {_secondary_cells(mean)}")
            if arm != NONE:
                gain = {k: statistics.fmean(rows[f, arm, s][k] - rows[f, NONE, s][k] for s in seeds)
                        for k in SECONDARY_KEYS}
                lines.append(f"{'':>8} {'  − none':<34} {'':>5} {_secondary_cells(gain, signed=True)}")
    return "\n".join(lines)


def format_exact_and_bootstrap(study: Study) -> str:
    """Per primary contrast, and per arm at 30 % and the full split (outside the family): the t-test's
    p beside the exact permutation p, and the bootstrap over test pairs with the seeds held fixed."""
    contrasts = [*study.primary(), *study.beyond_curve()]
    width = max(len(c.name) for c in contrasts)
    lines = _partial_note(study)
    lines.append(f"{'contrast':<{width}} {'t p':>7} {'exact p':>7}  bootstrap over test pairs ({BOOTSTRAP_LABEL})")
    for c in contrasts:
        boot = study.bootstrap(c)
        interval = "—" if boot is None else f"{boot[0]:+.4f} [{boot[1]:+.4f}, {boot[2]:+.4f}]"
        disagree = ""
        if c.p_value == c.p_value and c.exact_p == c.exact_p and significant(c.p_value, ALPHA) != significant(c.exact_p, ALPHA):
            disagree = "  (t and exact disagree at 0.05)"
        outside = "" if c.fraction in PRIMARY_FRACTIONS or c.fraction is None else "  (not in the family)"
        lines.append(f"{c.name:<{width}} {_p(c.p_value):>7} {_p(c.exact_p):>7}  {interval}{disagree}{outside}")
    return "\n".join(lines)


def format_movement(study: Study) -> str:
    """Per fraction, the median over seeds of the learned table's largest |entry| at the chosen epoch."""
    lines = _partial_note(study)
    lines.append("learned table, median largest |entry| at the chosen epoch:")
    for f, median in study.movement().items():
        lines.append(f"  {fraction_name(f):>6}: {median:.4f}" + ("  barely moved" if median < BARELY_MOVED else ""))
    return "\n".join(lines)


def format_secondary(study: Study) -> str:
    """Descriptive, all of it: :func:`format_runs`, :func:`format_discrimination`,
    :func:`format_exact_and_bootstrap` and :func:`format_movement`, the partial note once."""
    parts = [f(study) for f in (format_runs, format_discrimination, format_exact_and_bootstrap, format_movement)]
    if study.partial:  # each part opens with the same one-line note: keep the first
        parts = [parts[0], *(part.split("\n", 1)[1] for part in parts[1:])]
    return "\n\n".join(parts)


def format_controls(study: Study) -> str:
    """The family of 3 at the control target, each control − none, and the word boundaries kept;
    until every control run at the target is written (unless ``partial``), only how many are."""
    (arm, fraction), family, descriptive = study.controls()
    lines = _partial_note(study)
    gain = study.dev_gain(fraction, arm)
    lines.append(f"control target: {arm} at {fraction_name(fraction)} (largest mean dev gain over none: "
                 + ("no complete seed" if gain is None else f"{float(gain):+.2f} dev pairs") + ")")
    written, planned = study.control_progress()
    if written < planned and not study.partial:  # the plan tests the controls once, when all are written
        lines.append(f"  controls: {written} of {planned} runs written; nothing is tested before all are "
                     "(--partial reads the seeds that have them)")
        return "\n".join(lines)
    if not family:
        lines.append("  no control runs at the target yet")
    width = max([len(c.name) for c in [*family, *descriptive]] or [0])
    for c in family:
        lines.append(f"  {c.name:<{width}} {_interval(c):<28} p {_p(c.p_value):>7} Holm {_p(c.holm_p):>7}  {c.verdict()}")
    if family:
        lines.append(f"  Holm over the {len(family)} control contrasts read")
    for c in descriptive:
        lines.append(f"  {c.name:<{width}} {_interval(c):<28} (descriptive)")
    kept = study.word_boundaries_kept(fraction)
    if kept:
        lines.append(f"  word boundaries kept by the scrambled segmentation: {min(kept):.3f} … {max(kept):.3f}")
    return "\n".join(lines)


def format_a43(study: Study) -> str:
    """A43, described: per biased arm, the full split's dev and test difference from none (seed 0)
    with its exact McNemar counts on test, beside the 10 % seeds' mean test difference, its
    seed-level interval and the range of their dev and test differences. One seed describes
    whether the 10 % reading carries to the full split; it cannot decide it."""
    lines = _partial_note(study)
    seeds = study.complete_seeds.get(FULL, [])
    if FULL in study.unfinished:
        lines.append(f"A43, {_unfinished_line(study, FULL)}")
        return "\n".join(lines)
    if not seeds:
        lines.append("A43: no full-split runs (none, learned and hard_mask on the whole training split) in this folder")
        return "\n".join(lines)
    seed = seeds[0]
    for arm in BIASED_ARMS:
        a, b = study.run(FULL, arm, seed), study.run(FULL, NONE, seed)
        dev, test = a.dev_correct - b.dev_correct, a.test_correct_count - b.test_correct_count
        mcnemar = mcnemar_exact(a.test_predictions, b.test_predictions, a.test_labels)
        lines.append(f"{arm} − none, full split, seed {seed}: dev {dev / len(a.dev_labels):+.4f} ({dev:+d} pairs), "
                     f"test {test / study.n_test:+.4f} ({test:+d} pairs); McNemar on test: {mcnemar.only_a} vs "
                     f"{mcnemar.only_b}, exact p {format_p(mcnemar.p_value)}")
        if study.complete_seeds.get(LARGE):
            ten = study.contrast(LARGE, arm, NONE)
            devs = [study.run(LARGE, arm, s).dev_correct - study.run(LARGE, NONE, s).dev_correct for s in ten.seeds]
            n_dev = len(a.dev_labels)
            inside = min(ten.wins) <= test <= max(ten.wins)
            lines.append(f"  10 % seeds (n={len(ten.wins)}): test {_interval(ten)}, range {min(ten.wins) / study.n_test:+.4f}"
                         f" … {max(ten.wins) / study.n_test:+.4f}; dev range {min(devs) / n_dev:+.4f} … "
                         f"{max(devs) / n_dev:+.4f}; the full split's test difference is "
                         f"{'inside' if inside else 'outside'} the 10 % seeds' range")
    return "\n".join(lines)
