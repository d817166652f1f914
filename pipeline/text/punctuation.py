"""The punctuation character sets of datatrove 0.10.1's rules (``datatrove.utils.text``), defined here.

``TERMINAL_PUNCTUATION`` (FineWeb's line endings) is Unicode's Sentence_Terminal property as of Unicode 15.0
together with three Khmer punctuation signs (U+17D6, U+17D9, U+17DA); it is written out as code point ranges so that it
does not move with the Unicode data of the installed Python. ``PUNCTUATION_SET`` (a Gopher word made only of
these is a symbol, not a word) is ASCII punctuation, a few dozen typographic and full-width marks, the C0 and
C1 control characters except tab and newline, and the terminal punctuation.
"""

from __future__ import annotations

import string

_TERMINAL_RANGES: tuple[int | tuple[int, int], ...] = (
    0x0021, 0x002E, 0x003F, 0x0589, (0x061D, 0x061F), 0x06D4, (0x0700, 0x0702), 0x07F9, 0x0837, 0x0839,
    (0x083D, 0x083E), (0x0964, 0x0965), (0x104A, 0x104B), 0x1362, (0x1367, 0x1368), 0x166E, (0x1735, 0x1736),
    (0x17D4, 0x17D6), (0x17D9, 0x17DA), 0x1803, 0x1809, (0x1944, 0x1945), (0x1AA8, 0x1AAB), (0x1B5A, 0x1B5B),
    (0x1B5E, 0x1B5F), (0x1B7D, 0x1B7E), (0x1C3B, 0x1C3C), (0x1C7E, 0x1C7F), (0x203C, 0x203D), (0x2047, 0x2049),
    0x2E2E, 0x2E3C, (0x2E53, 0x2E54), 0x3002, 0xA4FF, (0xA60E, 0xA60F), 0xA6F3, 0xA6F7, (0xA876, 0xA877),
    (0xA8CE, 0xA8CF), 0xA92F, (0xA9C8, 0xA9C9), (0xAA5D, 0xAA5F), (0xAAF0, 0xAAF1), 0xABEB, 0xFE52, (0xFE56, 0xFE57),
    0xFF01, 0xFF0E, 0xFF1F, 0xFF61, (0x10A56, 0x10A57), (0x10F55, 0x10F59), (0x10F86, 0x10F89), (0x11047, 0x11048),
    (0x110BE, 0x110C1), (0x11141, 0x11143), (0x111C5, 0x111C6), 0x111CD, (0x111DE, 0x111DF), (0x11238, 0x11239),
    (0x1123B, 0x1123C), 0x112A9, (0x1144B, 0x1144C), (0x115C2, 0x115C3), (0x115C9, 0x115D7), (0x11641, 0x11642),
    (0x1173C, 0x1173E), 0x11944, 0x11946, (0x11A42, 0x11A43), (0x11A9B, 0x11A9C), (0x11C41, 0x11C42),
    (0x11EF7, 0x11EF8), (0x11F43, 0x11F44), (0x16A6E, 0x16A6F), 0x16AF5, (0x16B37, 0x16B38), 0x16B44, 0x16E98,
    0x1BC9F, 0x1DA88,
)  # fmt: skip


def _expand(ranges: tuple[int | tuple[int, int], ...]) -> frozenset[str]:
    chars: set[str] = set()
    for item in ranges:
        first, last = item if isinstance(item, tuple) else (item, item)
        chars.update(map(chr, range(first, last + 1)))
    return frozenset(chars)


TERMINAL_PUNCTUATION: frozenset[str] = _expand(_TERMINAL_RANGES)

# typographic quotes, dashes and brackets, CJK and full-width marks (U+FF11 FULLWIDTH DIGIT ONE among them)
_MARKS = "«´»–—’“”„…∶━►、。〈〉《》「」【】！％（），．１：；？～"
_CONTROLS = "".join(chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)])
PUNCTUATION: str = string.punctuation + _MARKS + _CONTROLS
PUNCTUATION_SET: frozenset[str] = frozenset(PUNCTUATION) | TERMINAL_PUNCTUATION
