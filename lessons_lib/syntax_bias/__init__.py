"""Syntax-biased attention: the bias variants and the classifier that carries them (lessons 08–09).

- :mod:`~lessons_lib.syntax_bias.registry` — the variants by name and their options (no torch).
- :mod:`~lessons_lib.syntax_bias.variants` — the bias modules: learned (on tree or relative-position
  buckets), fixed decay, hard mask (on tree or, as the window mask, word-distance buckets).
- :mod:`~lessons_lib.syntax_bias.model` — the biased pair classifier and its bucket matrices.
- :mod:`~lessons_lib.syntax_bias.predictor` — the distance predictor: a pair's tree buckets guessed from
  embeddings, for a model that runs without a parser.

The ablation that measures these variants, and the reading of its results, is
:mod:`lessons_lib.ablation`.
"""
