"""The course's packaged CJK font, and subsets of it that carry only the characters a page needs.

The font is the Simplified Chinese face of Noto Sans CJK (SIL Open Font License 1.1) from the
``manimgx-fonts-cjk`` package, which the course's setup installs from PyPI. A subset holding
just the characters of a drawing or of a web page is small enough to embed or serve with it,
so a reader without a CJK font still sees the words: lesson 07's dependency drawings embed one
(:mod:`lessons_lib.course.plotting`), the course's website serves one
(:mod:`lessons_lib.website.site`). Imports no matplotlib or torch.
"""

from __future__ import annotations

import io
from pathlib import Path

BUNDLED_FONT_NAME = "Noto Sans CJK SC"
BUNDLED_FACE_INDEX = 2  # faces of the collection: JP, KR, SC, TC, HK


def bundled_font_file() -> Path:
    """The packaged Noto Sans CJK collection (a variable-weight ``.ttc``)."""
    import manimgx_fonts_cjk

    return Path(manimgx_fonts_cjk.__file__).parent / "NotoSansCJK-VF.otf.ttc"


def cjk_characters(text: str) -> str:
    """The distinct CJK and full-width characters of ``text`` (from U+2E80 on), sorted."""
    return "".join(sorted({c for c in text if ord(c) > 0x2E7F}))


def font_subset(text: str, flavor: str | None = None) -> bytes:
    """The packaged font's SC face cut down to the characters of ``text``.

    Args:
        text: the characters to keep (repeats and order do not matter).
        flavor: ``None`` for plain OpenType, or ``"woff"`` (zlib-compressed, for the web).

    Returns:
        The font file's bytes; the same characters give the same bytes, run after run.
    """
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.layout_features, options.name_IDs, options.hinting = [], [1, 2], False
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text)
    # No timestamp: the same characters give the same bytes, run after run.
    font = TTFont(bundled_font_file(), fontNumber=BUNDLED_FACE_INDEX, recalcTimestamp=False)
    subsetter.subset(font)
    font.flavor = flavor
    buffer = io.BytesIO()
    font.save(buffer)
    return buffer.getvalue()
