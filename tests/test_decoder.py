"""The decoder equals PyTorch's, its loss equals F.cross_entropy, and decoding with a key/value
cache, greedy or by beam, gives what decoding without one gives."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from lessons_lib.errors import CourseInputError
from lessons_lib.transformer.config import EncoderConfig
from lessons_lib.transformer.decoder import (DecoderBlock, EncoderDecoder, beam_search, causal_mask, greedy_decode,
                                             load_torch_decoder_layer_weights, shift_right, smoothed_cross_entropy,
                                             target_self_mask)
from lessons_lib.transformer.encoder import load_torch_encoder_layer_weights

D, H, FF, V = 16, 4, 32, 23
BOS, EOS, PAD = 1, 2, 0


def _config(norm_first: bool = False, n_layers: int = 2, dropout: float = 0.0) -> EncoderConfig:
    return EncoderConfig(vocab_size=V, d_model=D, n_heads=H, n_layers=n_layers, d_ff=FF, dropout=dropout,
                         max_positions=64, n_segments=1, norm_first=norm_first, activation="relu")


def _padded(lengths: list[int], width: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random ids ≥ 3 in rows of ``lengths``, padded to ``width``: ``(ids, key_mask)``."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, V, (len(lengths), width), generator=g)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]
    return ids.masked_fill(~mask, PAD), mask


def test_the_causal_mask_lets_a_position_see_itself_and_its_past_only():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    keys = torch.tensor([[True, True, False]])
    combined = target_self_mask(keys)
    assert combined.shape == (1, 1, 3, 3)
    assert combined[0, 0].tolist() == [[True, False, False], [True, True, False], [True, True, False]]
    with pytest.raises(CourseInputError, match="key_padding_mask|bool"):
        target_self_mask(torch.ones(1, 3))


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_decoder_block_equals_torchs_decoder_layer(norm_first):
    torch.manual_seed(0)
    ours = DecoderBlock(_config(norm_first)).eval()
    theirs = nn.TransformerDecoderLayer(D, H, FF, dropout=0.1, batch_first=True, norm_first=norm_first).eval()
    load_torch_decoder_layer_weights(ours, theirs)
    x, memory = torch.randn(3, 5, D), torch.randn(3, 7, D)
    target_keys = _padded([5, 3, 4], 5, 1)[1]
    source_keys = _padded([7, 2, 5], 7, 2)[1]
    got = ours(x, memory, target_self_mask(target_keys), source_keys[:, None, None, :])
    expected = theirs(x, memory, tgt_mask=~causal_mask(5), tgt_key_padding_mask=~target_keys,
                      memory_key_padding_mask=~source_keys)
    real = target_keys
    assert torch.allclose(got[real], expected[real], atol=1e-6), (got[real] - expected[real]).abs().max()


def test_the_layer_loader_refuses_a_layer_of_another_shape():
    block = DecoderBlock(_config())
    with pytest.raises(CourseInputError, match="norm_first"):
        load_torch_decoder_layer_weights(block, nn.TransformerDecoderLayer(D, H, FF, batch_first=True, norm_first=True))
    with pytest.raises(CourseInputError, match="d_ff"):
        load_torch_decoder_layer_weights(block, nn.TransformerDecoderLayer(D, H, 2 * FF, batch_first=True))
    with pytest.raises(CourseInputError, match="batch_first"):
        load_torch_decoder_layer_weights(block, nn.TransformerDecoderLayer(D, H, FF))


def _torch_copy(model: EncoderDecoder, norm_first: bool) -> nn.Transformer:
    """``torch.nn.Transformer`` with ``model``'s weights. torch ends both stacks with a LayerNorm
    whatever ``norm_first`` says; after Post-LN blocks that is a second normalisation, which the
    course's stacks do not have, so it is removed there."""
    layers = len(model.block_list())
    theirs = nn.Transformer(D, H, layers, layers, FF, dropout=0.1, batch_first=True, norm_first=norm_first)
    theirs.eval()
    for mine, other in zip(model.encoder.block_list(), theirs.encoder.layers):
        load_torch_encoder_layer_weights(mine, other)
    for mine, other in zip(model.block_list(), theirs.decoder.layers):
        load_torch_decoder_layer_weights(mine, other)
    if norm_first:
        with torch.no_grad():
            for mine, other in ((model.encoder.final_norm, theirs.encoder.norm),
                                (model.final_norm, theirs.decoder.norm)):
                mine.weight.copy_(other.weight)
                mine.bias.copy_(other.bias)
    else:
        theirs.encoder.norm = nn.Identity()
        theirs.decoder.norm = nn.Identity()
    return theirs


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")  # torch's note on its Pre-LN fast path
@pytest.mark.parametrize("norm_first", [False, True])
def test_the_whole_model_equals_torchs_transformer(norm_first):
    torch.manual_seed(1)
    model = EncoderDecoder(_config(norm_first)).eval()
    theirs = _torch_copy(model, norm_first)
    source, target = torch.randn(2, 6, D), torch.randn(2, 4, D)
    source_keys, target_keys = _padded([6, 4], 6, 3)[1], _padded([4, 2], 4, 4)[1]
    memory = model.encoder.run_blocks(source, source_keys)
    got = model.run_decoder_blocks(target, target_keys, memory, source_keys)
    expected = theirs(source, target, tgt_mask=~causal_mask(4), src_key_padding_mask=~source_keys,
                      tgt_key_padding_mask=~target_keys, memory_key_padding_mask=~source_keys)
    assert torch.allclose(got[target_keys], expected[target_keys], atol=1e-6), \
        (got[target_keys] - expected[target_keys]).abs().max()


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_label_smoothing_equals_torchs_cross_entropy_and_ignores_padding(smoothing):
    torch.manual_seed(2)
    logits, targets = torch.randn(3, 5, V), _padded([5, 2, 4], 5, 5)[0]
    ours = smoothed_cross_entropy(logits, targets, PAD, smoothing)
    theirs = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=PAD, label_smoothing=smoothing)
    assert torch.allclose(ours, theirs, atol=1e-6)
    changed = logits.clone()
    changed[1, 3:] += 100.0  # what the model says at padding does not count
    assert torch.equal(smoothed_cross_entropy(changed, targets, PAD, smoothing), ours)


