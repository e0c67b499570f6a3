"""Syntax-biased attention and the ablation that measures it (lessons 08–09).

- :mod:`~lessons_lib.syntax_bias.registry` — the variants by name and their options (no torch).
- :mod:`~lessons_lib.syntax_bias.variants` — the bias modules: learned (on tree or relative-position
  buckets), fixed decay, hard mask (on tree or, as the window mask, word-distance buckets).
- :mod:`~lessons_lib.syntax_bias.model` — the biased pair classifier and its bucket matrices.
- :mod:`~lessons_lib.syntax_bias.config` — what an ablation runs.
- :mod:`~lessons_lib.syntax_bias.experiment` — the runner, and reloading a finished run.
- :mod:`~lessons_lib.syntax_bias.results` — typed results, their JSON form and table.
- :mod:`~lessons_lib.syntax_bias.grid` — several results files of the same pairs read together, and
  the contrasts that ask whether a gain is the tree's.
"""
