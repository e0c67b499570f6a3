"""The syntax-bias ablation runner: every variant × seed on the same data, compared with the baseline.

:func:`run_experiment` parses nothing itself (:func:`parse_corpus` does, through the
parse cache): it takes the parses, applies the configured parser noise, trains each
variant once per seed with :func:`lessons_lib.training.trainer.train_pair_classifier`
(seeded, resumable; dev after every epoch), scores the test split once after training,
compares each variant with the baseline of the same seed by the exact McNemar test on
test, scores every biased run on test once more without trees (the bias left out) and,
with a distance predictor, with its predicted buckets (and the predictor's confusion over
buckets), reads the learned bias per bucket and returns an
:class:`~lessons_lib.ablation.results.ExperimentResult`. :func:`load_trained` rebuilds
a finished run's model from its folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Mapping, Sequence

from lessons_lib.errors import CourseInputError, FieldName
from lessons_lib.pairs.config import PairClassifierConfig
from lessons_lib.pairs.data import (LcqmcData, PairExample, distinct_sentences, examples_sha256,  # subsample: re-exported
                                    subsample)
from lessons_lib.pairs.encoding import ExtrasFn, make_batches
from lessons_lib.evaluation.metrics import EvalResult, evaluate, mcnemar_exact
from lessons_lib.training.runs import RunFolder, load_run, load_weights
from lessons_lib.training.trainer import TrainResult, train_pair_classifier
from lessons_lib.pairs.vocab import Vocabulary
from lessons_lib.seeding import set_seed
from lessons_lib.syntax.buckets import POSITION_UNITS, BucketScheme
from lessons_lib.syntax.noise import noisy_parses, scrambled_parses
from lessons_lib.syntax.parser import Parse
from lessons_lib.ablation.config import ExperimentConfig, SyntaxModelOptions
from lessons_lib.ablation.pool import run_all
from lessons_lib.syntax_bias.model import SyntaxBiasedPairClassifier, check_parse_alignment, extras_for
from lessons_lib.syntax_bias.predictor import DistancePredictor, bucket_confusion
from lessons_lib.syntax_bias.registry import BASELINE, VARIANTS, options_for
from lessons_lib.provenance import run_provenance
from lessons_lib.ablation.results import (PROBABILITY_DIGITS, DataSummary, EpochRecord, ExperimentResult,
                                          InferenceRecord, LearnedTable, PairedTest, PredictorRecord, RunRecord,
                                          VariantSummary, spread)
from lessons_lib.syntax_bias.variants import make_bias
from lessons_lib.validation import check_int

__all__ = ["subsample", "build_model", "training_subset", "needed_texts", "parse_corpus", "ParsedCorpus",
           "TrainingSubset", "run_experiment", "summarise", "bucket_names", "predictor_confusion",
           "load_trained", "RunPlace"]


def _build(classifier: PairClassifierConfig, scheme: BucketScheme, variant: str, options: object,
           syntax_model: SyntaxModelOptions) -> SyntaxBiasedPairClassifier:
    bias = make_bias(variant, scheme, classifier.encoder.n_heads, classifier.encoder.n_layers, options)
    if bias is None:  # the baseline: no bias to drop or predict
        return SyntaxBiasedPairClassifier(classifier, None)
    # Drawn after the classifier's weights, so that those are the baseline's whatever the options.
    # Only tree buckets need predicting: relative-position ones are known from the string.
    predicts = syntax_model.distance_predictor and VARIANTS[variant].buckets == "tree"
    predictor = (DistancePredictor(scheme, classifier.encoder.d_model, width=syntax_model.predictor_width,
                                   lr_multiplier=syntax_model.predictor_lr_multiplier) if predicts else None)
    return SyntaxBiasedPairClassifier(classifier, bias, bias_dropout=syntax_model.bias_dropout, predictor=predictor,
                                      predictor_weight=syntax_model.predictor_weight)


def build_model(config: ExperimentConfig, variant: str, vocab_size: int, seed: int) -> SyntaxBiasedPairClassifier:
    """The classifier of ``variant``, its weights drawn after seeding with ``seed``."""
    classifier = config.classifier_config(vocab_size)
    set_seed(seed)
    return _build(classifier, config.scheme(), variant, config.variant_options(variant), config.syntax_model_options())


def training_subset(data: LcqmcData, config: ExperimentConfig) -> list[PairExample]:
    """The training pairs every run of the experiment trains on: ``config.train_fraction`` of the
    training split, drawn with ``config.subset_seed`` (the one place the draw is written)."""
    return subsample(data.train.examples, config.train_fraction, config.subset_seed)


@dataclass(frozen=True)
class TrainingSubset:
    """An experiment's training pairs, drawn once, and what they were drawn from and with.

    ``source`` is the very list of training pairs the draw read: the subset serves again only
    an experiment on that same list with the same fraction and seed (:meth:`serves`).
    """

    examples: tuple[PairExample, ...]
    fraction: float
    seed: int
    source: Sequence[PairExample] = field(repr=False, compare=False)

    @classmethod
    def draw(cls, data: LcqmcData, config: ExperimentConfig) -> TrainingSubset:
        """Draw ``config``'s subset of ``data``'s training split (see :func:`training_subset`)."""
        return cls(tuple(training_subset(data, config)), config.train_fraction, config.subset_seed,
                   data.train.examples)

    def serves(self, data: LcqmcData, config: ExperimentConfig) -> bool:
        """Whether this is the subset ``config`` would draw from ``data``, so drawing again would give it back."""
        return (self.source is data.train.examples and self.fraction == config.train_fraction
                and self.seed == config.subset_seed)


class ParsedCorpus(dict[str, Parse]):
    """What :func:`parse_corpus` returns: a plain ``dict`` of sentence text → :class:`Parse`
    that also carries the :class:`TrainingSubset` it parsed (``None``: every training pair was
    parsed), so that :func:`run_experiment` trains on that subset rather than drawing it again."""

    subset: TrainingSubset | None = None


def needed_texts(data: LcqmcData, config: ExperimentConfig | None = None) -> list[str]:
    """The distinct sentences an experiment reads: its training subset (all of train without
    ``config``), dev and test, in first-seen order."""
    train = data.train.examples if config is None else training_subset(data, config)
    return _texts_read(data, train)


def _texts_read(data: LcqmcData, train: Sequence[PairExample]) -> list[str]:
    """The distinct sentences of ``train``, dev and test, in first-seen order."""
    return distinct_sentences(train, data.dev.examples, data.test.examples)


def _subset_to_train_on(data: LcqmcData, parses: Mapping[str, Parse], config: ExperimentConfig) -> list[PairExample]:
    """The training subset the parses were made for, when :func:`parse_corpus` drew it for this
    data and config; otherwise drawn here (trees made elsewhere, or parsed for another subset)."""
    carried = parses.subset if isinstance(parses, ParsedCorpus) else None
    if carried is not None and carried.serves(data, config):
        return list(carried.examples)
    return training_subset(data, config)


def parse_corpus(data: LcqmcData, parser: str | None = None, cache_dir: str | Path | None = None,
                 progress: bool = True, log: Callable[[str], None] | None = print,
                 config: ExperimentConfig | None = None) -> ParsedCorpus:
    """Parse every distinct sentence the experiment reads through the on-disk parse cache.

    Args:
        data: the splits.
        config: parse only the training subset this experiment uses (plus dev and test);
            ``None``: every sentence of the three splits.
        parser: a spaCy pipeline name or folder; ``None`` = an official Chinese pipeline if
            installed, else the course's shipped parser (see :func:`lessons_lib.syntax.parser.load_parser`).
        cache_dir: the parse cache folder (default ``data/cache/parses``).
        progress: a tqdm bar over the sentences.

    Returns:
        sentence text → :class:`Parse`, as a :class:`ParsedCorpus` that carries the training
        subset it parsed: :func:`run_experiment` with the same data and config trains on it.
    """
    from lessons_lib.progress import progress_bar_class

    tqdm = progress_bar_class()

    from lessons_lib.syntax.cache import DEFAULT_CACHE_DIR, ParseCache, parse_with_cache
    from lessons_lib.syntax.parser import load_parser, parser_identity

    subset = None if config is None else TrainingSubset.draw(data, config)
    texts = _texts_read(data, data.train.examples if subset is None else subset.examples)
    nlp = load_parser(parser)
    name, version = parser_identity(nlp)
    with ParseCache(cache_dir or DEFAULT_CACHE_DIR, name, version) as cache, \
            tqdm(total=len(texts), unit="sent", desc="parsing", disable=not progress, leave=False) as bar:
        parses, stats = parse_with_cache(texts, nlp, cache, progress=bar.update)
    if log:
        log(f"parser {name} {version}: {stats.distinct} sentences, {stats.hits} from the cache, {stats.parsed} parsed")
    corpus = ParsedCorpus(zip(texts, parses))
    corpus.subset = subset
    return corpus


@dataclass
class _Prepared:
    """What every run of one experiment shares: the training subset, the (noisy) parses, the vocabulary."""

    train: list[PairExample]
    parses: dict[str, Parse]
    noise_share: float
    vocab: Vocabulary
    data_note: str
    boundaries_kept: float | None = None


def _prepare(data: LcqmcData, parses: Mapping[str, Parse], config: ExperimentConfig) -> _Prepared:
    train = _subset_to_train_on(data, parses, config)
    needed = _texts_read(data, train)
    missing = sorted(set(needed) - set(parses))
    if missing:
        raise CourseInputError(f"{len(missing)} sentences have no parse, e.g. {missing[0]!r}; pre-parse the data first")
    used = {t: parses[t] for t in needed}
    for text, parse in used.items():
        check_parse_alignment(text, parse)
    boundaries_kept = None
    if config.scramble_words:
        original = used
        used, boundaries_kept = scrambled_parses(original, config.noise_seed)
        noise_share = _share_reattached(original, used)
    else:
        used, noise_share = noisy_parses(used, config.parser_noise, config.noise_seed)
    vocab = Vocabulary.build(t for ex in train for t in (ex.text_a, ex.text_b))
    data_note = (f"{data.source.path.name}:{len(train)}:{len(data.dev)}:{len(data.test)}:{vocab.fingerprint()}:"
                 f"{_parses_fingerprint(used)}")
    return _Prepared(train, used, noise_share, vocab, data_note, boundaries_kept)


def _share_reattached(original: Mapping[str, Parse], scrambled: Mapping[str, Parse]) -> float:
    """The share of words whose head changed; with other words, every word of a sentence whose words changed."""
    changed = total = 0
    for text, parse in scrambled.items():
        before = original[text]
        total += len(parse.heads)
        if parse.words != before.words:
            changed += len(parse.heads)
        else:
            changed += sum(a != b for a, b in zip(parse.heads, before.heads))
    return changed / total if total else 0.0


def _parses_fingerprint(parses: Mapping[str, Parse]) -> str:
    """A short hash of the trees, so that a checkpoint made with other parses (another parser,
    gold trees, other noise) is never resumed."""
    digest = hashlib.sha256()
    for text in sorted(parses):
        parse = parses[text]
        digest.update(json.dumps([text, parse.words, parse.heads], ensure_ascii=False).encode())
    return digest.hexdigest()[:12]


def _run_dir_name(config: ExperimentConfig, variant: str, seed: int, data_note: str) -> str:
    """``<variant>-seed<s>-<hash>``: the hash covers everything that shapes the run, so a
    checkpoint is only resumed by the same run. The experiment's lists of variants and seeds
    shape no single run: an experiment over seeds 0–2 reuses the runs of one over seed 0."""
    shaping = {k: v for k, v in config.to_dict().items() if k not in ("variants", "seeds")}
    payload = json.dumps([shaping, variant, seed, data_note], sort_keys=True)
    return f"{variant}-seed{seed}-{hashlib.sha256(payload.encode()).hexdigest()[:10]}"


def _record(variant: str, seed: int, result: TrainResult, test: EvalResult, run_dir: str | None) -> RunRecord:
    epochs = [EpochRecord(h.epoch, h.train_loss, h.dev["accuracy"], h.test["accuracy"] if h.test else None,
                          h.pairs_per_second, (h.model_summary or {}).get("bias_max_abs")) for h in result.history]
    return RunRecord(variant, seed, result.dev.accuracy, test.accuracy, result.dev.f1, test.f1,
                     epochs, test.predictions, run_dir, chosen_epoch=result.chosen_epoch,
                     optimizer_steps=result.optimizer_steps, dev_predictions=list(result.dev.predictions),
                     dev_probabilities=_rounded(result.dev.probabilities),
                     test_probabilities=_rounded(test.probabilities))


def _rounded(probabilities: Sequence[float]) -> list[float]:
    return [round(p, PROBABILITY_DIGITS) for p in probabilities]


def _model_spec(config: ExperimentConfig, classifier: PairClassifierConfig, variant: str) -> dict:
    """What :func:`load_trained` needs to rebuild a run's model (stored in its checkpoint)."""
    return {"classifier": classifier.to_dict(), "variant": variant, "max_distance": config.max_distance,
            "log_buckets": config.log_buckets, "options": config.bias_options, "syntax_model": config.syntax_model}


