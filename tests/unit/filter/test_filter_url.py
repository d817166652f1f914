"""The url filter against datatrove 0.10.1's ``URLFilter`` (the oracle): the same decision and reason for every
URL of a corpus of real URLs (the links of the Debian documentation on this machine) and planted ones: domains
and hosts of the UT1 lists, listed URLs, banned words and subwords, soft-banned words below, at and above the
threshold, extra lists. Contract: docs/stages.md, URL filter."""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.config import ConfigError, load_config_text
from pipeline.filter.rules import url as url_rules
from pipeline.filter.rules.url import URLFilter, default_lists_dir
from pipeline.numba_backend import FILTER
from pipeline.run.preflight import check_stage_configs
from tests.backends import numba_backend
from tests.oracles import require_oracle

# datatrove 0.10.1 reads tldextract's renamed registered_domain
pytestmark = pytest.mark.filterwarnings("ignore:The 'registered_domain' property is deprecated:DeprecationWarning")
DOCS = Path("/usr/share/doc")
_LINK = re.compile(r"""https?://[^\s"'<>()\\]+""")


def _real_urls(limit: int = 3000) -> list[str]:
    """Links found in the HTML pages of /usr/share/doc (real URLs, sorted, at most ``limit``)."""
    found: set[str] = set()
    for page in sorted(DOCS.rglob("*.html"))[:4000]:
        try:
            found.update(_LINK.findall(page.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return sorted(found)[:limit]


def _listed(name: str, every: int) -> list[str]:
    """Every ``every``-th entry of the UT1 list ``name`` in datatrove's archive."""
    with tarfile.open(os.path.join(str(default_lists_dir()), url_rules.ARCHIVE), "r:gz") as tar:
        member = tar.extractfile(name)
        assert member is not None
        lines = member.read().decode("utf-8").split("\n")
    return [line for line in lines[::every] if line]


def _words(name: str) -> list[str]:
    return [w.strip() for w in (Path(str(default_lists_dir())) / name).read_text().splitlines() if w.strip()]


def _planted() -> list[str]:
    """URLs each built to meet one of the rules, or to just miss it."""
    urls = []
    for domain in _listed("domains", 150_000):
        urls += [f"https://{domain}/", f"http://www.{domain}/page.html", f"https://{domain.upper()}/x"]
        urls.append(f"https://a.b.{domain}:8080/deep/path?q=1")
    urls += _listed("urls", 2_000)  # listed URLs match only exactly (they have no scheme)
    urls += [f"https://{u}" for u in _listed("urls", 5_000)]
    for word in _words("banned_words.txt")[::12]:
        plain = word.lstrip("#")
        urls += [f"https://example.org/{plain}/page", f"https://example.org/{plain.upper()}", f"https://x{plain}y.com/"]
    soft = _words("soft_banned_words.txt")
    for n in range(4):  # 0 to 3 soft words, the threshold is 2
        urls.append("https://blog.example.net/" + "-".join(soft[5 : 5 + n]) + "/post")
    urls.append(f"https://example.net/{soft[1]}/{soft[1]}")  # one word twice counts once
    urls.append(f"https://example.net/{soft[1]}-{soft[2].upper()}")  # an upper-case word is not that word
    for word in _words("banned_subwords.txt")[::10]:
        squashed = re.sub(r"[^a-zA-Z0-9]", "", word)
        urls += [f"https://example.com/a{squashed}b", f"https://example.com/{word.replace(' ', '-').upper()}/"]
    urls += ["https://localhost/", "http://127.0.0.1:8000/x", "https://[::1]/", "mailto:someone@example.com"]
    urls += ["example.com", "https://例え.テスト/パス", "https://xn--r8jz45g.xn--zckzah/", "//example.co.uk/x"]
    return urls


def _batch(urls: list[str | None]) -> pa.RecordBatch:
    metas = [None if u is None else json.dumps({"url": u, "warc_date": "2024-01-01"}) for u in urls]
    return pa.RecordBatch.from_pydict(
        {
            "doc_id": [f"d{i}" for i in range(len(urls))],
            "source": ["web"] * len(urls),
            "text": ["some text"] * len(urls),
            "meta": metas,
        }
    )


@pytest.fixture(scope="module")
def offline_tldextract(tmp_path_factory: pytest.TempPathFactory):
    """datatrove's ``TLDExtract()`` with no fetch (the environment turns the suffix-list URLs off) and an empty
    cache: the bundled public suffix snapshot, as ours uses."""
    saved = {k: os.environ.get(k) for k in ("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "TLDEXTRACT_CACHE")}
    os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""
    os.environ["TLDEXTRACT_CACHE"] = str(tmp_path_factory.mktemp("tldextract"))
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _oracle(**kwargs):
    require_oracle("datatrove")
    require_oracle("tldextract")
    require_oracle("ahocorasick")
    from datatrove.pipeline.filters.url_filter import URLFilter as Theirs

    return Theirs(**kwargs)


def _theirs(oracle, urls: list[str]) -> list[str | None]:
    from datatrove.data import Document

    reasons = []
    for i, u in enumerate(urls):
        got = oracle.filter(Document(text="some text", id=str(i), metadata={"url": u}))
        reasons.append(None if got is True else f"url.{got[1]}")
    return reasons


def _ours(urls: list[str], **kwargs) -> list[str | None]:
    result = URLFilter(**kwargs).apply(_batch(list(urls)))
    return [None if keep else reason for keep, reason in zip(result.keep, result.reason, strict=True)]


def _compare(urls: list[str], **kwargs) -> dict[str | None, int]:
    theirs = _theirs(_oracle(**kwargs), urls)
    ours = _ours(urls, **kwargs)
    differ = [(u, t, o) for u, t, o in zip(urls, theirs, ours, strict=True) if t != o]
    assert not differ, differ[:10]
    counts: dict[str | None, int] = {}
    for reason in theirs:
        counts[reason] = counts.get(reason, 0) + 1
    return counts


@pytest.fixture(scope="module")
def integrated_verdicts(offline_tldextract) -> tuple[list[str], list[str | None]]:
    """The real and planted URLs and datatrove's reason for each (None: kept)."""
    urls = _real_urls() + _planted()
    return urls, _theirs(_oracle(), urls)


@pytest.mark.parametrize("numba", [True, False], ids=["numba", "fallback"])
def test_same_decisions_as_datatrove_with_the_integrated_lists(integrated_verdicts, numba: bool) -> None:
    """Every URL's reason is datatrove's, on the compiled path (the metas' bytes) and on the Python one."""
    urls, theirs = integrated_verdicts
    real = _real_urls()
    assert len(real) > 500, "too few links in /usr/share/doc to compare on"
    with numba_backend(FILTER, numba):
        ours = _ours(urls)
    differ = [(u, t, o) for u, t, o in zip(urls, theirs, ours, strict=True) if t != o]
    assert not differ, differ[:10]
    counts: dict[str | None, int] = {}
    for reason in theirs:
        counts[reason] = counts.get(reason, 0) + 1
    # every rule was met by some URL and most real links pass, so the comparison covers each branch
    for rule in ("domain", "subdomain", "url", "hard_blacklisted", "soft_blacklisted", "blacklisted_subword"):
        assert counts.get(f"url.{rule}", 0) > 0, (rule, counts)
    assert counts[None] > len(real) // 2


def test_same_decisions_with_extra_lists_only(offline_tldextract) -> None:
    kwargs = {
        "use_integrated_lists": False,
        "soft_word_threshold": 3,
        "extra_domains": ["debian.org", "lists.gnu.org", "#python.org", " kernel.org "],
        "extra_urls": ["https://www.gnu.org/licenses/gpl.html", "http://www.gnu.org/licenses/"],
        "banned_words": ["Manual", "faq", "#html", "wiki-pedia"],
        "banned_subwords": ["sourcefor", "git hub", "#gnome"],
        "soft_banned_words": ["doc", "html", "index", "en", "www"],
    }
    counts = _compare(_real_urls() + ["https://wikipedia.org/x", "https://en.wikipedia.org/html/doc/"], **kwargs)
    assert len(counts) > 3, counts


def test_no_extra_lists_and_no_integrated_keeps_everything(offline_tldextract) -> None:
    urls = _real_urls(200)
    assert _compare(urls, use_integrated_lists=False) == {None: len(urls)}


def test_a_document_without_url_is_dropped_as_no_url() -> None:
    """datatrove asserts the URL is there (the run fails); here the page is dropped, counted, and named."""
    result = URLFilter(use_integrated_lists=False).apply(_batch([None, "https://example.com/", ""]))
    assert list(result.keep) == [False, True, False]
    assert result.reason[0] == result.reason[2] == "url.no_url"


def test_the_dropped_row_names_the_matched_domain_and_word() -> None:
    f = URLFilter(use_integrated_lists=False, extra_domains=["example.com"], banned_words=["casino"])
    result = f.apply(_batch(["https://www.example.com/a", "https://play.org/casino/"]))
    assert result.detail == ["block-listed domain example.com", "banned word casino"]


def _config(tmp_path: Path, entry: str):
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "x"}\n')
    text = f"output: {tmp_path / 'run'}\ntokenizer: {{train: true}}\nsources:\n  - {{name: web, paths: [{data}]}}\n"
    return load_config_text(text + f"filter:\n  - {entry}\n")


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ("{name: url, soft_word_threshold: -1}", "filter.0.soft_word_threshold"),
        ("{name: url, banned_words: []}", "filter.0.banned_words"),
        ("{name: url, extra_domains: ['']}", "filter.0.extra_domains"),
        ("{name: url, lists_dir: /nonexistent/lists}", "filter.0.lists_dir"),
        ("{name: url, use_integrated_lists: 1}", "filter.0.use_integrated_lists"),
    ],
)
def test_bad_options_name_their_key(tmp_path: Path, entry: str, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_stage_configs(_config(tmp_path, entry))
    assert f"'{key}'" in str(caught.value), str(caught.value)


def test_lists_from_an_extracted_folder(tmp_path: Path) -> None:
    """UT1's files extracted beside the word lists are read as the archive's members are."""
    for name in url_rules.WORD_FILES:
        (tmp_path / name).write_text("#comment\nfoo\n")
    (tmp_path / "domains").write_text("blocked.example\n\n")
    (tmp_path / "urls").write_text("example.org/page\n")
    f = URLFilter(lists_dir=str(tmp_path))
    result = f.apply(_batch(["https://blocked.example/", "example.org/page", "https://x.org/foo", "https://ok.org/"]))
    assert result.reason == ["url.domain", "url.url", "url.hard_blacklisted", None]
    # the empty line of the domains file is the empty domain: a host with no registered domain matches it
    assert URLFilter(lists_dir=str(tmp_path)).apply(_batch(["http://localhost/"])).reason == ["url.domain"]


# Generated URLs and metas: the batch-wide fast path (RE2 over the metas and URLs, one host split per authority,
# word candidates by one search) decides every URL as datatrove's filter does, and reads every meta as json does.
_PIECES = [
    "http://", "https://", "HTTP://", "//", "a+b.c://", "://", ":/", "1http://", "x:y//", "mailto:", "http:////",
    "www.", "debian.org", "lists.debian.org", "Debian.ORG", "example.co.uk", "blogspot.com", "127.0.0.1", "[::1]",
    "[fe80::1]:80", "user:pw@", "@", ":8080", "/", "?", "#", "&", "-", "_", ".", "。", "．", " ", "\t", "%20",
    "casino", "Casino", "poker", "xxx", "porn", "p-o-r-n", "sourcefor", "gethub", "doc", "html", "index", "en",
    "例え", "テスト", "xn--r8jz45g", "é",
]  # fmt: skip
_EXTRA = {
    "use_integrated_lists": False,
    "soft_word_threshold": 2,
    "extra_domains": ["debian.org", "example.co.uk", "xn--r8jz45g.xn--zckzah", "127.0.0.1", "www.example.org"],
    "extra_urls": ["https://www.gnu.org/licenses/gpl.html", "example.org/page"],
    "banned_words": ["casino", "xxx"],
    "banned_subwords": ["porn", "sourcefor", "git hub"],
    "soft_banned_words": ["doc", "html", "index", "en"],
}
_SCHEMES = ["http://", "https://", "HTTP://", "//", "a+b.c://", "://", ":/", "1http://", "x:y//", "mailto:", ""]
_HOSTS = [
    "debian.org", "www.debian.org", "Debian.ORG", "lists.debian.org", "example.co.uk", "www.example.org", "example.org",
    "127.0.0.1", "[::1]", "[fe80::1]", "xn--r8jz45g.xn--zckzah", "例え.テスト", "debian。org", "debian.org.",
    " debian.org ", "blogspot.com", "", "gnu.org",
]  # fmt: skip
_FREE = st.one_of(st.sampled_from(_PIECES), st.text(alphabet=st.characters(codec="utf-8"), max_size=4))
_URLS = st.one_of(
    st.builds(
        lambda *parts: "".join(parts),
        st.sampled_from(_SCHEMES),
        st.sampled_from(["", "user:pw@", "a@b@", "x:"]),
        st.sampled_from(_HOSTS),
        st.sampled_from(["", ":8080", ":", ".", "@debian.org"]),
        st.lists(_FREE, max_size=6).map("".join),
    ),
    st.lists(_FREE, min_size=1, max_size=10).map("".join),
)


@pytest.fixture(scope="module")
def extra_oracle(offline_tldextract):
    return _oracle(**_EXTRA)


@pytest.mark.parametrize("numba", [True, False], ids=["numba", "fallback"])
def test_generated_urls_get_datatroves_decisions(extra_oracle, numba: bool) -> None:
    @settings(max_examples=300, deadline=None)
    @given(urls=st.lists(_URLS, min_size=1, max_size=30))
    def check(urls: list[str]) -> None:
        urls = [u for u in urls if u]  # datatrove asserts a URL is there
        assert _ours(urls, **_EXTRA) == _theirs(extra_oracle, urls)

    with numba_backend(FILTER, numba):
        check()


_JSON_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _JSON_TEXT)
_VALUES = st.recursive(
    st.one_of(_SCALARS, st.sampled_from(_PIECES)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["url", "a"]), inner, max_size=2)
    ),
    max_leaves=4,
)
_METAS = st.one_of(
    st.builds(
        json.dumps,
        st.dictionaries(st.sampled_from(["url", "a", "URL", "warc_date", "u\"rl", "xurl"]), _VALUES, max_size=4),
        ensure_ascii=st.booleans(),
        indent=st.sampled_from([None, 0, 1]),
        separators=st.sampled_from([None, (",", ":"), (" , ", " : ")]),
    ),
    st.builds(lambda a, b: '{"url": ' + a + ', "url": ' + b + "}", *(st.builds(json.dumps, _VALUES),) * 2),
    st.builds(
        lambda v, pad: pad + '{"url":' + pad + json.dumps(v) + pad + "}" + pad,
        _VALUES,
        st.sampled_from(["", " ", "\n", "\x0b"]),
    ),
    st.builds(lambda t: '{"url": "' + t + '"}', _JSON_TEXT),  # raw text: control characters, quotes, backslashes
    st.builds(lambda t: '["url", ' + json.dumps(t) + "]", _JSON_TEXT),
    st.builds(lambda t: '{"a": "url", "b": ' + json.dumps(t) + "}", _JSON_TEXT),
    st.just('{"url": "https://x.org/", }'),
    st.just('{"url": 01}'),
    st.none(),
)  # fmt: skip


