"""Training: the generic training stack of every pair classifier of the course, and its run folder.

Generic: the loop trains any classifier that takes a :class:`~lessons_lib.pairs.encoding.PairBatch`
(lesson 06's :class:`~lessons_lib.pairs.classifier.PairClassifier` and the syntax-biased ones of
lessons 08–09 alike). Uses :mod:`lessons_lib.pairs` and :mod:`lessons_lib.evaluation` (each
epoch is evaluated on dev and test).

- :mod:`~lessons_lib.training.trainer` — optimiser, schedule, the resumable training loop.
- :mod:`~lessons_lib.training.runs` — a run folder on disk: its file names, checkpoints,
  metrics and predictions, reloading a run, and :class:`~lessons_lib.training.runs.RunFolder`,
  the one value that checks, locks, resumes or clears a run's folder.
"""
