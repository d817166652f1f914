"""spaCy's English prefix, suffix, infix and URL rules over one whitespace-free chunk, as spacy.io documents its
tokenizer ("How spaCy's tokenizer works"): the chunk loses prefixes and suffixes until a special case or nothing
is left, then the rest is a URL, a special case or is cut at infixes. The rule tables were measured from spaCy
(``english_tables.py``)."""

from __future__ import annotations

import re

from pipeline.text.english import english_tables as T
from pipeline.text.english.char_classes import ASTRAL, char_class, char_class_parts, expand

_PREFIX = re.compile(r"(?:\.\.+|US\$|C\$|A\$|\+(?![0-9])|" + char_class(T.PREFIX_CHARS) + ")")
_ALPHA = char_class(T.ALPHA)
_ALNUM = char_class(T.ALPHA, extra="0-9")
_ICONS_LOW, _ICONS_HIGH = char_class_parts(T.ICONS)
# spaCy's infixes, in its order: dots, an ellipsis, an icon, an operator between digits, a dot between a lower
# and an upper case letter, a comma, a hyphen or dash, or one of :<>=/ between letters. Each alternative starts
# with the characters it consumes (its lookbehind follows them) so that ``re`` skips a non-infix at once.
_INFIXES = [
    r"\.\.+",
    "…",
    _ICONS_LOW,
    f"{ASTRAL}(?<={_ICONS_HIGH})",
    r"[+\-\*^](?<=[0-9][+\-\*^])(?=[0-9-])",
    r"\.(?<=" + char_class(T.LOWER, T.QUOTES) + r"\.)(?=" + char_class(T.UPPER, T.QUOTES) + ")",
    ",(?<=" + _ALPHA + ",)(?=" + _ALPHA + ")",
    *(f"{dash}(?<={_ALNUM}{dash})(?={_ALPHA})" for dash in ("-", "–", "—", "--", "---", "——", "~")),
    "[:<>=/](?<=" + _ALNUM + "[:<>=/])(?=" + _ALPHA + ")",
]
_INFIX_SPLIT = re.compile("(" + "|".join(_INFIXES) + ")")  # the alternatives have no group of their own
# the characters an infix can start with below U+10000 (an astral one may start an icon): none of them, no infix
_INFIX_FIRST = frozenset(".…+-*^,–—~:<>=/") | frozenset(c for c in expand(T.ICONS) if c <= "\uffff")


# the last character of any suffix: a suffix character, a dot, 's / 'S, a plus, or ends a currency or unit
_AFTER_DIGIT = [re.sub(r"\\(.)", r"\1", x) for x in (*T.CURRENCY, *T.UNITS)]  # unescaped
_SUFFIX_LAST = expand(T.SUFFIX_CHARS) | {".", "s", "S", "+"} | {x[-1] for x in _AFTER_DIGIT}
_AFTER_DIGIT_BY_LAST: dict[str, list[str]] = {}
for _tail in sorted(set(_AFTER_DIGIT), key=len, reverse=True):
    _AFTER_DIGIT_BY_LAST.setdefault(_tail[-1], []).append(_tail)
_SUFFIX_ONE = expand(T.SUFFIX_CHARS)
_SUFFIX_TWO = frozenset({"'s", "'S", "’s", "’S", "……"})
_DOT_AFTER = re.compile(char_class(T.DOT_AFTER))  # classes of about 10^5 characters: matched, not expanded
_UPPER2 = re.compile(char_class(T.UPPER) + "{2}")
_DIGITS = frozenset("0123456789")
_PREFIX_FIRST = expand(T.PREFIX_CHARS) | {".", "U", "C", "A", "+"}
_OCTET = r"(?:1?\d{1,2}|2[0-4]\d|25[0-5])"
_HOST_CHAR = "A-Za-z0-9\u00a1-\uffff"
_URL = re.compile(
    r"(?u)^(?:[\w+\-.]{2,}://)?"  # scheme
    r"(?:\S+(?::\S*)?@)?"  # user[:password]@
    r"(?:"
    r"(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})"
    r"(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})"  # no private or loopback address
    rf"(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.{_OCTET}){{2}}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))"
    rf"|(?:(?:[{_HOST_CHAR}][{_HOST_CHAR}_-]{{0,62}})?[{_HOST_CHAR}]\.)+(?:{char_class(T.LOWER)}{{2,63}})"  # host.tld
    r")(?::\d{2,5})?(?:[/?#]\S*)?$"
)
# what a URL must hold (cheap to search for): its host's dot and top-level domain, or its IP address's last digit,
# then a port, a path, a query, a fragment or the end
_URL_HINT = re.compile(r"(?:\." + char_class(T.LOWER) + "{2,}|[0-9])(?:[:/?#]|$)")
SPECIALS: dict[str, tuple[str, ...]] = {c: (c,) for c in T.SPECIAL_SPACES}
SPECIALS.update({"".join(parts): tuple(parts) for parts in map(str.split, T.SPECIALS)})


