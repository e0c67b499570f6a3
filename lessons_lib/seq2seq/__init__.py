"""Encoder–decoder attention with a small GRU seq2seq model (lesson 02).

- :mod:`~lessons_lib.seq2seq.model` — the GRU encoder, the attention decoder, the model.
- :mod:`~lessons_lib.seq2seq.training` — teacher-forced training, exact match, seeded trials.
- :mod:`~lessons_lib.seq2seq.numerals` — the toy task: Chinese numerals → Arabic digits.
"""
