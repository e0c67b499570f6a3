"""The translation study, read as its plan fixes it: the design in ``results/translation/design.json``
(written with ``PLAN.md``, before the first confirmatory run), the runs one results file each.

- :class:`StudyDesign` — the plan's fractions and seeds, arms, controls, level and the claim's band,
  read from the design file by :func:`load_design`.
- :func:`load_study` — every confirmatory file of a folder, checked against the design and against
  each other (:class:`TranslationStudy`).
- :meth:`TranslationStudy.primary` — the family: each biased arm − ``none`` at every fraction, paired
  by seed, and per arm (its gain at the scarcest fraction) − (its gain at the full split), Welch over
  the two disjoint sets of seeds; Holm over the family, one rule (Holm p ≤ α).
- :func:`~lessons_lib.evaluation.seed_tests.scarcity_verdict` reads A48 from that family
  (:meth:`TranslationStudy.scarcity_verdicts`); :func:`claim_verdict` reads "about 0.5–1 BLEU" from the
  claim arm's gain at the full split, a contrast of its own.
- :meth:`TranslationStudy.controls` — the control family at the plan's control fraction, read only
  once every planned control run is written.

The seed is the unit of every contrast. BLEU is corpus BLEU on the whole test split (group ``all``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Sequence

from lessons_lib.errors import CourseInputError
from lessons_lib.files import read_json_file
from lessons_lib.evaluation.seed_tests import (SeedTest, holm_family, mean_ci95, paired_seed_test,
                                               scarcity_verdict, significant, welch_seed_test)
from lessons_lib.translation.analysis import arm_label, arm_scores, check_one_setup, read_results, runs_by_arm
from lessons_lib.validation import exact

__all__ = ["DESIGN_FORMAT", "CLAIM_VERDICTS", "StudyDesign", "load_design", "StudyContrast", "TranslationStudy",
           "load_study", "claim_verdict", "format_study"]

DESIGN_FORMAT = "lessons-translation-design/1"
CLAIM_VERDICTS = ("support", "against", "larger", "inconclusive")
_GROUP = "all"


@dataclass(frozen=True)
class StudyDesign:
    """What the plan fixes before the first confirmatory run.

    Attributes:
        seeds: per training fraction (exact decimal), the seeds of its runs; disjoint across fractions.
        baseline: the arm every biased arm is read against (``"none"``).
        biased_arms: the arms of the primary family (``"learned-parser"``, ``"hard_mask-parser"``).
        claim_arm: the arm the "0.5–1 BLEU" claim is read for, at the full split.
        claim_band: the claimed gain in BLEU, ``(low, high)``.
        control_fraction: the fraction the controls run at.
        controls: the control family, each ``(a, b)`` read as a − b, paired by seed.
        alpha: the level of the one rule (Holm p ≤ ``alpha``).
    """

    seeds: Mapping[Fraction, tuple[int, ...]]
    baseline: str
    biased_arms: tuple[str, ...]
    claim_arm: str
    claim_band: tuple[float, float]
    control_fraction: Fraction
    controls: tuple[tuple[str, str], ...]
    alpha: float

    @property
    def fractions(self) -> list[Fraction]:
        return sorted(self.seeds)

    @property
    def scarce(self) -> Fraction:
        return self.fractions[0]

    @property
    def full(self) -> Fraction:
        return self.fractions[-1]

    def control_arms(self) -> list[str]:
        """The arms that run only for the controls (not the baseline's or a biased arm's)."""
        curve = {self.baseline, *self.biased_arms}
        return sorted({arm for pair in self.controls for arm in pair} - curve)


def load_design(path: str | Path) -> StudyDesign:
    """The design file, checked: its format, at least two fractions, disjoint seeds, a control
    fraction among the fractions.

    Raises:
        CourseInputError: naming the file and what is wrong.
    """
    path = Path(path)
    raw = read_json_file(path, "design file")
    if not isinstance(raw, dict) or raw.get("format") != DESIGN_FORMAT:
        raise CourseInputError(f"{path}: not a translation study design (format {DESIGN_FORMAT!r})")
    try:
        design = StudyDesign(
            seeds={exact(float(f)): tuple(int(s) for s in seeds) for f, seeds in raw["seeds"].items()},
            baseline=str(raw["baseline"]), biased_arms=tuple(map(str, raw["biased_arms"])),
            claim_arm=str(raw["claim_arm"]), claim_band=(float(raw["claim_band"][0]), float(raw["claim_band"][1])),
            control_fraction=exact(float(raw["control_fraction"])),
            controls=tuple((str(a), str(b)) for a, b in raw["controls"]), alpha=float(raw["alpha"]))
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise CourseInputError(f"{path}: a field is missing or malformed ({type(error).__name__}: {error})") from None
    every = [s for seeds in design.seeds.values() for s in seeds]
    if len(design.seeds) < 2 or len(every) != len(set(every)):
        raise CourseInputError(f"{path}: the design needs two fractions or more, each with seeds of its own")
    if design.control_fraction not in design.seeds or design.claim_arm not in design.biased_arms:
        raise CourseInputError(f"{path}: the control fraction must be one of the fractions and the claim arm a biased arm")
    return design


@dataclass(frozen=True)
class StudyContrast:
    """One contrast of the study.

    Attributes:
        name: as the tables print it (``"learned-parser − none at 10 %"``).
        arm: the arm it is about.
        fraction: the fraction of a within-fraction contrast; ``None`` for a difference of gains.
        seeds: the seeds it reads (both fractions' for a difference of gains).
        test: its :class:`~lessons_lib.evaluation.seed_tests.SeedTest` (Holm p once read in a family).
        differences: per seed (in ``seeds`` order) the difference in BLEU; empty for a difference of
            gains, whose two fractions' seeds are not paired.
    """

    name: str
    arm: str
    fraction: Fraction | None
    seeds: tuple[int, ...]
    test: SeedTest
    differences: tuple[float, ...] = ()


def _percent(fraction: Fraction) -> str:
    return f"{float(fraction) * 100:g} %"


@dataclass
class TranslationStudy:
    """The confirmatory runs, ``{fraction: {arm: {seed: record}}}``, and the design they follow.

    Attributes:
        partial: whether some planned curve runs are not written yet (every reading then says so).
    """

    design: StudyDesign
    runs: dict[Fraction, dict[str, dict[int, dict]]]
    partial: bool

    def seeds(self, fraction: Fraction, *arms: str) -> list[int]:
        """The planned seeds of ``fraction`` with a run of every arm given."""
        have = self.runs.get(fraction, {})
        return [s for s in self.design.seeds[fraction] if all(s in have.get(arm, {}) for arm in arms)]

    def bleu(self, fraction: Fraction, arm: str) -> dict[int, float]:
        """``{seed: test BLEU}`` of one arm at one fraction."""
        return arm_scores(self.runs.get(fraction, {}).get(arm, {}), _GROUP)

    def gains(self, fraction: Fraction, arm: str, baseline: str | None = None) -> tuple[list[int], list[float]]:
        """``(seeds, per seed arm − baseline in BLEU)`` over the seeds with both runs."""
        baseline = baseline or self.design.baseline
        seeds = self.seeds(fraction, arm, baseline)
        a, b = self.bleu(fraction, arm), self.bleu(fraction, baseline)
        return seeds, [a[s] - b[s] for s in seeds]

    def _paired(self, fraction: Fraction, arm: str, baseline: str | None = None) -> StudyContrast | None:
        seeds, gains = self.gains(fraction, arm, baseline)
        if not seeds:
            return None
        name = f"{arm} − {baseline or self.design.baseline} at {_percent(fraction)}"
        return StudyContrast(name, arm, fraction, tuple(seeds), paired_seed_test(gains), tuple(gains))

    def primary(self) -> list[StudyContrast]:
        """The primary family (as far as the files allow, with :attr:`partial`), Holm over it."""
        design, out = self.design, []
        for arm in design.biased_arms:
            within = {f: self._paired(f, arm) for f in design.fractions}
            out += [c for c in within.values() if c is not None]
            scarce, full = within[design.scarce], within[design.full]
            if scarce is not None and full is not None:
                test = welch_seed_test(self.gains(design.scarce, arm)[1], self.gains(design.full, arm)[1])
                out.append(StudyContrast(f"({arm} − {design.baseline} at {_percent(design.scarce)}) − "
                                         f"(… at {_percent(design.full)})", arm, None, scarce.seeds + full.seeds, test))
        return _with_holm(out)

    def scarcity_verdicts(self, family: Sequence[StudyContrast] | None = None) -> dict[str, str]:
        """Per biased arm, A48's verdict from the primary family (``family``: :meth:`primary`, if
        already read)."""
        family = self.primary() if family is None else family
        out = {}
        for arm in self.design.biased_arms:
            gain = next((c.test for c in family if c.arm == arm and c.fraction == self.design.scarce), None)
            dod = next((c.test for c in family if c.arm == arm and c.fraction is None), None)
            out[arm] = scarcity_verdict(gain, dod, self.design.alpha)
        return out

    def claim(self) -> StudyContrast | None:
        """The claim arm − baseline at the full split, read alone (no Holm: a family of its own)."""
        return self._paired(self.design.full, self.design.claim_arm)

    def curve(self) -> dict[Fraction, dict[str, tuple[float, float]]]:
        """Per fraction and curve arm, the mean test BLEU over seeds and its 95 % t half-width."""
        arms = (self.design.baseline, *self.design.biased_arms)
        out: dict[Fraction, dict[str, tuple[float, float]]] = {}
        for fraction in self.design.fractions:
            for arm in arms:
                scores = list(self.bleu(fraction, arm).values())
                if scores:
                    out.setdefault(fraction, {})[arm] = mean_ci95(scores)
        return out

    def control_progress(self) -> tuple[int, int]:
        """``(written, planned)`` control runs: counted, never read, before the controls' one test."""
        fraction, arms = self.design.control_fraction, self.design.control_arms()
        have = self.runs.get(fraction, {})
        written = sum(s in have.get(arm, {}) for arm in arms for s in self.design.seeds[fraction])
        return written, len(arms) * len(self.design.seeds[fraction])

    def controls(self) -> list[StudyContrast]:
        """The control family at the control fraction, Holm over it.

        Raises:
            CourseInputError: a planned control run is not written yet (the controls are read once).
        """
        written, planned = self.control_progress()
        if written < planned:
            raise CourseInputError(f"{written} of {planned} control runs are written; the controls are read once, "
                                   "when all are")
        fraction = self.design.control_fraction
        out = [self._paired(fraction, a, b) for a, b in self.design.controls]
        return _with_holm([c for c in out if c is not None])


