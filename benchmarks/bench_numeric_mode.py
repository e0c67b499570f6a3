"""Benchmark: what the numeric mode's choice of MKL code path costs, side by side.

The lessons that train run in :data:`lessons_lib.numerics.NUMERIC_MODE`: torch's portable
kernels, one thread, and MKL's conditional numerical reproducibility (``MKL_CBWR``), which fixes
the code path of MKL's matrix products and vector math whatever the CPU offers. This benchmark
keeps everything else of the mode and changes only ``MKL_CBWR``:

- ``COMPATIBLE``: the path every x86-64 CPU has (the mode's setting);
- ``AVX``: the AVX path, on every CPU that has AVX (torch's CPU wheel does not start without it);
- ``AVX2``: the AVX2 path, on CPUs with AVX2 (an emulated AVX-only CPU got the ``AVX`` path's bits).

Two workloads, each one optimiser step as the lessons take it:

- ``lesson 05``: the training comparison's step (6 Post-LN blocks, width 64, Adam, a batch of
  64 reversal strings of length 4-8);
- ``lesson 06``: an AdamW step of its model B, the pair classifier (one block, width 64,
  dropout 0.1), on 32 pairs of the course's sample.

Each (branch, workload) runs in its own Python process, because MKL reads ``MKL_CBWR`` when it
loads; the rounds are interleaved round-robin, so slow phases of a shared machine hit every
branch alike. Reported: the median milliseconds per step over the rounds, the fastest and
slowest round, the ratio to ``COMPATIBLE``, and a digest of the weights after the timed steps
(another digest: other digits in the lessons). Whether a branch gives the same bits on other
CPUs is not measured here; ``tests/test_numerics.py`` shows how (qemu's emulated CPUs). Run
from the repository root::

    python benchmarks/bench_numeric_mode.py [--rounds 5] [--steps 10] [--branches COMPATIBLE AVX AVX2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

WORKLOADS = ("lesson 05", "lesson 06")


def lesson_05_step():
    """The step of lesson 05's training comparison, and the parameters it trains."""
    import torch
    from torch import nn

    from lessons_lib.transformer.config import EncoderConfig
    from lessons_lib.transformer.encoder import Encoder
    from lessons_lib.transformer.reversal import reversal_batch

    torch.manual_seed(0)
    encoder = Encoder(EncoderConfig(vocab_size=11, d_model=64, n_heads=4, n_layers=6, d_ff=256, dropout=0.0,
                                    max_positions=64, norm_first=False))
    head = nn.Linear(64, 11)
    params = [*encoder.parameters(), *head.parameters()]
    optimiser = torch.optim.Adam(params, lr=1e-3, fused=True)
    batches = torch.Generator().manual_seed(100)

    def step():
        inputs, targets, key_mask = reversal_batch(64, 4, 8, generator=batches)
        logits = head(encoder(inputs, torch.zeros_like(inputs), key_mask))          # (B, L, vocab)
        loss = nn.functional.cross_entropy(logits[key_mask], targets[key_mask])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()

    return step, params


def lesson_06_step():
    """An AdamW step of lesson 06's pair classifier on the course's sample, and its parameters."""
    import itertools

    import torch
    from torch.nn import functional as F

    from lessons_lib.pairs.classifier import PairClassifier
    from lessons_lib.pairs.config import PairClassifierConfig, TrainConfig
    from lessons_lib.pairs.data import load_lcqmc
    from lessons_lib.pairs.encoding import make_batches
    from lessons_lib.training.trainer import build_optimizer
    from lessons_lib.pairs.vocab import Vocabulary

    train = load_lcqmc(None).train.examples
    vocab = Vocabulary.build(text for e in train for text in (e.text_a, e.text_b))
    config = TrainConfig(epochs=1, batch_size=32, lr=1e-3, weight_decay=0.01, clip_norm=1.0, seed=0, max_len=64)
    torch.manual_seed(0)
    model = PairClassifier(PairClassifierConfig.from_options(len(vocab), d_model=64, n_heads=4, n_layers=1,
                                                             d_ff=256, dropout=0.1)).train()
    optimizer = build_optimizer(model, config)
    batches = itertools.cycle(list(make_batches(train, vocab, config.batch_size, shuffle=True, seed=0)))

    def step():
        batch = next(batches)
        optimizer.zero_grad()
        F.cross_entropy(model(batch), batch.labels).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_norm)
        optimizer.step()

    return step, list(model.parameters())


def worker(workload: str, steps: int) -> dict:
    """Milliseconds per step of ``workload`` in this process (after two warm-up steps), and a weight digest."""
    from lessons_lib.numerics import NUMERIC_MODE

    os.environ.update({**NUMERIC_MODE, "MKL_CBWR": os.environ["BENCH_MKL_CBWR"]})
    import torch

    torch.set_num_threads(1)
    step, params = {"lesson 05": lesson_05_step, "lesson 06": lesson_06_step}[workload]()
    for _ in range(2):
        step()
    started = time.perf_counter()
    for _ in range(steps):
        step()
    ms = (time.perf_counter() - started) * 1000 / steps
    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in params)).hexdigest()[:12]
    return {"ms": ms, "digest": digest, "capability": torch.backends.cpu.get_cpu_capability()}


def run_worker(branch: str, workload: str, steps: int) -> dict:
    env = {**os.environ, "BENCH_MKL_CBWR": branch}
    done = subprocess.run([sys.executable, __file__, "--worker", workload, "--steps", str(steps)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per round")
    parser.add_argument("--branches", nargs="+", default=["COMPATIBLE", "AVX", "AVX2"],
                        choices=["COMPATIBLE", "AVX", "AVX2", "AVX512"])
    parser.add_argument("--worker", choices=WORKLOADS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1 or args.steps < 1:
        parser.error("--rounds and --steps must be at least 1")
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps)))
        return

    found = {(b, w): [] for b in args.branches for w in WORKLOADS}
    for _ in range(args.rounds):
        for key in found:
            found[key].append(run_worker(*key, args.steps))
    print(f"{args.rounds} rounds of {args.steps} steps, one thread, torch kernels "
          f"{found[next(iter(found))][0]['capability']}; only MKL_CBWR differs")
    print(f"{'workload':<10} {'MKL_CBWR':<11} {'ms/step (median)':>17} {'fastest':>8} {'slowest':>8} "
          f"{'vs COMPATIBLE':>14}  weights digest")
    for workload in WORKLOADS:
        medians = {branch: statistics.median(r["ms"] for r in found[(branch, workload)]) for branch in args.branches}
        for branch, median in medians.items():
            runs = found[(branch, workload)]
            ratio = f"{median / medians['COMPATIBLE']:.2f}x" if "COMPATIBLE" in medians else "-"
            digests = sorted({r["digest"] for r in runs})
            print(f"{workload:<10} {branch:<11} {median:>17.1f} {min(r['ms'] for r in runs):>8.1f} "
                  f"{max(r['ms'] for r in runs):>8.1f} {ratio:>14}  {', '.join(digests)}")


if __name__ == "__main__":
    main()