def _json_url(meta: str | None) -> str | None:
    """The oracle: Python's json reading the meta, its ``url`` when a string."""
    try:
        value = json.loads(meta).get("url") if meta else None
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


@settings(max_examples=500, deadline=None)
@given(metas=st.lists(_METAS, min_size=1, max_size=20))
def test_generated_metas_give_jsons_url(metas: list[str | None]) -> None:
    """The Python path's batch read, and the kernel's: where it reads a meta, the URL json reads in it."""
    batch = pa.RecordBatch.from_pydict({"doc_id": [str(i) for i in range(len(metas))], "meta": metas})
    expected = [_json_url(m) for m in metas]
    assert url_rules._batch_urls(batch) == expected
    from pipeline.filter.rules import url_numba

    column = batch.column("meta").cast(pa.string())  # all None: Arrow's null type
    data, offsets = url_rules._string_bytes(column)
    start, stop = (np.empty(len(metas), np.int64) for _ in range(2))
    valid = column.is_valid().to_numpy(zero_copy_only=False)
    url_numba.meta_urls(data, offsets, valid, url_rules._LITERALS, start, stop)
    read = {i: bytes(data[start[i] : stop[i]]).decode() for i in range(len(metas)) if start[i] >= 0}
    assert read == {i: expected[i] for i in read}


