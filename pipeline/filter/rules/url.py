"""The URL rules of datatrove 0.10.1's ``URLFilter``: a page is dropped by its URL (``meta.url``, the WARC
record's ``WARC-Target-URI``) when its registered domain or its full host name is a block-listed domain, the URL
itself is block-listed, one of the URL's words is a banned word, at least ``soft_word_threshold`` of its words are
soft-banned, or its letters and digits hold a banned subword. The first failing rule in that order drops it.

The integrated lists are read from where the user has them: the UT1-derived ``domains`` and ``urls`` in the
archive datatrove ships (or those files extracted) and its three word lists, by default from the installed
datatrove package's ``assets`` folder. Domains are the public-suffix split of tldextract's bundled snapshot
(never fetched). Contract: docs/stages.md, URL filter; the recipe it belongs to: docs/recipes.md."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import tarfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from pipeline.filter.base import BaseFilter
from pipeline.filter.options import FilterOptions, OptionError, made, number, strings
from pipeline.filter.outcome import Outcomes
from pipeline.filter.registry import register
from pipeline.numba_backend import FILTER
from pipeline.stage_api.filter import FilterResult

NAME = "url"
# datatrove's reasons, in the order its rules run; no_url is ours (datatrove asserts the URL is there)
RULES = ("no_url", "domain", "subdomain", "url", "hard_blacklisted", "soft_blacklisted", "blacklisted_subword")
ARCHIVE = "url_filterblacklistsv0_3_0.tar.gz"  # datatrove's archive of the UT1 lists: members domains and urls
WORD_FILES = ("banned_words.txt", "banned_subwords.txt", "soft_banned_words.txt")
HOST_CACHE = 200_000  # netlocs whose split a filter keeps (cleared when full)
_SPLIT = re.compile(r"[^a-zA-Z0-9]+")  # datatrove's word boundary: any run of characters but ASCII letters, digits
# A batch's metas and URLs are read with Arrow's regular expressions (RE2, vectorized), each rule below giving
# exactly what the per-document Python step gives where it matches; the other rows take that step.
_WS = r"[ \t\n\r]*"  # JSON's whitespace
_JSON_STR = r'"[^"\\\x00-\x1f]*"'  # a JSON string without escapes or control characters: its text as written
_JSON_NUM = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_PAIR = f"{_JSON_STR}{_WS}:{_WS}(?:{_JSON_STR}|{_JSON_NUM}|true|false|null)"
# a flat JSON object of such strings, numbers and literals (json.loads reads it); with "url" once, as a key
_FLAT_OBJECT = f"^{_WS}\\{{{_WS}(?:{_PAIR}(?:{_WS},{_WS}{_PAIR})*)?{_WS}\\}}{_WS}$"
_URL_VALUE = f'[{{,]{_WS}"url"{_WS}:{_WS}"(?P<url>[^"\\\\\\x00-\\x1f]*)"'
_SCHEME = r"^(?:[A-Za-z0-9+.\-]+:)?//"  # tldextract's _schemeless_url: a leading "//", or scheme chars, ":" and "//"
_AUTHORITY = r"^(?P<authority>[^/?#]*)"  # then the text up to the first "/", "?" or "#"


def normalize(text: str) -> str:
    """``text`` as the word lists compare it: ASCII letters and digits only, lowercased."""
    return _SPLIT.sub("", text).lower()


def entries(lines: Any, normalized: bool) -> set[str]:
    """The entries of a list's lines (file lines or config strings): a line starting with ``#`` is left out, the
    others normalised (word lists) or stripped (domains, URLs), as datatrove reads them."""
    return {normalize(x) if normalized else x.strip() for x in lines if not x.startswith("#")}


def file_lines(data: bytes) -> list[str]:
    """A UTF-8 text file's lines as Python's text mode yields them (universal newlines), without the newline."""
    text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line
    return lines


def default_lists_dir() -> str | None:
    """The installed datatrove package's ``assets`` folder (not imported), or None without datatrove."""
    spec = importlib.util.find_spec("datatrove")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(next(iter(spec.submodule_search_locations)), "assets")


def _hashes(items: Any) -> np.ndarray:
    """The sorted 64-bit hashes (xxh3) of strings: a membership table 4.5 million domains fit in 36 MB."""
    digest = xxhash.xxh3_64_intdigest
    found = np.fromiter((digest(s.encode("utf-8", "surrogatepass")) for s in items), dtype=np.uint64)
    found.sort()
    return found


