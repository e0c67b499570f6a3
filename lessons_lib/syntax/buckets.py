"""From word trees to the character tokens of a pair: distance buckets for attention.

The model reads characters: ``[CLS] s1 [SEP] s2 [SEP]`` then padding, the layout of
:func:`lessons_lib.pairs.encoding.encode_pair` (characters of the text, whitespace left out, the
longer sentence truncated first). The parser gives a tree over *words*. Each character
belongs to exactly one word, so the distance between two positions ``p`` and ``q`` is:

==========================================  =========================  ===================
positions p, q                              distance                   bucket id
==========================================  =========================  ===================
characters of the **same word**             0 (same tree node)         ``SAME_WORD`` = 0
characters of different words, same         tree distance ``d`` ≥ 1     ``min(d, D)`` in
sentence                                    between the two words      ``1 … D`` (or a log
                                                                       bucket, see below)
characters of **different sentences**       undefined (two trees)      ``CROSS_SENTENCE``
either is ``[CLS]`` or ``[SEP]``            undefined (not a word)     ``SPECIAL``
either is **padding**                       —                          ``PAD`` = -1
==========================================  =========================  ===================

Padding wins over everything, then special tokens, then "different sentences". ``D`` is
the maximum distance (default 10): longer distances share the last distance bucket.
With ``log_buckets=True`` distances up to ``exact`` keep their own bucket and longer ones
share logarithmically wider buckets up to ``log_max`` (T5's relative-position trick
applied to tree distances), still within ids ``1 … D``.

Bucket ids of the default scheme (``max_distance=10``): 0 same word, 1–10 distances,
11 different sentences, 12 special tokens, -1 padding — :data:`NUM_BUCKETS` = 13 ids
that index a bias table (padding is never looked up). A :class:`BucketScheme` also says
what each id means (:attr:`~BucketScheme.kinds`, :attr:`~BucketScheme.distances`,
:attr:`~BucketScheme.names`): the bias variants of :mod:`lessons_lib.syntax_bias.variants`
read it to give each kind of bucket its value.

**Relative-position buckets** (:func:`batch_pair_position_buckets`, the non-syntactic
control) use the very same ids with the *sequence* distance ``|i − j|`` in place of the tree
distance: id 0 is the same position (``unit="char"``) or the same word (``unit="word"``,
positions counted in words, so only the tree differs from the tree buckets), ``1 … D`` the
clamped or log-bucketed distance within a sentence, then cross sentence, special, padding.
They are a function of the string alone: two trees of one string get the same matrix.
:meth:`BucketScheme.position_names` labels them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch

from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.pairs.encoding import truncate_pair
from lessons_lib.pairs.vocab import CLS, SEP, Vocabulary
from lessons_lib.syntax import bucket_sizes
from lessons_lib.syntax.bucket_sizes import DEFAULT_LOG_MAX, DEFAULT_MAX_DISTANCE, INT8_MAX_DISTANCE  # noqa: F401  (named here too)
from lessons_lib.syntax.distances import batch_tree_distances
from lessons_lib.syntax.trees import validate_heads
from lessons_lib.validation import check_choice, check_int

# The kinds of bucket an id can stand for; padding (-1) is not a bucket of the table.
BUCKET_KINDS = ("distance", "same_word", "cross_sentence", "special")
# What a relative-position bucket counts in: characters, or the words of the segmentation.
POSITION_UNITS = ("char", "word")
PAD_BUCKET = -1
SAME_WORD_BUCKET = 0


@dataclass(frozen=True)
class BucketScheme:
    """How tree distances become bucket ids.

    Attributes:
        max_distance: ``D``, the number of distance buckets (ids ``1 … D``); longer
            distances are clamped into the last one.
        log_buckets: share buckets logarithmically beyond ``exact``.
        exact: with ``log_buckets``, distances ``1 … exact`` keep their own bucket
            (default ``D // 2``).
        log_max: with ``log_buckets``, the distance from which everything is in bucket ``D``.
    """

    max_distance: int = DEFAULT_MAX_DISTANCE
    log_buckets: bool = False
    exact: int | None = None
    log_max: int = DEFAULT_LOG_MAX

    def __post_init__(self) -> None:
        bucket_sizes.check_bucket_sizes(self.max_distance, self.log_buckets, self.exact, self.log_max)

    @property
    def exact_limit(self) -> int:
        return bucket_sizes.exact_limit(self.max_distance, self.exact)

    @property
    def same_word(self) -> int:
        return SAME_WORD_BUCKET

    @property
    def cross_sentence(self) -> int:
        return self.max_distance + 1

    @property
    def special(self) -> int:
        return self.max_distance + 2

    @property
    def n_buckets(self) -> int:
        """Number of ids that index a bias table (padding, -1, excluded)."""
        return self.max_distance + 3

    def bucket(self, distances: torch.Tensor) -> torch.Tensor:
        """Bucket ids of word distances (``0`` → same word, ``d ≥ 1`` → ``1 … D``), same shape."""
        d = distances.to(torch.long)
        if not self.log_buckets:
            return d.clamp(min=0, max=self.max_distance)
        exact = self.exact_limit
        span = self.max_distance - exact - 1
        ratio = torch.log(d.clamp(min=exact + 1).to(torch.float64) / (exact + 1)) / math.log(self.log_max / (exact + 1))
        far = (exact + 1 + torch.floor(ratio * span + 1e-9).to(torch.long)).clamp(max=self.max_distance)
        return torch.where(d <= exact, d.clamp(min=0), far)

    def distance_bounds(self) -> list[tuple[int, int | None]]:
        """For ids ``1 … D``: the ``(smallest, largest)`` distance each holds (``None`` = unbounded)."""
        top = 4 * max(self.log_max, self.max_distance)
        ids = self.bucket(torch.arange(1, top + 1)).tolist()
        bounds = []
        for b in range(1, self.max_distance + 1):
            ds = [d for d, i in zip(range(1, top + 1), ids) if i == b]
            if not ds:
                raise CourseInputError(f"bucket {b} holds no distance; choose a larger log_max or fewer buckets")
            bounds.append((ds[0], None if b == self.max_distance else ds[-1]))
        return bounds

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kind of each bucket id (one of :data:`BUCKET_KINDS`), id 0 first."""
        return ("same_word",) + ("distance",) * self.max_distance + ("cross_sentence", "special")

    @property
    def distances(self) -> tuple[float, ...]:
        """The smallest tree distance each id stands for; ``nan`` for the kinds that are not distances."""
        return (math.nan, *(float(low) for low, _ in self.distance_bounds()), math.nan, math.nan)

    @property
    def names(self) -> tuple[str, ...]:
        """A short label per bucket id (``"same word"``, ``"d=1"``, ``"d≥10"``, ``"cross sentence"``, ``"special"``)."""
        labels = ["same word"]
        for low, high in self.distance_bounds():
            labels.append(f"d={low}" if high == low else (f"d≥{low}" if high is None else f"d={low}-{high}"))
        return (*labels, "cross sentence", "special")

    def position_names(self, unit: str = "char") -> tuple[str, ...]:
        """Labels of the same ids read as relative-position buckets (``"same position"``, ``"|i−j|=1"``, …)."""
        check_choice(unit, FieldName("unit"), POSITION_UNITS)
        labels = ["same position" if unit == "char" else "same word"]
        for low, high in self.distance_bounds():
            span = f"={low}" if high == low else (f"≥{low}" if high is None else f"={low}-{high}")
            labels.append(f"|i−j|{span}")
        return (*labels, "cross sentence", "special")

    def index(self, kind: str) -> list[int]:
        """Bucket ids of one kind, in id order."""
        if kind not in BUCKET_KINDS:
            raise input_error(FieldName("kind"), f" must be one of {BUCKET_KINDS}, got {kind!r}")
        return [b for b, k in enumerate(self.kinds) if k == kind]


DEFAULT_SCHEME = BucketScheme()
NUM_BUCKETS = DEFAULT_SCHEME.n_buckets  # 13
CROSS_SENTENCE_BUCKET = DEFAULT_SCHEME.cross_sentence  # 11
SPECIAL_BUCKET = DEFAULT_SCHEME.special  # 12


def char_word_index(words: Sequence[str]) -> list[int]:
    """For each character of the sentence (whitespace left out), the index of its word.

    >>> char_word_index(["怎么", "做", "？"])
    [0, 0, 1, 2]
    """
    out = []
    for w, word in enumerate(words):
        chars = [ch for ch in word if not ch.isspace()]
        if not chars:
            raise input_error(FieldName("words"), f"[{w}] = {word!r} has no characters (whitespace tokens are not words)")
        out.extend([w] * len(chars))
    return out


def _sentence_chars(words: Sequence[str]) -> list[str]:
    return [ch for word in words for ch in word if not ch.isspace()]


def pair_tokens(words_a: Sequence[str], words_b: Sequence[str], max_len: int | None = None) -> list[str]:
    """The pair's tokens ``[CLS] chars_a [SEP] chars_b [SEP]``, truncated like the model's input."""
    chars_a, chars_b = _sentence_chars(words_a), _sentence_chars(words_b)
    if max_len is not None:
        chars_a, chars_b = truncate_pair(chars_a, chars_b, _check_max_len(max_len) - 3)
    return [CLS, *chars_a, SEP, *chars_b, SEP]


def _check_max_len(max_len: int) -> int:
    return check_int(max_len, "`max_len` (3 special tokens + 1 character per sentence)", minimum=5)


def batch_pair_distance_buckets(
    pairs: Sequence[tuple[Sequence[str], Sequence[int], Sequence[str], Sequence[int]]],
    max_len: int | None = None,
    scheme: BucketScheme = DEFAULT_SCHEME,
    pad_to: int | None = None,
) -> torch.Tensor:
    """Bucket ids for a batch of pairs, padded to one length.

    Args:
        pairs: ``(words_a, heads_a, words_b, heads_b)`` per pair; heads 0-based, root = -1.
        max_len: the model's maximum length (truncation, longer sentence first, as
            :func:`lessons_lib.pairs.encoding.encode_pair`); ``None`` = no truncation.
        scheme: the bucket scheme.
        pad_to: the batch length ``L``; default the longest pair (after truncation).

    Returns:
        ``(B, L, L)`` long bucket ids (see the module docstring), ``-1`` at padding.
    """
    if len(pairs) == 0:
        raise input_error(FieldName("pairs"), " is empty")
    if max_len is not None:
        _check_max_len(max_len)
    heads, kept = _checked_pairs(pairs, max_len)
    word_dist = batch_tree_distances(heads)  # (2B, W, W)
    longest = max(len(a) + len(b) + 3 for a, b in kept)
    L = longest if pad_to is None else pad_to
    if L < longest:
        raise input_error(FieldName("pad_to"), f"={pad_to} is shorter than the longest pair ({longest} positions)")
    part, word = _position_parts(kept, L)
    # Word distance for every same-sentence position pair: gather from that sentence's matrix.
    sentence = 2 * torch.arange(len(pairs))[:, None] + part.clamp(min=0)  # (B, L) index into word_dist
    within = word_dist[sentence[:, :, None], word[:, :, None], word[:, None, :]]  # (B, L, L)
    return _mark_other_kinds(scheme.bucket(within), part, scheme)


def _checked_pairs(pairs: Sequence, max_len: int | None) -> tuple[list[list[int]], list[tuple[list[int], list[int]]]]:
    """Validate each pair; return the head arrays (a, b, a, b, ...) and each pair's per-character word index."""
    heads_out, kept = [], []
    for b, pair in enumerate(pairs):
        if len(pair) != 4:
            raise input_error(FieldName("pairs"), f"[{b}] must be (words_a, heads_a, words_b, heads_b), got {len(pair)} items")
        words_a, heads_a, words_b, heads_b = pair
        for side, words, heads in (("a", words_a, heads_a), ("b", words_b, heads_b)):
            if len(words) != len(heads):
                raise input_error(FieldName("pairs"), f"[{b}] sentence {side}: {len(words)} words but {len(heads)} heads")
            validate_heads(heads, name=f"`pairs`[{b}] sentence {side}")
        idx_a, idx_b = char_word_index(words_a), char_word_index(words_b)
        if max_len is not None:
            idx_a, idx_b = truncate_pair(idx_a, idx_b, max_len - 3)
        kept.append((idx_a, idx_b))
        heads_out += [list(heads_a), list(heads_b)]
    return heads_out, kept


def _position_parts(kept: Sequence[tuple[Sequence[int], Sequence[int]]], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per position of ``[CLS] a [SEP] b [SEP]``: which part and which word.

    Returns:
        ``part`` ``(B, L)`` long — 0 = sentence a, 1 = sentence b, -1 = special token,
        -2 = padding — and ``word`` ``(B, L)`` long, the index ``kept`` gives the position
        within its sentence (its word, or for position buckets its unit; 0 where there is none).
    """
    part = torch.full((len(kept), length), -2, dtype=torch.long)
    word = torch.zeros((len(kept), length), dtype=torch.long)
    for b, (idx_a, idx_b) in enumerate(kept):
        na, nb = len(idx_a), len(idx_b)
        part[b, : na + nb + 3] = -1
        part[b, 1 : 1 + na] = 0
        part[b, 2 + na : 2 + na + nb] = 1
        word[b, 1 : 1 + na] = torch.as_tensor(idx_a, dtype=torch.long)
        word[b, 2 + na : 2 + na + nb] = torch.as_tensor(idx_b, dtype=torch.long)
    return part, word


def _mark_other_kinds(buckets: torch.Tensor, part: torch.Tensor, scheme: BucketScheme) -> torch.Tensor:
    """Overwrite within-sentence ids with the cross-sentence, special and padding ids (padding wins)."""
    p, q = part[:, :, None], part[:, None, :]
    buckets = torch.where((p >= 0) & (q >= 0) & (p != q), torch.tensor(scheme.cross_sentence), buckets)
    buckets = torch.where((p == -1) | (q == -1), torch.tensor(scheme.special), buckets)
    return torch.where((p == -2) | (q == -2), torch.tensor(PAD_BUCKET), buckets)


def layout_buckets(
    token_ids: torch.Tensor,
    segment_ids: torch.Tensor,
    key_mask: torch.Tensor,
    scheme: BucketScheme = DEFAULT_SCHEME,
) -> tuple[torch.Tensor, torch.Tensor]:
    """What a batch's layout alone says about its bucket ids, without any tree.

    Most ids are fixed by *where* the two positions are: padding, a special token, two
    different sentences, a character with itself (same word). Only a pair of two different
    characters of the same sentence needs a tree: "same word" or a distance.

    Args:
        token_ids, segment_ids: ``(B, L)`` long, as :func:`lessons_lib.pairs.encoding.collate_pairs`
            makes them (segment 0 = ``[CLS] a [SEP]``, 1 = ``b [SEP]``; the plain 0/1 ids,
            not the match-flag ones).
        key_mask: ``(B, L)`` bool, ``True`` at real tokens.
        scheme: the bucket scheme.

    Returns:
        ``(buckets, needs_tree)``: ``(B, L, L)`` long ids — the layout's where it decides,
        ``SAME_WORD`` where it does not — and ``(B, L, L)`` bool, ``True`` where a tree
        (or a predictor) must give the id.
    """
    if token_ids.dim() != 2 or segment_ids.shape != token_ids.shape or key_mask.shape != token_ids.shape:
        raise input_error(FieldName("token_ids"), f", `segment_ids` and `key_mask` must all be (B, L); got "
                               f"{tuple(token_ids.shape)}, {tuple(segment_ids.shape)}, {tuple(key_mask.shape)}")
    special = (token_ids == Vocabulary.cls_id) | (token_ids == Vocabulary.sep_id)
    part = torch.where(key_mask, torch.where(special, torch.tensor(-1), segment_ids), torch.tensor(-2))
    batch, length = token_ids.shape
    buckets = _mark_other_kinds(torch.full((batch, length, length), SAME_WORD_BUCKET, dtype=torch.long,
                                           device=token_ids.device), part, scheme)
    p, q = part[:, :, None], part[:, None, :]
    off_diagonal = ~torch.eye(length, dtype=torch.bool, device=token_ids.device)
    return buckets, (p >= 0) & (p == q) & off_diagonal


def pair_distance_buckets(
    words_a: Sequence[str],
    heads_a: Sequence[int],
    words_b: Sequence[str],
    heads_b: Sequence[int],
    max_len: int,
    scheme: BucketScheme = DEFAULT_SCHEME,
) -> torch.Tensor:
    """Bucket ids of one pair, padded to ``max_len``: ``(max_len, max_len)`` long.

    The pair is truncated to ``max_len`` positions like the model's input, and positions
    after its end are padding (``-1`` rows and columns).
    """
    return batch_pair_distance_buckets([(words_a, heads_a, words_b, heads_b)], max_len=max_len,
                                       scheme=scheme, pad_to=_check_max_len(max_len))[0]


def _position_index(words: Sequence[str], unit: str) -> list[int]:
    """Per character of the sentence, its position in ``unit``: its own index, or its word's."""
    return list(range(len(_sentence_chars(words)))) if unit == "char" else char_word_index(words)


def batch_pair_position_buckets(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    max_len: int | None = None,
    scheme: BucketScheme = DEFAULT_SCHEME,
    unit: str = "char",
    pad_to: int | None = None,
) -> torch.Tensor:
    """Relative-position bucket ids for a batch of pairs, in the layout of the tree buckets.

    Args:
        pairs: ``(words_a, words_b)`` per pair; with ``unit="char"`` only the characters
            matter (a text's characters as one-character words will do).
        max_len: the model's maximum length (truncation as :func:`batch_pair_distance_buckets`).
        scheme: the bucket scheme (clamp or log buckets) applied to ``|i − j|``.
        unit: ``"char"`` (id 0 = the same position) or ``"word"`` (distances between words,
            id 0 = the same word).
        pad_to: the batch length ``L``; default the longest pair.

    Returns:
        ``(B, L, L)`` long bucket ids, ``-1`` at padding.
    """
    check_choice(unit, FieldName("unit"), POSITION_UNITS)
    if len(pairs) == 0:
        raise input_error(FieldName("pairs"), " is empty")
    if max_len is not None:
        _check_max_len(max_len)
    kept = []
    for b, pair in enumerate(pairs):
        if len(pair) != 2:
            raise input_error(FieldName("pairs"), f"[{b}] must be (words_a, words_b), got {len(pair)} items")
        idx_a, idx_b = (_position_index(words, unit) for words in pair)
        if max_len is not None:
            idx_a, idx_b = truncate_pair(idx_a, idx_b, max_len - 3)
        kept.append((idx_a, idx_b))
    longest = max(len(a) + len(b) + 3 for a, b in kept)
    L = longest if pad_to is None else pad_to
    if L < longest:
        raise input_error(FieldName("pad_to"), f"={pad_to} is shorter than the longest pair ({longest} positions)")
    part, position = _position_parts(kept, L)
    distance = (position[:, :, None] - position[:, None, :]).abs()  # meaningful within a sentence only
    return _mark_other_kinds(scheme.bucket(distance), part, scheme)


def batch_sentence_distance_buckets(
    sentences: Sequence[tuple[Sequence[str], Sequence[int]]],
    scheme: BucketScheme = DEFAULT_SCHEME,
    pad_to: int | None = None,
) -> torch.Tensor:
    """Bucket ids for a batch of single sentences, read character by character with no special
    tokens (a translation model's source): the pair layout's within-sentence ids, and padding.

    Args:
        sentences: ``(words, heads)`` per sentence; heads 0-based, root = -1.
        scheme: the bucket scheme.
        pad_to: the batch length ``L``; default the longest sentence in characters.

    Returns:
        ``(B, L, L)`` long bucket ids, ``-1`` where either position is padding.
    """
    if len(sentences) == 0:
        raise input_error(FieldName("sentences"), " is empty")
    heads, kept = [], []
    for b, sentence in enumerate(sentences):
        if len(sentence) != 2:
            raise input_error(FieldName("sentences"), f"[{b}] must be (words, heads), got {len(sentence)} items")
        words, sentence_heads = sentence
        if len(words) != len(sentence_heads):
            raise input_error(FieldName("sentences"), f"[{b}]: {len(words)} words but {len(sentence_heads)} heads")
        heads.append(validate_heads(sentence_heads, name=f"`sentences`[{b}]"))
        kept.append(char_word_index(words))
    longest = max(len(index) for index in kept)
    L = longest if pad_to is None else pad_to
    if L < longest:
        raise input_error(FieldName("pad_to"), f"={pad_to} is shorter than the longest sentence ({longest} characters)")
    word_dist = batch_tree_distances(heads)  # (B, W, W)
    word = torch.zeros((len(kept), L), dtype=torch.long)
    real = torch.zeros((len(kept), L), dtype=torch.bool)
    for b, index in enumerate(kept):
        word[b, : len(index)] = torch.as_tensor(index, dtype=torch.long)
        real[b, : len(index)] = True
    within = word_dist[torch.arange(len(kept))[:, None, None], word[:, :, None], word[:, None, :]]
    pairs_real = real[:, :, None] & real[:, None, :]
    return torch.where(pairs_real, scheme.bucket(within), torch.tensor(PAD_BUCKET))
