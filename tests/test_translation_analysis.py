"""Reading translation results by seed: files checked together, contrasts paired by seed, Holm over the family."""

import json

import pytest

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.translation import bleu_from_statistics, sentence_statistics
from lessons_lib.translation.analysis import format_contrasts, load_runs, seed_contrasts
from lessons_lib.translation.results import RESULTS_FORMAT

REFERENCES = ["the teacher who helps the child is kind .", "helping the child 's teacher is kind .",
              "the child helps the teacher .", "the teacher 's child is kind ."]
GROUPS = ["syntax", "syntax", "plain", "plain"]


def _write(folder, variant, trees, seed, hypotheses, commit="abc", capability="AVX2"):
    statistics = sentence_statistics(hypotheses, REFERENCES)
    scores = {group: {"bleu": bleu_from_statistics([s for s, g in zip(statistics, GROUPS) if g == group]), "chrf": 0.0}
              for group in ("syntax", "plain")}
    scores["all"] = {"bleu": bleu_from_statistics(statistics), "chrf": 0.0}
    record = {"format": RESULTS_FORMAT, "variant": variant, "trees": trees, "fraction": 1.0, "seed": seed,
              "data": {"train": "d"}, "train_config": {"epochs": 1}, "sizes": {}, "bias_options": {},
              "provenance": {"code_commit": commit, "device": "cpu", "cpu_capability": capability, "torch": "2"},
              "scores": scores, "sentences": [{"id": str(i), "group": g, "statistics": s.to_list()}
                                              for i, (g, s) in enumerate(zip(GROUPS, statistics))]}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"f1-{variant}-{trees}-s{seed}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def _fill(tmp_path, seeds=(0, 1, 2, 3, 4)):
    wrong = "the teacher who helps the child is kind ."  # the right words for sentence 0 only
    for seed in seeds:
        _write(tmp_path / "none", "none", "none", seed, [wrong, wrong, *REFERENCES[2:]])
        good = REFERENCES[:1] + (["helping the child 's teacher is kind ."] if seed != 0 else [wrong]) + REFERENCES[2:]
        _write(tmp_path / "learned", "learned", "gold", seed, good)


def test_a_bias_that_fixes_the_syntax_sentences_on_most_seeds_is_better_there_only(tmp_path):
    _fill(tmp_path)
    runs = load_runs([tmp_path])
    assert sorted(runs) == ["learned-gold", "none"] and sorted(runs["none"]) == [0, 1, 2, 3, 4]
    syntax, plain = (seed_contrasts(runs, "none", ["learned-gold"], group)[0] for group in ("syntax", "plain"))
    assert syntax.differences[0] == 0 and all(d > 0 for d in syntax.differences[1:])
    assert syntax.better and syntax.holm_p == syntax.p < 0.05
    assert plain.differences == (0.0,) * 5 and not plain.better
    assert "better (Holm p ≤ 0.05)" in format_contrasts([syntax]) and "not shown better" in format_contrasts([plain])


def test_holm_multiplies_the_smallest_p_by_the_family_size(tmp_path):
    _fill(tmp_path)
    runs = load_runs([tmp_path])
    runs["copy"] = runs["learned-gold"]
    first, second = seed_contrasts(runs, "none", ["learned-gold", "copy"], "syntax")
    assert first.holm_p == pytest.approx(min(1.0, 2 * first.p))


def test_runs_of_two_kernel_sets_or_commits_are_never_read_together(tmp_path):
    _fill(tmp_path, seeds=(0, 1))
    _write(tmp_path / "other", "hard_mask", "gold", 0, REFERENCES, capability="AVX512")
    with pytest.raises(CourseInputError, match="cpu_capability 'AVX512'"):
        load_runs([tmp_path])


def test_a_second_file_for_one_arm_and_seed_and_unpaired_seeds_are_refused(tmp_path):
    _fill(tmp_path, seeds=(0, 1))
    _write(tmp_path / "again", "none", "none", 0, REFERENCES)
    with pytest.raises(CourseInputError, match="a second file for none seed 0"):
        load_runs([tmp_path])
    _fill(tmp_path / "b", seeds=(0, 1))
    _write(tmp_path / "b" / "learned", "learned", "gold", 2, REFERENCES)
    with pytest.raises(CourseInputError, match="contrasts pair seeds"):
        seed_contrasts(load_runs([tmp_path / "b"]), "none", ["learned-gold"], "syntax")
