"""Benchmark: tree distances (vectorised vs the pairwise LCA walk) and parsing with/without the cache.

Run from the repository root (CPU, a few minutes on 2 cores):

    nice python benchmarks/bench_tree_distances.py [--trees 10000] [--parser DIR]

What it measures, side by side in one run:

1. Parse every distinct sentence the course ships (its LCQMC-format sample and its
   question treebank) with the course's parser into a *fresh* parse cache (cold), then
   again from the cache (warm): sentences per second both ways.
2. Tree-distance matrices for ``--trees`` parsed sentences (the parsed sentences, repeated
   in order until there are that many) with the reference LCA walk and with the
   vectorised batched version; checks that both agree on every matrix; prints the ratio.
   The same on the (longer) gold trees of UD GSDSimp when ../shared/data/ud is there.
3. An estimate of pre-parsing the real LCQMC (238,766 + 8,802 + 12,500 pairs, two sentences
   each; the real number of *distinct* sentences is smaller, so this is an upper bound)
   at the measured cold rate, and of the cache's size on disk.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

import torch

LCQMC_PAIRS = {"train": 238_766, "dev": 8_802, "test": 12_500}
REPEATS = 3


def shipped_sentences() -> list[str]:
    from lessons_lib.pairs.data import load_lcqmc
    from lessons_lib.paths import LCQMC_SAMPLE_DIR
    from lessons_lib.syntax.parser_training import read_course_treebank

    seen: dict[str, None] = {}
    data = load_lcqmc(LCQMC_SAMPLE_DIR)
    for split in (data.train, data.dev, data.test):
        for ex in split.examples:
            seen.setdefault(ex.text_a)
            seen.setdefault(ex.text_b)
    hand, templates = read_course_treebank()
    for s in hand + templates:
        seen.setdefault(s.text)
    return list(seen)


def length_batches(lengths: list[int], budget: int) -> list[list[int]]:
    """Indices sorted by length, cut into batches whose padded size B·N² stays within ``budget``."""
    groups: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if current and (len(current) + 1) * lengths[i] ** 2 > budget:
            groups.append(current)
            current = []
        current.append(i)
    return groups + ([current] if current else [])


def time_distances(label: str, heads: list[list[int]], batch: int) -> int:
    """Time the reference and the vectorised distances on ``heads``; return how many matrices differ.

    Both skip validation (the trees come from the validating parser adapter or treebank
    reader), so that the algorithms themselves are compared.
    """
    from lessons_lib.syntax.distances import batch_tree_distances, distance_matrix_reference

    words = sum(len(h) for h in heads)
    ref_s = vec_s = float("inf")
    for _ in range(REPEATS):  # best of a few runs: the machine is shared
        start = time.perf_counter()
        reference = [distance_matrix_reference(h, validate=False) for h in heads]
        ref_s = min(ref_s, time.perf_counter() - start)
        # Batches of similar lengths (as a pre-computation over a corpus would form them):
        # padding a 6-word tree to the batch's longest 40 words would multiply the work.
        start = time.perf_counter()
        groups = length_batches([len(h) for h in heads], batch)
        batches = [batch_tree_distances([heads[i] for i in group], validate=False) for group in groups]
        vec_s = min(vec_s, time.perf_counter() - start)
    # Checked outside the timing: consumers (the pair buckets) index the padded tensor directly.
    mismatches = sum(out[row, : len(heads[i]), : len(heads[i])].tolist() != reference[i]
                     for group, out in zip(groups, batches) for row, i in enumerate(group))
    print(f"tree distances, {label}, {words / len(heads):.1f} words on average:")
    print(f"  reference LCA walk:      {ref_s:7.3f} s  (best of {REPEATS})")
    print(f"  vectorised, batched:     {vec_s:7.3f} s  ({len(groups)} length-sorted batches of ≤ {batch} B·N² cells)")
    print(f"  speed-up: {ref_s / vec_s:.1f}x; matrices that differ: {mismatches}")
    return mismatches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=10_000)
    parser.add_argument("--parser", default=None, help="spaCy pipeline (default: the course's shipped parser)")
    parser.add_argument("--batch", type=int, default=100_000, help="padded cells B·N² per vectorised batch")
    args = parser.parse_args(argv)

    from lessons_lib.paths import PARSER_MODEL_DIR
    from lessons_lib.syntax.cache import ParseCache, parse_with_cache
    from lessons_lib.syntax.parser import load_parser, parser_identity

    # The distance tensors are tiny ((B, ~10, ~10)); one thread avoids the thread pool's
    # overhead, which on a busy 2-core machine can cost more than the work itself.
    torch.set_num_threads(1)
    logging.getLogger("jieba").setLevel(logging.WARNING)
    texts = shipped_sentences()
    nlp = load_parser(args.parser or PARSER_MODEL_DIR, prefer_official=False)
    name, version = parser_identity(nlp)
    print(f"parser {name} {version}; {len(texts)} distinct shipped sentences")

    with tempfile.TemporaryDirectory() as tmp:
        with ParseCache(tmp, name, version) as cache:
            start = time.perf_counter()
            parses, cold = parse_with_cache(texts, nlp, cache)
            cold_s = time.perf_counter() - start
            start = time.perf_counter()
            again, warm = parse_with_cache(texts, nlp, cache)
            warm_s = time.perf_counter() - start
            db_bytes = (Path(tmp) / "parses.sqlite").stat().st_size
    assert cold.parsed == len(texts) and warm.hits == len(texts) and again == parses
    cold_rate, warm_rate = len(texts) / cold_s, len(texts) / warm_s
    print(f"parsing, cold (nlp.pipe):   {cold_rate:9.0f} sentences/s ({cold_s:.1f} s)")
    print(f"parsing, from the cache:    {warm_rate:9.0f} sentences/s ({warm_s:.2f} s)")
    print(f"cache speed-up: {warm_rate / cold_rate:.0f}x")

    heads = [list(p.heads) for p in parses]
    heads = [heads[i % len(heads)] for i in range(args.trees)]
    mismatches = time_distances(f"{len(heads)} parsed trees", heads, args.batch)

    from lessons_lib.syntax.parser_training import DEFAULT_UD_DIR, UD_TRAIN_FILES, read_ud

    if DEFAULT_UD_DIR.is_dir():  # longer sentences: gold trees of UD GSDSimp (not shipped)
        gsd = read_ud(DEFAULT_UD_DIR, UD_TRAIN_FILES[:1])[UD_TRAIN_FILES[0]]
        mismatches += time_distances(f"{len(gsd)} UD GSDSimp gold trees (longer sentences)",
                                     [list(s.heads) for s in gsd], args.batch)
    else:
        print(f"(UD treebanks not found at {DEFAULT_UD_DIR}: long-sentence comparison skipped)")

    occurrences = 2 * sum(LCQMC_PAIRS.values())
    hours = occurrences / cold_rate / 3600
    per_entry = db_bytes / len(texts)
    print(f"real LCQMC: {occurrences:,} sentence occurrences ({' + '.join(f'{v:,}' for v in LCQMC_PAIRS.values())} pairs × 2)")
    print(f"  pre-parse estimate at the cold rate (upper bound, every occurrence distinct): "
          f"{occurrences / cold_rate / 60:.0f} min ({hours:.2f} h); cache ≈ {occurrences * per_entry / 1e6:.0f} MB")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