def test_the_kernel_reads_ingests_metas_itself() -> None:
    """The metas ingest writes (json.dumps, sort_keys, ensure_ascii=False) are read by the kernel, not by json."""
    from pipeline.filter.rules import url_numba

    url = "https://例え.テスト/パス?q=1#f"
    meta = {"url": url, "warc_date": "2024-01-01", "n": -1.5e3, "ok": True, "z": None}
    metas = [
        json.dumps(meta, sort_keys=True, ensure_ascii=False),
        json.dumps(meta),  # escaped characters: json reads it
        '{"url":"u","b":[1]}',  # a list: json reads it
    ]
    column = pa.array(metas)
    data, offsets = url_rules._string_bytes(column)
    start, stop = (np.empty(len(metas), np.int64) for _ in range(2))
    url_numba.meta_urls(data, offsets, np.ones(len(metas), bool), url_rules._LITERALS, start, stop)
    assert bytes(data[start[0] : stop[0]]).decode() == url
    assert list(start[1:]) == [-1, -1]


@pytest.mark.parametrize(
    "data",
    [b"a.com\n\nb.com\n", b"a.com", b"a.com\na.com\n", b"#x\na.com\n", b" a.com\n", b"a.com \n", b"a.com \n\n",
     b"a.com\r\nb.com\n", b"a.com\rb.com", b"a\x1fb\n", b"\n", b"", "é.com\n".encode(), b"a.com\t", b"\ta.com",
     b"a\x0cb", b"x\n#y\n"],
)  # fmt: skip
def test_a_plain_list_file_is_hashed_as_its_entries(data: bytes) -> None:
    """The byte-level read of a domain list (ASCII, nothing to strip) gives the hashes of the entries datatrove's
    text read gives: the lines of a text-mode file, a line starting with "#" left out, the others stripped."""
    lines = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    wanted = {line.strip() for line in lines if line[0] != "#"}
    assert list(url_rules._list_hashes(data)) == sorted({xxhash.xxh3_64_intdigest(e.encode()) for e in wanted})