# what makes a list file's lines differ from its stripped entries: bytes str.strip() removes that bytes.strip()
# keeps or that split("\n") does not end a line at, a space or tab beside a line end, a comment line
_NOT_PLAIN = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f", b" \n", b"\t\n", b"\n ", b"\n\t", b"\n#")


def _list_hashes(data: bytes) -> np.ndarray:
    """:func:`_hashes` of the entries of a domain or URL list file, as ``entries(file_lines(data), False)`` gives
    them; an ASCII file with no comment, carriage return or space to strip is hashed line by line as bytes."""
    plain = data.isascii() and not any(b in data for b in _NOT_PLAIN)
    if not plain or data[:1] in (b" ", b"\t", b"#") or data.rstrip(b"\n")[-1:] in (b" ", b"\t"):
        return _hashes(entries(file_lines(data), False))
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the newline that ends the last line starts no line
    found = np.fromiter(map(xxhash.xxh3_64_intdigest, lines), dtype=np.uint64, count=len(lines))
    found.sort()
    return found[np.concatenate(([True], found[1:] != found[:-1]))] if len(found) else found


def _member(table: np.ndarray, keys: list[str]) -> np.ndarray:
    """Whether each of ``keys`` is in the hash ``table``."""
    if not len(table) or not keys:
        return np.zeros(len(keys), dtype=bool)
    digest = xxhash.xxh3_64_intdigest
    wanted = np.fromiter((digest(k.encode("utf-8", "surrogatepass")) for k in keys), dtype=np.uint64, count=len(keys))
    slot = np.minimum(np.searchsorted(table, wanted), len(table) - 1)
    found: np.ndarray = table[slot] == wanted
    return found


@dataclass(frozen=True)
class Integrated:
    """The integrated lists of one folder: the domains (a hash table), the URLs and the three word lists."""

    domains: np.ndarray
    url_set: frozenset[str]
    banned_words: frozenset[str]
    banned_subwords: frozenset[str]
    soft_banned_words: frozenset[str]


_LOADED: dict[tuple[Any, ...], Integrated] = {}  # per process: a Spark worker reads the lists once


def _member_bytes(folder: Path, name: str) -> bytes:
    """File ``name`` of the UT1 lists: extracted in ``folder``, else read from datatrove's archive there."""
    plain = folder / name
    if plain.is_file():
        return plain.read_bytes()
    archive = folder / ARCHIVE
    with tarfile.open(archive, "r:gz") as tar:
        member = tar.extractfile(name)
        if member is None:
            raise OSError(f"{archive} has no file {name}")
        return member.read()


def integrated(lists_dir: str) -> Integrated:
    """The integrated lists in ``lists_dir`` (read once per process; :class:`OptionError` naming ``lists_dir``)."""
    folder = Path(lists_dir)
    try:
        names = [n for n in (*WORD_FILES, "domains", "urls", ARCHIVE) if (folder / n).is_file()]
        stamp = (
            str(folder.resolve()),
            tuple((n, (folder / n).stat().st_mtime_ns, (folder / n).stat().st_size) for n in names),
        )
    except OSError as exc:
        raise OptionError("lists_dir", f"cannot read {lists_dir}: {exc}") from exc
    if stamp not in _LOADED:
        try:
            words = [entries(file_lines((folder / name).read_bytes()), True) for name in WORD_FILES]
            domains = _list_hashes(_member_bytes(folder, "domains"))
            urls = frozenset(entries(file_lines(_member_bytes(folder, "urls")), False))
        except (OSError, UnicodeDecodeError, tarfile.TarError) as exc:
            raise OptionError("lists_dir", f"cannot read the URL lists in {lists_dir}: {exc}") from exc
        _LOADED[stamp] = Integrated(domains, urls, *map(frozenset, words))
    return _LOADED[stamp]


