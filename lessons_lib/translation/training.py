"""Training a translator and reading its translations: teacher forcing with label smoothing,
AdamW with warm-up, the dev-chosen epoch, and BLEU/chrF per group of test sentences.

- :func:`translator_config` — the encoder–decoder of :class:`~lessons_lib.translation.config.TranslatorSizes`.
- :func:`translation_vocabularies` — the vocabularies of a training split.
- :func:`train_translator` — one run: train, choose the epoch by dev BLEU (greedy), translate test.
- :func:`translate_pairs` — the hypotheses of a trained translator for a list of pairs.
- :class:`TranslationRun` — what a run leaves: its history, the chosen epoch, the test
  hypotheses, their sentence statistics and the scores per group.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.evaluation.translation import (CorpusScores, SentenceStatistics, corpus_scores,
                                                sentence_statistics)
from lessons_lib.pairs.encoding import batch_indices
from lessons_lib.pairs.vocab import Vocabulary, tokenize_chars
from lessons_lib.syntax.buckets import DEFAULT_SCHEME, BucketScheme
from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax_bias.registry import variant as registry_variant
from lessons_lib.training.trainer import parameter_groups
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.translation.config import TranslationTrainConfig, TranslatorSizes
from lessons_lib.translation.encoding import TranslationBatch, detokenize, encode_batch, target_vocabulary
from lessons_lib.translation.model import SyntaxBiasedTranslator, build_translator
from lessons_lib.translation.pairs_folder import TranslationPair
from lessons_lib.translation.trees import source_buckets

__all__ = ["translator_config", "TranslationRun", "translation_vocabularies", "train_translator", "translate_pairs",
           "group_scores"]


def translator_config(source_vocab_size: int, sizes: TranslatorSizes | None = None) -> EncoderConfig:
    """The Pre-LN encoder–decoder of the course's translation runs (ReLU, as in the 2017 paper)."""
    sizes = sizes or TranslatorSizes()
    return EncoderConfig(vocab_size=source_vocab_size, d_model=sizes.d_model, n_heads=sizes.n_heads,
                         n_layers=sizes.n_layers, d_ff=sizes.d_ff, dropout=sizes.dropout, max_positions=128,
                         n_segments=1, norm_first=True, activation="relu")


@dataclass
class TranslationRun:
    """What one run leaves.

    Attributes:
        variant, trees, seed: which arm and seed.
        history: per epoch ``{"epoch", "train_loss", "dev_bleu"}``, and ``"bias_max_abs"`` with a learned table.
        best_epoch: the epoch kept (per the config's ``epoch_choice``).
        hypotheses: the test translations, in the order of the test pairs.
        statistics: each test sentence's BLEU statistics (for bootstraps over test sentences).
        scores: corpus scores per test group, and ``"all"``.
        seconds: wall time of training and evaluation.
    """

    variant: str
    trees: str
    seed: int
    history: list[dict] = field(default_factory=list)
    best_epoch: int = 0
    hypotheses: list[str] = field(default_factory=list)
    statistics: list[SentenceStatistics] = field(default_factory=list)
    scores: dict[str, CorpusScores] = field(default_factory=dict)
    seconds: float = 0.0


def _batches(pairs: Sequence[TranslationPair], vocabs: tuple[Vocabulary, Vocabulary],
             trees: Mapping[str, Parse] | None, scheme: BucketScheme, batch_size: int,
             shuffle: bool, seed: int) -> list[TranslationBatch]:
    lengths = [len(tokenize_chars(pair.source)) for pair in pairs]
    out = []
    for indices in batch_indices(lengths, batch_size, shuffle=shuffle, seed=seed, batching="bucketed"):
        buckets = None if trees is None else source_buckets(pairs, indices, trees, scheme)
        out.append(encode_batch(pairs, indices, vocabs[0], vocabs[1], buckets))
    return out


def translate_pairs(model: SyntaxBiasedTranslator, pairs: Sequence[TranslationPair],
                    vocabs: tuple[Vocabulary, Vocabulary], trees: Mapping[str, Parse] | None,
                    max_len: int, beam_size: int = 1, scheme: BucketScheme = DEFAULT_SCHEME,
                    batch_size: int = 128) -> list[str]:
    """The detokenized translation of each pair's source, in the order of ``pairs``."""
    model.eval()
    out: list[str] = [""] * len(pairs)
    for batch in _batches(pairs, vocabs, trees, scheme, batch_size, shuffle=False, seed=0):
        for index, ids in zip(batch.indices, model.translate(batch, max_len, beam_size)):
            out[index] = detokenize(vocabs[1].decode(ids))
    return out


