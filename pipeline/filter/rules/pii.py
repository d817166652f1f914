"""PII redaction (docs/stages.md, Filters): e-mail and IP addresses replaced as datatrove 0.10.1's
``PIIFormatter`` replaces them, and optionally phone numbers; it never drops a document.

Matches and replacements are datatrove's: e-mail addresses (an RFC 5322-style local part, ``@``, a dotted host
name or a bracketed IPv4 literal) first, then dotted IPv4 addresses (no IPv6) in the text that results, only
those Python's ``ipaddress`` accepts and, by default, only public (``is_global``) ones. Each kind cycles through
its replacement strings; the cycle restarts with every document, so the output does not depend on partitioning
(datatrove's counter runs across a worker's documents: ours equals a fresh ``PIIFormatter`` per document).
With ``remove_phones``, numbers that ``phonenumbers.PhoneNumberMatcher`` finds (leniency VALID, numbers without
a country code read as ``phone_region``) are then replaced by ``phone_replacement``, cycled the same way.

Speed: every e-mail match lies in a run of the characters an address may contain around an ``@``, and every IP
match in a run of digits and dots; documents without ``@`` or a dotted quad (found over the whole batch by
Arrow's compute kernels) are not touched, and in the others the regular expressions run on those runs alone.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.filter.base import BaseFilter
from pipeline.filter.options import FilterOptions, OptionError, made
from pipeline.filter.outcome import rewritten
from pipeline.filter.registry import register
from pipeline.stage_api.filter import FilterResult
from pipeline.text.replace_rows import replace_rows

NAME = "pii"
EMAILS, IPS, PHONES = "pii.emails", "pii.ips", "pii.phones"  # measures: replacements per document

DEFAULT_EMAILS = ("email@example.com", "firstname.lastname@example.org")  # datatrove's example.com/org
DEFAULT_IPS = ("22.214.171.124", "126.96.36.199", "188.8.131.52", "184.108.40.206", "220.127.116.11", "18.104.22.168")
DEFAULT_PHONES = ("+1 201-555-0123",)  # 555-01xx is reserved for fiction in the North American plan

# e-mail: atoms of RFC 5322's atext joined by dots, "@", then dotted labels or a bracketed IPv4 literal whose last
# part may be "tag:" (datatrove keeps that truncated form of the RFC's general literal)
_ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~-"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
_LITERAL = rf"\[(?:{_OCTET}\.){{3}}(?:{_OCTET}|[A-Za-z0-9-]*[A-Za-z0-9]:)\]"
EMAIL = re.compile(rf"\b[{_ATEXT}]+(?:\.[{_ATEXT}]+)*@(?:(?:{_LABEL}\.)+{_LABEL}|{_LITERAL})")
IP = re.compile(rf"(?:{_OCTET}\.){{3}}{_OCTET}")
# the characters an e-mail match can contain, and a run of them; a dotted quad (any IP match contains one)
_EMAIL_RUN = re.compile(rf"[.@\[\]:{_ATEXT}]*")
_IP_CHARS = frozenset("0123456789.")
_IP_RUN = re.compile(r"[0-9.]*")
# what every IP match contains (from its first dot on); starting with a literal makes both RE2 and Python's re
# search several times faster
_QUAD = r"\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]"
_QUAD_RE = re.compile(_QUAD)


class _Cycle:
    """Replacement strings used in turn, restarted per document; counts what it replaced."""

    def __init__(self, replacements: tuple[str, ...], valid: Callable[[str], bool] | None = None) -> None:
        self.replacements, self.valid, self.at, self.count = replacements, valid, 0, 0

    def restart(self) -> None:
        self.at = self.count = 0

    def __call__(self, match: re.Match[str]) -> str:
        found = match.group(0)
        if self.valid is not None and not self.valid(found):
            return found
        return self.take()

    def take(self) -> str:
        """The next replacement string (one more replaced)."""
        self.count += 1
        out = self.replacements[self.at]
        self.at = (self.at + 1) % len(self.replacements)
        return out


def _replacements(value: tuple[str, ...] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@dataclass(frozen=True)
class PIIOptions(FilterOptions):
    """The options of :class:`PIIFilter`: datatrove 0.10.1's ``PIIFormatter`` arguments, and phone numbers."""

    remove_emails: bool = True
    """Replace e-mail addresses."""
    remove_ips: bool = True
    """Replace IPv4 addresses."""
    only_remove_public_ips: bool = True
    """Replace only public (``is_global``) IP addresses."""
    email_replacement: tuple[str, ...] | str = DEFAULT_EMAILS
    """A string, or a non-empty list of strings used in turn, for e-mail addresses."""
    ip_replacement: tuple[str, ...] | str = DEFAULT_IPS
    """A string, or a non-empty list of strings used in turn, for IP addresses."""
    remove_phones: bool = False
    """Replace phone numbers (``phonenumbers``, leniency VALID)."""
    phone_replacement: tuple[str, ...] | str = DEFAULT_PHONES
    """A string, or a non-empty list of strings used in turn, for phone numbers."""
    phone_region: str = "US"
    """The region (two letters ``phonenumbers`` knows) of numbers written without a country code."""

    def check(self) -> None:
        for option in ("email_replacement", "ip_replacement", "phone_replacement"):
            if not _replacements(getattr(self, option)):
                raise OptionError(option, "must be a string or a non-empty list of strings, got []")
        region = self.phone_region
        if not (len(region) == 2 and region.isalpha()):
            raise OptionError("phone_region", f"must be a two-letter region code, got {region!r}")
        import phonenumbers

        if region.upper() not in phonenumbers.SUPPORTED_REGIONS:
            raise OptionError("phone_region", f"{region!r} is not a region phonenumbers knows")


