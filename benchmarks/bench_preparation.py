"""Benchmark: the preparation of a ``--train-fraction 0.1`` experiment on an LCQMC-sized folder.

``lessons experiment`` first parses the sentences it reads. This script writes a folder with
LCQMC's split sizes (238,766 / 8,802 / 12,500 pairs), every question a distinct string of
LCQMC-like length (``benchmarks/lcqmc_lengths.py``; the real split repeats some questions, so
it holds fewer distinct sentences than this one), then times what the runner does before
training — read the splits, draw the fixed 10 % training subset, load the parser, parse the
sentences of the subset, dev and test through a fresh parse cache
(:func:`lessons_lib.ablation.experiment.parse_corpus`) — and once more with the cache warm
(every parse read back and checked). It prints how many sentences the three splits hold (all
of which ``lessons preparse`` without ``--train-fraction`` parses) against how many the
experiment parses. Run from the repository root::

    python benchmarks/bench_preparation.py [--train-fraction 0.1] [--parser PATH] [--keep DIR]
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import tempfile
import time
from pathlib import Path

from lcqmc_lengths import lcqmc_length_pairs
from lessons_lib.pairs.data import load_lcqmc
from lessons_lib.ablation.config import ExperimentConfig
from lessons_lib.ablation.experiment import needed_texts, parse_corpus

LCQMC_SIZES = {"train": 238_766, "dev": 8_802, "test": 12_500}


def _distinct(pairs, seen: set[str], rng: random.Random, alphabet: str):
    """The pairs with each question made distinct by changing one character (same length)."""
    for pair in pairs:
        texts = []
        for text in (pair.text_a, pair.text_b):
            while text in seen:
                at = rng.randrange(len(text))
                text = text[:at] + rng.choice(alphabet) + text[at + 1:]
            seen.add(text)
            texts.append(text)
        yield texts[0], texts[1], pair.label


def write_folder(folder: Path, seed: int = 0) -> None:
    """An LCQMC-format folder of LCQMC's sizes and lengths, every question distinct."""
    sample = load_lcqmc(None).train.examples
    alphabet = "".join(sorted({c for ex in sample for c in ex.text_a + ex.text_b}))
    rng, seen = random.Random(seed), set()
    for index, (name, size) in enumerate(LCQMC_SIZES.items()):
        pairs = lcqmc_length_pairs(sample, size, seed=seed + index)
        lines = (f"{a}\t{b}\t{label}\n" for a, b, label in _distinct(pairs, seen, rng, alphabet))
        (folder / f"{name}.txt").write_text("".join(lines), encoding="utf-8")


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-fraction", type=float, default=0.1)
    parser.add_argument("--parser", default=None)
    parser.add_argument("--keep", type=Path, default=None, help="write the folder and the cache here (kept)")
    args = parser.parse_args()

    import jieba
    jieba.setLogLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        (root / "lcqmc").mkdir(parents=True, exist_ok=True)
        write_folder(root / "lcqmc")
        print(f"before: {_load()}")
        config = ExperimentConfig(train_fraction=args.train_fraction)
        for label in ("cold cache", "warm cache"):
            started = time.perf_counter()
            data = load_lcqmc(root / "lcqmc")
            parses = parse_corpus(data, args.parser, root / "cache", progress=False, config=config)
            seconds = time.perf_counter() - started
            print(f"{label}: {len(parses)} sentences in {seconds:.1f} s ({len(parses) / seconds:.0f} sentences/s, "
                  f"reading the splits and loading the parser included)")
        print(f"the three splits hold {len(needed_texts(data))} distinct sentences; the experiment at "
              f"--train-fraction {args.train_fraction} reads {len(needed_texts(data, config))}")
        print(f"after: {_load()}")


if __name__ == "__main__":
    main()
