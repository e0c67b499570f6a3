"""Benchmark: cold parsing and the parse cache, in sentences per second, on CPU.

Three measurements on the first ``--sentences`` distinct sentences of the data in use
(``--data-dir``, else ``$LCQMC_DIR``, else the course's sample: 9,283 distinct training sentences,
more with dev and test), with the parser ``lessons experiment`` would load (``--parser``, else an
installed official Chinese pipeline, else the course's):

1. cold parsing (no parse cache) with ``nlp.pipe`` for each ``--batch-sizes`` × ``--n-process``:
   jieba's segmentation, the pipeline's components, and turning each doc into a checked parse.
   Every setting parses the same sentences (neither jieba nor the pipeline keeps a memo of
   sentences it has seen);
2. where the time of one process goes: jieba alone, then the rest of the pipeline;
3. the cache: writing the parses of step 1 into a fresh SQLite cache in batches of
   ``--batch-sizes`` (one commit per batch, as :func:`lessons_lib.syntax.cache.parse_with_cache`
   does), and reading them all back (every entry checked).

The machine's load (``os.getloadavg``) is printed before and after: on a shared machine the
numbers of ``n_process 2`` say more about the other jobs than about the parser. Run from the
repository root::

    python benchmarks/bench_parsing.py [--sentences 2000] [--batch-sizes 64 256 1024] [--n-process 1 2]
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time

from lessons_lib.pairs.data import load_lcqmc
from lessons_lib.syntax.cache import ParseCache
from lessons_lib.syntax.parser import doc_to_parse, load_parser, parser_identity


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def _cold_rate(nlp, texts: list[str], batch_size: int, n_process: int) -> float:
    started = time.perf_counter()
    parses = [doc_to_parse(doc) for doc in nlp.pipe(texts, batch_size=batch_size, n_process=n_process)]
    assert len(parses) == len(texts)
    return len(texts) / (time.perf_counter() - started)


def _split_time(nlp, texts: list[str]) -> tuple[float, float]:
    """Sentences/s of the tokenizer (jieba) alone, and of the components after it alone."""
    started = time.perf_counter()
    docs = [nlp.make_doc(text) for text in texts]
    tokenizer = len(texts) / (time.perf_counter() - started)
    started = time.perf_counter()
    for _, component in nlp.pipeline:
        docs = list(component.pipe(docs, batch_size=256)) if hasattr(component, "pipe") else [component(d) for d in docs]
    return tokenizer, len(texts) / (time.perf_counter() - started)


def _cache_rates(name: str, version: str, parses, batch_size: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as folder, ParseCache(folder, name, version) as cache:
        started = time.perf_counter()
        for start in range(0, len(parses), batch_size):
            cache.put_many(parses[start:start + batch_size])
        write = len(parses) / (time.perf_counter() - started)
        started = time.perf_counter()
        found = cache.get_many([p.text for p in parses])
        read = len(parses) / (time.perf_counter() - started)
        assert len(found) == len(parses)
    return write, read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--parser", default=None)
    parser.add_argument("--sentences", type=int, default=2000, help="sentences parsed per setting")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[64, 256, 1024])
    parser.add_argument("--n-process", nargs="+", type=int, default=[1, 2])
    args = parser.parse_args()

    import jieba
    jieba.setLogLevel(logging.WARNING)
    data = load_lcqmc(args.data_dir)
    texts = list(dict.fromkeys(t for split in (data.train, data.dev, data.test) for ex in split.examples
                               for t in (ex.text_a, ex.text_b)))[:args.sentences]
    nlp = load_parser(args.parser)
    name, version = parser_identity(nlp)
    settings = [(b, n) for n in args.n_process for b in args.batch_sizes]
    mean = sum(len(t) for t in texts) / len(texts)
    print(f"data: {data.source.origin}, {len(texts)} distinct sentences ({mean:.1f} characters on average); "
          f"parser {name} {version}")
    print(f"before: {_load()}")
    list(nlp.pipe(texts[:200]))  # warm-up: jieba's dictionary, the model's first call
    print(f"{'batch size':>10s} {'n_process':>9s} {'sentences/s':>12s}")
    for batch_size, n_process in settings:
        print(f"{batch_size:10d} {n_process:9d} {_cold_rate(nlp, texts, batch_size, n_process):12.0f}")
    sample = texts
    tokenizer, rest = _split_time(nlp, sample)
    print(f"one process: jieba alone {tokenizer:.0f} sentences/s, the components after it {rest:.0f} sentences/s "
          f"(together at most {1 / (1 / tokenizer + 1 / rest):.0f})")
    parses = [doc_to_parse(doc) for doc in nlp.pipe(sample, batch_size=256)]
    for batch_size in args.batch_sizes:
        write, read = _cache_rates(name, version, parses, batch_size)
        print(f"cache, batches of {batch_size}: write {write:.0f} sentences/s, read (all at once, checked) {read:.0f}")
    print(f"after: {_load()}")


if __name__ == "__main__":
    main()