@dataclass(frozen=True)
class URLOptions(FilterOptions):
    """The options of :class:`URLFilter`: datatrove 0.10.1's ``URLFilter`` arguments and where its lists are."""

    soft_word_threshold: int = 2
    """Drop a URL holding at least this many different soft-banned words."""
    extra_domains: tuple[str, ...] | None = None
    """Domains to block besides the integrated ones (a registered domain or a full host name)."""
    extra_urls: tuple[str, ...] | None = None
    """Full URLs to block besides the integrated ones."""
    banned_words: tuple[str, ...] | None = None
    """Words to block besides the integrated ones (a URL word, compared after normalising the entry)."""
    banned_subwords: tuple[str, ...] | None = None
    """Strings to block anywhere in the URL's lowercased letters and digits, besides the integrated ones."""
    soft_banned_words: tuple[str, ...] | None = None
    """Soft-banned words besides the integrated ones."""
    use_integrated_lists: bool = True
    """Use the UT1 domain and URL lists and datatrove's word lists."""
    lists_dir: str | None = None
    """The folder of the integrated lists: datatrove's ``assets`` (its archive and word lists; None: the
    installed datatrove package's), or one with ``domains`` and ``urls`` extracted beside the word lists."""

    def check(self) -> None:
        number(self, "soft_word_threshold")
        for option in ("extra_domains", "extra_urls", "banned_words", "banned_subwords", "soft_banned_words"):
            strings(self, option)
        if self.use_integrated_lists:
            folder = self.lists_dir or default_lists_dir()
            if folder is None:
                raise OptionError("lists_dir", "datatrove is not installed: give the folder of the URL lists")
            missing = [n for n in WORD_FILES if not os.path.isfile(os.path.join(folder, n))]
            has_lists = all(os.path.isfile(os.path.join(folder, n)) for n in ("domains", "urls"))
            if not has_lists and not os.path.isfile(os.path.join(folder, ARCHIVE)):
                missing.append(ARCHIVE)
            if missing:
                raise OptionError("lists_dir", f"{folder} has no {', '.join(missing)}")

    def files(self) -> dict[str, str]:
        """The list files the filter reads, so an edited list is not reused (fingerprinted by content)."""
        if not self.use_integrated_lists:
            return {}
        folder = self.lists_dir or default_lists_dir() or ""
        names = [*WORD_FILES, "domains", "urls"] if os.path.isfile(os.path.join(folder, "domains")) else WORD_FILES
        found = {f"lists_dir.{n}": os.path.join(folder, n) for n in names}
        if "domains" not in names:
            found["lists_dir.archive"] = os.path.join(folder, ARCHIVE)
        return found