def test_teacher_forcing_reads_the_reference_shifted_by_one():
    targets = torch.tensor([[5, 6, EOS, PAD], [7, EOS, PAD, PAD]])
    assert shift_right(targets, BOS).tolist() == [[BOS, 5, 6, EOS], [BOS, 7, EOS, PAD]]


def test_the_decoder_cannot_see_the_future():
    torch.manual_seed(3)
    model = EncoderDecoder(_config()).eval()
    source, source_keys = _padded([5, 5], 5, 6)
    target = _padded([4, 4], 4, 7)[0]
    keys = torch.ones_like(target, dtype=torch.bool)
    before = model(source, source_keys, target, keys)
    changed = target.clone()
    changed[:, 3] = 3 + (changed[:, 3] - 2) % (V - 3)  # another token at the last position only
    after = model(source, source_keys, changed, keys)
    assert torch.equal(before[:, :3], after[:, :3])
    assert not torch.allclose(before[:, 3], after[:, 3])


def _trained_copy_model(norm_first: bool = False) -> tuple[EncoderDecoder, torch.Tensor, torch.Tensor]:
    """A small model taught to copy its source for a few steps, so that decoding has real choices."""
    torch.manual_seed(4)
    model = EncoderDecoder(_config(norm_first, dropout=0.0), tie_output=True)
    source, source_keys = _padded([6, 4, 5], 6, 8)
    references = torch.cat([source, torch.full((3, 1), PAD)], dim=1)
    lengths = source_keys.sum(dim=1)
    references[torch.arange(3), lengths] = EOS
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(60):
        logits = model(source, source_keys, shift_right(references, BOS), shift_right(references, BOS) != PAD)
        loss = smoothed_cross_entropy(logits, references, PAD, 0.1)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return model.eval(), source, source_keys


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_key_value_cache_changes_nothing_but_the_work(norm_first):
    model, source, source_keys = _trained_copy_model(norm_first)
    with_cache = greedy_decode(model, source, source_keys, BOS, EOS, max_len=9, use_cache=True)
    without = greedy_decode(model, source, source_keys, BOS, EOS, max_len=9, use_cache=False)
    assert with_cache == without
    # and the logits themselves, step by step
    memory = model.encode(source, source_keys)
    cache, prefix = model.new_cache(), torch.full((3, 1), BOS)
    with torch.no_grad():
        for _ in range(5):
            stepped = model.decode_step(prefix[:, -1], memory, source_keys, cache)
            whole = model.decode(prefix, torch.ones_like(prefix, dtype=torch.bool), memory, source_keys)[:, -1]
            assert torch.allclose(stepped, whole, atol=1e-5)
            prefix = torch.cat([prefix, stepped.argmax(-1, keepdim=True)], dim=1)


