"""The syntax-bias module: its invariants inside the encoder, the variants, bad input.

Bucket matrices here are built directly from small hand-made trees (``_pair_buckets``),
independent of the parser, with the layout: id 0 = same word, ids 1..4 = tree distance
1..4 (clamped), 5 = cross-sentence, 6 = special token, -1 = padding.
"""

from __future__ import annotations

import math

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.buckets import BucketScheme
from lessons_lib.syntax_bias.registry import FixedDecayOptions, HardMaskOptions, LearnedOptions, options_for
from lessons_lib.syntax_bias.variants import (
    FixedDecayBias,
    HardMaskBias,
    LearnedBucketBias,
    check_buckets,
    lookup_bias,
    make_bias,
)
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.transformer.encoder import Encoder

MAX_D = 4
LAYOUT = BucketScheme(max_distance=MAX_D)
SAME, CROSS, SPECIAL = 0, MAX_D + 1, MAX_D + 2
D, H, LAYERS = 16, 4, 2


def _tree_distance(heads: list[int]) -> list[list[int]]:
    """All-pairs distances of a head array (0-based, root -1) by walking up from both words."""
    def path(i):
        out = [i]
        while heads[out[-1]] >= 0:
            out.append(heads[out[-1]])
        return out
    n = len(heads)
    dist = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            pi, pj = path(i), path(j)
            common = next(a for a in pi if a in pj)
            dist[i][j] = pi.index(common) + pj.index(common)
    return dist


def _pair_buckets(words_a, heads_a, words_b, heads_b, length: int) -> torch.Tensor:
    """``(length, length)`` bucket ids of ``[CLS] a [SEP] b [SEP]`` + padding; words are char counts."""
    tokens = [("special", None, None)]
    for sentence, words in ((0, words_a), (1, words_b)):
        for w, n_chars in enumerate(words):
            tokens += [("char", sentence, w)] * n_chars
        tokens.append(("special", None, None))
    dists = (_tree_distance(heads_a), _tree_distance(heads_b))
    out = torch.full((length, length), -1, dtype=torch.long)
    for i, (ki, si, wi) in enumerate(tokens):
        for j, (kj, sj, wj) in enumerate(tokens):
            if ki == "special" or kj == "special":
                out[i, j] = SPECIAL
            elif si != sj:
                out[i, j] = CROSS
            elif wi == wj:
                out[i, j] = SAME
            else:
                out[i, j] = min(dists[si][wi][wj], MAX_D)
    return out


# Two pairs: word lengths (in characters) and head arrays.
PAIRS = [
    (([1, 2, 1, 2], [1, -1, 1, 2]), ([2, 1, 1], [-1, 0, 0])),
    (([2, 1], [-1, 0]), ([1, 1, 2, 1, 1], [1, -1, 1, 4, 2])),
]


def _batch(pad_extra: int = 0, seed: int = 0):
    lengths = [3 + sum(a[0]) + sum(b[0]) for a, b in PAIRS]
    length = max(lengths) + pad_extra
    g = torch.Generator().manual_seed(seed)
    token_ids = torch.randint(1, 30, (len(PAIRS), 64), generator=g)[:, :length]  # same ids for any padding
    key_mask = torch.arange(length)[None, :] < torch.tensor(lengths)[:, None]
    token_ids = token_ids.masked_fill(~key_mask, 0)
    segment_ids = torch.zeros_like(token_ids)
    for row, (a, _) in enumerate(PAIRS):
        segment_ids[row, sum(a[0]) + 2 : lengths[row]] = 1
    buckets = torch.stack([_pair_buckets(a[0], a[1], b[0], b[1], length) for a, b in PAIRS])
    return token_ids, segment_ids, key_mask, buckets


def _encoder(seed: int = 0) -> Encoder:
    torch.manual_seed(seed)
    config = EncoderConfig(vocab_size=30, d_model=D, n_heads=H, n_layers=LAYERS, d_ff=32, dropout=0.0, max_positions=64)
    return Encoder(config).eval()