@dataclass(frozen=True)
class RunPlace:
    """Which run of an experiment this is, and where and how it trains."""

    variant: str
    seed: int
    run_dir: str | None
    work_dir: str | Path | None
    device: str
    progress: bool
    epoch_choice: str = "last"

    def run_folder(self) -> RunFolder | None:
        """The run's folder in the work folder (``None``: the run stays in memory); resumed when it holds a checkpoint."""
        if self.run_dir is None or self.work_dir is None:
            return None
        return RunFolder(Path(self.work_dir) / self.run_dir,
                         restart_hint="another --work-dir, or move this run's folder away to train it afresh")


def _train_and_score(model: SyntaxBiasedPairClassifier, data: LcqmcData, prepared, train_config, extras_fn, place: RunPlace,
                     model_spec: dict) -> RunRecord:
    """Train one run (resuming from its folder), score the test split once, and without the parser."""
    result = train_pair_classifier(
        model, prepared.train, data.dev.examples, prepared.vocab, train_config,
        run_folder=place.run_folder(), device=place.device,
        progress=place.progress, log=None, extras_fn=extras_fn, model_config=model_spec,
        keep_best_dev=place.epoch_choice == "best_dev",
    )
    # The test split is scored once, after training, with the chosen epoch's weights: nothing is ever chosen by it.
    test = evaluate(model, data.test.examples, prepared.vocab, batch_size=train_config.eval_batch_size,
                    max_len=train_config.max_len, device=place.device, extras_fn=extras_fn)
    record = _record(place.variant, place.seed, result, test, place.run_dir)
    if place.variant != BASELINE:
        record.inference, record.predictor = _test_without_parser(model, data.test.examples, prepared.vocab,
                                                                  train_config, extras_fn, place.device)
    return record