def _suffix_length(s: str) -> int:
    """Length of the suffix spaCy's suffix search finds, or 0. Every rule is anchored at the end, so its
    leftmost match is the longest rule that matches: one character of a class, a dot after a letter or
    digit (or two capitals, or a temperature), ``'s``, a run of dots, or a unit or currency after a digit."""
    n = len(s)
    if not n or s[-1] not in _SUFFIX_LAST:
        return 0
    if s.endswith(".."):
        return n - len(s.rstrip("."))
    best = 0
    last = s[-1]
    if last in _SUFFIX_ONE:
        best = 1
    elif last == ".":
        before = s[-2:-1]
        if before and (
            _DOT_AFTER.match(before)
            or (n >= 3 and _UPPER2.match(s, n - 3))
            or (n >= 3 and s[-3] == "°" and before in "FfCcKk")
        ):
            best = 1
    elif last == "+" and n >= 2 and s[-2] in _DIGITS:
        best = 1
    if n >= 2 and s[-2:] in _SUFFIX_TWO:
        best = 2
    for tail in _AFTER_DIGIT_BY_LAST.get(last, ()):  # longest first
        k = len(tail)
        if k <= best:
            break
        if n > k and s.endswith(tail) and s[-k - 1] in _DIGITS:
            best = k
            break
    return best


def affixes(chunk: str, specials: bool) -> list[str]:
    """Tokens of one whitespace-free chunk by the prefix / suffix / URL / infix rules."""
    prefixes: list[str] = []
    suffixes: list[str] = []
    s = chunk
    last = -1
    stop = False
    while s and len(s) != last and not stop:
        if specials and s in SPECIALS:
            break
        last = len(s)
        m = _PREFIX.match(s) if s[0] in _PREFIX_FIRST else None
        pre = m.end() if m else 0
        if pre and specials and s[pre:] in SPECIALS:
            prefixes.append(s[:pre])
            s = s[pre:]
            break
        suf = _suffix_length(s[pre:])
        if suf and specials and s[: len(s) - suf] and s[: len(s) - suf] in SPECIALS:
            suffixes.append(s[len(s) - suf :])
            s = s[: len(s) - suf]
            break
        if pre and suf and pre + suf <= len(s):
            prefixes.append(s[:pre])
            suffixes.append(s[len(s) - suf :])
            s = s[pre : len(s) - suf]
        elif pre:
            prefixes.append(s[:pre])
            s = s[pre:]
        elif suf:
            suffixes.append(s[len(s) - suf :])
            s = s[: len(s) - suf]
        stop = bool(s) and s in SPECIALS
    out: list[str] = []
    for p in prefixes:
        out.extend(SPECIALS.get(p, (p,)) if specials else (p,))
    if s:
        if specials and s in SPECIALS:
            out.extend(SPECIALS[s])
        else:
            _core(s, out)
    for p in reversed(suffixes):
        out.extend(SPECIALS.get(p, (p,)) if specials else (p,))
    return out


def _core(s: str, out: list[str]) -> None:
    """Append the tokens of what the affix rules left: a URL whole, else cut at infixes (an infix at the start
    stays with the piece after it)."""
    if _INFIX_FIRST.isdisjoint(s) and (s.isascii() or max(s) <= "\uffff"):  # no dot (no URL), no infix
        out.append(s)
        return
    if "." in s and _URL_HINT.search(s) and _URL.match(s):  # a URL has a dot before its TLD or in its IP address
        out.append(s)
        return
    parts = _INFIX_SPLIT.split(s)  # pieces and infixes alternate, empty pieces included
    if len(parts) == 1:
        out.append(s)
        return
    if not parts[0]:
        parts[1:3] = [parts[1] + parts[2]]
    out.extend(filter(None, parts))


# The shortcut: single-character prefixes, then a core, then single-character suffixes, e.g. ``("word"),`` or
# ``f(x)``. spaCy strips such affixes one character at a time (no longer prefix or suffix rule ends or starts in
# them: no dot or ``+`` among the prefixes, no dot, ``$``, ``+`` or ``…`` among the suffixes, no unit or currency
# ends in one), so the tokens are each affix
# character and the core's, unless the core has an affix of its own or a special case lies among the strings
# the stripping passes through (then the full rules run).
_PREFIX_ONE = expand(T.PREFIX_CHARS)
_LEADING = re.compile(char_class(T.PREFIX_CHARS) + "*")
_TRAILING = _SUFFIX_ONE - {"…"}  # "……" is one suffix
assert not _PREFIX_ONE & set(".+UCA") and not _TRAILING & set(".$+")
assert not [x for x in _AFTER_DIGIT if x[-1] in _TRAILING]


def _special_cores() -> frozenset[str]:
    """Every core a special case has between single-character affixes, with at least one affix."""
    cores: set[str] = set()
    for text in SPECIALS:
        lead = _LEADING.match(text).end()  # type: ignore[union-attr]  # matches the empty string at least
        trail = len(text)
        while trail > 0 and text[trail - 1] in _TRAILING:
            trail -= 1
        for a in range(lead + 1):
            for b in range(max(trail, a + 1), len(text) + 1):
                if a or b < len(text):
                    cores.add(text[a:b])
    return frozenset(cores)