def _with_holm(contrasts: list[StudyContrast]) -> list[StudyContrast]:
    tests = holm_family([c.test for c in contrasts])
    return [dataclasses.replace(c, test=t) for c, t in zip(contrasts, tests)]


def claim_verdict(contrast: StudyContrast | None, band: tuple[float, float], alpha: float = 0.05) -> str:
    """The plan's reading of "about ``band[0]``–``band[1]`` BLEU" from the claim's contrast (its own
    95 % t-interval and unadjusted p).

    Returns:
        ``against`` when the interval lies below the band (a gain this large is ruled out);
        ``larger`` when it lies above it; ``support`` when the gain is shown positive (p ≤ ``alpha``)
        and the interval reaches the band; else ``inconclusive`` (also with fewer than 2 seeds).
    """
    if contrast is None or not contrast.test.testable:
        return "inconclusive"
    test, (low, high) = contrast.test, band
    if test.high < low:
        return "against"
    if test.low > high:
        return "larger"
    if significant(test.p_value, alpha) and test.sign > 0:
        return "support"
    return "inconclusive"


def load_study(folder: str | Path, design: StudyDesign, *, partial: bool = False) -> TranslationStudy:
    """Every results file under ``folder`` (``f*.json``, one level down too), read as the design's study.

    Checks: one data, knobs, sizes, commit, device, ``cpu_capability`` and torch for every file (a
    difference of gains spans two fractions); only the design's fractions, arms and seeds (the
    pilot's seeds are in none); one training subset per fraction and seed, whatever the arm.

    Raises:
        CourseInputError: any of those, or, without ``partial``, a planned curve run missing.
    """
    records = read_results([folder])
    check_one_setup(records, keys=("data", "train_config", "sizes"))
    arms = {design.baseline, *design.biased_arms, *design.control_arms()}
    grouped: dict[Fraction, list[tuple[Path, dict]]] = {}
    for path, record in records:
        fraction = exact(record["fraction"])
        if fraction not in design.seeds or record["seed"] not in design.seeds[fraction]:
            raise CourseInputError(f"{path}: fraction {record['fraction']} seed {record['seed']} is not in the plan's design")
        if arm_label(record) not in arms:
            raise CourseInputError(f"{path}: the arm {arm_label(record)!r} is not in the plan's design")
        grouped.setdefault(fraction, []).append((path, record))
    runs = {fraction: runs_by_arm(found) for fraction, found in grouped.items()}
    for fraction, by_arm in runs.items():
        _check_subsets(fraction, by_arm)
    study = TranslationStudy(design, runs, partial=False)
    missing = [(f, arm, s) for f in design.fractions for arm in (design.baseline, *design.biased_arms)
               for s in design.seeds[f] if s not in runs.get(f, {}).get(arm, {})]
    if missing and not partial:
        f, arm, s = missing[0]
        raise CourseInputError(f"{folder}: {len(missing)} planned runs are not written yet (first: {arm} seed {s} at "
                               f"{_percent(f)}); read the finished ones with partial=True (--partial)")
    study.partial = bool(missing)
    return study


