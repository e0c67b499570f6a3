"""The syntax-bias ablation: the biased pair classifier, parser noise, and the experiment runner.

- :class:`SyntaxBiasedPairClassifier` — :class:`lessons_lib.pair_classifier.PairClassifier`
  whose attention gets a :mod:`lessons_lib.syntax_bias` module's output through the
  encoder's ``attn_bias``. The batches carry the pair's bucket matrix
  ``batch.extras["syntax_buckets"]`` ``(B, L, L)``, made by :func:`bucket_extras` from
  the parses of the two sentences (issue-5's :mod:`lessons_lib.syntax.pair_buckets`).
  With the variant ``"none"`` it *is* the baseline: same layers, same random draws.
- :func:`perturb_heads` / :func:`noisy_parses` — parser noise: re-attach each non-root
  word, with probability ``p``, to a random other word that is not its current head and
  not one of its descendants (so the result is still one tree).
- :func:`run_experiment` — train every variant with the same seeds on the same data,
  evaluate dev and test, compare each variant with the baseline by the exact McNemar
  test on test (same seed), read the learned bias per bucket, return one JSON-ready dict.

Everything a variant needs is decided here; training itself is issue 4's
:func:`lessons_lib.training.train_pair_classifier` (seeded, resumable checkpoints).
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.lcqmc import LcqmcData, PairExample
from lessons_lib.pair_classifier import PairClassifier, PairClassifierConfig
from lessons_lib.pairs import ExtrasFn, PairBatch
from lessons_lib.reproducibility import set_seed
from lessons_lib.syntax.pair_buckets import BucketScheme, batch_pair_distance_buckets
from lessons_lib.syntax.parser import Parse
from lessons_lib.syntax.trees import ROOT_HEAD, validate_heads
from lessons_lib.syntax_bias import VARIANTS, BucketBias, LearnedBucketBias, make_bias
from lessons_lib.training import PRESETS, TrainConfig, mcnemar_exact, train_pair_classifier
from lessons_lib.vocab import Vocabulary, tokenize_chars

__all__ = [
    "BUCKETS_KEY",
    "SyntaxBiasedPairClassifier",
    "bucket_extras",
    "check_parse_alignment",
    "perturb_heads",
    "noisy_parses",
    "subsample",
    "ExperimentConfig",
    "build_model",
    "parse_corpus",
    "run_experiment",
    "summarise",
]

BUCKETS_KEY = "syntax_buckets"


class SyntaxBiasedPairClassifier(PairClassifier):
    """A pair classifier whose every attention block adds a syntax bias to its scores.

    Args:
        config: the classifier's sizes and switches.
        bias: a :class:`lessons_lib.syntax_bias.BucketBias` (``None``: the plain baseline).
    """

    def __init__(self, config: PairClassifierConfig, bias: BucketBias | None) -> None:
        super().__init__(config)
        if bias is not None and bias.n_layers != config.n_layers:
            raise CourseInputError(f"the bias serves {bias.n_layers} blocks but the encoder has {config.n_layers}")
        self.syntax_bias = bias

    def attention_bias(self, batch: PairBatch) -> list[torch.Tensor] | None:
        """One ``(B, 1 or H, L, L)`` bias per block from ``batch.extras["syntax_buckets"]``."""
        if self.syntax_bias is None:
            return None
        buckets = batch.extras.get(BUCKETS_KEY)
        if buckets is None:
            raise CourseInputError(
                f"this model needs `batch.extras[{BUCKETS_KEY!r}]`: pass `extras_fn=bucket_extras(...)` "
                "when making batches (or use the variant 'none')"
            )
        pairs_real = batch.key_mask[:, :, None] & batch.key_mask[:, None, :]
        if buckets.shape != pairs_real.shape or not torch.equal(buckets >= 0, pairs_real):
            raise CourseInputError(
                f"`{BUCKETS_KEY}` {tuple(buckets.shape)} does not line up with the batch's tokens "
                f"{tuple(pairs_real.shape)}: its -1 (padding) entries must be exactly the pairs with a padding position"
            )
        return self.syntax_bias(buckets)


def check_parse_alignment(text: str, parse: Parse) -> None:
    """The parse's words must spell the sentence's characters (whitespace left out), as the model reads it."""
    chars = tokenize_chars(text)
    spelled = [ch for word in parse.words for ch in word if not ch.isspace()]
    if spelled != chars:
        raise CourseInputError(
            f"the parse of {text!r} has words {list(parse.words)} that do not spell its characters; "
            "the character-to-word alignment would be wrong"
        )


def bucket_extras(parses: Mapping[str, Parse], scheme: BucketScheme, max_len: int) -> ExtrasFn:
    """An ``extras_fn`` for :func:`lessons_lib.pairs.make_batches` adding the bucket matrices.

    A pair's matrix is computed once (the first time the pair is seen, in either order)
    and kept, as int8, for later epochs and evaluations: the parses do not change during
    an experiment, and recomputing tree distances for every batch would cost more than the
    attention itself.

    Args:
        parses: sentence text → its :class:`Parse` (every sentence of the batches must be there).
        scheme: the bucket scheme (max distance, log buckets).
        max_len: the same ``max_len`` the batches are made with (truncation must agree).

    Returns:
        ``fn(pairs, batch) -> {"syntax_buckets": (B, L, L) long}``, ``-1`` at padding.
    """
    if scheme.num_buckets > 127:
        raise CourseInputError(f"{scheme.num_buckets} buckets do not fit the int8 memo; use max_distance ≤ 124")
    memo: dict[tuple[str, str], torch.Tensor] = {}

    def extras(chunk: Sequence[PairExample], batch: PairBatch) -> dict[str, torch.Tensor]:
        todo = [(ex.text_a, ex.text_b) for ex in chunk if (ex.text_a, ex.text_b) not in memo]
        todo = list(dict.fromkeys(todo))
        if todo:
            rows = []
            for text_a, text_b in todo:
                missing = [t for t in (text_a, text_b) if t not in parses]
                if missing:
                    raise CourseInputError(f"no parse for {missing[0]!r}; pre-parse the data first")
                pa, pb = parses[text_a], parses[text_b]
                rows.append((pa.words, pa.heads, pb.words, pb.heads))
            fresh = batch_pair_distance_buckets(rows, max_len=max_len, scheme=scheme)
            for key, matrix in zip(todo, fresh):
                n = int((matrix[0] >= 0).sum())  # the pair's own length
                memo[key] = matrix[:n, :n].to(torch.int8)
        length = batch.token_ids.shape[1]
        out = torch.full((len(chunk), length, length), -1, dtype=torch.long)
        for row, ex in enumerate(chunk):
            matrix = memo[(ex.text_a, ex.text_b)]
            n = matrix.shape[0]
            if n > length:
                raise CourseInputError(f"the pair on line {ex.line} has {n} positions but its batch only {length}")
            out[row, :n, :n] = matrix
        return {BUCKETS_KEY: out}

    return extras


def _descendants(heads: Sequence[int], node: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for i, h in enumerate(heads):
        children.setdefault(h, []).append(i)
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        out.add(n)
        stack.extend(children.get(n, []))
    return out


def perturb_heads(heads: Sequence[int], probability: float, rng: random.Random) -> list[int]:
    """Parser noise: each non-root word, with ``probability``, gets a new random head.

    The new head is drawn uniformly among the words that are neither the word itself, nor
    its current head, nor one of its descendants — attaching a word below itself would
    make a cycle — so the result is again one tree with the same root. A word with no
    such candidate keeps its head.

    Args:
        heads: a valid head array (0-based, root = -1).
        probability: in ``[0, 1]``.
        rng: the random source (seeded by the caller).
    """
    if not 0.0 <= probability <= 1.0:
        raise CourseInputError(f"`probability` (parser noise) must be in [0, 1], got {probability!r}")
    heads = validate_heads(heads)
    for word in range(len(heads)):
        if heads[word] == ROOT_HEAD or rng.random() >= probability:
            continue
        banned = _descendants(heads, word) | {heads[word]}
        candidates = [j for j in range(len(heads)) if j not in banned]
        if candidates:
            heads[word] = rng.choice(candidates)
    return validate_heads(heads, name="perturbed heads")


def noisy_parses(parses: Mapping[str, Parse], probability: float, seed: int = 0) -> tuple[dict[str, Parse], float]:
    """Every parse with :func:`perturb_heads` applied; returns ``(parses, share of words re-attached)``.

    The noise of a sentence depends only on ``(seed, text)``, so a sentence gets the same
    noisy tree in train, dev and test and in every run.
    """
    out, changed, total = {}, 0, 0
    for text, parse in parses.items():
        rng = random.Random(f"{seed}\0{text}")
        heads = perturb_heads(parse.heads, probability, rng) if probability > 0 else list(parse.heads)
        changed += sum(a != b for a, b in zip(heads, parse.heads))
        total += len(heads)
        out[text] = Parse(parse.text, parse.words, tuple(heads), parse.deprels, parse.removed_spaces)
    return out, (changed / total if total else 0.0)


def subsample(examples: Sequence[PairExample], fraction: float, seed: int = 0) -> list[PairExample]:
    """A random ``fraction`` of the examples (at least one), in their original order."""
    if not 0.0 < fraction <= 1.0:
        raise CourseInputError(f"`train_fraction` must be in (0, 1], got {fraction!r}")
    if fraction == 1.0:
        return list(examples)
    keep = max(1, round(fraction * len(examples)))
    chosen = sorted(random.Random(seed).sample(range(len(examples)), keep))
    return [examples[i] for i in chosen]


@dataclass
class ExperimentConfig:
    """What the ablation runs.

    Attributes:
        variants: from :data:`lessons_lib.syntax_bias.VARIANTS`; ``"none"`` is the baseline
            the others are tested against.
        seeds: every variant is trained once per seed (same seed → same init, batch order, dropout).
        preset: a :data:`lessons_lib.training.PRESETS` name giving the model and training recipe.
        model: overrides of the preset's model options (``PairClassifierConfig`` fields);
            by default ``n_layers=2``, since one block cannot use the bias (see below).
        train: overrides of the preset's ``TrainConfig`` fields (``seed`` is set per run).
        train_fraction: share of the training split used (the low-resource setting).
        subset_seed: which subset (the same for every variant and seed).
        parser_noise: probability of re-attaching each non-root word (see :func:`perturb_heads`).
        noise_seed: seed of the noise.
        max_distance, log_buckets: the bucket scheme.
        per_head, learn_scale, share_layers, bias_lr_multiplier: options of the learned bias
            (see :class:`lessons_lib.syntax_bias.LearnedBucketBias`).
        decay: slope of the fixed-decay variant; hard_max_distance: the hard mask's radius.
    """

    variants: list[str] = field(default_factory=lambda: list(VARIANTS))
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    preset: str = "textbook"
    model: dict = field(default_factory=lambda: {"n_layers": 2})
    train: dict = field(default_factory=dict)
    train_fraction: float = 1.0
    subset_seed: int = 0
    parser_noise: float = 0.0
    noise_seed: int = 0
    max_distance: int = 10
    log_buckets: bool = False
    per_head: bool = False
    learn_scale: bool = False
    share_layers: bool = True
    bias_lr_multiplier: float = 1.0
    decay: float = 0.5
    hard_max_distance: int = 1

    def __post_init__(self) -> None:
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown or not self.variants:
            raise CourseInputError(f"`variants` must be a non-empty list from {VARIANTS}, got {self.variants}")
        if len(set(self.variants)) != len(self.variants) or len(set(self.seeds)) != len(self.seeds) or not self.seeds:
            raise CourseInputError(f"`variants` and `seeds` must be non-empty and without repeats: {self.variants}, {self.seeds}")
        if self.preset not in PRESETS:
            raise CourseInputError(f"`preset` must be one of {sorted(PRESETS)}, got {self.preset!r}")
        if not 0.0 < self.train_fraction <= 1.0:
            raise CourseInputError(f"`train_fraction` must be in (0, 1], got {self.train_fraction!r}")
        if not 0.0 <= self.parser_noise <= 1.0:
            raise CourseInputError(f"`parser_noise` must be in [0, 1], got {self.parser_noise!r}")
        self.scheme()  # validates the bucket options
        layers = self.classifier_config(10).n_layers
        if layers < 2 and any(v != "none" for v in self.variants):
            raise CourseInputError(
                "the syntax-bias variants need at least 2 encoder blocks (model n_layers ≥ 2): with one block "
                "only the [CLS] query row reaches the classifier, and every key of that row is in the "
                "'special' bucket, so the bias adds one constant to the row and the softmax ignores it"
            )
        self.train_config(0)  # validates the training overrides
        self.classifier_config(10)

    def scheme(self) -> BucketScheme:
        return BucketScheme(max_distance=self.max_distance, log_buckets=self.log_buckets)

    def train_config(self, seed: int) -> TrainConfig:
        values = PRESETS[self.preset].train.to_dict()
        values.update(self.train)
        values["seed"] = seed
        return TrainConfig.from_dict(values)

    def classifier_config(self, vocab_size: int) -> PairClassifierConfig:
        values = dict(PRESETS[self.preset].model)
        values.update(self.model)
        values["vocab_size"] = vocab_size
        values.setdefault("max_len", max(128, self.train_config(0).max_len))
        return PairClassifierConfig.from_dict(values)

    def to_dict(self) -> dict:
        return asdict(self)


def build_model(config: ExperimentConfig, variant: str, vocab_size: int, seed: int) -> SyntaxBiasedPairClassifier:
    """The classifier of ``variant``, its weights drawn after seeding with ``seed``."""
    classifier = config.classifier_config(vocab_size)
    set_seed(seed)
    bias = make_bias(variant, config.scheme().layout(), classifier.n_heads, classifier.n_layers,
                     per_head=config.per_head, learn_scale=config.learn_scale, share_layers=config.share_layers,
                     lr_multiplier=config.bias_lr_multiplier, decay=config.decay, max_distance=config.hard_max_distance)
    return SyntaxBiasedPairClassifier(classifier, bias)


def parse_corpus(data: LcqmcData, parser: str | None = None, cache_dir: str | Path | None = None,
                 progress: bool = True, log: Callable[[str], None] | None = print) -> dict[str, Parse]:
    """Parse every distinct sentence of the three splits through the on-disk parse cache.

    Args:
        data: the splits.
        parser: a spaCy pipeline name or folder; ``None`` = an official Chinese pipeline if
            installed, else the course's shipped parser (see :func:`lessons_lib.syntax.parser.load_parser`).
        cache_dir: the parse cache folder (default ``data/cache/parses``).
        progress: a tqdm bar over the sentences.

    Returns:
        sentence text → :class:`Parse`.
    """
    from tqdm.auto import tqdm

    from lessons_lib.syntax.cache import DEFAULT_CACHE_DIR, ParseCache, parse_with_cache
    from lessons_lib.syntax.parser import load_parser, parser_identity

    texts = list(dict.fromkeys(t for split in (data.train, data.dev, data.test)
                               for ex in split.examples for t in (ex.text_a, ex.text_b)))
    nlp = load_parser(parser)
    name, version = parser_identity(nlp)
    with ParseCache(cache_dir or DEFAULT_CACHE_DIR, name, version) as cache, \
            tqdm(total=len(texts), unit="sent", desc="parsing", disable=not progress, leave=False) as bar:
        parses, stats = parse_with_cache(texts, nlp, cache, progress=bar.update)
    if log:
        log(f"parser {name} {version}: {stats.distinct} sentences, {stats.hits} from the cache, {stats.parsed} parsed")
    return dict(zip(texts, parses))


def _run_key(config: ExperimentConfig, variant: str, seed: int, data_note: str) -> str:
    """A short hash of everything that shapes a run, so a checkpoint is only resumed by the same run."""
    payload = json.dumps([config.to_dict(), variant, seed, data_note], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:10]


def _mean_std(values: Sequence[float]) -> dict:
    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values)}


def run_experiment(
    data: LcqmcData,
    parses: Mapping[str, Parse],
    config: ExperimentConfig,
    *,
    device: str = "cpu",
    work_dir: str | Path | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
) -> dict:
    """Train every variant × seed and return the results as one JSON-ready dict.

    Args:
        data: the three splits.
        parses: sentence → parse for every sentence of the three splits.
        config: see :class:`ExperimentConfig`.
        device: ``"cpu"`` or ``"cuda"``.
        work_dir: where each run keeps its checkpoint (``<variant>-seed<s>-<hash>/``) so an
            interrupted experiment resumes; ``None`` = in memory only.
        progress: tqdm bars while training.
        log: one-line progress messages (``None``: silent).

    Returns:
        ``{"config", "data", "runs", "summary", "mcnemar", "learned_bias"}`` (see the README).
    """
    train = subsample(data.train.examples, config.train_fraction, config.subset_seed)
    needed = {t for split in (train, data.dev.examples, data.test.examples) for ex in split for t in (ex.text_a, ex.text_b)}
    missing = sorted(needed - set(parses))
    if missing:
        raise CourseInputError(f"{len(missing)} sentences have no parse, e.g. {missing[0]!r}; pre-parse the data first")
    used = {t: parses[t] for t in needed}
    for text, parse in used.items():
        check_parse_alignment(text, parse)
    used, noise_share = noisy_parses(used, config.parser_noise, config.noise_seed)
    vocab = Vocabulary.build(t for ex in train for t in (ex.text_a, ex.text_b))
    scheme = config.scheme()
    layout = scheme.layout()
    data_note = f"{data.source.path.name}:{len(train)}:{len(data.dev)}:{len(data.test)}:{vocab.fingerprint()}"
    runs, models = [], {}
    for seed in config.seeds:
        train_config = config.train_config(seed)
        extras = bucket_extras(used, scheme, train_config.max_len)
        for variant in config.variants:
            model = build_model(config, variant, len(vocab), seed)
            out_dir = None
            if work_dir is not None:
                out_dir = Path(work_dir) / f"{variant}-seed{seed}-{_run_key(config, variant, seed, data_note)}"
            if log:
                log(f"variant {variant}, seed {seed}: training on {len(train)} pairs")
            result = train_pair_classifier(
                model, train, data.dev.examples, vocab, train_config, test_examples=data.test.examples,
                out_dir=out_dir, device=device, progress=progress, log=None,
                extras_fn=None if variant == "none" else extras,
                model_config={"classifier": config.classifier_config(len(vocab)).to_dict(), "variant": variant},
            )
            runs.append({
                "variant": variant, "seed": seed,
                "dev_accuracy": result.dev.accuracy, "test_accuracy": result.test.accuracy,
                "dev_f1": result.dev.f1, "test_f1": result.test.f1,
                "epochs": [{"epoch": h.epoch, "train_loss": h.train_loss, "dev_accuracy": h.dev["accuracy"],
                            "test_accuracy": h.test["accuracy"] if h.test else None,
                            "pairs_per_second": h.pairs_per_second} for h in result.history],
                "test_predictions": result.test.predictions,
            })
            models[(variant, seed)] = model
            if log:
                log(f"variant {variant}, seed {seed}: dev {result.dev.accuracy:.4f}, test {result.test.accuracy:.4f}")
    labels = [ex.label for ex in data.test.examples]
    return {
        "config": config.to_dict(),
        "data": {"source": data.source.origin, "directory": data.source.path.name, "train_pairs": len(train),
                 "train_pairs_available": len(data.train), "dev_pairs": len(data.dev), "test_pairs": len(data.test),
                 "vocab_size": len(vocab), "parsed_sentences": len(used),
                 "parser_noise_words_reattached": noise_share},
        "buckets": {"names": list(layout.names), "kinds": list(layout.kinds)},
        "runs": runs,
        "summary": summarise(runs),
        "mcnemar": _mcnemar_against_baseline(runs, labels),
        "learned_bias": _learned_bias(models, layout.names),
    }


def summarise(runs: Sequence[dict]) -> dict:
    """Mean, standard deviation, min and max of dev and test accuracy per variant, over seeds."""
    out: dict[str, dict] = {}
    for variant in dict.fromkeys(r["variant"] for r in runs):
        mine = [r for r in runs if r["variant"] == variant]
        out[variant] = {"seeds": [r["seed"] for r in mine],
                        "dev_accuracy": _mean_std([r["dev_accuracy"] for r in mine]),
                        "test_accuracy": _mean_std([r["test_accuracy"] for r in mine])}
    return out


def _mcnemar_against_baseline(runs: Sequence[dict], labels: Sequence[int]) -> list[dict]:
    baseline = {r["seed"]: r for r in runs if r["variant"] == "none"}
    out = []
    for r in runs:
        if r["variant"] == "none" or r["seed"] not in baseline:
            continue
        test = mcnemar_exact(r["test_predictions"], baseline[r["seed"]]["test_predictions"], labels)
        out.append({"variant": r["variant"], "seed": r["seed"], "only_variant_right": test.only_a,
                    "only_baseline_right": test.only_b, "p_value": test.p_value})
    return out


def _learned_bias(models: Mapping[tuple[str, int], SyntaxBiasedPairClassifier], names: Sequence[str]) -> list[dict]:
    out = []
    for (variant, seed), model in models.items():
        if isinstance(model.syntax_bias, LearnedBucketBias):
            table = model.syntax_bias.bias_per_bucket().cpu()  # (tables, rows, buckets)
            out.append({"variant": variant, "seed": seed, "bucket_names": list(names),
                        "bias": table.tolist(), "mean_over_heads_and_layers": table.mean(dim=(0, 1)).tolist()})
    return out
