"""spaCy's English prefix, suffix, infix and URL rules over one whitespace-free chunk, as spacy.io documents its
tokenizer ("How spaCy's tokenizer works"): the chunk loses prefixes and suffixes until a special case or nothing
is left, then the rest is a URL, a special case or is cut at infixes. The rule tables were measured from spaCy
(``english_tables.py``)."""

from __future__ import annotations

import re

from pipeline.filter import english_tables as T

_PREFIX = re.compile(r"(?:\.\.+|US\$|C\$|A\$|\+(?![0-9])|[" + T.PREFIX_CHARS + "])")
_INFIX = re.compile(
    r"\.\.+|…|[" + T.ICONS + r"]|(?<=[0-9])[+\-\*^](?=[0-9-])"
    + "|(?<=[" + T.LOWER + T.QUOTES + r"])\.(?=[" + T.UPPER + T.QUOTES + "])"
    + "|(?<=[" + T.ALPHA + "]),(?=[" + T.ALPHA + "])"
    + "|(?<=[" + T.ALPHA + "0-9])(?:-|–|—|--|---|——|~)(?=[" + T.ALPHA + "])"
    + "|(?<=[" + T.ALPHA + "0-9])[:<>=/](?=[" + T.ALPHA + "])"
)  # fmt: skip
_INFIX_CHAR = re.compile(r"[.…+\-*^,–—~:<>=/" + T.ICONS + "]")  # a character every infix rule needs


def _expand(ranges: str) -> frozenset[str]:
    """The characters of a class body made of ``\\uXXXX`` escapes and ranges."""
    out: set[str] = set()
    for first, last in re.findall(r"\\[uU]([0-9a-fA-F]+)(?:-\\[uU]([0-9a-fA-F]+))?", ranges):
        out.update(map(chr, range(int(first, 16), int(last or first, 16) + 1)))
    return frozenset(out)


# the last character of any suffix: a suffix character, a dot, 's / 'S, a plus, or ends a currency or unit
_AFTER_DIGIT = [re.sub(r"\\(.)", r"\1", x) for x in (*T.CURRENCY, *T.UNITS)]  # unescaped
_SUFFIX_LAST = _expand(T.SUFFIX_CHARS) | {".", "s", "S", "+"} | {x[-1] for x in _AFTER_DIGIT}
_AFTER_DIGIT_BY_LAST: dict[str, list[str]] = {}
for _tail in sorted(set(_AFTER_DIGIT), key=len, reverse=True):
    _AFTER_DIGIT_BY_LAST.setdefault(_tail[-1], []).append(_tail)
_SUFFIX_ONE = _expand(T.SUFFIX_CHARS)
_SUFFIX_TWO = frozenset({"'s", "'S", "’s", "’S", "……"})
_DOT_AFTER = re.compile("[" + T.DOT_AFTER + "]")  # classes of about 10^5 characters: matched, not expanded
_UPPER2 = re.compile("[" + T.UPPER + "]{2}")
_DIGITS = frozenset("0123456789")
_PREFIX_FIRST = _expand(T.PREFIX_CHARS) | {".", "U", "C", "A", "+"}
_OCTET = r"(?:1?\d{1,2}|2[0-4]\d|25[0-5])"
_HOST_CHAR = "A-Za-z0-9\u00a1-\uffff"
_URL = re.compile(
    r"(?u)^(?:[\w+\-.]{2,}://)?"  # scheme
    r"(?:\S+(?::\S*)?@)?"  # user[:password]@
    r"(?:"
    r"(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})"
    r"(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})"  # no private or loopback address
    rf"(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.{_OCTET}){{2}}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))"
    rf"|(?:(?:[{_HOST_CHAR}][{_HOST_CHAR}_-]{{0,62}})?[{_HOST_CHAR}]\.)+(?:[{T.LOWER}]{{2,63}})"  # host.tld
    r")(?::\d{2,5})?(?:[/?#]\S*)?$"
)
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
        elif "." in s and _URL.match(s):  # a URL has a dot before its TLD or in its IP address
            out.append(s)
        else:
            start = 0
            for m in _INFIX.finditer(s) if _INFIX_CHAR.search(s) else ():
                if m.start() == 0:
                    continue
                if m.start() != start:
                    out.append(s[start : m.start()])
                if m.start() != m.end():
                    out.append(m.group())
                start = m.end()
            if s[start:]:
                out.append(s[start:])
    for p in reversed(suffixes):
        out.extend(SPECIALS.get(p, (p,)) if specials else (p,))
    return out
