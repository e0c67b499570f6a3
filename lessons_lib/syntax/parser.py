"""The parser adapter: any spaCy pipeline with a parser → words and validated head arrays.

:func:`load_parser` gives an official Chinese spaCy pipeline when the user installed one
(``zh_core_web_sm``/``md``/``lg``/``trf``) and otherwise the course's own small parser,
shipped in :data:`lessons_lib.paths.PARSER_MODEL_DIR`. Either way the tokenizer is
switched to the course's segmentation (jieba) by default, so that the words a lesson
sees are the words the treebank and the model's character alignment assume.

:func:`parse_texts` returns one :class:`Parse` per sentence: the words and a **0-based
head array with root = -1** (the course convention of :mod:`lessons_lib.syntax.trees`;
spaCy's own root is its own head, CoNLL-U's root is 0). Every head array is validated;
output that is not one tree raises :class:`~lessons_lib.errors.CourseInputError` naming
the sentence.

Two things spaCy would otherwise do are handled on purpose:

- a spaCy parser also splits a text into sentences, and then returns one tree *per
  sentence* (several roots). The adapter adds a tiny component before the parser that
  marks the whole text as one sentence; spaCy's parser respects preset sentence starts,
  so it returns a single tree.
- whitespace tokens (jieba keeps spaces as tokens) carry no character the model sees;
  they are removed, and a word that depended on one is re-attached to its head. How many
  were removed is counted in :attr:`Parse.removed_spaces`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from lessons_lib import paths
from lessons_lib.errors import CourseInputError, FieldName, input_error
from lessons_lib.pairs.data import MAX_SENTENCE_CHARS
from lessons_lib.syntax.trees import ROOT_HEAD, heads_from_spacy, validate_heads

OFFICIAL_PIPELINES = ("zh_core_web_sm", "zh_core_web_md", "zh_core_web_lg", "zh_core_web_trf")
SINGLE_SENTENCE_COMPONENT = "course_single_sentence"


@dataclass(frozen=True)
class Parse:
    """One parsed sentence in the course's convention.

    Attributes:
        text: the input text.
        words: the words (whitespace tokens removed), length ``n``.
        heads: 0-based head of each word, root = -1, length ``n``.
        deprels: dependency relation of each word, length ``n`` (UD labels; spaCy's
            ``"ROOT"`` is renamed ``"root"``).
        removed_spaces: whitespace tokens removed from spaCy's output.
    """

    text: str
    words: tuple[str, ...]
    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    removed_spaces: int = 0

    def to_json(self) -> dict:
        return {"text": self.text, "words": list(self.words), "heads": list(self.heads),
                "deprels": list(self.deprels), "removed_spaces": self.removed_spaces}

    @classmethod
    def from_json(cls, data: dict, where: str = "parse") -> "Parse":
        """The parse stored by :meth:`to_json`, checked (see :meth:`check`)."""
        try:
            parse = cls(data["text"], tuple(data["words"]), tuple(data["heads"]), tuple(data["deprels"]),
                        int(data.get("removed_spaces", 0)))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise CourseInputError(f"{where}: not a stored parse ({type(error).__name__}: {error})") from None
        return parse.check(where)

    def check(self, where: str = "parse") -> "Parse":
        """Raise unless the words spell the text (whitespace left out) and the heads form one tree."""
        if not isinstance(self.text, str) or not all(isinstance(w, str) for w in self.words):
            raise CourseInputError(f"{where}: the text and the words must be strings")
        if not len(self.words) == len(self.heads) == len(self.deprels):
            raise CourseInputError(f"{where}: {len(self.words)} words, {len(self.heads)} heads and "
                                   f"{len(self.deprels)} relations")
        spelled = [ch for word in self.words for ch in word if not ch.isspace()]
        if spelled != [ch for ch in self.text if not ch.isspace()]:
            raise CourseInputError(f"{where}: the words {list(self.words)} do not spell the text {self.text!r}")
        validate_heads(self.heads, name=where)
        return self


def _register_single_sentence() -> None:
    from spacy.language import Language

    if SINGLE_SENTENCE_COMPONENT in Language.factories:
        return

    @Language.component(SINGLE_SENTENCE_COMPONENT)
    def single_sentence(doc):
        # Preset sentence starts are respected by spaCy's parser: one text, one tree.
        for i, token in enumerate(doc):
            token.is_sent_start = i == 0
        return doc


def prepare_pipeline(nlp, use_jieba: bool = True):
    """Make a loaded spaCy pipeline fit for the course (in place) and return it.

    Checks that it has a parser, adds the single-sentence component before it, and (by
    default) replaces its tokenizer by the course's jieba segmentation.

    Raises:
        CourseInputError: the pipeline has no ``parser`` component.
    """
    if "parser" not in nlp.pipe_names:
        raise CourseInputError(
            f"spaCy pipeline {nlp.meta.get('lang')}_{nlp.meta.get('name')} has no 'parser' component "
            f"(it has {nlp.pipe_names}); the course needs dependency parses"
        )
    if use_jieba and nlp.lang == "zh" and nlp.tokenizer.__class__.__name__ == "ChineseTokenizer":
        from spacy.lang.zh import ChineseTokenizer, Segmenter

        from lessons_lib.syntax.segmentation import silence_jieba

        silence_jieba()
        if nlp.tokenizer.segmenter != Segmenter.jieba:
            nlp.tokenizer = ChineseTokenizer(nlp.vocab, segmenter=Segmenter.jieba)
    _register_single_sentence()
    if SINGLE_SENTENCE_COMPONENT not in nlp.pipe_names:
        nlp.add_pipe(SINGLE_SENTENCE_COMPONENT, before="parser")
    return nlp


def installed_official_pipeline() -> str | None:
    """The name of the first official Chinese spaCy pipeline that is installed, or ``None``."""
    return next((name for name in OFFICIAL_PIPELINES if importlib.util.find_spec(name) is not None), None)


def load_parser(name_or_path: str | os.PathLike | None = None, prefer_official: bool = True, use_jieba: bool = True):
    """Load a spaCy pipeline with a parser, ready for :func:`parse_texts`.

    Args:
        name_or_path: an installed pipeline name or a pipeline folder. ``None`` means: an
            official Chinese pipeline if one is installed (and ``prefer_official``), else
            the course's shipped parser.
        prefer_official: whether ``None`` may pick an installed official pipeline.
        use_jieba: segment with jieba (the course's segmentation) whatever the pipeline's own.

    Raises:
        CourseInputError: nothing to load (no official pipeline and no shipped parser).
    """
    import spacy

    from lessons_lib.syntax.segmentation import silence_jieba

    silence_jieba()
    if name_or_path is None:
        official = installed_official_pipeline() if prefer_official else None
        name_or_path = official or paths.PARSER_MODEL_DIR
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or "/" in text or os.sep in text:
        if not Path(name_or_path).is_dir():
            raise CourseInputError(
                f"parser folder not found: {name_or_path}; train it with `lessons train-parser` "
                "or install an official pipeline (python -m spacy download zh_core_web_sm)"
            )
    elif not text.isidentifier() or importlib.util.find_spec(text) is None:
        raise CourseInputError(f"spaCy pipeline {text!r} is not installed (`python -m spacy download {text}`)")
    try:
        nlp = spacy.load(name_or_path if isinstance(name_or_path, str) else Path(name_or_path))
    except (OSError, ValueError, ImportError, KeyError) as error:  # spaCy's ways of refusing a folder
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise CourseInputError(f"cannot load the spaCy pipeline {text}: {first_line[:200]}") from None
    return prepare_pipeline(nlp, use_jieba=use_jieba)


def parser_identity(nlp) -> tuple[str, str]:
    """``(name, version)`` of a pipeline, for the parse cache.

    The version is the pipeline's declared version plus a short fingerprint of the
    parser's weights and the segmenter, so that retraining a parser without bumping its
    version still invalidates cached parses.
    """
    meta = nlp.meta
    name = f"{meta.get('lang', '?')}_{meta.get('name', '?')}"
    digest = hashlib.sha256()
    for component in ("tok2vec", "parser"):
        if component in nlp.pipe_names:
            _hash_weights(nlp.get_pipe(component).model, digest)
    digest.update(str(getattr(nlp.tokenizer, "segmenter", "")).encode())
    return name, f"{meta.get('version', '0')}+{digest.hexdigest()[:12]}"


def _hash_weights(model, digest) -> None:
    # The weights only: a component's serialised bytes also hold state that changes once
    # it has parsed something, which would make the identity drift within a session.
    import numpy

    for node in model.walk():
        for param in node.param_names:
            if node.has_param(param):
                digest.update(f"{node.name}/{param}".encode())
                digest.update(numpy.ascontiguousarray(node.ops.to_numpy(node.get_param(param))).tobytes())


def _ud_label(label: str) -> str:
    # spaCy names the root relation "ROOT"; UD (and the course) call it "root".
    return "root" if label == "ROOT" else label


def doc_to_parse(doc, name: str | None = None) -> Parse:
    """Turn a parsed spaCy ``Doc`` into a validated :class:`Parse` (root = -1, no spaces).

    Args:
        doc: a ``Doc`` that went through a parser.
        name: how the sentence is named in errors (defaults to its text).

    Raises:
        CourseInputError: the heads do not form one tree, naming the sentence.
    """
    name = name or f"sentence {doc.text!r}"
    heads = heads_from_spacy([t.head.i for t in doc])
    keep = [i for i, t in enumerate(doc) if t.text.strip()]
    removed = len(doc) - len(keep)
    if not keep:
        raise CourseInputError(f"{name}: no words (empty or whitespace-only text)")
    if removed:
        new_index = {old: new for new, old in enumerate(keep)}

        def lift(h: int) -> int:
            # A dependent of a removed whitespace token goes to the nearest kept ancestor.
            seen = 0
            while h != ROOT_HEAD and h not in new_index:
                h = heads[h]
                seen += 1
                if seen > len(heads):
                    raise CourseInputError(f"{name}: the parser's heads form a cycle")
            return ROOT_HEAD if h == ROOT_HEAD else new_index[h]

        new_heads = [lift(heads[i]) for i in keep]
        roots = [i for i, h in enumerate(new_heads) if h == ROOT_HEAD]
        if len(roots) > 1 and not any(heads[old] == ROOT_HEAD for old in keep):
            # The root itself was a whitespace token: its first word child takes its place.
            new_heads = [roots[0] if (h == ROOT_HEAD and i != roots[0]) else h for i, h in enumerate(new_heads)]
        words = [doc[i].text for i in keep]
        deprels = [_ud_label(doc[i].dep_) for i in keep]
        heads = new_heads
    else:
        words = [t.text for t in doc]
        deprels = [_ud_label(t.dep_) for t in doc]
    heads = validate_heads(heads, name=f"parser output for {name}")
    return Parse(doc.text, tuple(words), tuple(heads), tuple(deprels), removed)


def check_texts(texts: Iterable[str]) -> list[str]:
    """Reject non-strings, empty texts and texts longer than ``MAX_SENTENCE_CHARS``, naming their position.

    The length is refused before parsing: parsing and tree distances grow with its square.
    """
    listed = list(texts)
    for i, text in enumerate(listed):
        if not isinstance(text, str) or not text.strip():
            raise input_error(FieldName("texts"), f"[{i}] must be a non-empty string, got {text!r}")
        if len(text) > MAX_SENTENCE_CHARS:
            raise input_error(FieldName("texts"), f"[{i}] has {len(text):,} characters, more than the "
                                   f"{MAX_SENTENCE_CHARS:,} the course parses ({text[:40]!r}...)")
    return listed


def parse_texts(nlp, texts: Iterable[str], batch_size: int = 256) -> list[Parse]:
    """Parse ``texts`` with ``nlp.pipe`` in batches; one validated :class:`Parse` per text."""
    checked = check_texts(texts)
    return [doc_to_parse(doc, name=f"sentence {i} {text!r}")
            for i, (text, doc) in enumerate(zip(checked, nlp.pipe(checked, batch_size=batch_size)))]


def parse_words(nlp, words: Sequence[str], name: str | None = None) -> Parse:
    """Parse a sentence whose words are given (any segmentation), bypassing the tokenizer.

    Lesson 07 uses it to show what a different segmentation does to the tree.

    Raises:
        CourseInputError: empty ``words`` or an empty word.
    """
    from spacy.tokens import Doc

    words = list(words)
    if not words or any(not isinstance(w, str) or not w.strip() for w in words):
        raise input_error(FieldName("words"), f" must be non-empty strings, got {words!r}")
    doc = Doc(nlp.vocab, words=words, spaces=[False] * len(words))
    for _, component in nlp.pipeline:
        doc = component(doc)
    return doc_to_parse(doc, name=name)
