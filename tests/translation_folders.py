"""A tiny folder of translation pairs with gold trees, written for the tests: one string, two readings."""

from pathlib import Path

from lessons_lib.syntax.treebank import make_sentence, write_conllu
from lessons_lib.translation.pairs_folder import TranslationData, TranslationPair, read_pairs_folder, write_pairs_file

# 关心 学生 的 老师 很 好 。 read as a relative clause: 关心→老师, 学生→关心, 的→关心, 老师→好, 很→好, 。→好
WORDS = ("关心", "学生", "的", "老师", "很", "好", "。")
RELATIVE_CLAUSE = ((3, 0, 0, 5, 5, -1, 5), ("acl", "obj", "mark", "nsubj", "advmod", "root", "punct"))
# 关心[学生的老师]: 关心 heads a subject clause of 好
VERB_PHRASE = ((5, 3, 1, 0, 5, -1, 5), ("csubj", "nmod", "case", "obj", "advmod", "root", "punct"))
REFERENCES = ("The teacher who cares about the student is good .", "Caring about the student's teacher is good .")


def write_tiny_folder(folder: Path, n: int = 24) -> TranslationData:
    """``n`` pairs (the last 8 split into dev and test), readings alternating, with ``trees.conllu``."""
    sentences, splits = [], {"train": [], "dev": [], "test": []}
    for k in range(n):
        split = "train" if k < n - 8 else ("dev" if k < n - 4 else "test")
        heads, rels = (RELATIVE_CLAUSE, VERB_PHRASE)[k % 2]
        pair_id = f"{split}{k}"
        splits[split].append(TranslationPair(pair_id, "".join(WORDS), REFERENCES[k % 2], "syntax"))
        sentences.append(make_sentence(pair_id, WORDS, heads, rels))
    folder.mkdir(parents=True, exist_ok=True)
    for split, pairs in splits.items():
        write_pairs_file(pairs, folder / f"{split}.tsv")
    write_conllu(sentences, folder / "trees.conllu")
    return read_pairs_folder(folder)
