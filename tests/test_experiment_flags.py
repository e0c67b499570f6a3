"""`lessons experiment`'s flags come from its config: every field has its flag, and a flag not given leaves the field's default."""

from __future__ import annotations

from dataclasses import fields

from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.cli import build_parser
from lessons_lib.cli.experiment_commands import DEFAULT_LAYERS, OWN_FLAGS, config_from_args
from lessons_lib.cli.options import flag
from lessons_lib.pairs.config import COMMAND_LINE_DEFAULTS, MODEL_OPTIONS, TRAIN_OPTIONS
from lessons_lib.syntax_bias.registry import VARIANTS, SyntaxModelOptions

# The fields that are dictionaries of other flags, and the flags that fill each.
DICT_FIELDS = {
    "model": list(MODEL_OPTIONS),
    "train": list(TRAIN_OPTIONS),
    "bias_options": [spec.name for entry in VARIANTS.values() for spec in fields(entry.options)],
    "syntax_model": [spec.name for spec in fields(SyntaxModelOptions)],
}


def _experiment_flags() -> set[str]:
    parser = build_parser()
    experiment = parser._subparsers._group_actions[0].choices["experiment"]  # what argparse would run
    return {option for action in experiment._actions for option in action.option_strings}


def test_every_config_field_has_its_flag():
    flags = _experiment_flags()
    for spec in fields(ExperimentConfig):
        named = DICT_FIELDS.get(spec.name, [spec.name])
        missing = [flag(name) for name in named if flag(name) not in flags]
        assert not missing, f"ExperimentConfig.{spec.name} has no flag {missing}"


def test_a_flag_not_given_leaves_the_configs_default(tmp_path):
    config = config_from_args(build_parser().parse_args(["experiment", "--out", str(tmp_path / "r.json")]))
    default = ExperimentConfig()
    for spec in fields(ExperimentConfig):
        if spec.name not in ("model", "train"):
            assert getattr(config, spec.name) == getattr(default, spec.name), spec.name
    # the command's own fast paths and depth, on top of the preset (the library's defaults stay the lessons')
    assert config.model == {"n_layers": DEFAULT_LAYERS, **{k: v for k, v in COMMAND_LINE_DEFAULTS.items()
                                                           if k in MODEL_OPTIONS}}
    assert config.train == {k: v for k, v in COMMAND_LINE_DEFAULTS.items() if k in TRAIN_OPTIONS}


def test_each_of_the_configs_own_flags_sets_its_field(tmp_path):
    given = {"train_fraction": "0.25", "subset_seed": "3", "parser_noise": "0.5", "noise_seed": "4",
             "max_distance": "12", "epoch_choice": "best_dev"}
    argv = ["experiment", "--out", str(tmp_path / "r.json"), "--log-buckets", "--variants", "none", "learned",
            "--seeds", "5", "6"]
    for name, value in given.items():
        argv += [flag(name), value]
    config = config_from_args(build_parser().parse_args(argv))
    assert set(OWN_FLAGS) == {*given, "log_buckets", "scramble_words"}
    assert (config.train_fraction, config.subset_seed, config.parser_noise, config.noise_seed, config.max_distance,
            config.epoch_choice, config.log_buckets) == (0.25, 3, 0.5, 4, 12, "best_dev", True)
    assert config.variants == ["none", "learned"] and config.seeds == [5, 6]
    scrambled = config_from_args(build_parser().parse_args(["experiment", "--out", "r.json", "--scramble-words"]))
    assert scrambled.scramble_words is True