def run_experiment(
    data: LcqmcData,
    parses: Mapping[str, Parse],
    config: ExperimentConfig,
    *,
    device: str = "cpu",
    work_dir: str | Path | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
    workers: int = 1,
) -> ExperimentResult:
    """Train every variant × seed and return the results.

    Args:
        data: the three splits.
        parses: sentence → parse for every sentence the experiment reads. From :func:`parse_corpus`
            with the same data and config they carry the training subset, which is then not drawn again.
        config: see :class:`~lessons_lib.ablation.config.ExperimentConfig`.
        device: ``"cpu"`` or ``"cuda"``.
        work_dir: where each run keeps its checkpoint (``<variant>-seed<s>-<hash>/``) so an
            interrupted experiment resumes; ``None`` = in memory only.
        progress: tqdm bars while training.
        log: one-line progress messages (``None``: silent).
        workers: how many runs train at once, each in its own process with as many torch
            threads as this one. Every run seeds itself, so the results are the same for any
            number of workers, and afterwards the random streams are where one worker would
            have left them (see :func:`~lessons_lib.ablation.pool.run_all`). The workers are spawned, so a script that
            asks for more than one must guard its top level with ``if __name__ == "__main__":``
            (a notebook and the command line need nothing).
    """
    check_int(workers, FieldName("workers"), minimum=1)
    prepared = _prepare(data, parses, config)
    scheme, vocab = config.scheme(), prepared.vocab
    shared = _Shared(config, data, prepared, work_dir, device, progress)
    jobs = [(variant, seed) for seed in config.seeds for variant in config.variants]
    if log:
        log(f"{len(jobs)} runs of {len(prepared.train)} training pairs each"
            + (f", {min(workers, len(jobs))} at a time" if workers > 1 else ""))
    runs, tables = [], []
    for record, table in run_all(jobs, workers, partial(_worker_state, shared), _run_job):
        runs.append(record)
        tables += [table] if table is not None else []
        if log:
            log(f"variant {record.variant}, seed {record.seed}: dev {record.dev_accuracy:.4f}, "
                f"test {record.test_accuracy:.4f}")
    return ExperimentResult(
        config=config,
        data=DataSummary(data.source.origin, data.source.path.name, len(prepared.train), len(data.train),
                         len(data.dev), len(data.test), len(vocab), len(prepared.parses), prepared.noise_share,
                         data.pairs_sha256(), examples_sha256(prepared.train), prepared.boundaries_kept),
        buckets={"names": list(scheme.names), "kinds": list(scheme.kinds),
                 "position_names": {unit: list(scheme.position_names(unit)) for unit in POSITION_UNITS}},
        runs=runs,
        summary=summarise(runs),
        mcnemar=_paired_tests(runs, [ex.label for ex in data.test.examples]),
        learned_bias=tables,
        test_labels=[ex.label for ex in data.test.examples],
        dev_labels=[ex.label for ex in data.dev.examples],
        provenance=run_provenance(device),
    )