@register(NAME)
class URLFilter(BaseFilter):
    """Drops a page whose URL is block-listed by domain, host or URL, or holds banned or soft-banned words."""

    name = NAME
    Options = URLOptions

    def __init__(self, options: URLOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(URLOptions, options, kwargs, NAME)
        lists = integrated(o.lists_dir or default_lists_dir() or "") if o.use_integrated_lists else None
        extra_domains = entries(o.extra_domains or (), False)
        extra_urls = entries(o.extra_urls or (), False)
        self.domains = lists.domains if lists is not None else np.zeros(0, np.uint64)
        self.extra_domains, self.extra_urls = frozenset(extra_domains), frozenset(extra_urls)
        base = (lists.banned_words, lists.banned_subwords, lists.soft_banned_words) if lists else ((),) * 3
        self.banned_words = frozenset(entries(o.banned_words or (), True)).union(base[0])
        self.banned_subwords = frozenset(entries(o.banned_subwords or (), True)).union(base[1])
        self.soft_banned_words = frozenset(entries(o.soft_banned_words or (), True)).union(base[2])
        self.threshold = o.soft_word_threshold
        self._subwords = _automaton(self.banned_subwords)
        self._extract = _tld_extract()
        self._hosts: dict[str, tuple[str, str]] = {}  # netloc -> (registered domain, host): pages share hosts
        self._netloc = _lenient_netloc()
        self._authority = _host_from_authority() if self._netloc is not None else None
        # authority -> (registered domain, host, 0 / 1 listed domain / 2 listed host), per batch's distinct ones
        self._authorities: dict[str, tuple[str, str, int]] = {}
        self._listed_urls = (lists.url_set if lists is not None else frozenset()) | self.extra_urls
        # the word rules' candidates, found by one RE2 search of the batch (None: every URL takes the Python step)
        word_list = self.banned_words | self.soft_banned_words
        exact = "" not in word_list and self.threshold > 0
        self._words_re = _word_pattern(word_list) if exact else None
        self._subwords_re = "|".join(sorted(w for w in self.banned_subwords if w)) or None
        self._all_words = not exact
        self._kernel_tables: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._listed_hashes: np.ndarray | None = None

    def _split(self, url: str) -> tuple[str, str]:
        """The registered domain and full host name of ``url``, as ``TLDExtract()(url)`` gives them: tldextract's
        netloc of the URL, split once per netloc (its ``extract_str`` is these two steps)."""
        netloc = self._netloc(url) if self._netloc is not None else None
        if netloc is None:
            whole = self._extract(url)
            return whole.top_domain_under_public_suffix, whole.fqdn
        found = self._hosts.get(netloc)
        if found is None:
            if len(self._hosts) >= HOST_CACHE:
                self._hosts.clear()
            part = self._extract._extract_netloc(netloc, None)
            found = self._hosts[netloc] = (part.top_domain_under_public_suffix, part.fqdn)
        return found

    def thresholds(self) -> dict[str, tuple[float, str]]:
        """The soft-word count drops at ``soft_word_threshold`` and above (recorded as its ``max``)."""
        return {f"{NAME}.soft_blacklisted": (float(self.threshold), "max")}

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask and first failing rule of every document of ``batch`` by its ``meta.url``."""
        kernel = _compiled(batch) if self._authority is not None else None  # the kernels cut tldextract's way
        if kernel is not None:
            done = self._apply_compiled(batch, kernel)
            if done is not None:
                return done
        n = batch.num_rows
        out = Outcomes(NAME, ("soft_blacklisted",), n)
        urls = _batch_urls(batch)
        for i in (i for i, u in enumerate(urls) if not u):
            out.drop(i, "no_url", "no url in the document's meta")
        have = [i for i, u in enumerate(urls) if u]
        present: list[str] = [u for u in urls if u]
        if not present:
            return out.result()
        split, codes = self._hosts_of(present)
        listed = self._listed_urls
        by_url = (
            np.fromiter((u in listed for u in present), bool, len(present)) if listed else np.zeros(len(present), bool)
        )
        words = self._word_candidates(present)
        soft = out.measures["soft_blacklisted"]
        plain = (codes == 0) & ~by_url & ~words
        soft[np.asarray(have, dtype=np.int64)[plain]] = 0.0  # no word of any list: no soft word, nothing dropped
        for j in np.flatnonzero(~plain).tolist():
            i, url = have[j], present[j]
            if codes[j] == 1:
                out.drop(i, "domain", f"block-listed domain {split[j][0]}")
            elif codes[j] == 2:
                out.drop(i, "subdomain", f"block-listed host {split[j][1]}")
            elif by_url[j]:
                out.drop(i, "url", "block-listed url")
            else:
                self._words(out, i, url)
        return out.result()

    def _apply_compiled(self, batch: pa.RecordBatch, kernel: ModuleType) -> FilterResult | None:
        """:meth:`apply` with the numba kernels over the metas' bytes: the same outcome, Python strings made only
        for the distinct authorities and the URLs a rule may drop (None: a URL this path cannot carry)."""
        n = batch.num_rows
        column = batch.column("meta")
        data, offsets = _string_bytes(column)
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        start, stop = np.empty(n, np.int64), np.empty(n, np.int64)
        kernel.meta_urls(data, offsets, valid, _LITERALS, start, stop)
        slow = np.flatnonzero(start < 0)
        if len(slow):  # metas read through json: their URLs appended to the bytes
            found = [_url(m) for m in column.take(pa.array(slow)).to_pylist()]
            try:
                pieces = [u.encode("utf-8") if u else b"" for u in found]
            except UnicodeEncodeError:
                return None
            ends = len(data) + np.cumsum([len(p) for p in pieces], dtype=np.int64)
            data = np.concatenate([data, np.frombuffer(b"".join(pieces), np.uint8)])
            start[slow] = ends - [len(p) for p in pieces]
            stop[slow] = ends
        out = Outcomes(NAME, ("soft_blacklisted",), n)
        have = stop > start
        for i in np.flatnonzero(~have).tolist():
            out.drop(i, "no_url", "no url in the document's meta")
        rows = np.flatnonzero(have)
        if not len(rows):
            return out.result()
        first, last = start[rows], stop[rows]
        auth_start, auth_stop = np.empty(len(rows), np.int64), np.empty(len(rows), np.int64)
        words = np.empty(len(rows), bool)
        kernel.scan_urls(data, first, last, *self._tables(), auth_start, auth_stop, words)
        if self._all_words:
            words[:] = True
        bounds, chars = kernel.gather(data, auth_start, auth_stop)
        authorities = pa.StringArray.from_buffers(len(rows), pa.py_buffer(bounds), pa.py_buffer(chars))
        entries, index = self._authority_entries(authorities.dictionary_encode())
        codes = np.array([e[2] for e in entries], dtype=np.int8)[index]
        by_url = np.zeros(len(rows), bool)
        if self._listed_urls:
            table = self._url_hashes(kernel)
            hashes = kernel.fnv1a(data, first, last)
            slot = np.minimum(np.searchsorted(table, hashes), len(table) - 1)
            for j in np.flatnonzero(table[slot] == hashes).tolist():  # a hash match, checked on the string
                by_url[j] = bytes(data[first[j] : last[j]]).decode("utf-8") in self._listed_urls
        plain = (codes == 0) & ~by_url & ~words
        out.measures["soft_blacklisted"][rows[plain]] = 0.0
        for j in np.flatnonzero(~plain).tolist():
            i, entry = int(rows[j]), entries[index[j]]
            if codes[j] == 1:
                out.drop(i, "domain", f"block-listed domain {entry[0]}")
            elif codes[j] == 2:
                out.drop(i, "subdomain", f"block-listed host {entry[1]}")
            elif by_url[j]:
                out.drop(i, "url", "block-listed url")
            else:
                self._words(out, i, bytes(data[first[j] : last[j]]).decode("utf-8"))
        return out.result()

    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The kernels' word trie (banned and soft-banned words) and subword automaton, built once."""
        if self._kernel_tables is None:
            words = frozenset() if self._all_words else self.banned_words | self.soft_banned_words
            key = (words, self.banned_subwords)
            if key not in _KERNEL_TABLES:
                subwords = {w for w in self.banned_subwords if w}
                _KERNEL_TABLES[key] = (*_trie(words), *_aho_corasick(subwords))
            self._kernel_tables = _KERNEL_TABLES[key]
        return self._kernel_tables

    def _url_hashes(self, kernel: ModuleType) -> np.ndarray:
        """The sorted FNV-1a hashes of the listed URLs, built once."""
        if self._listed_hashes is None:
            if self._listed_urls not in _URL_HASHES:
                pieces = [u.encode("utf-8", "surrogatepass") for u in self._listed_urls]
                lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))
                ends = np.cumsum(lengths)
                blob = np.frombuffer(b"".join(pieces), np.uint8)
                _URL_HASHES[self._listed_urls] = np.sort(kernel.fnv1a(blob, ends - lengths, ends))
            self._listed_hashes = _URL_HASHES[self._listed_urls]
        return self._listed_hashes

    def _authority_entries(self, encoded: pa.DictionaryArray) -> tuple[list[tuple[str, str, int]], np.ndarray]:
        """(registered domain, host, domain rule) of each distinct authority of ``encoded``, and each row's index."""
        distinct: list[str] = encoded.dictionary.to_pylist()
        known = self._authorities
        new = [a for a in distinct if a not in known]
        if new:
            if len(known) + len(new) > HOST_CACHE:
                known.clear()
            host = self._authority
            assert host is not None  # both callers have tldextract's helpers
            parts = [self._extract._extract_netloc(host(a), None) for a in new]
            found = [(p.top_domain_under_public_suffix, p.fqdn) for p in parts]
            for authority, pair, code in zip(new, found, self._codes(found), strict=True):
                known[authority] = (pair[0], pair[1], int(code))
        return [known[a] for a in distinct], encoded.indices.to_numpy(zero_copy_only=False)

    def _hosts_of(self, urls: list[str]) -> tuple[list[tuple[str, str]], np.ndarray]:
        """Each URL's (registered domain, host) and its domain rule (0 none, 1 listed domain, 2 listed host),
        decided once per distinct authority (the URL's text between the scheme and the path)."""
        if self._authority is None:  # a tldextract without the helpers: split each URL whole
            split = [self._split(u) for u in urls]
            return split, self._codes(split)
        column = pa.array(urls, pa.string())
        rest = pc.replace_substring_regex(column, _SCHEME, "", max_replacements=1)
        encoded = pc.extract_regex(rest, _AUTHORITY).field("authority").dictionary_encode()
        entries, index = self._authority_entries(encoded)
        codes = np.array([e[2] for e in entries], dtype=np.int8)[index]
        split = [(entries[k][0], entries[k][1]) for k in index.tolist()]
        return split, codes

    def _codes(self, split: list[tuple[str, str]]) -> np.ndarray:
        """The domain rule of each (registered domain, host): 1 when the domain is listed, 2 when only the host."""
        registered = [p[0] for p in split]
        hosts = [p[1] for p in split]
        extra = self.extra_domains
        by_domain = _member(self.domains, registered) | np.fromiter((r in extra for r in registered), bool, len(split))
        by_host = _member(self.domains, hosts) | np.fromiter((h in extra for h in hosts), bool, len(split))
        return np.where(by_domain, 1, np.where(by_host, 2, 0)).astype(np.int8)

    def _word_candidates(self, urls: list[str]) -> np.ndarray:
        """The URLs that may meet a word rule: one of their words is a banned or soft-banned word, or their
        normalised text holds a banned subword (every URL when the lists hold the empty word)."""
        if self._all_words:
            return np.ones(len(urls), bool)
        found = np.zeros(len(urls), bool)
        column = pa.array(urls, pa.string())
        if self._words_re is not None:
            found |= pc.match_substring_regex(column, self._words_re).to_numpy(zero_copy_only=False)
        if self._subwords_re is not None and self._subwords is not None:
            squashed = pc.ascii_lower(pc.replace_substring_regex(column, r"[^a-zA-Z0-9]+", ""))
            found |= pc.match_substring_regex(squashed, self._subwords_re).to_numpy(zero_copy_only=False)
        return found

    def _words(self, out: Outcomes, i: int, url: str) -> None:
        """The word rules of one URL: banned words, the soft-word count, banned subwords."""
        words = set(_SPLIT.split(url))
        banned = words & self.banned_words
        if banned:
            out.drop(i, "hard_blacklisted", f"banned word {min(banned)}")
            return
        soft = words & self.soft_banned_words
        out.measure(i, "soft_blacklisted", len(soft))
        if len(soft) >= self.threshold:
            listed = ", ".join(sorted(soft))
            out.drop(i, "soft_blacklisted", f"{len(soft)} soft-banned words >= {self.threshold}: {listed}")
            return
        if self._subwords is not None:
            found = next(self._subwords.iter(normalize(url)), None)
            if found is not None:
                out.drop(i, "blacklisted_subword", f"banned subword {found[1]}")


