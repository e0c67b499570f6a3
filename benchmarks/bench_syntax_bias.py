"""Benchmark: what does the syntax bias cost in the encoder? Forward + backward, CPU, side by side.

Four implementations of the same encoder (same weights, outputs checked equal first):

- ``no bias``: :class:`lessons_lib.transformer.encoder.Encoder`, ``attn_bias=None`` (the baseline);
- ``learned bias``: the same encoder fed by :class:`lessons_lib.syntax_bias.variants.LearnedBucketBias`
  (bucket lookup included in the timed step, gradients flow into the table);
- ``sdpa + bias``: the attention replaced by ``torch.nn.functional.scaled_dot_product_attention``
  with the bias and the key-padding mask merged into one float mask;
- ``sdpa, no bias``: the same with the padding mask only, for reference.

A last table times what feeds the bias: the bucket matrices of a batch built by
:func:`lessons_lib.syntax_bias.model.bucket_extras` from parses (random trees here), the first
time a pair is seen (tree distances computed) and from its per-pair memo (later epochs).

Each step is forward + backward of ``output.pow(2).mean()`` on a batch of random pairs
(lengths spread over ``[L/2, L]``, padded to ``L``). The implementations are timed
round-robin (interleaved) and the median of the rounds is reported, so slow phases of a
shared machine hit all of them alike. Run from the repository root::

    python benchmarks/bench_syntax_bias.py [--lengths 32 64 128] [--batch 32] [--rounds 15]
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import time
import types

import torch
from torch.nn import functional as F

from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.transformer.encoder import Encoder
from lessons_lib.syntax_bias.model import bucket_extras
from lessons_lib.pairs.data import PairExample
from lessons_lib.pairs.encoding import collate_pairs, encode_pair
from lessons_lib.syntax.buckets import DEFAULT_SCHEME
from lessons_lib.syntax.parser import Parse
from lessons_lib.pairs.vocab import Vocabulary
from lessons_lib.attention.multihead import merge_heads, split_heads
from lessons_lib.syntax_bias.variants import LearnedBucketBias

N_BUCKETS = DEFAULT_SCHEME.n_buckets  # same word, distances 1..10, cross-sentence, special


def sdpa_forward(self, query, key, value, mask=None, attn_bias=None):
    """Drop-in ``MultiHeadAttention.forward`` on torch's fused attention (mask: (B, L_k) bool, True = keep)."""
    q = split_heads(self.q_proj(query), self.n_heads)
    k = split_heads(self.k_proj(key), self.n_heads)
    v = split_heads(self.v_proj(value), self.n_heads)
    float_mask = None
    if mask is not None:
        keep = mask[:, None, None, :]
        base = attn_bias if attn_bias is not None else torch.zeros((), dtype=q.dtype)
        float_mask = torch.where(keep, base, torch.tensor(float("-inf"), dtype=q.dtype))
    elif attn_bias is not None:
        float_mask = attn_bias
    context = F.scaled_dot_product_attention(q, k, v, attn_mask=float_mask,
                                             dropout_p=self.dropout.p if self.training else 0.0)
    return self.out_proj(merge_heads(context))


def with_sdpa(encoder: Encoder) -> Encoder:
    """A copy of ``encoder`` whose attention runs on ``scaled_dot_product_attention``."""
    twin = copy.deepcopy(encoder)
    for block in twin.blocks:
        block.attention.forward = types.MethodType(sdpa_forward, block.attention)
    return twin


