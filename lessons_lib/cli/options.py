"""Command-line flags derived from the configs, so that a new config field is a new flag.

- :func:`add_preset_arguments`: ``--preset`` and one flag per model and training option of
  :mod:`lessons_lib.pairs.config` (``--d-model``, ``--epochs``, ``--match-flags`` …);
  :func:`preset_overrides` reads them back as the flat overrides that
  :func:`lessons_lib.pairs.config.resolve_configs` takes, and :func:`flag_names` makes a
  config's error name the flag (:func:`field_flag`).
- :func:`add_bias_arguments` / :func:`bias_overrides`: one flag per option of the
  syntax-bias variants of :data:`lessons_lib.syntax_bias.registry.VARIANTS`.
- :func:`add_syntax_model_arguments` / :func:`syntax_model_overrides`: one flag per option
  that holds for every biased variant (:class:`lessons_lib.syntax_bias.registry.SyntaxModelOptions`).
- :func:`add_expect_argument`: ``--expect``, the data a reading command's results files must come from.

None of this imports torch.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import re
from dataclasses import MISSING, Field, fields
from typing import Any, Collection, Iterable, Iterator

from lessons_lib.errors import CourseInputError, FieldName

from lessons_lib.pairs.config import (COMMAND_LINE_DEFAULTS, MODEL_OPTIONS, PRESETS, TRAIN_OPTIONS, PairClassifierConfig,
                                     TrainConfig)
from lessons_lib.syntax_bias.registry import VARIANTS, SyntaxModelOptions, option_owners
from lessons_lib.transformer.config import EncoderConfig

_TYPES = {"int": int, "float": float, "str": str, "bool": bool}


def flag(name: str) -> str:
    """``d_model`` → ``--d-model``."""
    return "--" + name.replace("_", "-")


def attribute_docs(cls: type) -> dict[str, str]:
    """``{field: its description}`` from the "Attributes:" section of a dataclass's docstring.

    The docstring is the one place a config field is documented; ``--help`` reads it.
    A line ``a, b: text`` documents both fields.
    """
    docs: dict[str, str] = {}
    current: list[str] = []
    in_section = False
    for line in inspect.cleandoc(cls.__doc__ or "").splitlines():
        if line.strip() == "Attributes:":
            in_section = True
            continue
        match = re.match(r"^ {4}([a-z_, ]+): (.*)$", line) if in_section else None
        if match:
            current = [name.strip() for name in match.group(1).split(",")]
            for name in current:
                docs[name] = match.group(2).strip()
        elif in_section and line.startswith("        ") and current:
            for name in current:
                docs[name] += " " + line.strip()
        elif in_section and line.strip():
            in_section = False
    return docs


def _add_field(group: argparse._ArgumentGroup | argparse.ArgumentParser, spec: Field, help_text: str) -> None:
    kind = _TYPES.get(str(spec.type).split(" ")[0])
    help_text = help_text.replace("``", "").replace("%", "%%")
    if kind is bool:
        group.add_argument(flag(spec.name), action=argparse.BooleanOptionalAction, default=None, help=help_text)
    else:
        group.add_argument(flag(spec.name), type=kind or str, default=None, metavar=spec.name.upper(),
                           choices=spec.metadata.get("choices"), help=help_text)


def _documented_fields(classes: Iterable[type], names: Iterable[str]) -> list[tuple[Field, str]]:
    """The fields called ``names`` of ``classes``, each with its docstring description."""
    found = {f.name: (f, attribute_docs(cls).get(f.name, "")) for cls in classes for f in fields(cls)}
    return [found[name] for name in names]


def add_force_argument(parser: argparse.ArgumentParser, flag_name: str) -> None:
    """``--force``: replace files at ``flag_name`` that the course did not write (:func:`lessons_lib.files.check_output_file`)."""
    parser.add_argument("--force", action="store_true",
                        help=f"replace files at {flag_name} that the course did not write, or that were changed since "
                             "(without it they are refused, and nothing is written)")


def add_expect_argument(parser: argparse.ArgumentParser) -> None:
    """``--expect lcqmc|any``: which data the results files a reading command takes must come from."""
    parser.add_argument("--expect", choices=("lcqmc", "any"), default="any",
                        help="lcqmc: refuse a file not made on the real LCQMC (the SHA-256 of its splits); "
                             "any: only require that all files were made on the same splits (default)")


def add_preset_arguments(parser: argparse.ArgumentParser, default_preset: str | None = "textbook",
                         default_help: str | None = None) -> None:
    """``--preset`` and a flag for every model and training option (each overrides the preset's value).

    Args:
        default_preset: the preset when ``--preset`` is not given (``None``: the command decides,
            and ``default_help`` says how).
    """
    parser.add_argument("--preset", default=default_preset, choices=sorted(PRESETS),
                        help=f"named recipe (default {default_help or default_preset}); the options below "
                             "override its values")
    model = parser.add_argument_group("model options (override the preset)")
    for spec, doc in _documented_fields((EncoderConfig, PairClassifierConfig), MODEL_OPTIONS):
        _add_field(model, spec, f"{doc} ({_default_help(spec)})")
    train = parser.add_argument_group("training options (override the preset)")
    for spec, doc in _documented_fields((TrainConfig,), TRAIN_OPTIONS):
        _add_field(train, spec, f"{doc} ({_default_help(spec)})")


def _default_help(spec: Field) -> str:
    if spec.name in COMMAND_LINE_DEFAULTS:
        return f"default here: {COMMAND_LINE_DEFAULTS[spec.name]}; the library's and the lessons': {_default(spec)}"
    return f"default: the preset's, else {_default(spec)}"


@contextlib.contextmanager
def flag_names(options: Iterable[str] = ()) -> Iterator[None]:
    """Errors raised inside name the command-line flags (``--d-model``), not the config fields.

    Only an error that knows its fields (:attr:`~lessons_lib.errors.CourseInputError.fields`)
    is changed: each field that :func:`field_flag` gives a flag shows that flag; the rest of its
    text stays as it is.
    """
    try:
        yield
    except CourseInputError as error:
        if not error.fields:
            raise
        names = frozenset(options)
        raise error.renamed(lambda name: field_flag(name, names)) from None


def field_flag(name: FieldName, options: Collection[str] = ()) -> str:
    """How the command line shows the field ``name``: its flag (``--d-model``), or ``name`` itself.

    A field of a config class (``EncoderConfig.d_model``) becomes its flag when the command has
    that option, or when ``options`` is empty (a command taking every model and training option);
    an option of a function (```train_fraction```) only when it is among ``options``. A command
    without ``--d-model`` thus keeps ``EncoderConfig.d_model``, e.g. when it reads a checkpoint.
    """
    if name.field in options or (name.owner is not None and not options):
        return flag(name.field)
    return name


def preset_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The model and training options the user set (``None`` = not set, left out), over the
    command line's own defaults (:data:`~lessons_lib.pairs.config.COMMAND_LINE_DEFAULTS`)."""
    chosen = {name: getattr(args, name) for name in (*MODEL_OPTIONS, *TRAIN_OPTIONS) if getattr(args, name) is not None}
    return {**COMMAND_LINE_DEFAULTS, **chosen}


def add_bias_arguments(parser: argparse.ArgumentParser) -> None:
    """A flag for every option of every syntax-bias variant, grouped by the first variant that has it.

    An option several variants share (inherited from one options dataclass) is one flag;
    its help names every variant it sets.
    """
    owners = option_owners()
    for entry in VARIANTS.values():
        own = [spec for spec in fields(entry.options) if owners[spec.name][0] == entry.name]
        if not own:
            continue
        group = parser.add_argument_group(f"options of the {entry.name!r} variant ({entry.description})")
        # Inherited fields are documented in the parent's docstring.
        docs = {k: v for cls in reversed(entry.options.__mro__) for k, v in attribute_docs(cls).items()}
        for spec in own:
            also = [name for name in owners[spec.name] if name != entry.name]
            shared = f"; also sets {', '.join(also)}" if also else ""
            _add_field(group, spec, f"{docs.get(spec.name, '')} (default {_default(spec)}{shared})".lstrip())


def bias_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The variant options the user set, flat (see :attr:`ExperimentConfig.bias_options`)."""
    names = [f.name for entry in VARIANTS.values() for f in fields(entry.options)]
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def add_syntax_model_arguments(parser: argparse.ArgumentParser) -> None:
    """A flag for every option of :class:`lessons_lib.syntax_bias.registry.SyntaxModelOptions`."""
    group = parser.add_argument_group("options of every biased variant (bias dropout, distance predictor)")
    docs = attribute_docs(SyntaxModelOptions)
    for spec in fields(SyntaxModelOptions):
        _add_field(group, spec, f"{docs.get(spec.name, '')} (default {_default(spec)})".lstrip())


def syntax_model_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The syntax-model options the user set, flat (see :attr:`ExperimentConfig.syntax_model`)."""
    names = [f.name for f in fields(SyntaxModelOptions)]
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def _default(spec: Field) -> str:
    return "none" if spec.default is MISSING else repr(spec.default)


def add_config_arguments(parser: argparse.ArgumentParser, cls: type, title: str | None,
                         names: Iterable[str] | None = None) -> None:
    """A flag for every field of the dataclass ``cls`` (or for the fields called ``names``), documented by
    its docstring, default ``None`` (not set: the field's own default holds, said in the help).

    Args:
        title: the help group the flags are listed under; ``None``: the command's own options.
        names: the fields that get a flag (``None``: all); a list or a dict field takes flags of its own.
    """
    group = parser.add_argument_group(title) if title is not None else parser
    docs = attribute_docs(cls)
    for spec in config_fields(cls, names):
        _add_field(group, spec, f"{docs.get(spec.name, '')} (default {_default(spec)})".lstrip())


def config_fields(cls: type, names: Iterable[str] | None = None) -> list[Field]:
    """The fields of ``cls`` called ``names`` (``None``: all of them), in the class's order."""
    wanted = None if names is None else set(names)
    return [spec for spec in fields(cls) if wanted is None or spec.name in wanted]


def config_arguments(args: argparse.Namespace, cls: type, names: Iterable[str] | None = None) -> dict[str, Any]:
    """The fields of ``cls`` (or those called ``names``) whose flags were given, by field name."""
    return {spec.name: getattr(args, spec.name) for spec in config_fields(cls, names)
            if getattr(args, spec.name) is not None}


def config_from_arguments(args: argparse.Namespace, cls: type) -> Any:
    """``cls`` built from the flags :func:`add_config_arguments` added (unset flags keep the defaults);
    an invalid value is reported with its flag's name."""
    chosen = config_arguments(args, cls)
    with flag_names([spec.name for spec in config_fields(cls)]):  # every field has a flag, given or not
        return cls(**chosen)
