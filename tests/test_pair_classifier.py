"""The pair classifier: shapes, padding invariance, the match flags and the attention maps."""

from __future__ import annotations

import pytest
import torch

from lessons_lib.errors import CourseInputError
from lessons_lib.pairs.classifier import PairClassifier, match_flags, overlap_features
from lessons_lib.pairs.config import PairClassifierConfig
from lessons_lib.pairs.encoding import collate_pairs, encode_pair
from lessons_lib.pairs.vocab import Vocabulary

VOCAB = Vocabulary.build(["什么花一年四季都开", "什么花一年四季都是开的", "电脑怎么录像？", "如何在计算机上录视频"])


def small(**options) -> PairClassifier:
    torch.manual_seed(0)
    config = PairClassifierConfig.from_options(len(VOCAB), d_model=16, n_heads=4, d_ff=32, **options)
    return PairClassifier(config).eval()


def batch_of(*pairs):
    return collate_pairs([encode_pair(VOCAB, a, b) for a, b in pairs])


@pytest.mark.parametrize("options", [{}, {"n_layers": 2, "norm_first": True}, {"match_flags": True, "overlap_features": True}])
def test_logits_shape_and_padding_does_not_change_them(options) -> None:
    model = small(**options)
    alone = model(batch_of(("电脑怎么录像？", "如何在计算机上录视频")))
    padded = model(batch_of(("电脑怎么录像？", "如何在计算机上录视频"), ("什么花一年四季都开", "什么花一年四季都是开的")))
    assert alone.shape == (1, 2) and padded.shape == (2, 2)
    assert torch.allclose(alone[0], padded[0], atol=1e-5)


def test_match_flags_and_overlap_features() -> None:
    batch = batch_of(("电脑录像", "录像"))  # [CLS] 电 脑 录 像 [SEP] 录 像 [SEP]
    flags = match_flags(batch.token_ids, batch.segment_ids, batch.key_mask)
    assert flags[0].tolist() == [False, False, False, True, True, False, True, True, False]
    features = overlap_features(batch.token_ids, batch.segment_ids, batch.key_mask)
    assert torch.allclose(features[0], torch.tensor([0.5, 1.0, 0.5]))


def test_match_flags_use_four_segment_ids() -> None:
    assert small(match_flags=True).encoder.config.n_segments == 4
    assert small().encoder.config.n_segments == 2


def test_attention_maps_for_heatmaps() -> None:
    model = small(n_layers=2)
    model.set_keep_attention(True)
    model(batch_of(("电脑怎么录像？", "如何在计算机上录视频")))
    maps = model.attention_maps()
    assert len(maps) == 2 and maps[0].shape == (1, 4, 20, 20)
    assert torch.allclose(maps[0].sum(-1), torch.ones(1, 4, 20))


def test_attention_bias_hook_reaches_the_encoder() -> None:
    class Biased(PairClassifier):
        def attention_bias(self, batch):
            return batch.extras["bias"]

    torch.manual_seed(0)
    config = PairClassifierConfig.from_options(len(VOCAB), d_model=16, n_heads=4, d_ff=32)
    plain, biased = PairClassifier(config).eval(), Biased(config).eval()
    biased.load_state_dict(plain.state_dict())
    batch = batch_of(("电脑怎么录像？", "如何在计算机上录视频"))
    batch.extras["bias"] = torch.zeros(1, 1, 20, 20)
    assert torch.allclose(plain(batch), biased(batch))
    batch.extras["bias"] = torch.randn(1, 1, 20, 20) * 5
    assert not torch.allclose(plain(batch), biased(batch))


def test_bad_input() -> None:
    with pytest.raises(CourseInputError, match="PairBatch"):
        small()(torch.zeros(1, 5, dtype=torch.long))
    with pytest.raises(CourseInputError, match="unknown"):
        PairClassifierConfig.from_dict({"encoder": {"vocab_size": 10}, "width": 3})