LEARNED_OPTIONS = [
    dict(),
    dict(per_head=True),
    dict(learn_scale=True),
    dict(per_layer_tables=True),
    dict(per_head=True, learn_scale=True, per_layer_tables=True),
    dict(bias_lr_multiplier=10.0),
]


def _randomise(module: torch.nn.Module, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.5)


def test_batch_helper_builds_what_the_layout_says():
    _, _, key_mask, buckets = _batch(pad_extra=2)
    pad_pairs = ~(key_mask[:, :, None] & key_mask[:, None, :])
    assert torch.equal(buckets < 0, pad_pairs)
    assert (buckets[:, 0][key_mask] == SPECIAL).all()
    assert (buckets.diagonal(dim1=1, dim2=2)[key_mask][1:] != CROSS).all()
    assert set(buckets[buckets >= 0].unique().tolist()) == set(range(LAYOUT.n_buckets))


@pytest.mark.parametrize("options", LEARNED_OPTIONS)
def test_zero_table_equals_baseline_exactly_at_init_and_for_any_weights(options):
    token_ids, segment_ids, key_mask, buckets = _batch()
    encoder = _encoder()
    bias = LearnedBucketBias(LAYOUT, H, LAYERS, LearnedOptions(**options))
    with torch.no_grad():
        assert torch.equal(encoder(token_ids, segment_ids, key_mask, bias(buckets)),
                           encoder(token_ids, segment_ids, key_mask))
        _randomise(encoder, seed=1)  # "trained" encoder weights; the table stays at zero
        if bias.scale is not None:
            bias.scale.fill_(3.0)
        biased = encoder(token_ids, segment_ids, key_mask, bias(buckets))
        baseline = encoder(token_ids, segment_ids, key_mask)
    assert torch.equal(biased, baseline)


@pytest.mark.parametrize("variant", ["learned", "fixed_decay", "hard_mask"])
def test_real_positions_do_not_change_with_more_padding(variant):
    encoder = _encoder()
    bias = make_bias(variant, LAYOUT, H, LAYERS, options_for(variant, {"per_head": True}))
    _randomise(bias, seed=2)
    outputs = []
    for extra in (0, 7):
        token_ids, segment_ids, key_mask, buckets = _batch(pad_extra=extra)
        with torch.no_grad():
            outputs.append((encoder(token_ids, segment_ids, key_mask, bias(buckets)), key_mask))
    (short, mask_short), (long, _) = outputs
    length = short.shape[1]
    real = mask_short[..., None].expand_as(short)
    assert torch.allclose(short[real], long[:, :length][real], atol=1e-6, rtol=0)


@pytest.mark.parametrize("variant", ["learned", "fixed_decay", "hard_mask"])
def test_padding_gets_no_attention_and_nothing_turns_nan(variant):
    token_ids, segment_ids, key_mask, buckets = _batch(pad_extra=3)
    encoder = _encoder()
    bias = make_bias(variant, LAYOUT, H, LAYERS)
    if variant == "learned":
        with torch.no_grad():
            # A large positive bias on the *last* bucket: a lookup of padding (-1) that wraps
            # around would pull attention onto padding.
            bias.table.fill_(0.3)
            bias.table[..., -1] = 50.0
    encoder.set_keep_attention(True)
    biases = bias(buckets)
    for b in biases:
        assert torch.equal(b[(buckets < 0)[:, None].expand_as(b)], torch.zeros(int((buckets < 0).sum()) * b.shape[1]))
    out = encoder(token_ids, segment_ids, key_mask, biases)
    assert torch.isfinite(out).all()  # padding query rows too: their bias is 0, not -inf
    for weights in encoder.attention_maps():
        assert (weights[:, :, :, ~key_mask.any(0)] == 0).all()
        pad_keys = (~key_mask)[:, None, None, :].expand_as(weights)
        assert (weights[pad_keys] == 0).all()
        rows = weights.sum(-1)[key_mask[:, None, :].expand(-1, H, -1)]
        assert torch.allclose(rows, torch.ones_like(rows), atol=1e-6)


