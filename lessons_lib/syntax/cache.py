"""An on-disk parse cache, so that a corpus is parsed once.

Entries live in one SQLite file (Python's standard library, safe to interrupt: every
batch is committed, so a stopped pre-parse resumes where it stopped). An entry's key is
the SHA-256 of the **parser's name, the parser's version and the sentence text**; the
version from :func:`lessons_lib.syntax.parser.parser_identity` includes a fingerprint of
the parser's weights, so a retrained or different parser never reads another parser's
parses: its lookups miss and it parses again (invalidation). Old entries stay until
:meth:`ParseCache.prune` removes them. Every entry read is checked (its words spell its
text, its heads form one tree, and its parse is the one written under its key: each entry
stores :func:`entry_digest` of its key and parse, so another valid tree put in its place is
caught too): an entry edited or damaged on disk is an error naming the cache file, never a
silently wrong parse; so is a file that is not an SQLite database. An entry written before
digests were stored has none to be checked against: it is read as a miss, parsed again and
written with its digest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from lessons_lib import paths
from lessons_lib.errors import CourseInputError, FieldName, file_errors, input_error
from lessons_lib.validation import check_int, check_not_a_file
from lessons_lib.syntax.parser import Parse, check_texts, doc_to_parse

DEFAULT_CACHE_DIR = paths.DATA_DIR / "cache" / "parses"
CACHE_FILE = "parses.sqlite"
# Sentences per parser batch and per cache commit (benchmarks/bench_parsing.py: 256 parsed fastest of
# 64 / 256 / 1,024, and a commit per 256 sentences keeps an interrupted pre-parse's loss small).
PARSE_BATCH_SIZE = 256


def cache_key(text: str, parser_name: str, parser_version: str) -> str:
    """SHA-256 hex digest of parser name, version and text (NUL-separated)."""
    return hashlib.sha256(f"{parser_name}\0{parser_version}\0{text}".encode("utf-8")).hexdigest()


def entry_digest(key: str, blob: str) -> str:
    """SHA-256 hex digest of an entry's key and its stored parse (NUL-separated): the entry's check
    against its key, so that a parse edited on disk (even into another valid tree) is refused."""
    return hashlib.sha256(f"{key}\0{blob}".encode("utf-8")).hexdigest()


def _database_problem(path: Path, error: sqlite3.Error) -> str:
    """What an SQLite error on the cache file ``path`` means for the user, in one line."""
    code = getattr(error, "sqlite_errorname", "") or ""
    keep = "its parses are kept; run the same command again once it is fixed, or give another --cache-dir"
    if code.startswith("SQLITE_READONLY") or code.startswith("SQLITE_PERM") or code.startswith("SQLITE_CANTOPEN"):
        return f"cannot write the parse cache {path} ({error}): make it and its folder writable; {keep}"
    if code == "SQLITE_FULL" or "disk is full" in str(error):
        return f"cannot write the parse cache {path}: the disk is full ({error}); free some space; {keep}"
    if code.startswith("SQLITE_BUSY") or code.startswith("SQLITE_LOCKED"):
        return f"the parse cache {path} is in use by another program ({error}); {keep}"
    if code.startswith("SQLITE_IOERR"):
        return f"cannot read or write the parse cache {path} ({error}); {keep}"
    return (f"parse cache {path} is not a readable parse cache ({error}); delete it and parse again "
            "(`lessons preparse --data-dir DIR`)")


class ParseCache:
    """Parses of one parser (name + version), stored under ``directory``.

    Args:
        directory: folder of the cache file (created when missing).
        parser_name, parser_version: the parser's identity (see ``parser_identity``).
    """

    def __init__(self, directory: str | os.PathLike, parser_name: str, parser_version: str) -> None:
        if not parser_name or not parser_version:
            raise input_error(FieldName("parser_name"), " and `parser_version` must be non-empty")
        self.directory = check_not_a_file(directory, "parse cache folder")
        self.path = self.directory / CACHE_FILE
        self.parser_name = parser_name
        self.parser_version = parser_version
        with file_errors(self.directory, "create the parse cache in"):
            self.directory.mkdir(parents=True, exist_ok=True)
        with self._database_errors():
            self._db = sqlite3.connect(self.path)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS parses (key TEXT PRIMARY KEY, parser TEXT NOT NULL, "
                "version TEXT NOT NULL, text TEXT NOT NULL, parse TEXT NOT NULL, digest TEXT)"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(parses)")}
            if "digest" not in columns:  # a cache written before entries carried their digest
                self._db.execute("ALTER TABLE parses ADD COLUMN digest TEXT")
            self._db.commit()

    @contextlib.contextmanager
    def _database_errors(self) -> Iterator[None]:
        """An SQLite error as a :class:`CourseInputError` naming the file and what to do.

        Only a damaged or foreign file is worth deleting; a cache that is read-only, on a full
        disk or locked by another program is fine as it is and is not to be thrown away.
        """
        try:
            yield
        except sqlite3.Error as error:
            raise CourseInputError(_database_problem(self.path, error)) from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ParseCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _key(self, text: str) -> str:
        return cache_key(text, self.parser_name, self.parser_version)

    def get_many(self, texts: Iterable[str]) -> dict[str, Parse]:
        """The cached parses among ``texts`` (text → :class:`Parse`); missing texts are absent."""
        wanted = {self._key(t): t for t in texts}
        found: dict[str, Parse] = {}
        keys = list(wanted)
        for start in range(0, len(keys), 500):  # SQLite limits the number of parameters
            chunk = keys[start : start + 500]
            with self._database_errors():
                rows = self._db.execute(
                    f"SELECT key, parse, digest FROM parses WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
            for key, blob, digest in rows:
                if digest is None:  # written before entries carried a digest: nothing to check it against
                    continue  # a miss: parsed again, and written with its digest
                found[wanted[key]] = self._entry(wanted[key], key, blob, digest)
        return found

    def _entry(self, text: str, key: str, blob: str, digest: str) -> Parse:
        """The stored parse of ``text``, checked: it must be this text's, spelled by its words, one tree,
        and the very parse written under ``key`` (its :func:`entry_digest`)."""
        where = f"parse cache {self.path}, entry for {text!r}"
        try:
            data = json.loads(blob)
        except (TypeError, json.JSONDecodeError) as error:
            raise CourseInputError(f"{where}: not JSON ({error}); delete the cache file and parse again") from None
        parse = Parse.from_json(data if isinstance(data, dict) else {}, where=where)
        if parse.text != text:  # a hash collision, or an edited entry
            raise CourseInputError(f"{where}: holds {parse.text!r}; delete the cache file and parse again")
        if digest != entry_digest(key, blob):  # e.g. another valid tree written in its place
            raise CourseInputError(f"{where}: its parse is not the one written under its key (the digest stored "
                                   "with it differs): edited or damaged on disk; delete the cache file and parse again")
        return parse

    def get(self, text: str) -> Parse | None:
        return self.get_many([text]).get(text)

    def put_many(self, parses: Iterable[Parse]) -> int:
        """Store parses (replacing entries with the same key); returns how many."""
        rows = []
        for p in parses:
            key, blob = self._key(p.text), json.dumps(p.to_json(), ensure_ascii=False)
            rows.append((key, self.parser_name, self.parser_version, p.text, blob, entry_digest(key, blob)))
        with self._database_errors():
            self._db.executemany("INSERT OR REPLACE INTO parses (key, parser, version, text, parse, digest) "
                                 "VALUES (?, ?, ?, ?, ?, ?)", rows)
            self._db.commit()
        return len(rows)

    def __len__(self) -> int:
        """Entries of *this* parser identity."""
        with self._database_errors():
            return self._db.execute("SELECT COUNT(*) FROM parses WHERE parser = ? AND version = ?",
                                    (self.parser_name, self.parser_version)).fetchone()[0]

    def prune(self) -> int:
        """Delete entries of every other parser identity; returns how many were deleted."""
        with self._database_errors():
            cursor = self._db.execute("DELETE FROM parses WHERE NOT (parser = ? AND version = ?)",
                                      (self.parser_name, self.parser_version))
            self._db.commit()
        return cursor.rowcount


@dataclass
class CacheStats:
    """What :func:`parse_with_cache` did: texts asked for, distinct texts, hits and parsed misses."""

    requested: int
    distinct: int
    hits: int
    parsed: int = 0


def parse_with_cache(
    texts: Sequence[str],
    nlp,
    cache: ParseCache,
    batch_size: int = PARSE_BATCH_SIZE,
    progress: Callable[[int], object] | None = None,
    n_process: int = 1,
) -> tuple[list[Parse], CacheStats]:
    """Parse ``texts`` through the cache: look up all, parse the misses with ``nlp.pipe``.

    Args:
        texts: sentences (duplicates are parsed once).
        nlp: a pipeline prepared by :func:`lessons_lib.syntax.parser.load_parser`, whose
            identity must be the cache's.
        cache: the :class:`ParseCache`.
        batch_size: ``nlp.pipe`` batch size; the cache is written after every batch.
        progress: called with the number of texts done after the lookup and each batch
            (e.g. a tqdm bar's ``update``).
        n_process: ``nlp.pipe``'s worker processes. 1 by default: on the course's shared 2-core
            machine 2 processes parsed the previous sample's 2,436 sentences slower than one (1,133 against
            1,533 sentences/s, their start included; benchmarks/bench_parsing.py); on idle cores
            and a long list more may help.

    Returns:
        ``(parses, stats)``: one :class:`Parse` per input text, in order.
    """
    texts = check_texts(texts)
    check_int(batch_size, FieldName("batch_size"))
    check_int(n_process, FieldName("n_process"))
    distinct = list(dict.fromkeys(texts))
    found = cache.get_many(distinct)
    stats = CacheStats(requested=len(texts), distinct=len(distinct), hits=len(found))
    if progress is not None:
        progress(len(found))
    missing = [t for t in distinct if t not in found]
    docs = nlp.pipe(missing, batch_size=batch_size, n_process=n_process)  # one stream: workers start once
    for start in range(0, len(missing), batch_size):
        chunk = missing[start : start + batch_size]
        parses = [doc_to_parse(doc, name=f"sentence {text!r}") for text, doc in zip(chunk, docs)]
        cache.put_many(parses)
        found.update((p.text, p) for p in parses)
        stats.parsed += len(parses)
        if progress is not None:
            progress(len(chunk))
    return [found[t] for t in texts], stats


def lcqmc_sentences(data_dir: str | os.PathLike, train_fraction: float = 1.0,
                    subset_seed: int = 0) -> tuple[list[str], dict[str, int]]:
    """The distinct sentences of an LCQMC-format folder an experiment reads, in file order:
    those of its training subset (:func:`lessons_lib.pairs.data.subsample`; all of train at
    fraction 1), dev and test.

    Reads with :func:`lessons_lib.pairs.data.load_lcqmc` (strict: a malformed line is an error
    naming file and line).

    Returns:
        ``(sentences, counts)`` with counts of pairs per split (train: the subset's) and of
        distinct sentences.
    """
    from lessons_lib.pairs.data import distinct_sentences, load_lcqmc, subsample

    data = load_lcqmc(Path(data_dir))
    splits = {"train": subsample(data.train.examples, train_fraction, subset_seed),
              "dev": data.dev.examples, "test": data.test.examples}
    sentences = distinct_sentences(*splits.values())
    counts = {f"{name} pairs": len(examples) for name, examples in splits.items()}
    counts["distinct sentences"] = len(sentences)
    return sentences, counts
