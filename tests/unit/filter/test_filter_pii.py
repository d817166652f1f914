"""PIIFilter against datatrove 0.10.1's PIIFormatter (a fresh one per document) on real documents full of
addresses, and phone numbers against phonenumbers' own matcher."""

from __future__ import annotations

import glob
import inspect
import ipaddress
import socket

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline.errors import UsageError
from pipeline.filter.rules.pii import PIIFilter
from tests.oracles import missing_tool, require_oracle

pii_oracle = require_oracle("datatrove.pipeline.formatters.pii")
phonenumbers = require_oracle("phonenumbers")

EDGE_CASES = [
    "mail me at jane.doe@example.net",  # at the end of the text
    "bob@mail.example.org wrote this",  # at the start
    "a@b.co c@d.co e@f.co g@h.co",  # the cycle runs over more addresses than replacements
    "x@[192.168.1.1] and y@[8.8.8.8] and z@[1.2.3.tag:]",  # bracketed literals, datatrove's truncated form
    "éa@b.com ña@b.com _a@b.com",  # \b before the local part: a letter that is not ASCII is a word character
    "a@b.c@d.e.f and @x.com and me@ and o'neil+tag@sub-domain.example.com.",
    "public 8.8.8.8, 1.1.1.1 and 93.184.216.34; private 10.0.0.1 192.168.0.1 127.0.0.1 172.16.5.4 169.254.1.1",
    "edge 255.255.255.255 0.0.0.0 256.1.1.1 1.2.3.4.5.6 01.2.3.4 8.8.8.08 1234.5.6.7 9.9.9.9",
    "IPv6 2001:4860:4860::8888 and ::ffff:8.8.4.4 and fe80::1",
    "8.8.8.8",  # the whole text
    "mixed: root@8.8.8.8 and user@[8.8.8.8] then 8.8.8.8@x.com",
    "@property\ndef f(): ...  @foo@bar.com @@a@b.c x@y a@[1.2.3.4] @ .@. a.@b.c",  # runs that hold no address
    "",
]


def _oracle(text: str, **kwargs: object) -> str:
    """A fresh datatrove PIIFormatter per document: the cycle restarted, as ours is."""
    return pii_oracle.PIIFormatter(**kwargs).format(text)


def _oracle_counts(text: str, **kwargs: object) -> tuple[int, int]:
    """How many e-mails and IPs datatrove replaces, counted with its own regexes and validator."""
    formatter = pii_oracle.PIIFormatter(**kwargs)
    emails = len(formatter.emails_replacer.regex.findall(text))
    after = formatter.emails_replacer.replace(text)
    ips = [m for m in formatter.ip_replacer.regex.findall(after) if formatter.ip_replacer.validator(m)]
    return emails, len(ips)


def _real_documents() -> list[str]:
    copyrights = sorted(glob.glob("/usr/share/doc/*/copyright"))
    if len(copyrights) < 50:
        missing_tool("Debian copyright files (/usr/share/doc/*/copyright) not found: not a Debian-like system")
    docs = [open(p, encoding="utf-8", errors="replace").read() for p in copyrights]
    for module in (ipaddress, socket):  # Python sources that mention IPs in their docs and tests
        docs.append(inspect.getsource(module))
    for path in sorted(glob.glob("/usr/share/doc/git/RelNotes/*.txt"))[:50]:
        docs.append(open(path, encoding="utf-8", errors="replace").read())
    return docs


def _run(docs: list[str], **kwargs: object) -> tuple[list[str], object]:
    result = PIIFilter(**kwargs).apply(pa.RecordBatch.from_pydict({"text": pa.array(docs, pa.string())}))
    assert result.keep.all() and all(r is None for r in result.reason)
    out = docs if result.text is None else result.text.to_pylist()
    return out, result


