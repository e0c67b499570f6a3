"""The translation positive control as shipped (results/translation_control): read by seed, as its plan says.

The runs were made once by `lessons translate` (the command each file records); this reads them the
way results/translation_control/PLAN.md fixes and checks the verdicts lesson 12 states.
"""

import pytest

from lessons_lib import paths
from lessons_lib.translation.analysis import load_runs, seed_contrasts

ARMS = ["learned-gold", "hard_mask-gold", "learned-random"]


@pytest.fixture(scope="module")
def runs():
    return load_runs([paths.TRANSLATION_CONTROL_DIR])


def test_every_planned_arm_has_the_five_planned_seeds_of_one_commit_and_kernel_set(runs):
    assert sorted(runs) == sorted(["none", *ARMS])
    assert all(sorted(seeds) == [0, 1, 2, 3, 4] for seeds in runs.values())
    records = [record for seeds in runs.values() for record in seeds.values()]
    assert len({r["provenance"]["code_commit"] for r in records}) == 1  # load_runs refuses a mix; named here too
    assert all(r["train_pairs"] == 4000 and r["train_config"]["epochs"] == 12 for r in records)
    assert all(len(r["sentences"]) == 800 for r in records)


def test_the_bias_on_gold_trees_beats_no_bias_on_the_syntax_sentences_at_the_seed_level(runs):
    gold_learned, gold_mask, random_learned = seed_contrasts(runs, "none", ARMS, "syntax")
    for contrast in (gold_learned, gold_mask):
        assert contrast.better and contrast.holm_p <= 0.05
        assert all(d > 0 for d in contrast.differences)
    assert not random_learned.better  # the same table on random trees: no gain without the reading


def test_no_arm_is_better_where_the_text_decides(runs):
    assert not any(c.better for c in seed_contrasts(runs, "none", ARMS, "plain"))
