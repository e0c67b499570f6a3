"""Benchmark: training throughput (pairs per second) of the LCQMC presets on CPU.

Each timed step is what :func:`lessons_lib.pairs.trainer.train_pair_classifier` does per batch:
encode and pad the batch, forward, cross-entropy, backward, gradient clipping, AdamW step,
scheduler step. The pairs come from the training split in use (``--data-dir``, else
``$LCQMC_DIR``, else the course's sample; the sample's questions are about as long as
LCQMC's, 8–14 characters). For each preset and each thread count, ``--rounds`` rounds of
``--steps`` steps are timed, interleaved round-robin so that slow phases of a shared machine
hit all configurations alike, and the median is reported, with the estimated time of one
epoch of the real LCQMC training set (238,766 pairs). Run from the repository root::

    python benchmarks/bench_training.py [--presets textbook matchflags] [--threads 1 2] [--steps 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.nn import functional as F

from lessons_lib.pairs.data import load_lcqmc
from lessons_lib.pairs.classifier import PairClassifier
from lessons_lib.pairs.config import PRESETS, resolve_configs
from lessons_lib.pairs.encoding import make_batches
from lessons_lib.pairs.trainer import build_optimizer, build_scheduler
from lessons_lib.pairs.vocab import Vocabulary

LCQMC_TRAIN_PAIRS = 238_766


class Runner:
    """One preset's model, optimiser and an endless stream of its training batches."""

    def __init__(self, preset_name: str, examples, vocab: Vocabulary) -> None:
        model_config, self.config = resolve_configs(preset_name, vocab_size=len(vocab))
        torch.manual_seed(0)
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
                                        shuffle=True, seed=self.epoch, swap_probability=self.config.swap_probability)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--presets", nargs="+", default=["textbook", "matchflags"], choices=sorted(PRESETS))
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--steps", type=int, default=20, help="timed training steps per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    data = load_lcqmc(args.data_dir)
    examples = data.train.examples
    vocab = Vocabulary.build(t for ex in examples for t in (ex.text_a, ex.text_b))
    mean_chars = statistics.mean(len(ex.text_a) + len(ex.text_b) for ex in examples) / 2
    print(f"data: {data.source.origin} ({len(examples)} training pairs, {mean_chars:.1f} characters per question), "
          f"torch {torch.__version__}, {args.steps} steps x {args.rounds} rounds")
    runners = {(name, threads): Runner(name, examples, vocab) for name in args.presets for threads in args.threads}
    for (name, threads), runner in runners.items():  # warm-up: allocator, first-call overheads
        torch.set_num_threads(threads)
        runner.run(2)
    rates: dict[tuple[str, int], list[float]] = {key: [] for key in runners}
    for _ in range(args.rounds):
        for (name, threads), runner in runners.items():
            torch.set_num_threads(threads)
            pairs, seconds = runner.run(args.steps)
            rates[(name, threads)].append(pairs / seconds)
    print(f"{'preset':12s} {'threads':>7s} {'pairs/s (median)':>17s} {'min':>7s} {'max':>7s} {'LCQMC epoch':>12s}")
    for (name, threads), values in rates.items():
        median = statistics.median(values)
        print(f"{name:12s} {threads:7d} {median:17.0f} {min(values):7.0f} {max(values):7.0f} "
              f"{LCQMC_TRAIN_PAIRS / median / 60:9.1f} min")
    print("LCQMC epoch = 238,766 training pairs / median pairs per second (training only, no evaluation).")


if __name__ == "__main__":
    main()
