"""The ablation that measures the syntax bias: running it, and reading its results (lessons 08–10).

Running:

- :mod:`~lessons_lib.ablation.config` — what an ablation runs (:class:`~lessons_lib.ablation.config.ExperimentConfig`).
- :mod:`~lessons_lib.ablation.experiment` — the runner: parsing, preparing the splits and trees,
  training and testing every variant × seed, and reloading a finished run.
- :mod:`~lessons_lib.ablation.pool` — the worker processes that train several runs at once.

Reading:

- :mod:`~lessons_lib.ablation.results` — typed results, their JSON form and table, and the one
  checked reader of a results file.
- :mod:`~lessons_lib.ablation.arms` — an arm of a grid or a study as a value: its variant, its trees
  and its options, printed as the tables show it.
- :mod:`~lessons_lib.ablation.grid` — several results files of the same pairs read together, and
  the contrasts that ask whether a gain is the tree's.
- :mod:`~lessons_lib.ablation.study_files` — the data-size study's files, read and checked as one study.
- :mod:`~lessons_lib.ablation.study_analysis` — the study's contrasts and verdicts, as its plan fixes them.
- :mod:`~lessons_lib.ablation.study_report` — the study's tables, as ``lessons study`` prints them.
- :mod:`~lessons_lib.ablation.study_figures` — the study's figures and the forest plot.
"""
