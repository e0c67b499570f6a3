"""Benchmark: training throughput (pairs per second) of the LCQMC presets on CPU, old and new paths side by side.

Each timed step is what :func:`lessons_lib.training.trainer.train_pair_classifier` does per batch:
encode and pad the batch, forward, cross-entropy, backward, gradient clipping, AdamW step,
scheduler step. Three paths train the same model (same preset, same initial weights):

- ``plain``: a shuffled order cut into batches, the from-scratch attention (the lessons' path,
  and the command line's before it had the other two);
- ``bucketed``: batches of pairs of similar length (``--batching bucketed``), the same attention;
- ``bucketed+sdpa``: bucketed batches and torch's fused attention (``--attention sdpa``), what
  ``lessons train`` and ``lessons experiment`` use by default.

The pairs: ``--set lcqmc-length`` (default) generates pairs with the real LCQMC training split's
length distribution (``benchmarks/lcqmc_lengths.py``: the shipped sample is much narrower, so
padding costs less there); ``--set sample`` uses the training split of ``--data-dir``, else
``$LCQMC_DIR``, else the course's sample. Each path streams its own epochs over the same pairs;
``--rounds`` rounds of ``--steps`` steps are timed for every (preset, threads, path), interleaved
round-robin so that slow phases of a shared machine hit all of them alike. Reported: pairs/s over
all rounds (total pairs / total seconds; bucketed batches vary in length, so a per-round median
would be noisier), the slowest and fastest round, the ratio to ``plain`` at the same preset and
thread count, and the estimated time of one epoch of the real LCQMC (238,766 pairs). A last table
times evaluation (:func:`lessons_lib.evaluation.metrics.predict`, eval mode, batches of 256) of the
first ``--eval-pairs`` pairs with each preset's freshly built model: the given order with the
course's attention (the old path) against length-sorted batches with the fused attention (the
new default of both commands). Run from the repository root::

    python benchmarks/bench_training.py [--set lcqmc-length|sample] [--presets textbook matchflags]
        [--threads 1 2] [--steps 8] [--rounds 4] [--eval-pairs 2000] [--n-layers 2]
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.nn import functional as F

from lcqmc_lengths import LCQMC_TARGET, lcqmc_length_pairs, length_figures
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PRESETS, resolve_configs
from lessons_lib.pairs.data import load_lcqmc
from lessons_lib.pairs.encoding import batch_indices, encoded_length, make_batches, padded_positions
from lessons_lib.evaluation.metrics import predict
from lessons_lib.training.trainer import build_optimizer, build_scheduler
from lessons_lib.pairs.vocab import Vocabulary

LCQMC_TRAIN_PAIRS = 238_766
PATHS = {"plain": {"batching": "plain", "attention": "course"},
         "bucketed": {"batching": "bucketed", "attention": "course"},
         "bucketed+sdpa": {"batching": "bucketed", "attention": "sdpa"}}


class Runner:
    """One preset's model on one path, its optimiser and an endless stream of its training batches."""

    def __init__(self, preset_name: str, path: str, examples, vocab: Vocabulary, overrides: dict) -> None:
        model_config, self.config = resolve_configs(preset_name, {**overrides, **PATHS[path]}, vocab_size=len(vocab))
        torch.manual_seed(0)  # the same initial weights on every path
        self.model = PairClassifier(model_config).train()
        self.optimizer = build_optimizer(self.model, self.config)
        self.scheduler = build_scheduler(self.optimizer, self.config, total_steps=10**6)
        self.examples, self.vocab, self.epoch = examples, vocab, 0
        self.batches = iter(())

    def _next_batch(self):
        batch = next(self.batches, None)
        if batch is None:
            self.epoch += 1
            self.batches = make_batches(self.examples, self.vocab, self.config.batch_size, max_len=self.config.max_len,
                                        shuffle=True, seed=self.epoch, swap_probability=self.config.swap_probability,
                                        batching=self.config.batching)
            batch = next(self.batches)
        return batch

    def run(self, steps: int) -> tuple[int, float]:
        """Train ``steps`` batches; return (pairs, seconds)."""
        pairs, started = 0, time.perf_counter()
        for _ in range(steps):
            batch = self._next_batch()  # encoding and padding are part of the cost
            loss = F.cross_entropy(self.model(batch), batch.labels)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip_norm)
            self.optimizer.step()
            self.scheduler.step()
            pairs += len(batch)
        return pairs, time.perf_counter() - started


def _pairs(kind: str, data_dir: str | None, n: int):
    data = load_lcqmc(data_dir)
    if kind == "sample":
        return data.train.examples, f"{data.source.origin} training split"
    return lcqmc_length_pairs(data.train.examples, n), f"{n} generated pairs of LCQMC's length distribution"


