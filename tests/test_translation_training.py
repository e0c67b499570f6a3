"""The translation package: tokens, source buckets, the biased translator and one short training run."""

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.vocab import Vocabulary
from lessons_lib.syntax.buckets import DEFAULT_SCHEME, PAD_BUCKET, batch_sentence_distance_buckets
from lessons_lib.syntax.parser import Parse
from lessons_lib.transformer.decoder import EncoderDecoder
from lessons_lib.translation.encoding import (BOS_ID, EOS_ID, PAD_ID, detokenize, encode_batch, english_tokens,
                                              target_vocabulary)
from lessons_lib.translation.model import build_translator
from lessons_lib.translation.pairs_folder import TranslationPair
from lessons_lib.translation.config import TranslationTrainConfig
from lessons_lib.translation.training import train_translator, translator_config
from lessons_lib.syntax.buckets import char_word_index
from lessons_lib.syntax.parser import load_parser
from lessons_lib.translation.trees import (derived_trees, gold_trees, parser_trees, random_trees, sequence_trees,
                                         source_buckets)
from translation_folders import RELATIVE_CLAUSE, WORDS, write_tiny_folder

HEADS = RELATIVE_CLAUSE[0]


def test_english_tokens_keep_inner_apostrophes_and_split_punctuation():
    assert english_tokens("The student's teacher, isn't he?") == ["The", "student's", "teacher", ",", "isn't",
                                                                  "he", "?"]
    assert detokenize(["Caring", "about", "it", "."]) == "Caring about it ."


def test_the_target_vocabulary_puts_frequent_tokens_first_after_the_specials():
    vocab = target_vocabulary(["b a .", "a ."])
    assert vocab.tokens[4:] == [".", "a", "b"]  # 2, 2, 1 occurrences; ties by token


def test_sentence_buckets_give_tree_distances_between_characters_and_pad_with_minus_one():
    buckets = batch_sentence_distance_buckets([(WORDS, HEADS), (("好",), (-1,))])
    assert buckets.shape == (2, 10, 10)  # 关心学生的老师很好。 is 10 characters
    first = buckets[0]
    assert first[0, 1] == 0  # 关 and 心: the same word
    assert first[0, 2] == 1  # 关心 – 学生: one arc
    assert first[2, 4] == 2  # 学生 – 的: via 关心
    assert first[0, 5] == 1  # 关心 – 老师: one arc (the relative clause)
    assert torch.equal(buckets[1, 1:, :], torch.full((9, 10), PAD_BUCKET))
    assert buckets[1, 0, 0] == 0


def test_sentence_buckets_refuse_a_tree_that_does_not_fit_its_words():
    with pytest.raises(CourseInputError, match=r"`sentences`\[0\]: 2 words but 1 heads"):
        batch_sentence_distance_buckets([(("我", "好"), (-1,))])


def _pairs():
    return [TranslationPair("a", "关心学生的老师很好。", "The teacher who cares about the student is good .", "syntax"),
            TranslationPair("b", "老师很好。", "The teacher is good .", "plain")]


def test_a_batch_shifts_the_reference_by_one_for_teacher_forcing():
    pairs = _pairs()
    source_vocab = Vocabulary.build(p.source for p in pairs)
    target_vocab = target_vocabulary([p.reference for p in pairs])
    batch = encode_batch(pairs, [1, 0], source_vocab, target_vocab)
    assert batch.indices == [1, 0]
    assert batch.source_ids.shape == (2, 10)
    assert batch.source_mask[0].sum() == 5 and batch.source_mask[1].all()
    assert batch.target_in[:, 0].tolist() == [BOS_ID, BOS_ID]
    length = len(english_tokens(pairs[1].reference))
    assert batch.target_out[0, length] == EOS_ID and batch.target_out[0, length + 1:].eq(PAD_ID).all()
    assert torch.equal(batch.target_in[0, 1:length + 1], batch.target_out[0, :length])


def _trees():
    return {"a": Parse("关心学生的老师很好。", WORDS, HEADS, ("acl", "obj", "mark", "nsubj", "advmod", "root", "punct")),
            "b": Parse("老师很好。", ("老师", "很", "好", "。"), (2, 2, -1, 2), ("nsubj", "advmod", "root", "punct"))}