def _test_without_parser(model: SyntaxBiasedPairClassifier, examples: Sequence[PairExample], vocab: Vocabulary,
                         train_config, extras: ExtrasFn, device: str) -> tuple[list[InferenceRecord], PredictorRecord | None]:
    """The test split scored with the bias left out and, with a predictor, with its buckets; and its confusion."""
    sources = ["none"] + (["predicted"] if model.distance_predictor is not None else [])
    records = []
    for source in sources:
        model.set_test_buckets(source)
        try:
            result = evaluate(model, examples, vocab, batch_size=train_config.eval_batch_size,
                              max_len=train_config.max_len, device=device)
        finally:
            model.set_test_buckets("trees")
        records.append(InferenceRecord(source, result.accuracy, result.predictions))
    if model.distance_predictor is None:
        return records, None
    confusion = predictor_confusion(model, examples, vocab, extras, train_config.max_len,
                                    train_config.eval_batch_size, device)
    names = [model.distance_predictor.scheme.names[b] for b in model.distance_predictor.class_ids.tolist()]
    parameters = sum(p.numel() for p in model.distance_predictor.parameters())
    return records, PredictorRecord(names, confusion.tolist(), float(confusion.trace() / confusion.sum().clamp(min=1)),
                                    parameters)


def predictor_confusion(model: SyntaxBiasedPairClassifier, examples: Sequence[PairExample], vocab: Vocabulary,
                        extras_fn: ExtrasFn, max_len: int, batch_size: int = 256, device: str = "cpu"):
    """``(C, C)`` counts of (parser's bucket, predicted bucket) over the open pairs of ``examples``.

    Open pairs: two different characters of the same sentence, the only ones the predictor
    decides (see :mod:`lessons_lib.syntax_bias.predictor`). ``extras_fn`` gives the parser's buckets.
    """
    if model.distance_predictor is None:
        raise CourseInputError("this model has no distance predictor")
    gold, guess, open_pairs = [], [], []
    model.eval()
    for batch in make_batches(examples, vocab, batch_size, max_len=max_len, extras_fn=extras_fn):
        batch = batch.to(device)
        predicted, needs_tree = model.predicted_buckets(batch)
        gold.append(model.batch_buckets(batch))
        guess.append(predicted)
        open_pairs.append(needs_tree)
    return bucket_confusion(gold, guess, open_pairs, model.distance_predictor.class_ids.tolist())