def _check_subsets(fraction: Fraction, by_arm: Mapping[str, Mapping[int, dict]]) -> None:
    """Every arm of one seed trained on the same subset: the contrast then differs by the arm alone."""
    first: dict[int, tuple[str, str | None]] = {}
    for arm, by_seed in by_arm.items():
        for seed, record in by_seed.items():
            digest = record.get("train_subset_sha256")
            seen = first.setdefault(seed, (arm, digest))
            if seen[1] != digest:
                raise CourseInputError(f"{_percent(fraction)} seed {seed}: {arm} trained on another subset than {seen[0]}")


def _p(p: float) -> str:
    return "—" if p != p else "<0.0001" if p < 1e-4 else f"{p:.4f}"


def _rows(contrasts: Sequence[StudyContrast], alpha: float) -> list[str]:
    """A family's contrasts as table rows, each with its verdict by the one rule (Holm p ≤ ``alpha``)."""
    lines = [f"{'contrast':<52} {'seeds':>5} {'mean ΔBLEU':>10} {'95 % interval':>17} {'p':>8} {'Holm p':>8}  verdict"]
    for c in contrasts:
        t = c.test
        verdict = "not testable" if not t.testable else f"{'higher' if t.sign > 0 else 'lower'} (p ≤ {alpha:g})" \
            if t.significant(alpha) else "not shown"
        lines.append(f"{c.name:<52} {len(c.seeds):>5} {t.mean:>+10.2f} [{t.low:>+7.2f}, {t.high:>+7.2f}] "
                     f"{_p(t.p_value):>8} {_p(t.holm_p):>8}  {verdict}")
    return lines