def test_a_zero_learned_bias_leaves_the_translator_equal_to_the_plain_model():
    pairs = _pairs()
    source_vocab = Vocabulary.build(p.source for p in pairs)
    target_vocab = target_vocabulary([p.reference for p in pairs])
    config = translator_config(len(source_vocab))
    buckets = source_buckets(pairs, [0, 1], _trees(), DEFAULT_SCHEME)
    batch = encode_batch(pairs, [0, 1], source_vocab, target_vocab, buckets)
    plain, learned = (build_translator(config, len(target_vocab), variant, seed=3).eval() for variant in ("none", "learned"))
    torch.manual_seed(3)
    reference = EncoderDecoder(config, target_vocab_size=len(target_vocab)).eval()
    assert all(torch.equal(a, b) for a, b in zip(plain.transformer.state_dict().values(), reference.state_dict().values()))
    assert torch.equal(plain(batch), learned(batch))
    hard = build_translator(config, len(target_vocab), "hard_mask", seed=3).eval()
    assert not torch.allclose(plain(batch), hard(batch))  # the mask closes far pairs from the start


def test_a_biased_translator_refuses_buckets_that_miss_the_padding():
    pairs = _pairs()
    source_vocab = Vocabulary.build(p.source for p in pairs)
    target_vocab = target_vocabulary([p.reference for p in pairs])
    model = build_translator(translator_config(len(source_vocab)), len(target_vocab), "learned", seed=0)
    wrong = torch.zeros(2, 10, 10, dtype=torch.long)
    batch = encode_batch(pairs, [0, 1], source_vocab, target_vocab, wrong)
    with pytest.raises(CourseInputError, match="do not line up"):
        model(batch)
    with pytest.raises(CourseInputError, match="need source buckets"):
        model(encode_batch(pairs, [0, 1], source_vocab, target_vocab))


def test_random_trees_keep_the_words_and_depend_only_on_the_seed():
    trees = _trees()
    first, again, other = random_trees(trees, 1), random_trees(dict(reversed(list(trees.items()))), 1), random_trees(trees, 2)
    assert first == again
    assert all(first[k].words == trees[k].words for k in trees)
    assert first["a"].heads != trees["a"].heads or other["a"].heads != trees["a"].heads


def test_sequence_trees_make_tree_distance_the_distance_in_words():
    trees = sequence_trees(_trees())
    buckets = source_buckets([TranslationPair("a", "".join(WORDS), "x")], [0], trees, DEFAULT_SCHEME)[0]
    word = char_word_index(WORDS)
    expected = DEFAULT_SCHEME.bucket(torch.tensor([[abs(i - j) for j in word] for i in word]))
    assert torch.equal(buckets, expected)
    assert buckets[0, 1] == 0 and buckets[0, 2] == 1 and buckets[0, 9] == DEFAULT_SCHEME.bucket(torch.tensor(6))
    assert trees["a"].words == WORDS and trees["a"].heads[:3] == (-1, 0, 1)


def test_scrambled_trees_recut_the_characters_and_report_the_boundaries_kept():
    trees = _trees()
    scrambled, kept = derived_trees("scrambled", trees, 3)
    again, _ = derived_trees("scrambled", dict(reversed(list(trees.items()))), 3)
    assert scrambled == again
    for pair_id, parse in scrambled.items():
        assert "".join(parse.words) == "".join(trees[pair_id].words)
        assert sorted(map(len, parse.words)) == sorted(map(len, trees[pair_id].words))
    assert any(scrambled[k].words != trees[k].words for k in trees)
    assert 0.0 <= kept < 1.0
    assert derived_trees("random", trees, 3)[1] is None
    with pytest.raises(CourseInputError, match="not a control's"):
        derived_trees("gold", trees, 3)


def test_the_parser_trees_real_sentences_with_spaces_and_latin_letters_over_their_characters():
    pairs = [TranslationPair("1", "Tom 很 好。", "Tom is fine ."), TranslationPair("2", "我们走吧！", "Let's go !")]
    trees = parser_trees(load_parser(), pairs)
    assert "".join(trees["1"].words) == "Tom很好。" and "".join(trees["2"].words) == "我们走吧！"
    buckets = source_buckets(pairs, [0, 1], trees, DEFAULT_SCHEME)
    assert buckets.shape == (2, 6, 6) and bool((buckets[0] >= 0).all())  # Tom很好。: 6 characters, no padding


def test_gold_trees_name_a_pair_without_a_tree(tmp_path):
    data = write_tiny_folder(tmp_path)
    with pytest.raises(CourseInputError, match=r"trees\.conllu: no tree with sent_id 'x'"):
        gold_trees(data, [TranslationPair("x", "好。", "Good .")])