def _variant_extras(config: ExperimentConfig, parses: Mapping[str, Parse]) -> dict[str, ExtrasFn | None]:
    """Each variant's ``extras_fn``; variants that read the same buckets share one (and its memo)."""
    max_len = config.train_config(0).max_len  # the same for every seed
    shared: dict[tuple, ExtrasFn | None] = {}
    out = {}
    for name in config.variants:
        options = config.variant_options(name)
        key = (VARIANTS[name].buckets, getattr(options, "position_unit", None))
        if key not in shared:
            shared[key] = extras_for(name, parses, config.scheme(), max_len, options)
        out[name] = shared[key]
    return out


def bucket_names(config: ExperimentConfig, variant: str) -> list[str]:
    """The labels of the bucket ids variant ``variant`` reads (tree or relative-position buckets)."""
    scheme = config.scheme()
    if VARIANTS[variant].buckets == "position":
        return list(scheme.position_names(config.variant_options(variant).position_unit))
    return list(scheme.names)


def summarise(runs: Sequence[RunRecord]) -> dict[str, VariantSummary]:
    """Per variant over seeds: dev and test accuracy (mean, std, min, max, 95 % interval) and
    the paired test-accuracy difference from the baseline of the same seed."""
    baseline = {r.seed: r.test_accuracy for r in runs if r.variant == BASELINE}
    out: dict[str, VariantSummary] = {}
    for variant in dict.fromkeys(r.variant for r in runs):
        mine = [r for r in runs if r.variant == variant]
        differences = [r.test_accuracy - baseline[r.seed] for r in mine if r.seed in baseline]
        sources = list(dict.fromkeys(i.buckets for r in mine for i in r.inference))
        by_source = {source: spread([i.test_accuracy for r in mine for i in r.inference if i.buckets == source])
                     for source in sources}
        out[variant] = VariantSummary([r.seed for r in mine], spread([r.dev_accuracy for r in mine]),
                                      spread([r.test_accuracy for r in mine]),
                                      spread(differences) if variant != BASELINE and differences else None, by_source)
    return out


