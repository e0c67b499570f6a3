"""Word trees → bucket ids over the character tokens of a pair (lessons_lib.syntax.buckets)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.encoding import encode_pair
from lessons_lib.syntax.distances import tree_distances
from lessons_lib.syntax.buckets import (
    CROSS_SENTENCE_BUCKET,
    DEFAULT_SCHEME,
    NUM_BUCKETS,
    PAD_BUCKET,
    SAME_WORD_BUCKET,
    SPECIAL_BUCKET,
    BucketScheme,
    batch_pair_distance_buckets,
    char_word_index,
    pair_distance_buckets,
    pair_tokens,
)
from lessons_lib.syntax_bias.variants import check_buckets
from lessons_lib.pairs.vocab import Vocabulary

# 电脑 怎么 录像 ？ (录像 root)  /  如何 在 计算机 上 录 视频 (录 root)
A_WORDS, A_HEADS = ["电脑", "怎么", "录像", "？"], [2, 2, -1, 2]
B_WORDS, B_HEADS = ["如何", "在", "计算机", "上", "录", "视频"], [4, 2, 4, 2, -1, 4]


def test_default_bucket_ids():
    assert (SAME_WORD_BUCKET, CROSS_SENTENCE_BUCKET, SPECIAL_BUCKET, NUM_BUCKETS, PAD_BUCKET) == (0, 11, 12, 13, -1)


def test_char_word_index():
    assert char_word_index(A_WORDS) == [0, 0, 1, 1, 2, 2, 3]
    with pytest.raises(CourseInputError, match="no characters"):
        char_word_index(["a", " "])


def test_tokens_match_the_models_pair_encoding():
    text_a, text_b = "".join(A_WORDS), "".join(B_WORDS)
    tokens = pair_tokens(A_WORDS, B_WORDS)
    vocab = Vocabulary.build([text_a, text_b])
    encoded = encode_pair(vocab, text_a, text_b, max_len=64)
    assert vocab.decode(encoded.token_ids) == tokens
    # Truncated the same way too (longer sentence first).
    encoded = encode_pair(vocab, text_a, text_b, max_len=9)
    assert vocab.decode(encoded.token_ids) == pair_tokens(A_WORDS, B_WORDS, max_len=9)


def test_every_case_of_the_pair_matrix():
    # 3 special tokens + 7 + 10 characters = 20 positions; max_len 18 cuts the longer b to 8.
    L = 18
    m = pair_distance_buckets(A_WORDS, A_HEADS, B_WORDS, B_HEADS, max_len=L)
    assert m.shape == (L, L) and m.dtype == torch.long
    tokens = pair_tokens(A_WORDS, B_WORDS, max_len=L)
    assert len(tokens) == L and tokens[:9] == ["[CLS]", "电", "脑", "怎", "么", "录", "像", "？", "[SEP]"]
    assert m[1, 2].item() == SAME_WORD_BUCKET  # 电, 脑: same word
    assert m[1, 1].item() == SAME_WORD_BUCKET  # a character and itself
    assert m[1, 5].item() == 1  # 电脑 — 录像: dependent and head
    assert m[1, 3].item() == 2  # 电脑 — 怎么: two dependents of 录像
    assert m[1, 9].item() == CROSS_SENTENCE_BUCKET  # 电 — 如: different sentences
    assert m[0, 3].item() == SPECIAL_BUCKET and m[3, 8].item() == SPECIAL_BUCKET and m[17, 17].item() == SPECIAL_BUCKET
    assert bool((m == m.T).all())
    check_buckets(m[None], NUM_BUCKETS)


def test_padding_rows_and_columns():
    m = pair_distance_buckets(A_WORDS, A_HEADS, ["好"], [-1], max_len=16)
    n = len(pair_tokens(A_WORDS, ["好"]))
    assert bool((m[n:, :] == PAD_BUCKET).all()) and bool((m[:, n:] == PAD_BUCKET).all())
    assert bool((m[:n, :n] >= 0).all())


def test_word_distances_are_placed_on_the_characters():
    m = pair_distance_buckets(A_WORDS, A_HEADS, B_WORDS, B_HEADS, max_len=32)
    d = tree_distances(B_HEADS)
    index = char_word_index(B_WORDS)
    start = 2 + len(char_word_index(A_WORDS))
    for p, wp in enumerate(index):
        for q, wq in enumerate(index):
            assert m[start + p, start + q].item() == min(int(d[wp, wq]), 10)


def test_clamping_at_max_distance():
    chain = [-1] + list(range(14))  # a path of 15 words: distances up to 14
    words = ["字"] * 15
    m = pair_distance_buckets(words, chain, ["好"], [-1], max_len=24, scheme=BucketScheme(max_distance=4))
    assert m[1, 15].item() == 4  # distance 14 → the last distance bucket
    assert m[1, 3].item() == 2


def test_log_buckets_are_monotone_and_cover_every_id():
    scheme = BucketScheme(max_distance=8, log_buckets=True, exact=4, log_max=32)
    ids = scheme.bucket(torch.arange(0, 80)).tolist()
    assert ids[:5] == [0, 1, 2, 3, 4]
    assert ids == sorted(ids) and ids[-1] == 8 and set(ids) == set(range(9))
    assert scheme.names[-3] == "d≥32"


def test_the_scheme_says_what_each_id_means():
    layout = DEFAULT_SCHEME
    assert layout.n_buckets == NUM_BUCKETS == len(layout.kinds) == len(layout.distances) == len(layout.names)
    assert layout.index("same_word") == [SAME_WORD_BUCKET]
    assert layout.index("cross_sentence") == [CROSS_SENTENCE_BUCKET]
    assert layout.index("special") == [SPECIAL_BUCKET]
    assert [layout.distances[b] for b in layout.index("distance")] == list(range(1, 11))


def test_batch_equals_single_and_pads_to_the_longest():
    pairs = [(A_WORDS, A_HEADS, B_WORDS, B_HEADS), (["好"], [-1], ["对"], [-1])]
    batch = batch_pair_distance_buckets(pairs)
    L = len(pair_tokens(A_WORDS, B_WORDS))
    assert batch.shape == (2, L, L)
    assert torch.equal(batch[0], pair_distance_buckets(A_WORDS, A_HEADS, B_WORDS, B_HEADS, max_len=L))
    assert torch.equal(batch[1], pair_distance_buckets(["好"], [-1], ["对"], [-1], max_len=L))
    assert batch_pair_distance_buckets(pairs, pad_to=30).shape == (2, 30, 30)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(5, 14))
def test_any_pair_has_valid_ids(n_a, n_b, max_len):
    words_a, heads_a = ["甲乙"] * n_a, [-1] + [0] * (n_a - 1)
    words_b, heads_b = ["丙"] * n_b, [-1] + list(range(n_b - 1))
    m = pair_distance_buckets(words_a, heads_a, words_b, heads_b, max_len=max_len)
    check_buckets(m[None], NUM_BUCKETS)
    assert bool((m == m.T).all())


def test_bad_input():
    with pytest.raises(CourseInputError, match="max_len"):
        pair_distance_buckets(A_WORDS, A_HEADS, B_WORDS, B_HEADS, max_len=4)
    with pytest.raises(CourseInputError, match="4 words but 3 heads"):
        pair_distance_buckets(A_WORDS, A_HEADS[:3], B_WORDS, B_HEADS, max_len=20)
    with pytest.raises(CourseInputError, match=r"`pairs`\[0\] sentence a"):
        pair_distance_buckets(A_WORDS, [1, 0, -1, 2], B_WORDS, B_HEADS, max_len=20)
    with pytest.raises(CourseInputError, match="pad_to"):
        batch_pair_distance_buckets([(A_WORDS, A_HEADS, B_WORDS, B_HEADS)], pad_to=5)
    with pytest.raises(CourseInputError, match="empty"):
        batch_pair_distance_buckets([])
    with pytest.raises(CourseInputError, match="max_distance"):
        BucketScheme(max_distance=0)
    with pytest.raises(CourseInputError, match="exact"):
        BucketScheme(max_distance=4, log_buckets=True, exact=4)
