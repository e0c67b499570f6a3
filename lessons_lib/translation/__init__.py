"""Translation with the course's encoder–decoder (lesson 12 on).

- :mod:`~lessons_lib.translation.pairs_folder` — the one format of a folder of translation pairs
  (the course corpus and real parallel data alike), with optional gold trees.
- :mod:`~lessons_lib.translation.course_corpus` — the course's Chinese→English corpus, in which the
  gold tree decides part of the translation (``lessons build-translation-corpus``,
  ``data/translation_corpus``).
- :mod:`~lessons_lib.translation.encoding` — source characters, English tokens, vocabularies, batches.
- :mod:`~lessons_lib.translation.trees` — gold and parser source trees per pair, the controls laid
  over their words (random trees, scrambled words, words in sequence), and their buckets.
- :mod:`~lessons_lib.translation.model` — the translator whose encoder takes the syntax bias.
- :mod:`~lessons_lib.translation.training` — one training run, the dev-chosen epoch, BLEU per group.
- :mod:`~lessons_lib.translation.tatoeba` — Tatoeba's Chinese–English pairs, read from outside the
  repository (checked by SHA-256, converted to simplified characters) and split with no sentence in
  two splits (``lessons tatoeba-split``).
- :mod:`~lessons_lib.translation.results` — one run as one checked results file.
- :mod:`~lessons_lib.translation.analysis` — results read by seed: contrasts, Holm, the plan's rule.
- :mod:`~lessons_lib.translation.pilot` — a pilot read to size a study (``lessons translation-pilot``).
"""
