"""An arm of a grid or a study, as a value: its variant, the trees it read and its options.

One ``lessons experiment`` file may hold several variants trained on one kind of tree (the
parser's, random ones with ``--parser-noise 1.0``, the parser's on scrambled words) and with
variant options set away from their defaults. :class:`Arm` says which of these a run was, so
that grids and studies key their runs by it, and prints as the tables show it
(``learned · random trees``) without ever being read back from that text.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction

from lessons_lib.validation import exact
from lessons_lib.ablation.results import ExperimentResult
from lessons_lib.syntax_bias.registry import options_for, variant

__all__ = ["RANDOM_TREES", "SCRAMBLED_WORDS", "Arm"]

RANDOM_TREES = "random trees"
SCRAMBLED_WORDS = "scrambled words"
SEPARATOR = " · "


@dataclass(frozen=True)
class Arm:
    """One arm: a variant, the trees it read and its options set away from their defaults.

    Attributes:
        variant: the registry's name of the variant.
        parser_noise: the share of heads reattached at random (1: random trees, 0: the parser's);
            always 0 for a variant that reads no tree.
        scrambled_words: the trees were the parser's on scrambled word boundaries (tree variants only).
        options: ``"name=value"`` for each variant option set away from its default, in the
            options' order.
    """

    variant: str
    parser_noise: Fraction = Fraction(0)
    scrambled_words: bool = False
    options: tuple[str, ...] = ()

    @classmethod
    def of(cls, result: ExperimentResult, variant_name: str) -> "Arm":
        """The arm of ``variant_name``'s runs in ``result``."""
        reads_trees = variant(variant_name).buckets == "tree"
        chosen, default = options_for(variant_name, result.config.bias_options), options_for(variant_name, {})
        options = tuple(f"{f.name}={getattr(chosen, f.name)}" for f in fields(chosen)
                        if getattr(chosen, f.name) != getattr(default, f.name))
        noise = exact(result.config.parser_noise) if reads_trees else Fraction(0)
        return cls(variant_name, noise, bool(result.config.scramble_words) and reads_trees, options)

    @property
    def label(self) -> str:
        """``learned``, ``learned · random trees``, ``learned · scrambled words``, ``learned · noise 0.3``,
        ``learned · bias_lr_multiplier=1.0``: the arm as the tables print it."""
        parts = [self.variant]
        if self.parser_noise:
            parts.append(RANDOM_TREES if self.parser_noise == 1 else f"noise {float(self.parser_noise):g}")
        if self.scrambled_words:
            parts.append(SCRAMBLED_WORDS)
        return SEPARATOR.join([*parts, *self.options])

    def __str__(self) -> str:
        return self.label

    def __format__(self, spec: str) -> str:
        """Formatted as its label (``f"{arm:<34}"`` pads the label)."""
        return format(self.label, spec)
