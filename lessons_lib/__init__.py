"""Companion package of the course *attention, from dot products to syntax-biased Transformers*.

Organised by concept, never by lesson number; each subpackage's docstring lists its modules:

==========================  ========================================================  =========
subpackage                  concept                                                   lessons
==========================  ========================================================  =========
``attention``               scores, masks, softmax, scaled dot-product, multi-head    01–03
``seq2seq``                 a GRU encoder–decoder with attention and its toy task     02
``transformer``             positional encoding, the encoder block and stack          04–05
``pairs``                   LCQMC sentence pairs as data: reading, data statistics,   06
                            the course's sample, vocabulary, encoding, configs and
                            presets, the classifier
``evaluation``              scoring a pair classifier: metrics, the McNemar test and  06, 08–09
                            what a comparison can detect, the baselines
``training``                the training loop of every pair classifier, run folders   06, 08–09
``syntax``                  parses, head arrays, treebanks, tree distances, distance  07
                            buckets, the parse cache, parser noise, the parser's
                            own training
``syntax_bias``             bias modules, their registry, the biased classifier,      08–09
                            the distance predictor
``ablation``                the ablation: its config, runner and worker pool, typed   08–10
                            results, the grid of several results files, the
                            data-size study (files, analysis, report, figures)
``exercises``               the checkers the lessons' exercise cells call             01–09
``course``                  the lessons' helpers: plotting, diagrams,                 all
                            reproducibility, environment checks, notebooks,
                            assignments, prose and glossary checks
``grader``                  grading submissions in a sandbox                          —
``website``                 the course as a static website (``lessons site``)         —
``cli``                     the ``lessons`` command                                   —
==========================  ========================================================  =========

Shared by all: :mod:`lessons_lib.errors` (:class:`~lessons_lib.errors.CourseInputError`),
:mod:`lessons_lib.validation` (the one home of argument checks),
:mod:`lessons_lib.files` (every file the course writes: atomically, under a lock, recorded) and
:mod:`lessons_lib.paths` (where the course's files live), :mod:`lessons_lib.seeding`
(:func:`~lessons_lib.seeding.set_seed`). Dependencies point one way:
``attention`` ← ``transformer`` ← ``pairs`` ← ``evaluation`` ← ``training`` ← ``syntax_bias`` ←
``ablation``, and ``pairs`` ← ``syntax`` ← ``syntax_bias`` (``seq2seq`` uses ``attention`` only); ``exercises``
and ``course`` sit above them, ``grader`` and ``website`` above ``course``, and ``cli`` on top.
A room is named after its concept: ``pairs`` keeps the data (with the data statistics, which
the sample generator draws towards), ``evaluation`` what is done with a model's predictions,
``training`` the loop and the run folder.

Importing this package stays light: it does not import torch, matplotlib, spaCy or pandas;
import the module you need (``from lessons_lib.attention.functional import attention_scores``).
"""

__version__ = "0.1.0"