def test_hard_mask_blocks_far_pairs_only_and_stays_minus_inf():
    token_ids, segment_ids, key_mask, buckets = _batch(pad_extra=2)
    encoder = _encoder()
    encoder.set_keep_attention(True)
    hard = HardMaskBias(LAYOUT, n_layers=LAYERS, options=HardMaskOptions(hard_max_distance=1))
    biases = hard(buckets)
    blocked = (buckets >= 2) & (buckets <= MAX_D)
    assert torch.isneginf(biases[0][:, 0][blocked]).all()
    assert (biases[0][:, 0][~blocked] == 0).all()
    encoder(token_ids, segment_ids, key_mask, biases).sum().backward()
    for weights in encoder.attention_maps():
        assert (weights[blocked[:, None].expand_as(weights)] == 0).all()
        # Cross-sentence and [CLS] attention stay open.
        open_cross = (buckets == CROSS)[:, None].expand_as(weights)
        assert (weights[open_cross] > 0).all()
    for p in encoder.parameters():
        assert p.grad is None or torch.isfinite(p.grad).all()


def test_bias_cannot_unmask_a_padding_key():
    token_ids, segment_ids, key_mask, _ = _batch(pad_extra=2)
    encoder = _encoder()
    encoder.set_keep_attention(True)
    huge = torch.full((1, 1, key_mask.shape[1], key_mask.shape[1]), 1e30)
    encoder(token_ids, segment_ids, key_mask, huge)
    for weights in encoder.attention_maps():
        assert (weights[(~key_mask)[:, None, None, :].expand_as(weights)] == 0).all()


@pytest.mark.parametrize("options", LEARNED_OPTIONS)
def test_gradients_reach_the_table(options):
    token_ids, segment_ids, key_mask, buckets = _batch()
    encoder = _encoder()
    encoder.train()
    bias = LearnedBucketBias(LAYOUT, H, LAYERS, LearnedOptions(**options))
    encoder(token_ids, segment_ids, key_mask, bias(buckets)).pow(2).sum().backward()
    grad = bias.table.grad
    assert grad is not None and torch.isfinite(grad).all()
    assert (grad.abs().sum(dim=(0, 1)) > 0).all()  # every bucket occurs in the batch
    if bias.scale is not None:
        # d loss / d scale = Σ table · (d loss / d bias) = 0 while the table is zero; after one
        # step on the table the scale learns too.
        assert torch.equal(bias.scale.grad, torch.zeros_like(bias.scale))
        with torch.no_grad():
            bias.table.sub_(grad)
        bias.zero_grad()
        encoder(token_ids, segment_ids, key_mask, bias(buckets)).pow(2).sum().backward()
        assert (bias.scale.grad.abs() > 0).all()


def test_a_bucket_absent_from_the_batch_gets_no_gradient():
    token_ids, segment_ids, key_mask, buckets = _batch()
    buckets = buckets.masked_fill(buckets == 3, 2)  # no pair at distance 3 any more
    encoder = _encoder()
    bias = LearnedBucketBias(LAYOUT, H, LAYERS)
    encoder(token_ids, segment_ids, key_mask, bias(buckets)).pow(2).sum().backward()
    assert bias.table.grad[..., 3].abs().sum() == 0
    assert bias.table.grad[..., 2].abs().sum() > 0


def test_lookup_shapes_and_padding_pitfall():
    buckets = torch.tensor([[[0, 1, -1], [2, 0, -1], [-1, -1, -1]]])
    table = torch.tensor([[10.0, 20.0, 30.0], [1.0, 2.0, 3.0]])
    out = lookup_bias(table, buckets)
    assert out.shape == (1, 2, 3, 3)
    assert out[0, 0].tolist() == [[10, 20, 0], [30, 10, 0], [0, 0, 0]]
    assert out[0, 1].tolist() == [[1, 2, 0], [3, 1, 0], [0, 0, 0]]
    assert table[:, buckets][0, 0, 0, 2] == 30.0  # the wrap-around that lookup_bias avoids


