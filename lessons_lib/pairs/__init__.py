"""Sentence pairs, the LCQMC kind (lesson 06, and the models of lessons 08–09): the data and what the classifier needs to read it.

The room of the pair task's data: everything here is about pairs of questions as they are
read, described, drawn and turned into token ids, up to the classifier that reads those ids.
How a classifier is scored and compared lives one floor up (:mod:`lessons_lib.evaluation`),
how it is trained and its run folder kept one more up (:mod:`lessons_lib.training`).

- :mod:`~lessons_lib.pairs.data` — reading LCQMC-format files and finding the data folder;
  the character overlap of a pair.
- :mod:`~lessons_lib.pairs.stats` — how a data set is put together: recurrence of questions
  across splits, label shares, hard negatives (here, not in :mod:`lessons_lib.evaluation`:
  it describes data, and the sample generator draws towards its numbers).
- :mod:`~lessons_lib.pairs.sample` — generating the course's LCQMC-format sample.
- :mod:`~lessons_lib.pairs.vocab` — the character vocabulary and the special tokens.
- :mod:`~lessons_lib.pairs.encoding` — ``[CLS] s1 [SEP] s2 [SEP]``, truncation, batches.
- :mod:`~lessons_lib.pairs.config` — classifier and training configs, presets, overrides (no
  torch; here because the batching options are read by the encoding).
- :mod:`~lessons_lib.pairs.classifier` — the encoder plus the ``[CLS]`` head.
"""