def group_scores(pairs: Sequence[TranslationPair], hypotheses: Sequence[str]) -> dict[str, CorpusScores]:
    """Corpus BLEU and chrF for each group of ``pairs`` (in order of first appearance) and ``"all"``."""
    scores = {}
    for group in dict.fromkeys(pair.group for pair in pairs):
        chosen = [i for i, pair in enumerate(pairs) if pair.group == group]
        scores[group] = corpus_scores([hypotheses[i] for i in chosen], [pairs[i].reference for i in chosen])
    scores["all"] = corpus_scores(list(hypotheses), [pair.reference for pair in pairs])
    return scores


def translation_vocabularies(train: Sequence[TranslationPair]) -> tuple[Vocabulary, Vocabulary]:
    """The source characters and the English tokens of the training pairs: the vocabularies a run trains with."""
    return Vocabulary.build(pair.source for pair in train), target_vocabulary([pair.reference for pair in train])


def train_translator(train: Sequence[TranslationPair], dev: Sequence[TranslationPair],
                     test: Sequence[TranslationPair], variant: str, seed: int,
                     trees: Mapping[str, Parse] | None = None, tree_source: str = "none",
                     config: TranslationTrainConfig | None = None,
                     sizes: TranslatorSizes | None = None, bias_options: object = None,
                     scheme: BucketScheme = DEFAULT_SCHEME,
                     log: Callable[[str], None] | None = None) -> tuple[TranslationRun, SyntaxBiasedTranslator]:
    """Train one translator and translate ``test`` with the dev-chosen epoch.

    Args:
        train, dev, test: the pairs.
        variant: a syntax-bias registry variant reading tree buckets (``"none"``, ``"learned"``,
            ``"hard_mask"``, ``"fixed_decay"``).
        seed: draws the weights, dropout and batch order.
        trees: a tree per pair id of all three splits (needed unless ``variant`` is ``"none"``).
        tree_source: a label of where the trees came from, for the record.
        config: the training knobs (default :class:`TranslationTrainConfig`'s).
        sizes: the model's sizes (:func:`translator_config`).
        bias_options: the variant's options (``None``: its defaults).
    """
    config = config or TranslationTrainConfig()
    entry = registry_variant(variant)
    if entry.buckets not in (None, "tree"):
        raise CourseInputError(f"variant {variant!r} reads {entry.buckets} buckets; a translator reads tree buckets")
    trees = None if entry.buckets is None else trees
    if entry.buckets is not None and trees is None:
        raise CourseInputError(f"variant {variant!r} needs trees")
    started = time.perf_counter()
    vocabs = translation_vocabularies(train)
    model = build_translator(translator_config(len(vocabs[0]), sizes), len(vocabs[1]), variant,
                             seed, scheme, bias_options)
    optimizer = torch.optim.AdamW(parameter_groups(model, config.weight_decay, config.lr), lr=config.lr, fused=True)
    steps_per_epoch = -(-len(train) // config.batch_size)
    warmup = max(1, round(config.warmup_ratio * config.epochs * steps_per_epoch))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
    run = TranslationRun(variant, tree_source if trees is not None else "none", seed)
    best_bleu, best_state = -1.0, copy.deepcopy(model.state_dict())
    for epoch in range(1, config.epochs + 1):
        model.train()
        total, tokens = 0.0, 0
        for batch in _batches(train, vocabs, trees, scheme, config.batch_size, shuffle=True, seed=seed * 1000 + epoch):
            loss = model.loss(batch, config.label_smoothing)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_norm)
            optimizer.step()
            scheduler.step()
            n = int(batch.target_mask.sum())
            total, tokens = total + loss.item() * n, tokens + n
        dev_hypotheses = translate_pairs(model, dev, vocabs, trees, config.max_target_len, 1, scheme)
        dev_bleu = corpus_scores(dev_hypotheses, [pair.reference for pair in dev]).bleu
        run.history.append({"epoch": epoch, "train_loss": total / tokens, "dev_bleu": dev_bleu, **model.epoch_summary()})
        if log is not None:
            log(f"epoch {epoch}: train loss {total / tokens:.4f}, dev BLEU {dev_bleu:.2f}")
        if dev_bleu > best_bleu or config.epoch_choice == "last":
            best_bleu, best_state, run.best_epoch = dev_bleu, copy.deepcopy(model.state_dict()), epoch
    model.load_state_dict(best_state)
    run.hypotheses = translate_pairs(model, test, vocabs, trees, config.max_target_len, config.test_beam, scheme)
    run.statistics = sentence_statistics(run.hypotheses, [pair.reference for pair in test])
    run.scores = group_scores(test, run.hypotheses)
    run.seconds = time.perf_counter() - started
    return run, model