def test_fixed_tables_follow_the_layout():
    fixed = FixedDecayBias(LAYOUT, options=FixedDecayOptions(decay=0.5))
    assert fixed.table[0, 0].tolist() == [0.0, -0.5, -1.0, -1.5, -2.0, 0.0, 0.0]
    hard = HardMaskBias(LAYOUT, options=HardMaskOptions(hard_max_distance=2))
    values = hard.table[0, 0].tolist()
    assert values[:3] == [0.0, 0.0, 0.0] and all(math.isinf(v) and v < 0 for v in values[3:5])
    assert values[5:] == [0.0, 0.0]
    assert not list(fixed.parameters()) and not list(hard.parameters())
    assert make_bias("none", LAYOUT, H, LAYERS) is None


def test_shared_table_gives_one_tensor_for_every_block():
    _, _, _, buckets = _batch()
    shared = LearnedBucketBias(LAYOUT, H, 3)
    biases = shared(buckets)
    assert len(biases) == 3 and biases[0] is biases[2] and biases[0].shape[1] == 1
    per_layer = LearnedBucketBias(LAYOUT, H, 3, LearnedOptions(per_head=True, per_layer_tables=True))
    biases = per_layer(buckets)
    assert len(biases) == 3 and biases[0] is not biases[1] and biases[0].shape[1] == H
    assert per_layer.bias_per_bucket().shape == (3, H, LAYOUT.n_buckets)


@pytest.mark.parametrize(
    "buckets, message",
    [
        (torch.zeros(2, 3, 3), "torch.long"),
        (torch.zeros(2, 3, 4, dtype=torch.long), r"\(B, L, L\)"),
        (torch.zeros(3, 3, dtype=torch.long), r"\(B, L, L\)"),
        (torch.full((1, 2, 2), 7, dtype=torch.long), r"outside \[-1, 7\)"),
        (torch.full((1, 2, 2), -2, dtype=torch.long), "outside"),
        ([[0]], "torch.long tensor"),
    ],
)
def test_bad_buckets_are_rejected(buckets, message):
    with pytest.raises(CourseInputError, match=message):
        check_buckets(buckets, LAYOUT.n_buckets)
    with pytest.raises(CourseInputError, match=message):
        LearnedBucketBias(LAYOUT)(buckets)


def test_bad_options_are_rejected():
    with pytest.raises(CourseInputError, match="variant"):
        make_bias("soft", LAYOUT, H, LAYERS)
    with pytest.raises(CourseInputError, match="n_layers"):
        LearnedBucketBias(LAYOUT, H, 0)
    with pytest.raises(CourseInputError, match="decay"):
        FixedDecayOptions(decay=-1)
    with pytest.raises(CourseInputError, match="takes HardMaskOptions"):
        make_bias("hard_mask", LAYOUT, H, LAYERS, FixedDecayOptions())
    with pytest.raises(CourseInputError, match="max_distance"):
        BucketScheme(max_distance=0)
    with pytest.raises(CourseInputError, match="kind"):
        LAYOUT.index("weird")


def test_lr_multiplier_scales_the_first_adam_step():
    token_ids, segment_ids, key_mask, buckets = _batch()
    moved = {}
    for multiplier in (1.0, 10.0):
        encoder = _encoder()
        bias = LearnedBucketBias(LAYOUT, H, LAYERS, LearnedOptions(bias_lr_multiplier=multiplier))
        optimizer = torch.optim.Adam(bias.parameters(), lr=1e-3, eps=1e-15)
        encoder(token_ids, segment_ids, key_mask, bias(buckets)).pow(2).sum().backward()
        optimizer.step()
        moved[multiplier] = bias.bias_per_bucket().abs()
    # Adam's first step is lr · sign(grad) per entry: 10x in effective units.
    assert torch.allclose(moved[10.0], 10 * moved[1.0], rtol=1e-3)
    assert torch.allclose(moved[1.0], torch.full_like(moved[1.0], 1e-3), rtol=1e-3)
    with pytest.raises(CourseInputError, match="bias_lr_multiplier"):
        LearnedOptions(bias_lr_multiplier=0)


