"""Training a translator and reading its translations: teacher forcing with label smoothing,
AdamW with warm-up, the dev-chosen epoch, and BLEU/chrF per group of test sentences.

- :func:`translator_config` — the encoder–decoder of :class:`~lessons_lib.translation.config.TranslatorSizes`.
- :func:`translation_vocabularies` — the vocabularies of a training split.
- :func:`train_translator` — one run: train, choose the epoch by dev BLEU (greedy), translate test;
  with a checkpoint path, every epoch is saved there and an interrupted run resumes from it, to the
  same numbers as a run that was never stopped.
- :func:`translate_pairs` — the hypotheses of a trained translator for a list of pairs.
- :class:`TranslationRun` — what a run leaves: its history, the chosen epoch, the test
  hypotheses, their sentence statistics and the scores per group.
"""

from __future__ import annotations

import copy
import json
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch

from lessons_lib.errors import CourseInputError, file_errors
from lessons_lib.files import record_via, written_by_course
from lessons_lib.evaluation.translation import (CorpusScores, SentenceStatistics, corpus_scores,
                                                sentence_statistics)
from lessons_lib.pairs.encoding import batch_indices
from lessons_lib.pairs.vocab import Vocabulary, tokenize_chars
from lessons_lib.syntax.buckets import DEFAULT_SCHEME, BucketScheme
from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax_bias.registry import variant as registry_variant
from lessons_lib.training.runs import identity_differences
from lessons_lib.training.trainer import parameter_groups
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.translation.config import TranslationTrainConfig, TranslatorSizes
from lessons_lib.translation.encoding import TranslationBatch, detokenize, encode_batch, target_vocabulary
from lessons_lib.translation.model import SyntaxBiasedTranslator, build_translator
from lessons_lib.translation.pairs_folder import TranslationPair
from lessons_lib.translation.trees import source_buckets

__all__ = ["translator_config", "TranslationRun", "translation_vocabularies", "train_translator", "translate_pairs",
           "group_scores", "CHECKPOINT_KIND"]

CHECKPOINT_KIND = "translation checkpoint"


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
                     log: Callable[[str], None] | None = None, checkpoint: Path | None = None,
                     identity: Mapping[str, Any] | None = None) -> tuple[TranslationRun, SyntaxBiasedTranslator]:
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
        checkpoint: where the run is saved after every epoch (weights, optimiser, scheduler, the
            random state, the history and the best epoch so far); a checkpoint already there is
            resumed when it was written by a run of the same ``identity`` (everything that shapes the
            run: data, knobs, subset, commit, kernel set), and refused otherwise.
        identity: the run's identity, stored in and compared with the checkpoint.

    Raises:
        CourseInputError: the variant reads no tree buckets or lacks its trees; the checkpoint is not
            the course's, was changed, or belongs to another run (naming the fields that differ).
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
    best_bleu, best_state, first_epoch, seconds_before = -1.0, copy.deepcopy(model.state_dict()), 1, 0.0
    # JSON's types only, as the checkpoint stores them (torch's version string is a class of its own)
    identity = None if identity is None else json.loads(json.dumps(identity, default=str))
    saved = _load_checkpoint(checkpoint, identity) if checkpoint is not None else None
    if saved is not None:
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        torch.set_rng_state(saved["rng"])
        run.history, run.best_epoch, best_bleu, best_state = saved["history"], saved["best_epoch"], saved["best_bleu"], saved["best_state"]
        first_epoch, seconds_before = saved["epoch"] + 1, saved["seconds"]
        if log is not None:
            log(f"resumed from {checkpoint} after epoch {saved['epoch']}")
    for epoch in range(first_epoch, config.epochs + 1):
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
        if dev_bleu > best_bleu or config.epoch_choice == "last":
            best_bleu, best_state, run.best_epoch = dev_bleu, copy.deepcopy(model.state_dict()), epoch
        if checkpoint is not None:  # saved before anything else can stop the run
            _save_checkpoint(checkpoint, {
                "identity": identity, "epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "rng": torch.get_rng_state(), "history": run.history,
                "best_epoch": run.best_epoch, "best_bleu": best_bleu, "best_state": best_state,
                "seconds": seconds_before + time.perf_counter() - started})
        if log is not None:
            log(f"epoch {epoch}: train loss {total / tokens:.4f}, dev BLEU {dev_bleu:.2f}")
    model.load_state_dict(best_state)
    run.hypotheses = translate_pairs(model, test, vocabs, trees, config.max_target_len, config.test_beam, scheme)
    run.statistics = sentence_statistics(run.hypotheses, [pair.reference for pair in test])
    run.scores = group_scores(test, run.hypotheses)
    run.seconds = seconds_before + time.perf_counter() - started
    return run, model


def _save_checkpoint(path: Path, state: dict) -> None:
    """Write ``state`` to ``path`` atomically, recorded as the course's checkpoint."""
    record_via(path, lambda temporary: torch.save(state, temporary), kind=CHECKPOINT_KIND)


def _load_checkpoint(path: Path, identity: Mapping[str, Any] | None) -> dict | None:
    """The checkpoint at ``path`` (``None`` if there is none), checked to be the course's and this run's.

    Loaded with ``weights_only=True``: it holds tensors, numbers, strings, lists and dicts only.
    """
    if not path.exists():
        return None
    if not written_by_course(path, CHECKPOINT_KIND):
        raise CourseInputError(f"{path}: not a checkpoint the course wrote, or changed since; remove it to start "
                               "this run afresh")
    try:
        with file_errors(path):
            state = torch.load(path, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as error:
        raise CourseInputError(f"{path}: not a checkpoint this course can read ({type(error).__name__}); remove it "
                               "to start this run afresh") from None
    differences = identity_differences(state.get("identity"), identity)
    if differences:
        raise CourseInputError(f"{path}: the checkpoint of another run ({'; '.join(differences[:4])}); remove it to "
                               "start this run afresh, or run the command as it was")
    return state

