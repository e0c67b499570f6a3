"""Dependency syntax for the syntax-bias lessons: parses, trees, distances, buckets.

Modules, by concept:

- :mod:`~lessons_lib.syntax.trees` — head arrays (0-based, root = ``-1``), their
  validation, depths and conversions from the other root conventions (CoNLL-U, spaCy).
- :mod:`~lessons_lib.syntax.treebank` — reading, validating and writing CoNLL-U.
- :mod:`~lessons_lib.syntax.segmentation` — the course's word segmentation (jieba through
  spaCy's Chinese tokenizer).
- :mod:`~lessons_lib.syntax.distances` — tree distances: the pairwise LCA walk
  (reference) and the vectorised, batched ancestor-matrix version used everywhere else.
- :mod:`~lessons_lib.syntax.buckets` — from word trees to the character tokens of a
  pair ``[CLS] s1 [SEP] s2 [SEP]``: distance buckets for syntax-biased attention, what
  each bucket id means, and the same ids on sequence distance (relative-position buckets).
- :mod:`~lessons_lib.syntax.noise` — parser noise: trees made worse on purpose.
- :mod:`~lessons_lib.syntax.parser` — the adapter around any spaCy pipeline with a parser.
- :mod:`~lessons_lib.syntax.cache` — the on-disk parse cache.
- :mod:`~lessons_lib.syntax.question_grammar` — the annotated template grammar that
  generates part of the course's question treebank.
- :mod:`~lessons_lib.syntax.attachment_control` — the positive control of lesson 08: question
  pairs built on one string with two trees (V N1 的 N2), whose label only the gold tree knows.
- :mod:`~lessons_lib.syntax.parser_training` — training and evaluating the course's parser.

Importing this package does not import spaCy or jieba; the submodules that need them do.
"""
