"""Evaluation: how a pair classifier (or a translation) is scored, what it is read against, and what a comparison of two can show.

Named after what it does with a model's predictions; the statistics of a data set itself
(:mod:`lessons_lib.pairs.stats`) stay with the data. Uses :mod:`lessons_lib.pairs` only.

- :mod:`~lessons_lib.evaluation.metrics` — predictions, accuracy, F1, confusion, the exact McNemar test.
- :mod:`~lessons_lib.evaluation.pair_tests` — the tests over the test pairs of one comparison:
  McNemar, the test-pair bootstrap, the minimal detectable difference, and whether a split's
  pairs are independent enough for them (no torch).
- :mod:`~lessons_lib.evaluation.seed_tests` — the tests over seeds: 95 % t intervals, paired and
  Welch t-tests and their exact versions, power, Holm, the one decision rule, and
  :class:`~lessons_lib.evaluation.seed_tests.SeedTest`, the record of one contrast (no torch).
- :mod:`~lessons_lib.evaluation.significance` — both of them under one name, for the lessons.
- :mod:`~lessons_lib.evaluation.probabilities` — AUC, a dev-tuned threshold and the share of
  label-1 calls, from stored probabilities and predictions (no torch).
- :mod:`~lessons_lib.evaluation.baselines` — the majority class and the tuned character-Jaccard
  rule, and a model read against both (no torch until a McNemar test is asked for).
- :mod:`~lessons_lib.evaluation.translation` — BLEU and chrF with sacreBLEU's signatures, BLEU from
  integer sentence statistics, and the paired bootstrap over test sentences (no torch).
- :mod:`~lessons_lib.evaluation.sample_size` — sizing a study from a pilot: the upper confidence
  limit of a seed SD and the seeds a paired t-test needs for a given power (no torch).
"""