_SPECIAL_CORES = _special_cores()


_ALWAYS_CHECKED = frozenset(".+…")  # ends every dot rule, the plus after a digit, "……"
_TAIL_LAST = frozenset(x[-1] for x in _AFTER_DIGIT)
_ASCII_DIGIT = re.compile("[0-9]")


def _may_end_in_suffix(chunk: str, end: int) -> bool:
    """False when no suffix rule can match ``chunk[a:end]`` for any ``a`` whose last character is no affix
    character: neither a dot, plus or ellipsis, nor ``'s``, nor a unit or currency with a digit before it."""
    last = chunk[end - 1]
    if last not in _SUFFIX_LAST or last in _ALWAYS_CHECKED:
        return last in _ALWAYS_CHECKED
    if last in "sS" and chunk[end - 2 : end - 1] in ("'", "’"):
        return True
    return last in _TAIL_LAST and _ASCII_DIGIT.search(chunk, 0, end) is not None


def _lead_trail(chunk: str) -> tuple[int, int]:
    """The end of the chunk's single-character prefixes and the start of its single-character suffixes after them."""
    lead = _LEADING.match(chunk).end()  # type: ignore[union-attr]  # matches the empty string at least
    trail = len(chunk)
    while trail > lead and chunk[trail - 1] in _TRAILING:
        trail -= 1
    return lead, trail


def stripped_affixes(chunk: str) -> list[str] | None:
    """``affixes(chunk, specials=True)`` for a chunk of single-character affixes around a core with none, or
    None for any other chunk."""
    lead, trail = _lead_trail(chunk)
    return None if lead == trail else _stripped(chunk, lead, trail)


def _stripped(chunk: str, lead: int, trail: int) -> list[str] | None:
    """:func:`stripped_affixes` of a chunk whose affixes end at ``lead`` and start at ``trail`` (``lead < trail``)."""
    core = chunk[lead:trail]
    if core in _SPECIAL_CORES or (core[0] in _PREFIX_FIRST and _PREFIX.match(core)):
        return None
    if _may_end_in_suffix(chunk, trail) and (
        _suffix_length(core) or (lead and any(_suffix_length(chunk[a:trail]) for a in range(lead)))
    ):
        return None  # a suffix of the core's own (one with left context such as 's may reach into the prefixes)
    out = list(chunk[:lead])
    if core in SPECIALS:
        out.extend(SPECIALS[core])
    else:
        _core(core, out)
    out.extend(chunk[trail:])
    return out


# The cheapest shortcut, tried first: single-character affixes around a core of letters (or of ASCII digits), or a
# word of letters and one final dot. No prefix, suffix or infix rule matches inside such a core (no affix or infix
# character is a letter or a digit; a unit or currency suffix needs a digit before letters, ``'s`` an apostrophe),
# so only the affixes and special cases matter; a core that is part of a special case takes the paths above.


def plain_affixes(chunk: str) -> list[str] | None:
    """``affixes(chunk, specials=True)`` for single-character affixes around a core of letters or ASCII digits and
    for letters followed by one dot; None for any other chunk."""
    if chunk[-1] == ".":
        return _word_and_dot(chunk)
    lead, trail = _lead_trail(chunk)
    return None if trail == lead else _plain(chunk, lead, trail)


def _word_and_dot(chunk: str) -> list[str] | None:
    """:func:`plain_affixes` of a chunk ending in a dot: letters and the dot, else None."""
    word = chunk[:-1]
    if not word.isalpha():
        return None
    n = len(chunk)
    if _DOT_AFTER.match(word[-1]) or (n >= 3 and _UPPER2.match(chunk, n - 3)):  # the dot is a suffix
        return [*SPECIALS.get(word, (word,)), "."]
    return [chunk]


def _plain(chunk: str, lead: int, trail: int) -> list[str] | None:
    """:func:`plain_affixes` of a chunk not ending in a dot whose affixes end at ``lead`` and start at ``trail``
    (``lead < trail``)."""
    core = chunk[lead:trail]
    if not (core.isalpha() or (core.isdigit() and core.isascii())):
        return None
    if core in _SPECIAL_CORES or (lead and core in ("s", "S") and chunk[lead - 1] in "'’"):
        return None
    return [*chunk[:lead], *SPECIALS.get(core, (core,)), *chunk[trail:]]


def shortcut_affixes(chunk: str) -> list[str] | None:
    """``plain_affixes(chunk) or stripped_affixes(chunk)``, the affixes found once."""
    if chunk[-1] == ".":
        found = _word_and_dot(chunk)
        if found:
            return found
        lead, trail = _lead_trail(chunk)  # "." is no single-character suffix: plain_affixes has nothing more
        return None if lead == trail else _stripped(chunk, lead, trail)
    lead, trail = _lead_trail(chunk)
    if lead == trail:
        return None
    return _plain(chunk, lead, trail) or _stripped(chunk, lead, trail)