@register(NAME)
class PIIFilter(BaseFilter):
    """Replaces e-mail and public IP addresses (and optionally phone numbers) in every document; keeps all."""

    name = NAME
    Options = PIIOptions

    def __init__(self, options: PIIOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(PIIOptions, options, kwargs, NAME)
        self.remove_emails, self.remove_ips = o.remove_emails, o.remove_ips
        self.only_remove_public_ips, self.remove_phones = o.only_remove_public_ips, o.remove_phones
        self.email_replacement = _replacements(o.email_replacement)
        self.ip_replacement = _replacements(o.ip_replacement)
        self.phone_replacement = _replacements(o.phone_replacement)
        # an e-mail replacement can only make a new IP match if it holds a dotted quad or starts or ends with one's
        # characters; otherwise a text without a dotted quad has none after the e-mails are replaced either
        self._emails_may_add_ips = any(
            not r or _QUAD_RE.search(r) or r[:1] in _IP_CHARS or r[-1:] in _IP_CHARS for r in self.email_replacement
        )
        self.phone_region = o.phone_region.upper()
        self._seen_ips: dict[str, bool] = {}  # IP string -> replaced (ipaddress's verdict, a pure function)

    def _valid_ip(self, found: str) -> bool:
        valid = self._seen_ips.get(found)
        if valid is None:
            try:
                address = ipaddress.ip_address(found)
                valid = address.is_global or not self.only_remove_public_ips
            except ValueError:  # e.g. an octet with a leading zero
                valid = False
            if len(self._seen_ips) >= 100_000:
                self._seen_ips.clear()
            self._seen_ips[found] = valid
        return valid

    DECIDES = ()  # it drops nothing (but a text it rewrote to blank, docs/stages.md, Re-deciding from the signals)

    def signal_types(self) -> dict[str, pa.DataType]:
        """Replacements per document of each kind switched on, and whether it rewrote the text (docs/stages.md,
        Signals)."""
        kinds = (("emails", self.remove_emails), ("ips", self.remove_ips), ("phones", self.remove_phones))
        return {**{kind: pa.int64() for kind, on in kinds if on}, "rewritten": pa.int8()}

    def decide(self, signals: Mapping[str, pa.Array], n: int) -> FilterResult:
        """Every document kept, its replacements as measures (the text is rewritten where it is read)."""
        measures = {key: np.full(n, np.nan) for key in (EMAILS, IPS, PHONES)}
        for key in measures:
            column = signals.get(key.split(".", 1)[1])
            if column is not None:
                measures[key] = np.asarray(column.cast(pa.float64()).to_numpy(zero_copy_only=False), np.float64)
        return FilterResult(np.ones(n, dtype=bool), [None] * n, [None] * n, measures=measures)

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """The rewritten text of every document, with the replacements per document in ``measures``."""
        column = batch.column("text")
        n = len(column)
        counts = {key: np.full(n, np.nan) for key in (EMAILS, IPS, PHONES)}
        touch = np.zeros(n, dtype=bool)
        has_at = has_quad = has_digit = touch
        if self.remove_emails:
            counts[EMAILS][:] = 0
            has_at = _mask(pc.match_substring(column, "@"))
            touch = touch | has_at
        if self.remove_ips:
            counts[IPS][:] = 0
            has_quad = _mask(pc.match_substring_regex(column, _QUAD))
            touch = touch | has_quad
        if self.remove_phones:
            counts[PHONES][:] = 0
            has_digit = _mask(pc.match_substring_regex(column, r"\p{Nd}"))
            touch = touch | has_digit
        rows = np.flatnonzero(touch)
        emails = _Cycle(self.email_replacement)
        ips = _Cycle(self.ip_replacement, self._valid_ip)
        phones = _Cycle(self.phone_replacement)
        changed_rows: list[int] = []
        new_texts: list[str] = []
        for row, text in zip(rows.tolist(), column.take(pa.array(rows, pa.int64())).to_pylist(), strict=True):
            out = text
            emails.restart()
            if has_at[row]:
                out = _runs_around_at(out, emails)
                counts[EMAILS][row] = emails.count
            if self.remove_ips and (has_quad[row] or (emails.count > 0 and self._emails_may_add_ips)):
                ips.restart()
                out = _digit_runs(out, ips)
                counts[IPS][row] = ips.count
            if has_digit[row]:
                phones.restart()
                out = _phones(out, phones, self.phone_region)
                counts[PHONES][row] = phones.count
            if out != text:
                changed_rows.append(row)
                new_texts.append(out)
        text_out = None
        if changed_rows:
            text_out = replace_rows(column, changed_rows, new_texts)
        keep = np.ones(n, dtype=bool)
        signals = {key.split(".", 1)[1]: pa.array(counts[key], pa.float64()).cast(pa.int64()) for key in self._on()}
        signals["rewritten"] = rewritten(column, column if text_out is None else text_out)
        return FilterResult(
            keep, [None] * n, [None] * n, text=text_out, changed=len(changed_rows), measures=counts, signals=signals
        )

    def _on(self) -> list[str]:
        """The measures of the kinds switched on."""
        kinds = ((EMAILS, self.remove_emails), (IPS, self.remove_ips), (PHONES, self.remove_phones))
        return [key for key, on in kinds if on]


def _mask(found: pa.Array) -> np.ndarray:
    return np.asarray(found.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def _runs_around_at(text: str, cycle: _Cycle) -> str:
    """``EMAIL.sub(cycle, text)``, run only on the stretches of address characters around each ``@``."""
    reverse = text[::-1]
    n = len(text)
    pieces: list[str] = []
    done = 0
    at = text.find("@")
    while at >= 0:
        start = at - (_run_end(reverse, n - at) - (n - at))
        end = _run_end(text, at)
        # an address needs a character before an "@" and a "." or "[" after it (the domain)
        first = text.find("@", start + 1, end)
        if first >= 0 and (text.find(".", first, end) >= 0 or text.find("[", first, end) >= 0):
            # one character before the run keeps the \b test at its start what it is in the whole text
            begin = max(start - 1, done)
            pieces.append(text[done:begin])
            pieces.append(EMAIL.sub(cycle, text[begin:end]))
            done = end
        at = text.find("@", end)
    pieces.append(text[done:])
    return "".join(pieces)


def _run_end(text: str, at: int) -> int:
    """Where the run of e-mail characters starting at ``at`` ends."""
    run = _EMAIL_RUN.match(text, at)
    return at if run is None else run.end()


def _digit_runs(text: str, cycle: _Cycle) -> str:
    """``IP.sub(cycle, text)``, run only on the runs of digits and dots that hold a dotted quad."""
    pieces: list[str] = []
    done = 0
    reverse = text[::-1]
    n = len(text)
    found = _QUAD_RE.search(text)
    while found is not None:
        start, end = found.start(), found.end()
        back = _IP_RUN.match(reverse, n - start)
        start -= 0 if back is None else back.end() - (n - start)
        ahead = _IP_RUN.match(text, end)
        end = end if ahead is None else ahead.end()
        pieces.append(text[done:start])
        pieces.append(IP.sub(cycle, text[start:end]))
        done = end
        found = _QUAD_RE.search(text, end)
    pieces.append(text[done:])
    return "".join(pieces)


def _phones(text: str, cycle: _Cycle, region: str) -> str:
    """Every number ``phonenumbers.PhoneNumberMatcher`` finds (leniency VALID) replaced from ``cycle``."""
    import phonenumbers

    pieces: list[str] = []
    done = 0
    for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
        pieces.append(text[done : match.start])
        pieces.append(cycle.take())
        done = match.end
    pieces.append(text[done:])
    return "".join(pieces)