def _describe(examples, batch_sizes: list[int]) -> None:
    figures = length_figures(examples)
    print("positions per pair: " + ", ".join(f"{k} {v:.3g} (LCQMC {LCQMC_TARGET[k]})" for k, v in figures.items()))
    lengths = [encoded_length(ex) for ex in examples]
    for size in batch_sizes:
        factors = {path: padded_positions(lengths, batch_indices(lengths, size, shuffle=True, seed=1, batching=path))
                   / sum(lengths) for path in ("plain", "bucketed")}
        print(f"batches of {size}: padded / real positions, " + ", ".join(f"{k} {v:.2f}" for k, v in factors.items()))


def _evaluation(presets: list[str], threads: list[int], examples, vocab: Vocabulary, rounds: int,
                overrides: dict) -> None:
    """Pairs/s of evaluation: given order + course attention against sorted batches + fused attention."""
    paths = {"plain": ({"attention": "course"}, False), "sorted+sdpa": ({"attention": "sdpa"}, True)}
    print(f"evaluation of {len(examples)} pairs, batches of 256, best of {rounds} rounds")
    print(f"{'preset':11s} {'threads':>7s} {'path':14s} {'pairs/s':>8s} {'x plain':>8s}")
    for name in presets:
        for count in threads:
            torch.set_num_threads(count)
            rates = {}
            for path, (options, sort) in paths.items():
                model_config, _ = resolve_configs(name, {**overrides, **options}, vocab_size=len(vocab))
                torch.manual_seed(0)
                model = PairClassifier(model_config)
                seconds = []
                for _ in range(rounds):
                    started = time.perf_counter()
                    predict(model, examples, vocab, batch_size=256, sort_by_length=sort)
                    seconds.append(time.perf_counter() - started)
                rates[path] = len(examples) / min(seconds)
                print(f"{name:11s} {count:7d} {path:14s} {rates[path]:8.0f} {rates[path] / rates['plain']:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("lcqmc-length", "sample"), default="lcqmc-length")
    parser.add_argument("--data-dir", default=None, help="with --set sample: the data folder (default: $LCQMC_DIR, else the sample)")
    parser.add_argument("--pairs", type=int, default=20_000, help="with --set lcqmc-length: pairs generated")
    parser.add_argument("--presets", nargs="+", default=["textbook", "matchflags"], choices=sorted(PRESETS))
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS))
    parser.add_argument("--steps", type=int, default=8, help="timed training steps per round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--eval-pairs", type=int, default=2000, help="pairs of the evaluation table (0: no table)")
    parser.add_argument("--n-layers", type=int, default=None,
                        help="override every preset's blocks (2 = the recipe of `lessons experiment`)")
    args = parser.parse_args()

    overrides = {} if args.n_layers is None else {"n_layers": args.n_layers}
    examples, origin = _pairs(args.set, args.data_dir, args.pairs)
    vocab = Vocabulary.build(t for ex in examples for t in (ex.text_a, ex.text_b))
    print(f"data: {origin} ({len(examples)} pairs); torch {torch.__version__}; {args.steps} steps x {args.rounds} rounds"
          + (f"; every preset with {args.n_layers} blocks" if overrides else ""))
    _describe(examples, sorted({PRESETS[name].train["batch_size"] for name in args.presets}))
    keys = [(name, threads, path) for name in args.presets for threads in args.threads for path in args.paths]
    runners = {key: Runner(key[0], key[2], examples, vocab, overrides) for key in keys}
    for (_name, threads, _path), runner in runners.items():  # warm-up: allocator, first-call overheads
        torch.set_num_threads(threads)
        runner.run(2)
    totals = {key: [0, 0.0] for key in keys}
    rates: dict[tuple, list[float]] = {key: [] for key in keys}
    for _ in range(args.rounds):
        for (name, threads, path), runner in runners.items():
            torch.set_num_threads(threads)
            pairs, seconds = runner.run(args.steps)
            totals[(name, threads, path)][0] += pairs
            totals[(name, threads, path)][1] += seconds
            rates[(name, threads, path)].append(pairs / seconds)
    print(f"{'preset':11s} {'threads':>7s} {'path':14s} {'pairs/s':>8s} {'min':>6s} {'max':>6s} {'x plain':>8s} "
          f"{'LCQMC epoch':>12s}")
    for name, threads, path in keys:
        pairs, seconds = totals[(name, threads, path)]
        rate = pairs / seconds
        plain = totals.get((name, threads, "plain"))
        ratio = f"{rate / (plain[0] / plain[1]):8.2f}" if plain else f"{'':8s}"
        values = rates[(name, threads, path)]
        print(f"{name:11s} {threads:7d} {path:14s} {rate:8.0f} {min(values):6.0f} {max(values):6.0f} {ratio} "
              f"{LCQMC_TRAIN_PAIRS / rate / 60:8.1f} min")
    print("LCQMC epoch = 238,766 training pairs / pairs per second (training only, no evaluation).")
    if args.eval_pairs:
        _evaluation(args.presets, args.threads, examples[:args.eval_pairs], vocab, min(args.rounds, 3), overrides)


if __name__ == "__main__":
    main()