def make_batch(batch: int, length: int, vocab: int, seed: int = 0):
    """Random token ids, segments, key mask and bucket ids ``(B, L, L)`` (-1 at padding)."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=g)
    lengths[0] = length
    key_mask = torch.arange(length)[None, :] < lengths[:, None]
    token_ids = torch.randint(4, vocab, (batch, length), generator=g).masked_fill(~key_mask, 0)
    segment_ids = (torch.arange(length)[None, :] >= (lengths[:, None] // 2)).long() * key_mask
    buckets = torch.randint(0, N_BUCKETS, (batch, length, length), generator=g)
    pair_mask = key_mask[:, :, None] & key_mask[:, None, :]
    buckets = buckets.masked_fill(~pair_mask, -1)
    return token_ids, segment_ids, key_mask, buckets


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = EncoderConfig(vocab_size=2000, d_model=256, n_heads=4, n_layers=args.layers, d_ff=1024,
                           dropout=0.0, max_positions=max(args.lengths))
    encoder = Encoder(config).train()
    sdpa_encoder = with_sdpa(encoder)
    bias = LearnedBucketBias(DEFAULT_SCHEME, config.n_heads, config.n_layers)
    with torch.no_grad():
        bias.table.normal_()  # non-zero, so the equality check below is meaningful

    def step(enc, use_bias):
        def run(ids, seg, mask, buckets):
            out = enc(ids, seg, mask, bias(buckets) if use_bias else None)
            out.pow(2).mean().backward()
        return run

    impls = {
        "no bias": step(encoder, False),
        "learned bias": step(encoder, True),
        "sdpa + bias": step(sdpa_encoder, True),
        "sdpa, no bias": step(sdpa_encoder, False),
    }
    print(f"torch {torch.__version__}, {args.threads} threads, batch {args.batch}, width 256, 4 heads, "
          f"{args.layers} block(s); median of {args.rounds} interleaved rounds, forward + backward")
    print(f"{'L':>5} " + " ".join(f"{name:>14}" for name in impls) + "   bias/no-bias   sdpa+bias/bias")
    no_bias_ms = {}
    for length in args.lengths:
        ids, seg, mask, buckets = make_batch(args.batch, length, config.vocab_size)
        with torch.no_grad():
            ours = encoder(ids, seg, mask, bias(buckets))
            theirs = sdpa_encoder(ids, seg, mask, bias(buckets))
        real = mask[..., None].expand_as(ours)
        assert torch.allclose(ours[real], theirs[real], atol=1e-4), "sdpa encoder disagrees with ours"
        times = {name: [] for name in impls}
        for fn in impls.values():  # warm-up
            fn(ids, seg, mask, buckets)
        for _ in range(args.rounds):
            for name, fn in impls.items():
                encoder.zero_grad(set_to_none=True)
                sdpa_encoder.zero_grad(set_to_none=True)
                bias.zero_grad(set_to_none=True)
                started = time.perf_counter()
                fn(ids, seg, mask, buckets)
                times[name].append(time.perf_counter() - started)
        med = {name: statistics.median(t) * 1000 for name, t in times.items()}
        print(f"{length:>5} " + " ".join(f"{med[name]:>11.1f} ms" for name in impls)
              + f"   {med['learned bias'] / med['no bias']:>12.3f}   {med['sdpa + bias'] / med['learned bias']:>14.3f}")
        no_bias_ms[length] = med["no bias"]
    print("\nbucket matrices per batch (bucket_extras, CPU), against the no-bias training step:")
    print(f"{'L':>5} {'first sight':>14} {'from memo':>12}   first/step   memo/step")
    for length in args.lengths:
        first, memo = time_bucket_extras(args.batch, length, rounds=5)
        print(f"{length:>5} {first:>11.1f} ms {memo:>9.1f} ms   {first / no_bias_ms[length]:>10.3f}   "
              f"{memo / no_bias_ms[length]:>9.3f}")


def random_parse(text: str, rng: random.Random) -> Parse:
    """A random tree over two-character words of ``text`` (benchmark input, not a real parse)."""
    words = [text[i : i + 2] for i in range(0, len(text), 2)]
    heads = [-1] + [rng.randrange(i) for i in range(1, len(words))]
    return Parse(text, tuple(words), tuple(heads), tuple("dep" for _ in words))


def time_bucket_extras(batch: int, length: int, rounds: int) -> tuple[float, float]:
    """Milliseconds per batch of ``batch`` pairs of about ``length`` positions: (first sight, memo)."""
    rng = random.Random(0)
    chars = [chr(0x4E00 + i) for i in range(500)]
    side = (length - 3) // 2
    pairs = [PairExample("".join(rng.choices(chars, k=side)), "".join(rng.choices(chars, k=side)), 0)
             for _ in range(batch * rounds)]
    parses = {t: random_parse(t, rng) for ex in pairs for t in (ex.text_a, ex.text_b)}
    vocab = Vocabulary.build(parses)
    extras = bucket_extras(parses, DEFAULT_SCHEME, max_len=length)
    chunks = [pairs[i : i + batch] for i in range(0, len(pairs), batch)]
    batches = [collate_pairs([encode_pair(vocab, e.text_a, e.text_b, length) for e in chunk]) for chunk in chunks]
    timings = {}
    for phase in ("first", "memo"):
        started = time.perf_counter()
        for chunk, b in zip(chunks, batches):
            extras(chunk, b)
        timings[phase] = (time.perf_counter() - started) / len(chunks) * 1000
    return timings["first"], timings["memo"]


if __name__ == "__main__":
    main()
