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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import xxhash

from pipeline.filter.options import FilterOptions, OptionError, made, number, strings
from pipeline.filter.outcome import Outcomes
from pipeline.filter.registry import register
from pipeline.stage_api.filter import FilterResult

NAME = "url"
# datatrove's reasons, in the order its rules run; no_url is ours (datatrove asserts the URL is there)
RULES = ("no_url", "domain", "subdomain", "url", "hard_blacklisted", "soft_blacklisted", "blacklisted_subword")
ARCHIVE = "url_filterblacklistsv0_3_0.tar.gz"  # datatrove's archive of the UT1 lists: members domains and urls
WORD_FILES = ("banned_words.txt", "banned_subwords.txt", "soft_banned_words.txt")
HOST_CACHE = 200_000  # netlocs whose split a filter keeps (cleared when full)
_SPLIT = re.compile(r"[^a-zA-Z0-9]+")  # datatrove's word boundary: any run of characters but ASCII letters, digits


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
    """The integrated lists of one folder: domains and URLs (hash tables) and the three word lists."""

    domains: np.ndarray
    urls: np.ndarray
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
            domains = _hashes(entries(file_lines(_member_bytes(folder, "domains")), False))
            urls = _hashes(entries(file_lines(_member_bytes(folder, "urls")), False))
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
class URLFilter:
    """Drops a page whose URL is block-listed by domain, host or URL, or holds banned or soft-banned words."""

    name = NAME
    Options = URLOptions

    def __init__(self, options: URLOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(URLOptions, options, kwargs, NAME)
        lists = integrated(o.lists_dir or default_lists_dir() or "") if o.use_integrated_lists else None
        extra_domains = entries(o.extra_domains or (), False)
        extra_urls = entries(o.extra_urls or (), False)
        self.domains = lists.domains if lists is not None else np.zeros(0, np.uint64)
        self.urls = lists.urls if lists is not None else np.zeros(0, np.uint64)
        self.extra_domains, self.extra_urls = frozenset(extra_domains), frozenset(extra_urls)
        base = (lists.banned_words, lists.banned_subwords, lists.soft_banned_words) if lists else ((),) * 3
        self.banned_words = frozenset(entries(o.banned_words or (), True)).union(base[0])
        self.banned_subwords = frozenset(entries(o.banned_subwords or (), True)).union(base[1])
        self.soft_banned_words = frozenset(entries(o.soft_banned_words or (), True)).union(base[2])
        self.threshold = o.soft_word_threshold
        self._subwords = _automaton(self.banned_subwords)
        from tldextract import TLDExtract  # here: the driver checking a config never splits a host

        # the public suffix list of tldextract's own snapshot: no fetch, no cache written
        self._extract = TLDExtract(cache_dir=None, suffix_list_urls=())
        self._hosts: dict[str, tuple[str, str]] = {}  # netloc -> (registered domain, host): pages share hosts
        self._netloc = _lenient_netloc()

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
        n = batch.num_rows
        out = Outcomes(NAME, ("soft_blacklisted",), n)
        urls = [_url(m) for m in _metas(batch)]
        have = [i for i, u in enumerate(urls) if u]
        for i in (i for i, u in enumerate(urls) if not u):
            out.drop(i, "no_url", "no url in the document's meta")
        present = [u for u in urls if u]
        parts = [self._split(u) for u in present]
        registered = [p[0] for p in parts]
        hosts = [p[1] for p in parts]
        by_domain = _member(self.domains, registered) | np.fromiter(
            (r in self.extra_domains for r in registered), bool, len(have)
        )
        by_host = _member(self.domains, hosts) | np.fromiter((h in self.extra_domains for h in hosts), bool, len(have))
        by_url = _member(self.urls, present)
        for j, (i, url) in enumerate(zip(have, present, strict=True)):
            if by_domain[j]:
                out.drop(i, "domain", f"block-listed domain {registered[j]}")
            elif by_host[j]:
                out.drop(i, "subdomain", f"block-listed host {hosts[j]}")
            elif by_url[j] or url in self.extra_urls:
                out.drop(i, "url", "block-listed url")
            else:
                self._words(out, i, url)
        return out.result()

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
