"""The variant registry is the one place a syntax-bias variant is declared: everything else follows from it."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, fields

import pytest
import torch

from lessons_lib.cli import build_parser
from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.buckets import DEFAULT_SCHEME
from lessons_lib.syntax_bias import registry
from lessons_lib.syntax_bias.registry import VARIANTS, Variant, check_bias_options, option_owners
from lessons_lib.syntax_bias.variants import BucketBias, _FixedTableBias, make_bias


def test_every_variant_builds_through_the_registry_with_its_default_options():
    for name, entry in VARIANTS.items():
        module = make_bias(name, DEFAULT_SCHEME, n_heads=4, n_layers=2)
        if entry.module is None:
            assert module is None
            continue
        assert isinstance(module, BucketBias) and module.n_layers == 2
        parameters = list(inspect.signature(type(module)).parameters)
        assert parameters[:4] == ["scheme", "n_heads", "n_layers", "options"], name


def test_every_option_is_a_flag_of_the_experiment_command():
    parser = build_parser()
    experiment = parser._subparsers._group_actions[0].choices["experiment"]
    flags = {option for action in experiment._actions for option in action.option_strings}
    for name in option_owners():
        assert "--" + name.replace("_", "-") in flags, name
    assert set(experiment._option_string_actions["--variants"].choices) == set(VARIANTS)


def test_option_names_must_be_unique(monkeypatch):
    @dataclass(frozen=True)
    class Clash:
        decay: float = 1.0

    monkeypatch.setitem(VARIANTS, "clash", Variant("clash", "reuses a name", Clash, None))
    with pytest.raises(CourseInputError, match="also an option"):
        option_owners()


@dataclass(frozen=True)
class EveryPairOptions:
    every_pair_value: float = 0.25


class EveryPairBias(_FixedTableBias):
    """A toy variant: the same constant on every real pair (a learner could write it in two files)."""

    def __init__(self, scheme, n_heads=1, n_layers=1, options=None):
        options = options or EveryPairOptions()
        super().__init__([options.every_pair_value] * scheme.n_buckets, n_layers)


def test_a_new_variant_is_one_class_one_options_dataclass_and_one_entry(monkeypatch, tmp_path):
    """Registered here at test time, the toy variant reaches the config, the runner, the flags and the table."""
    from lessons_lib.cli.experiment_commands import config_from_args
    from lessons_lib.ablation.config import ExperimentConfig
    from lessons_lib.ablation.experiment import run_experiment

    monkeypatch.setitem(VARIANTS, "every_pair", Variant("every_pair", "a constant on every pair", EveryPairOptions,
                                                        f"{__name__}:EveryPairBias", buckets="tree"))
    assert check_bias_options({"every_pair_value": 0.5}) == {"every_pair_value": 0.5}
    bias = make_bias("every_pair", DEFAULT_SCHEME, 2, 2, EveryPairOptions(0.5))
    assert torch.equal(bias.tables(), torch.full((1, 1, DEFAULT_SCHEME.n_buckets), 0.5))
    args = build_parser().parse_args(["experiment", "--out", str(tmp_path / "r.json"), "--variants", "none", "every_pair",
                                      "--every-pair-value", "0.5", "--seeds", "0"])
    config = config_from_args(args)
    assert isinstance(config, ExperimentConfig) and config.variant_options("every_pair") == EveryPairOptions(0.5)

    from test_experiment import SENTENCES, TINY_MODEL, TINY_TRAIN, _chain_parse, _examples  # noqa: E402
    from lessons_lib.pairs.data import DataSource, LcqmcData, LcqmcSplit

    examples = _examples()
    data = LcqmcData(DataSource(tmp_path, "argument"), LcqmcSplit("train", tmp_path, examples[:30]),
                     LcqmcSplit("dev", tmp_path, examples[30:38]), LcqmcSplit("test", tmp_path, examples[38:]))
    small = ExperimentConfig(variants=["none", "every_pair"], seeds=[0], model=dict(TINY_MODEL), train=dict(TINY_TRAIN),
                             bias_options={"every_pair_value": 0.5})
    results = run_experiment(data, {t: _chain_parse(t) for t in SENTENCES}, small, progress=False, log=None)
    assert [r.variant for r in results.runs] == ["none", "every_pair"]
    assert "every_pair" in results.format_table()
    json.dumps(results.to_json())


def test_registry_module_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys; import lessons_lib.syntax_bias.registry, lessons_lib.pairs.config; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    # A shipped results file of `lessons experiment`, read and checked: its config too is built without torch.
    code = ("import sys; from lessons_lib.paths import REPO_ROOT; "
            "from lessons_lib.ablation.results import is_results_file, load_results; "
            "path = next(p for p in sorted((REPO_ROOT / 'results').rglob('*.json')) if is_results_file(p)); "
            "result = load_results(path); print(len(result.runs) > 0, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True False"


@pytest.mark.parametrize("sizes", [dict(max_distance=0), dict(max_distance=1, log_buckets=True)])
def test_an_experiment_refuses_a_bucket_scheme_as_the_scheme_does(sizes):
    from lessons_lib.ablation.config import ExperimentConfig
    from lessons_lib.syntax.buckets import BucketScheme

    with pytest.raises(CourseInputError) as by_scheme:
        BucketScheme(**sizes)
    with pytest.raises(CourseInputError) as by_config:
        ExperimentConfig(**sizes)
    assert str(by_config.value) == str(by_scheme.value)


def test_options_dataclasses_are_frozen_and_validated():
    for entry in VARIANTS.values():
        assert entry.options.__dataclass_params__.frozen, entry.name
    assert {f.name for f in fields(registry.LearnedOptions)} == {"per_head", "learn_scale", "per_layer_tables",
                                                                 "bias_lr_multiplier"}


def test_the_relative_position_variant_is_the_learned_table_on_other_buckets():
    from lessons_lib.syntax_bias.registry import RelativePositionOptions
    from lessons_lib.syntax_bias.variants import LearnedBucketBias

    entry = VARIANTS["relative_position"]
    assert entry.buckets == "position" and entry.learned and VARIANTS["learned"].buckets == "tree"
    module = make_bias("relative_position", DEFAULT_SCHEME, 4, 2, RelativePositionOptions(per_head=True))
    assert type(module) is LearnedBucketBias and module.table.shape == (1, 4, DEFAULT_SCHEME.n_buckets)
    assert option_owners()["bias_lr_multiplier"] == ("learned", "relative_position")
    assert option_owners()["position_unit"] == ("relative_position",)


def test_one_flag_sets_the_shared_options_of_both_learned_tables(tmp_path):
    from lessons_lib.cli.experiment_commands import config_from_args

    args = build_parser().parse_args(["experiment", "--out", str(tmp_path / "r.json"), "--bias-lr-multiplier", "5",
                                      "--per-head", "--position-unit", "word"])
    config = config_from_args(args)
    assert config.variant_options("learned").bias_lr_multiplier == 5.0
    relative = config.variant_options("relative_position")
    assert relative.bias_lr_multiplier == 5.0 and relative.per_head and relative.position_unit == "word"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["experiment", "--out", "r.json", "--position-unit", "byte"])


def test_the_default_multiplier_does_not_leave_the_table_frozen():
    assert registry.LearnedOptions().bias_lr_multiplier == registry.DEFAULT_BIAS_LR_MULTIPLIER > 1.0


def test_registry_entries_are_checked():
    with pytest.raises(CourseInputError, match="bucket source"):
        Variant("orphan", "a module without buckets", module="x:Y")
    with pytest.raises(CourseInputError, match="buckets"):
        Variant("odd", "unknown buckets", module="x:Y", buckets="semantic")
    with pytest.raises(CourseInputError, match="position_unit"):
        registry.RelativePositionOptions(position_unit="byte")


def test_the_window_mask_is_the_hard_mask_on_word_distances_with_the_same_radius(tmp_path):
    from lessons_lib.cli.experiment_commands import config_from_args
    from lessons_lib.syntax_bias.registry import WindowMaskOptions
    from lessons_lib.syntax_bias.variants import HardMaskBias

    entry = VARIANTS["window_mask"]
    assert entry.buckets == "position" and not entry.learned and VARIANTS["hard_mask"].buckets == "tree"
    module = make_bias("window_mask", DEFAULT_SCHEME, 4, 2, WindowMaskOptions(hard_max_distance=2))
    assert type(module) is HardMaskBias and module.max_distance == 2
    assert WindowMaskOptions().position_unit == "word"  # the same meaning of "same word" as the tree's
    assert option_owners()["hard_max_distance"] == ("hard_mask", "window_mask")
    args = build_parser().parse_args(["experiment", "--out", str(tmp_path / "r.json"), "--hard-max-distance", "3"])
    config = config_from_args(args)
    assert config.variant_options("hard_mask").hard_max_distance == 3
    assert config.variant_options("window_mask").hard_max_distance == 3