def format_study(study: TranslationStudy) -> str:
    """The curve, the primary family, A48's verdicts, the claim's verdict and the controls (or their
    progress), as text."""
    design = study.design
    lines = ["PARTIAL: some planned runs are not written yet; nothing below is the study's answer"] if study.partial else []
    lines.append("test BLEU by fraction (mean over seeds ± 95 % t half-width)")
    for fraction, arms in study.curve().items():
        lines.append(f"  {_percent(fraction):>6}: " + "; ".join(f"{arm} {m:.2f} ± {h:.2f}" for arm, (m, h) in arms.items()))
    family = study.primary()
    lines.append(f"primary family (Holm over {len(family)}, significant when Holm p ≤ {design.alpha:g})")
    lines += ["  " + row for row in _rows(family, design.alpha)]
    lines += [f"A48 ({arm}): {verdict}" for arm, verdict in study.scarcity_verdicts(family).items()]
    claim = study.claim()
    low, high = design.claim_band
    lines.append(f"claim \"about {low:g}–{high:g} BLEU\" ({design.claim_arm} at {_percent(design.full)}, "
                 f"read alone): {claim_verdict(claim, design.claim_band, design.alpha)}")
    written, planned = study.control_progress()
    if written < planned:
        lines.append(f"controls at {_percent(design.control_fraction)}: {written} of {planned} runs written, not read yet")
    else:
        lines.append(f"controls at {_percent(design.control_fraction)} (Holm over {len(design.controls)})")
        lines += ["  " + row for row in _rows(study.controls(), design.alpha)]
    return "\n".join(lines)

