"""Translation with the course's encoder–decoder (lesson 12 on).

- :mod:`~lessons_lib.translation.pairs_folder` — the one format of a folder of translation pairs
  (the course corpus and real parallel data alike), with optional gold trees.
- :mod:`~lessons_lib.translation.course_corpus` — the course's Chinese→English corpus, in which the
  gold tree decides part of the translation (``lessons build-translation-corpus``,
  ``data/translation_corpus``).
"""
