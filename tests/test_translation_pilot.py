"""Reading a pilot: per fraction the cost, ``none``'s BLEU and each arm's gain seed by seed, and the
seeds a study needs at that spread (read on copies of the committed positive-control runs)."""

import shutil
import statistics

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.sample_size import sd_upper_limit, seeds_for_power
from lessons_lib.paths import TRANSLATION_CONTROL_DIR
from lessons_lib.translation.analysis import arm_scores, load_runs
from lessons_lib.translation.pilot import format_pilot, pilot_fractions


@pytest.fixture
def pilot_folder(tmp_path):
    for arm in ("none", "learned-gold", "learned-random"):
        for path in (TRANSLATION_CONTROL_DIR / arm).glob("f*.json"):
            shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_each_arm_is_read_against_none_seed_by_seed(pilot_folder):
    (fraction,) = pilot_fractions(pilot_folder)
    runs = load_runs([pilot_folder])
    none, gold = arm_scores(runs["none"], "all"), arm_scores(runs["learned-gold"], "all")
    assert fraction.fraction == 1.0 and fraction.seeds == (0, 1, 2, 3, 4) and fraction.train_pairs == 4000
    (learned_gold, learned_random) = fraction.arms
    assert learned_gold.arm == "learned-gold" and learned_random.arm == "learned-random"
    assert learned_gold.differences == tuple(gold[s] - none[s] for s in range(5))
    assert learned_gold.sd == pytest.approx(statistics.stdev(learned_gold.differences))
    assert fraction.none_bleu == tuple(none[s] for s in range(5))


def test_the_table_sizes_the_study_at_the_sd_and_at_its_upper_limit(pilot_folder):
    (fraction,) = pilot_fractions(pilot_folder)
    text = format_pilot([fraction], effect=0.5, family=6)
    arm = fraction.arms[0]
    at_sd = seeds_for_power(arm.sd, 0.5, 0.05 / 6)
    at_upper = seeds_for_power(sd_upper_limit(arm.sd, 5, 0.8), 0.5, 0.05 / 6)
    assert at_sd < at_upper
    assert f"seeds needed {at_sd} (at the upper SD {at_upper})" in text
    assert "α = 0.05/6 = 0.0083" in text


def test_a_seed_missing_an_arm_is_left_out_and_a_folder_without_none_refused(pilot_folder):
    (pilot_folder / "f1-learned-random-s4.json").unlink()
    (fraction,) = pilot_fractions(pilot_folder)
    assert fraction.seeds == (0, 1, 2, 3)
    for path in pilot_folder.glob("f1-none-*.json"):
        path.unlink()
    with pytest.raises(CourseInputError, match="no run of none at fraction 1"):
        pilot_fractions(pilot_folder)


def test_two_fractions_add_the_seeds_the_difference_of_gains_needs(pilot_folder, tmp_path):
    import json

    from lessons_lib.evaluation.sample_size import seeds_for_power_welch

    for path in sorted(pilot_folder.glob("f1-*.json")):  # the same runs again, read as a second fraction
        record = json.loads(path.read_text(encoding="utf-8"))
        record["fraction"] = 0.5
        (pilot_folder / path.name.replace("f1-", "f0.5-")).write_text(json.dumps(record), encoding="utf-8")
    scarce, full = pilot_fractions(pilot_folder)
    text = format_pilot([scarce, full], effect=1.0, family=6)
    arm_a, arm_b = scarce.arms[0], full.arms[0]
    upper = sd_upper_limit(arm_a.sd, 5, 0.8)
    expected = seeds_for_power_welch(arm_a.sd, arm_b.sd, 1.0, 0.05 / 6)
    assert "difference of gains, fraction 0.5 − fraction 1 (Welch, seeds per fraction):" in text
    assert f"{arm_a.arm:<16}: mean +0.00; seeds needed {expected} " \
           f"(at the upper SDs {seeds_for_power_welch(upper, upper, 1.0, 0.05 / 6)})" in text
    assert "difference of gains" not in format_pilot([full], effect=1.0, family=6)


def test_no_difference_of_gains_is_sized_while_a_fraction_has_one_seed(pilot_folder):
    import json

    for path in sorted(pilot_folder.glob("f1-*-s0.json")):  # seed 0 alone, read as a second fraction
        record = json.loads(path.read_text(encoding="utf-8"))
        record["fraction"] = 0.5
        (pilot_folder / path.name.replace("f1-", "f0.5-")).write_text(json.dumps(record), encoding="utf-8")
    scarce, full = pilot_fractions(pilot_folder)
    assert scarce.seeds == (0,) and all(a.sd is None for a in scarce.arms)
    text = format_pilot([scarce, full], effect=1.0, family=6)
    assert "one seed, no spread" in text and "difference of gains" not in text