def test_beam_of_one_is_greedy_and_a_wider_beam_scores_at_least_as_well():
    model, source, source_keys = _trained_copy_model()
    greedy = greedy_decode(model, source, source_keys, BOS, EOS, max_len=9)
    assert beam_search(model, source, source_keys, BOS, EOS, max_len=9, beam_size=1) == greedy
    assert beam_search(model, source, source_keys, BOS, EOS, max_len=9, beam_size=3, use_cache=False) == \
        beam_search(model, source, source_keys, BOS, EOS, max_len=9, beam_size=3, use_cache=True)

    def mean_log_p(row: int, tokens: list[int]) -> float:
        target = torch.tensor([tokens + [EOS]])
        inputs = shift_right(target, BOS)
        with torch.no_grad():
            logits = model(source[row:row + 1], source_keys[row:row + 1], inputs, torch.ones_like(inputs, dtype=torch.bool))
        return float(F.log_softmax(logits, -1).gather(-1, target[..., None]).mean())

    wide = beam_search(model, source, source_keys, BOS, EOS, max_len=9, beam_size=4, length_alpha=1.0)
    for row in range(3):
        if len(greedy[row]) < 9:  # greedy ended with EOS within max_len: comparable hypotheses
            assert mean_log_p(row, wide[row]) >= mean_log_p(row, greedy[row]) - 1e-6


def test_shared_and_separate_vocabularies_and_tying():
    shared = EncoderDecoder(_config())
    assert shared.target_embeddings is shared.encoder.embeddings
    assert shared.output.weight is shared.encoder.embeddings.token.weight
    separate = EncoderDecoder(_config(), target_vocab_size=31, tie_output=False)
    assert separate.target_vocab_size == 31 and separate.output.weight is not separate.target_embeddings.token.weight
    source, keys = _padded([3], 3, 9)
    target = torch.tensor([[BOS, 30]])
    assert separate(source, keys, target, torch.ones_like(target, dtype=torch.bool)).shape == (1, 2, 31)


def test_the_syntax_bias_reaches_the_encoders_self_attention_unchanged():
    from lessons_lib.syntax.buckets import DEFAULT_SCHEME
    from lessons_lib.syntax_bias.variants import LearnedBucketBias, LearnedOptions

    torch.manual_seed(5)
    model = EncoderDecoder(_config()).eval()
    bias = LearnedBucketBias(DEFAULT_SCHEME, H, 2, LearnedOptions(bias_lr_multiplier=1.0))
    source, keys = _padded([4, 4], 4, 10)
    buckets = torch.randint(0, DEFAULT_SCHEME.n_buckets, (2, 4, 4))
    with torch.no_grad():
        bias.table.zero_()
        plain = model.encode(source, keys)
        zero = model.encode(source, keys, bias(buckets))
        bias.table.normal_()
        moved = model.encode(source, keys, bias(buckets))
    assert torch.equal(plain, zero)
    assert not torch.allclose(plain, moved)
