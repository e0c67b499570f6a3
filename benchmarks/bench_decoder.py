"""Benchmark: the course's encoder–decoder beside ``torch.nn.Transformer``, and decoding with and
without the key/value cache. CPU, side by side in one run.

1. A training step (forward, label-smoothed loss, backward, Adam step) of
   :class:`lessons_lib.transformer.decoder.EncoderDecoder` and of ``torch.nn.Transformer`` of the
   same size with the same embeddings and output projection around it (the course's stacks are
   checked equal to torch's in ``tests/test_decoder.py``). Batches of random token ids, source and
   target lengths spread over ``[L/2, L]``.
2. Greedy decoding of 8–64 tokens (no early stop: the end-of-sentence id is one no step produces) with the cache and
   without it, which runs the whole decoder on the prefix at every step.

Implementations are timed round-robin and the median of the rounds is reported, so slow phases of
a shared machine hit both alike. Run from the repository root::

    python benchmarks/bench_decoder.py [--length 24] [--batch 32] [--rounds 11] [--threads 1]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import torch
from torch import nn

from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.transformer.decoder import (EncoderDecoder, causal_mask, greedy_decode, shift_right,
                                             smoothed_cross_entropy)

PAD, BOS, EOS = 0, 1, 2


def _batch(batch: int, length: int, vocab: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=g)
    ids = torch.randint(3, vocab, (batch, length), generator=g)
    mask = torch.arange(length)[None, :] < lengths[:, None]
    return ids.masked_fill(~mask, PAD), mask


class TorchTransformer(nn.Module):
    """``torch.nn.Transformer`` between the course model's own embeddings and output projection."""

    def __init__(self, ours: EncoderDecoder, config: EncoderConfig) -> None:
        super().__init__()
        self.embeddings, self.output = ours.target_embeddings, ours.output
        self.inner = nn.Transformer(config.d_model, config.n_heads, config.n_layers, config.n_layers, config.d_ff,
                                    config.dropout, batch_first=True, norm_first=config.norm_first)

    def forward(self, source, source_mask, target_in, target_mask):
        src = self.embeddings(source, torch.zeros_like(source))
        tgt = self.embeddings(target_in, torch.zeros_like(target_in))
        out = self.inner(src, tgt, tgt_mask=~causal_mask(target_in.shape[1]), src_key_padding_mask=~source_mask,
                         tgt_key_padding_mask=~target_mask, memory_key_padding_mask=~source_mask)
        return self.output(out)


def _step(model: nn.Module, optimiser: torch.optim.Optimizer, source, source_mask, target) -> None:
    target_in = shift_right(target, BOS)
    logits = model(source, source_mask, target_in, target_in != PAD)
    loss = smoothed_cross_entropy(logits, target, PAD, 0.1)
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=24)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--decode-lengths", type=int, nargs="+", default=[8, 16, 32, 64])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = EncoderConfig(vocab_size=2000, d_model=256, n_heads=4, n_layers=3, d_ff=1024, dropout=0.1,
                           max_positions=128, n_segments=1, activation="relu")
    torch.manual_seed(0)
    ours = EncoderDecoder(config)
    theirs = TorchTransformer(EncoderDecoder(config), config)
    models = {"course EncoderDecoder": ours, "torch nn.Transformer": theirs}
    optimisers = {name: torch.optim.Adam(m.parameters(), lr=1e-4) for name, m in models.items()}
    g = torch.Generator().manual_seed(1)
    times: dict[str, list[float]] = {name: [] for name in models}
    for round_ in range(args.rounds + 1):  # the first round warms up
        source, source_mask = _batch(args.batch, args.length, config.vocab_size, g)
        target, _ = _batch(args.batch, args.length, config.vocab_size, g)
        for name, model in models.items():
            seconds = _timed(functools.partial(_step, model, optimisers[name], source, source_mask, target))
            if round_:
                times[name].append(seconds)
    base = statistics.median(times["torch nn.Transformer"])
    print(f"training step, batch {args.batch}, lengths ≤ {args.length}, {args.threads} thread(s), "
          f"median of {args.rounds} rounds (torch {torch.__version__})")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<24} {median * 1000:8.1f} ms   speed vs torch {base / median:.2f}×")

    ours.eval()
    never = -1  # an end-of-sentence id no step can produce: every run decodes the full length
    source, source_mask = _batch(8, args.length, config.vocab_size, g)
    print(f"greedy decoding, 8 sentences, median of {args.rounds} rounds")
    for length in args.decode_lengths:
        timings: dict[bool, list[float]] = {True: [], False: []}
        outputs = {}
        for _ in range(args.rounds):
            for use_cache in (True, False):
                start = time.perf_counter()
                outputs[use_cache] = greedy_decode(ours, source, source_mask, BOS, never, length, use_cache=use_cache)
                timings[use_cache].append(time.perf_counter() - start)
        assert outputs[True] == outputs[False], "the cache changed the output"
        cached, uncached = statistics.median(timings[True]), statistics.median(timings[False])
        print(f"  {length:3d} tokens: cache {cached * 1000:8.1f} ms, no cache {uncached * 1000:8.1f} ms, "
              f"{uncached / cached:.1f}× faster with it")


if __name__ == "__main__":
    main()
