"""Companion package of the course *attention, from dot products to syntax-biased Transformers*.

Organised by concept, never by lesson number; each subpackage's docstring lists its modules:

==========================  ========================================================  =========
subpackage                  concept                                                   lessons
==========================  ========================================================  =========
``attention``               scores, masks, softmax, scaled dot-product, multi-head    01–03
``seq2seq``                 a GRU encoder–decoder with attention and its toy task     02
``transformer``             positional encoding, the encoder block and stack          04–05
``pairs``                   LCQMC sentence pairs: data, vocabulary, classifier,       06
                            configs and presets, training, metrics, run folders,
                            baselines, data statistics, the course's sample
``syntax``                  parses, head arrays, treebanks, tree distances, distance  07
                            buckets, the parse cache, parser noise, the parser's
                            own training
``syntax_bias``             bias modules, their registry, the biased classifier,      08–09
                            the ablation runner and its typed results
``exercises``               the checkers the lessons' exercise cells call             01–09
``course``                  notebooks, assignments and grading, plotting,             all
                            reproducibility, environment checks
``cli``                     the ``lessons`` command                                   —
==========================  ========================================================  =========

Shared by all: :mod:`lessons_lib.errors` (:class:`~lessons_lib.errors.CourseInputError`),
:mod:`lessons_lib.validation` (the one home of argument checks),
:mod:`lessons_lib.files` (every file the course writes: atomically, under a lock, recorded) and
:mod:`lessons_lib.paths` (where the course's files live), :mod:`lessons_lib.seeding`
(:func:`~lessons_lib.seeding.set_seed`). Dependencies point one way:
``attention`` ← ``transformer`` ← ``pairs`` ← ``syntax`` ← ``syntax_bias`` (``seq2seq`` uses
``attention`` only); ``exercises``, ``course`` and ``cli`` sit on top.

Importing this package stays light: it does not import torch, matplotlib, spaCy or pandas;
import the module you need (``from lessons_lib.attention.functional import attention_scores``).
"""

__version__ = "0.1.0"