def test_invariants_with_the_course_bucket_function_and_layout():
    from lessons_lib.syntax.buckets import DEFAULT_SCHEME, batch_pair_distance_buckets

    layout = DEFAULT_SCHEME
    pairs = [(("怎么", "学", "英语"), (1, -1, 1), ("英语", "难", "吗"), (1, -1, 1)),
             (("今天", "天气", "好"), (2, 2, -1), ("下雨", "了"), (-1, 0))]
    encoder = _encoder()
    encoder.set_keep_attention(True)
    outputs = []
    for pad_to in (None, 20):
        buckets = batch_pair_distance_buckets(pairs, pad_to=pad_to)
        length = buckets.shape[1]
        key_mask = (buckets >= 0).any(dim=1)
        token_ids = (torch.arange(length)[None, :] % 25 + 1).expand(2, -1).masked_fill(~key_mask, 0)
        segment_ids = torch.zeros_like(token_ids)
        for variant in ("learned", "fixed_decay", "hard_mask"):
            bias = make_bias(variant, layout, H, LAYERS, options_for(variant, {"per_head": True}))
            if variant == "learned":
                assert torch.equal(encoder(token_ids, segment_ids, key_mask, bias(buckets)),
                                   encoder(token_ids, segment_ids, key_mask))
                _randomise(bias, seed=5)
            out = encoder(token_ids, segment_ids, key_mask, bias(buckets))
            assert torch.isfinite(out).all()
            for weights in encoder.attention_maps():
                assert (weights[(~key_mask)[:, None, None, :].expand_as(weights)] == 0).all()
            outputs.append((variant, out, key_mask))
    for (_, short, mask), (_, long, _) in zip(outputs[:3], outputs[3:]):
        real = mask[..., None].expand_as(short)
        assert torch.allclose(short[real], long[:, : short.shape[1]][real], atol=1e-6, rtol=0)


def test_bias_table_and_scale_are_not_weight_decayed():
    from lessons_lib.training.trainer import parameter_groups
    from lessons_lib.syntax.buckets import DEFAULT_SCHEME

    module = torch.nn.ModuleDict({"bias": LearnedBucketBias(DEFAULT_SCHEME, 4, 1, LearnedOptions(learn_scale=True)),
                                  "proj": torch.nn.Linear(4, 4)})
    decay, no_decay = parameter_groups(module, 0.01)
    names = {id(p): n for n, p in module.named_parameters()}
    assert {names[id(p)] for p in no_decay["params"]} == {"bias.table", "bias.scale", "proj.bias"}
    assert {names[id(p)] for p in decay["params"]} == {"proj.weight"}


def test_the_window_mask_closes_pairs_far_apart_in_words_and_keeps_the_other_kinds_open():
    from lessons_lib.syntax.buckets import batch_pair_position_buckets
    from lessons_lib.syntax_bias.registry import WindowMaskOptions

    words_a, words_b = ["电脑", "怎么", "录像", "？"], ["如何", "录", "视频"]
    buckets = batch_pair_position_buckets([(words_a, words_b)], scheme=LAYOUT, unit="word", max_len=20)
    window = make_bias("window_mask", LAYOUT, H, LAYERS, WindowMaskOptions(hard_max_distance=1))
    bias = window(buckets)[0][0, 0]  # (L, L)
    # Character positions of each word of s1, after [CLS]: 电脑 = 1-2, 怎么 = 3-4, 录像 = 5-6, ？ = 7.
    assert bias[1, 3] == 0 and bias[1, 2] == 0  # next word, same word
    assert torch.isneginf(bias[1, 5]) and torch.isneginf(bias[1, 7])  # two and three words away
    assert bias[1, 10] == 0 and bias[1, 0] == 0  # the other question and [CLS] stay open
    assert (bias[buckets[0] < 0] == 0).all()  # padding is left to the key mask
