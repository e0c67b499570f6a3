"""Attention itself (lessons 01–03).

- :mod:`~lessons_lib.attention.functional` — scores ``QKᵀ/√d_k``, boolean masks (``True`` =
  may attend), the masked softmax, scaled dot-product attention, and the score functions of
  encoder–decoder attention (dot, bilinear, additive).
- :mod:`~lessons_lib.attention.multihead` — splitting and merging heads, multi-head attention
  with an additive ``attn_bias`` hook, weight copying from ``torch.nn.MultiheadAttention``, and
  the choice of computing it from scratch or with torch's fused function (:data:`IMPLEMENTATIONS`).
"""

# How multi-head attention is computed: "course" (from scratch), "sdpa" (torch's fused
# scaled_dot_product_attention). Here, not in multihead.py, so the configs read it without torch.
IMPLEMENTATIONS = ("course", "sdpa")