def test_a_short_run_is_deterministic_and_scores_every_group(tmp_path):
    data = write_tiny_folder(tmp_path)
    trees = gold_trees(data, [*data.train, *data.dev, *data.test])
    config = TranslationTrainConfig(epochs=2, batch_size=8)
    runs = [train_translator(data.train, data.dev, data.test, "learned", 5, trees, "gold", config)[0] for _ in range(2)]
    first, second = runs
    assert [h["epoch"] for h in first.history] == [1, 2]
    assert 1 <= first.best_epoch <= 2
    assert len(first.hypotheses) == len(data.test) == len(first.statistics)
    assert set(first.scores) == {"syntax", "all"}
    assert first.hypotheses == second.hypotheses and first.history == second.history
    with pytest.raises(CourseInputError, match="needs trees"):
        train_translator(data.train, data.dev, data.test, "learned", 5, None, "gold", config)
    with pytest.raises(CourseInputError, match="reads position buckets"):
        train_translator(data.train, data.dev, data.test, "relative_position", 5, trees, "gold", config)


def test_the_command_line_offers_exactly_the_tree_sources():
    from lessons_lib.cli.translation_commands import TREE_CHOICES
    from lessons_lib.translation.trees import DERIVED_TREES, TREE_SOURCES

    assert TREE_CHOICES == TREE_SOURCES and set(DERIVED_TREES) < set(TREE_SOURCES)


class _Stop(Exception):
    """Stands for a run killed after an epoch (the end of a working session)."""


def _stop_after(epoch):
    def log(line):
        if line.startswith(f"epoch {epoch}:"):
            raise _Stop
    return log


def test_an_interrupted_run_resumes_from_its_checkpoint_to_the_same_numbers(tmp_path):
    data = write_tiny_folder(tmp_path / "pairs")
    trees = gold_trees(data, [*data.train, *data.dev, *data.test])
    config = TranslationTrainConfig(epochs=4, batch_size=8)
    identity = {"run": "learned-gold seed 5", "torch": torch.__version__}  # torch's version: not a plain str
    straight, straight_model = train_translator(data.train, data.dev, data.test, "learned", 5, trees, "gold", config)
    checkpoint = tmp_path / "run.checkpoint.pt"
    with pytest.raises(_Stop):
        train_translator(data.train, data.dev, data.test, "learned", 5, trees, "gold", config,
                         log=_stop_after(2), checkpoint=checkpoint, identity=identity)
    assert torch.load(checkpoint, weights_only=True)["epoch"] == 2
    lines = []
    resumed, resumed_model = train_translator(data.train, data.dev, data.test, "learned", 5, trees, "gold", config,
                                              log=lines.append, checkpoint=checkpoint, identity=identity)
    assert lines[0] == f"resumed from {checkpoint} after epoch 2" and [h["epoch"] for h in resumed.history] == [1, 2, 3, 4]
    assert resumed.history == straight.history and resumed.best_epoch == straight.best_epoch
    assert resumed.hypotheses == straight.hypotheses
    for name, tensor in straight_model.state_dict().items():
        assert torch.equal(tensor, resumed_model.state_dict()[name]), name


def test_a_checkpoint_of_another_run_or_one_changed_since_is_refused(tmp_path):
    data = write_tiny_folder(tmp_path / "pairs")
    config = TranslationTrainConfig(epochs=2, batch_size=8)
    checkpoint = tmp_path / "run.checkpoint.pt"
    with pytest.raises(_Stop):
        train_translator(data.train, data.dev, data.test, "none", 1, None, "none", config, log=_stop_after(1),
                         checkpoint=checkpoint, identity={"lr": 0.001, "seed": 1})
    with pytest.raises(CourseInputError, match=r"the checkpoint of another run \(lr: 0.001 in the checkpoint, 0.002 now\)"):
        train_translator(data.train, data.dev, data.test, "none", 1, None, "none", config,
                         checkpoint=checkpoint, identity={"lr": 0.002, "seed": 1})
    checkpoint.write_bytes(checkpoint.read_bytes() + b"\0")
    with pytest.raises(CourseInputError, match="not a checkpoint the course wrote, or changed since"):
        train_translator(data.train, data.dev, data.test, "none", 1, None, "none", config,
                         checkpoint=checkpoint, identity={"lr": 0.001, "seed": 1})


def test_a_checkpoint_the_course_wrote_but_cannot_load_is_one_line(tmp_path):
    from lessons_lib.files import record_written
    from lessons_lib.translation.training import CHECKPOINT_KIND

    data = write_tiny_folder(tmp_path / "pairs")
    checkpoint = tmp_path / "run.checkpoint.pt"
    record_written(checkpoint, b"not a zip archive", kind=CHECKPOINT_KIND)  # recorded as the course's, unreadable
    with pytest.raises(CourseInputError, match=r"run.checkpoint.pt: not a checkpoint this course can read \("):
        train_translator(data.train, data.dev, data.test, "none", 1, None, "none", TranslationTrainConfig(epochs=1),
                         checkpoint=checkpoint, identity={})
