"""A few training steps of the course's models in the numeric mode; prints a digest of the weights.

Run by ``tests/test_numerics.py`` on this CPU and on emulated CPUs with other vector units
(``qemu-x86_64 -cpu …``). Two lines: the course's path (``course``) and, as a control, the same
steps with torch's ``F.gelu`` and AdamW's default path plus those two kernels on their own
(``torch defaults``), which do depend on the CPU's vector units.
"""

import hashlib
import sys

from lessons_lib.numerics import pin_numerics

pin_numerics()

import torch  # noqa: E402  (after the mode is set)
from torch.nn import functional as F  # noqa: E402

from lessons_lib.pairs.classifier import PairClassifier  # noqa: E402
from lessons_lib.pairs.config import PairClassifierConfig, TrainConfig  # noqa: E402
from lessons_lib.pairs.data import load_lcqmc  # noqa: E402
from lessons_lib.pairs.encoding import make_batches  # noqa: E402
from lessons_lib.training.trainer import build_optimizer, parameter_groups  # noqa: E402
from lessons_lib.pairs.vocab import Vocabulary  # noqa: E402
from lessons_lib.syntax.buckets import BucketScheme  # noqa: E402
from lessons_lib.syntax_bias.predictor import DistancePredictor  # noqa: E402
import lessons_lib.transformer.encoder as encoder_module  # noqa: E402


def digest(tensors) -> str:
    return hashlib.sha256(b"".join(t.detach().contiguous().numpy().tobytes() for t in tensors)).hexdigest()[:16]


def train_steps(torch_defaults: bool) -> str:
    """Three AdamW steps of lesson 06's classifier (dropout on) and one backward pass of lesson 09's predictor."""
    if torch_defaults:
        encoder_module._ACTIVATIONS["gelu"] = F.gelu
    train = load_lcqmc(None).train.examples[:96]
    vocab = Vocabulary.build(text for e in train for text in (e.text_a, e.text_b))
    config = TrainConfig(epochs=1, batch_size=32, lr=1e-3, weight_decay=0.01, clip_norm=1.0, seed=0, max_len=64)
    torch.manual_seed(0)
    model = PairClassifier(PairClassifierConfig.from_options(len(vocab), d_model=64, n_heads=4, n_layers=1,
                                                             d_ff=256, dropout=0.1)).train()
    optimizer = (torch.optim.AdamW(parameter_groups(model, config.weight_decay, config.lr), lr=config.lr)
                 if torch_defaults else build_optimizer(model, config))
    for batch in make_batches(train, vocab, config.batch_size, shuffle=True, seed=0):
        optimizer.zero_grad()
        F.cross_entropy(model(batch), batch.labels).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_norm)
        optimizer.step()
    predictor = DistancePredictor(BucketScheme(), d_model=64)
    embeddings = torch.randn(4, 10, 64, generator=torch.Generator().manual_seed(0))
    predictor(embeddings, torch.ones(4, 10, dtype=torch.bool)).square().mean().backward()
    tensors = [*model.parameters(), *(p.grad for p in predictor.parameters())]
    if torch_defaults:  # the two kernels the course avoids, on their own
        x = torch.randn(8, 12, 64, generator=torch.Generator().manual_seed(0))
        tensors += [F.gelu(x), x.abs().sqrt()]
    return digest(tensors)


if __name__ == "__main__":
    print("course", train_steps(torch_defaults=False))
    print("torch defaults", train_steps(torch_defaults=True))
    sys.stdout.flush()