def _paired_tests(runs: Sequence[RunRecord], labels: Sequence[int]) -> list[PairedTest]:
    baseline = {r.seed: r for r in runs if r.variant == BASELINE}
    out = []
    for r in runs:
        if r.variant == BASELINE or r.seed not in baseline:
            continue
        test = mcnemar_exact(r.test_predictions, baseline[r.seed].test_predictions, labels)
        out.append(PairedTest(r.variant, r.seed, test.only_a, test.only_b, test.p_value))
    return out


def _learned_table(model: SyntaxBiasedPairClassifier, variant: str, seed: int,
                   names: Sequence[str]) -> LearnedTable | None:
    """The trained table of a learned variant's run (``None`` for the others)."""
    if not VARIANTS[variant].learned:
        return None
    bias = model.syntax_bias
    assert bias is not None  # a learned variant has its bias module
    table = bias.bias_per_bucket().cpu()  # (tables, rows, buckets)
    return LearnedTable(variant, seed, list(names), table.tolist(), table.mean(dim=(0, 1)).tolist())


@dataclass(frozen=True)
class _Shared:
    """What every run of one experiment reads; sent once to each worker process."""

    config: ExperimentConfig
    data: LcqmcData
    prepared: _Prepared
    work_dir: str | Path | None
    device: str
    progress: bool


def _run_one(shared: _Shared, extras: Mapping[str, ExtrasFn | None], variant: str,
             seed: int) -> tuple[RunRecord, LearnedTable | None]:
    """Build, train and score one variant with one seed."""
    config, prepared = shared.config, shared.prepared
    model = build_model(config, variant, len(prepared.vocab), seed)
    run_dir = None if shared.work_dir is None else _run_dir_name(config, variant, seed, prepared.data_note)
    record = _train_and_score(model, shared.data, prepared, config.train_config(seed), extras[variant],
                              RunPlace(variant, seed, run_dir, shared.work_dir, shared.device, shared.progress,
                                       config.epoch_choice),
                              _model_spec(config, config.classifier_config(len(prepared.vocab)), variant))
    return record, _learned_table(model, variant, seed, bucket_names(config, variant))


def _worker_state(shared: _Shared) -> tuple[_Shared, dict[str, ExtrasFn | None]]:
    """What one process needs to train the experiment's runs: the shared inputs and each variant's extras."""
    return shared, _variant_extras(shared.config, shared.prepared.parses)


def _run_job(state: tuple[_Shared, Mapping[str, ExtrasFn | None]],
             job: tuple[str, int]) -> tuple[RunRecord, LearnedTable | None]:
    shared, extras = state
    variant, seed = job
    return _run_one(shared, extras, variant, seed)


def load_trained(run_dir: str | Path) -> tuple[SyntaxBiasedPairClassifier, Vocabulary]:
    """Rebuild a finished run of :func:`run_experiment` from its folder: ``(model in eval mode, vocabulary)``.

    ``run_dir`` is the experiment's work folder joined with :attr:`RunRecord.run_dir`.
    """
    run = load_run(run_dir)
    spec = run.model_config
    if not isinstance(spec, dict) or not {"classifier", "variant", "max_distance", "log_buckets", "options"} <= set(spec):
        raise CourseInputError(f"{run_dir}: not a run of `lessons experiment` (its checkpoint has no model spec)")
    scheme = BucketScheme(max_distance=spec["max_distance"], log_buckets=spec["log_buckets"])
    model = _build(PairClassifierConfig.from_dict(spec["classifier"]), scheme, spec["variant"],
                   options_for(spec["variant"], spec["options"]), SyntaxModelOptions(**spec.get("syntax_model", {})))
    load_weights(model, run.model_state, Path(run_dir))
    return model.eval(), run.vocab