def test_real_documents_equal_datatrove() -> None:
    docs = _real_documents()
    expected = [_oracle(d) for d in docs]
    out, result = _run(docs)
    assert [i for i, (a, b) in enumerate(zip(out, expected, strict=True)) if a != b] == []
    changed = sum(a != b for a, b in zip(docs, expected, strict=True))
    assert result.changed == changed and changed > 100  # the oracle itself found many addresses to replace
    counts = [_oracle_counts(d) for d in docs]
    assert result.measures["pii.emails"].tolist() == [float(e) for e, _ in counts]
    assert result.measures["pii.ips"].tolist() == [float(i) for _, i in counts]
    assert sum(i for _, i in counts) > 0 and np.isnan(result.measures["pii.phones"]).all()


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"only_remove_public_ips": False},
        {"remove_emails": False},
        {"remove_ips": False},
        {"email_replacement": "<EMAIL>", "ip_replacement": ["<IP1>", "<IP2>"]},
        {"email_replacement": "", "ip_replacement": ""},  # removal joins the text around an address
        {"email_replacement": ("9.9.9.9",)},  # a replacement that is itself a public IP
    ],
)
def test_edge_cases_equal_datatrove(kwargs: dict[str, object]) -> None:
    docs = [*EDGE_CASES, "1.2.3.x@y.com.4", "8.8.8.a@b.c8", " ".join(EDGE_CASES)]
    expected = [_oracle(d, **kwargs) for d in docs]
    out, result = _run(docs, **kwargs)
    assert out == expected
    assert result.changed == sum(a != b for a, b in zip(docs, expected, strict=True))


def test_cycle_restarts_per_document_and_ignores_partitioning() -> None:
    docs = ["write to a@b.com", "or to c@d.com", "or e@f.com and g@h.com"]
    out, _ = _run(docs)
    assert out == [_oracle(d) for d in docs]
    assert out[1] == "or to email@example.com"  # datatrove's one formatter would have moved on to the second
    singles = [_run([d])[0][0] for d in docs]
    assert singles == out


def test_phones_match_phonenumbers() -> None:
    text = (
        "Call our office at (650) 253-0000 or +1 212-736-3100. London: +44 20 7946 0958; Berlin +49 30 901820. "
        "Not numbers: version 1.2.3, year 2024, 12345. Fax 415-555-2671 and mail info@example.net."
    )
    kwargs = {"remove_phones": True, "phone_replacement": ["<P1>", "<P2>"], "phone_region": "US"}
    out, result = _run([text], **kwargs)
    base = _oracle(text)
    matches = list(phonenumbers.PhoneNumberMatcher(base, "US", leniency=phonenumbers.Leniency.VALID))
    assert len(matches) >= 3
    expected, done = [], 0
    for i, match in enumerate(matches):
        expected += [base[done : match.start], ["<P1>", "<P2>"][i % 2]]
        done = match.end
    assert out == ["".join([*expected, base[done:]])]
    assert result.measures["pii.phones"].tolist() == [len(matches)]


def test_nulls_and_unchanged_batches() -> None:
    batch = pa.RecordBatch.from_pydict({"text": pa.array(["no address here", None], pa.string())})
    result = PIIFilter().apply(batch)
    assert result.text is None and result.changed == 0
    batch = pa.RecordBatch.from_pydict({"text": pa.array(["a@b.com", None], pa.large_string())})
    result = PIIFilter().apply(batch)
    assert result.text is not None and result.text.to_pylist() == ["email@example.com", None]
    assert result.text.type == pa.large_string()


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"remove_emails": "yes"}, "remove_emails"),
        ({"email_replacement": []}, "email_replacement"),
        ({"ip_replacement": [1]}, "ip_replacement"),
        ({"phone_region": "USA"}, "phone_region"),
        ({"remove_phones": True, "phone_region": "QQ"}, "phone_region"),
    ],
)
def test_bad_arguments_name_the_key(kwargs: dict[str, object], key: str) -> None:
    with pytest.raises(UsageError, match=key) as error:
        PIIFilter(**kwargs)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
@pytest.mark.parametrize("sliced", [False, True])
def test_replace_rows_equals_arrow_s_replace_with_mask(kind, sliced):
    """Rows replaced by byte-range copies equal Arrow's own ``replace_with_mask``: first and last rows, empty
    and non-ASCII texts, nulls elsewhere, a sliced column."""
    import random

    from pipeline.text.replace_rows import replace_rows

    rng = random.Random(3)
    values = [None if rng.random() < 0.1 else "".join(rng.choice("ab é€\n@.") for _ in range(rng.randint(0, 9)))
              for _ in range(60)]  # fmt: skip
    column = pa.array(values, kind)
    if sliced:
        column = column.slice(5, 50)
    candidates = [i for i in range(len(column)) if column[i].is_valid]
    for rows in ([candidates[0], candidates[-1]], sorted(rng.sample(candidates, 12)), candidates):
        texts = [rng.choice(["", "new ✓ text", "x" * 40]) for _ in rows]
        where = np.zeros(len(column), dtype=bool)
        where[rows] = True
        expected = pc.replace_with_mask(column, pa.array(where), pa.array(texts, kind))
        got = replace_rows(column, rows, texts)
        got.validate(full=True)
        assert got.type == kind and got.equals(expected)