def _lenient_netloc() -> Any:
    """tldextract's netloc of a URL (the first step of its ``extract_str``), or None if this version has none."""
    try:
        from tldextract.remote import lenient_netloc
        from tldextract.tldextract import TLDExtract
    except ImportError:
        return None
    return lenient_netloc if hasattr(TLDExtract, "_extract_netloc") else None


_TLD: list[Any] = []  # per process: the suffix trie is built once
# per process, by the lists they are made of: the kernels' word tables and the URL list's hashes
_KERNEL_TABLES: dict[tuple[frozenset[str], frozenset[str]], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
_URL_HASHES: dict[frozenset[str], np.ndarray] = {}
_LITERALS = np.array([list(b"true\0"), list(b"false"), list(b"null\0")], dtype=np.uint8)  # JSON's, 0-padded
_CLASSES = {c: k for k, c in enumerate("0123456789abcdefghijklmnopqrstuvwxyz")}  # the kernels' 36 characters


def _compiled(batch: pa.RecordBatch) -> ModuleType | None:
    """The url kernels when this batch runs compiled (the FILTER switch, by its metas' bytes), else None."""
    if "meta" not in batch.schema.names:
        return None
    column = batch.column("meta")
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return None
    if not FILTER.use("url", column.nbytes):
        return None
    from pipeline.filter.rules import url_numba  # lazy: numba loads its kernels on first use

    return url_numba


def _string_bytes(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string column's UTF-8 bytes and the int64 offsets of its rows (a null row is empty)."""
    _, offsets, data = column.buffers()
    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    bounds = np.frombuffer(offsets, dtype=width)[column.offset : column.offset + len(column) + 1].astype(np.int64)
    return (np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)), bounds


def _trie(words: Collection[str]) -> tuple[np.ndarray, np.ndarray]:
    """A trie of ``words`` (lowercase letters and digits): next node per (node, character), -1 for none, and
    whether a node ends a word."""
    edges: list[dict[int, int]] = [{}]
    ends = [False]
    for word in sorted(words):
        node = 0
        for ch in word:
            nxt = edges[node].get(_CLASSES[ch])
            if nxt is None:
                nxt = edges[node][_CLASSES[ch]] = len(edges)
                edges.append({})
                ends.append(False)
            node = nxt
        ends[node] = True
    table = np.full((len(edges), 36), -1, dtype=np.int32)
    for node, out in enumerate(edges):
        for c, nxt in out.items():
            table[node, c] = nxt
    return table, np.array(ends, dtype=bool)


def _aho_corasick(words: Collection[str]) -> tuple[np.ndarray, np.ndarray]:
    """An Aho-Corasick automaton of ``words`` as a full transition table and whether a state has found a word
    (an empty second table when there are no words)."""
    if not words:
        return np.zeros((1, 36), dtype=np.int32), np.zeros(0, dtype=bool)
    table, ends = _trie(words)
    hit = ends.copy()
    fail = np.zeros(len(table), dtype=np.int32)
    queue = []
    for c in range(36):
        nxt = table[0, c]
        if nxt < 0:
            table[0, c] = 0
        else:
            queue.append(int(nxt))
    at = 0
    while at < len(queue):
        node = queue[at]
        at += 1
        hit[node] |= hit[fail[node]]
        for c in range(36):
            nxt = table[node, c]
            if nxt < 0:
                table[node, c] = table[fail[node], c]
            else:
                fail[nxt] = table[fail[node], c]
                queue.append(int(nxt))
    return table, hit


def _tld_extract() -> Any:
    """tldextract's extractor on its bundled public suffix snapshot: no fetch, no cache written."""
    if not _TLD:
        from tldextract import TLDExtract  # here: the driver checking a config never splits a host

        _TLD.append(TLDExtract(cache_dir=None, suffix_list_urls=()))
    return _TLD[0]


def _host_from_authority() -> Any:
    """tldextract's host of a URL's authority (the second step of ``lenient_netloc``), or None."""
    try:
        from tldextract.remote import _host_from_authority as host
    except ImportError:
        return None
    return host


def _word_pattern(words: frozenset[str]) -> str | None:
    """An RE2 pattern finding a URL word (a maximal run of ASCII letters and digits) that is one of ``words``."""
    if not words:
        return None
    return r"(?:^|[^a-zA-Z0-9])(?:" + "|".join(sorted(words)) + r")(?:[^a-zA-Z0-9]|$)"


def _batch_urls(batch: pa.RecordBatch) -> list[str | None]:
    """The ``url`` of each document's meta JSON (None when absent or not a string), as :func:`_url` reads it: a
    flat meta with the URL once and no escapes is read by RE2 over the batch, any other through ``json``."""
    if "meta" not in batch.schema.names:
        return [None] * batch.num_rows
    column = batch.column("meta")
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return [_url(m) for m in _metas(batch)]
    flat = pc.match_substring_regex(column, _FLAT_OBJECT)
    once = pc.equal(pc.count_substring(column, '"url"'), 1)
    extracted = pc.extract_regex(column, _URL_VALUE)
    fast = pc.and_kleene(pc.and_kleene(flat, once), extracted.is_valid()).fill_null(False)
    fast_rows = fast.to_numpy(zero_copy_only=False)
    values = extracted.field("url").to_pylist()
    if fast_rows.all():
        return values
    metas: list[str | None] = column.to_pylist()
    return [values[i] if ok else _url(metas[i]) for i, ok in enumerate(fast_rows.tolist())]


def _automaton(words: frozenset[str]) -> Any:
    """An Aho-Corasick automaton finding any of ``words`` (None when there are none)."""
    import ahocorasick  # type: ignore[import-not-found]  # no type stubs

    if not words:
        return None
    automaton = ahocorasick.Automaton()
    for word in sorted(words):
        if word:  # the empty string is no word the automaton finds (as in datatrove's)
            automaton.add_word(word, word)
    if not len(automaton):
        return None
    automaton.make_automaton()
    return automaton


def _metas(batch: pa.RecordBatch) -> list[str | None]:
    if "meta" not in batch.schema.names:
        return [None] * batch.num_rows
    metas: list[str | None] = batch.column("meta").to_pylist()
    return metas


def _url(meta: str | None) -> str | None:
    """The ``url`` of a document's meta JSON (None when absent or not a string)."""
    if not meta or '"url"' not in meta:
        return None
    try:
        value = json.loads(meta).get("url")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
