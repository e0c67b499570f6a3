"""Sentence-pair classification on LCQMC (lesson 06, and the models of lessons 08–09).

- :mod:`~lessons_lib.pairs.data` — reading LCQMC-format files and finding the data folder.
- :mod:`~lessons_lib.pairs.vocab` — the character vocabulary and the special tokens.
- :mod:`~lessons_lib.pairs.encoding` — ``[CLS] s1 [SEP] s2 [SEP]``, truncation, batches.
- :mod:`~lessons_lib.pairs.config` — classifier and training configs, presets, overrides (no torch).
- :mod:`~lessons_lib.pairs.classifier` — the encoder plus the ``[CLS]`` head.
- :mod:`~lessons_lib.pairs.trainer` — optimiser, schedule, the resumable training loop.
- :mod:`~lessons_lib.pairs.metrics` — accuracy, F1, confusion, the exact McNemar test.
- :mod:`~lessons_lib.pairs.significance` — what a paired comparison can detect: McNemar
  p-values, 95 % t intervals over seeds, power and the minimal detectable difference (no torch).
- :mod:`~lessons_lib.pairs.runs` — a run folder on disk: checkpoints and reloading a run.
- :mod:`~lessons_lib.pairs.baselines` — the majority class and the tuned character-Jaccard rule.
- :mod:`~lessons_lib.pairs.stats` — recurrence of questions across splits, label shares, hard negatives.
- :mod:`~lessons_lib.pairs.sample` — building the course's LCQMC-format sample.
"""
