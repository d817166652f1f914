"""Re-probe of issue 46 as a new user would: every case through ``python -m pipeline`` with a config and input
files built here (WARC records by warcio, gzip members by hand); prints one row per case: outcome, held/FAILED.

    python bench/probe_issue46.py [--keep DIR]

Cases that need no Spark (config checks) run first; then one whole run holds the web archive, emptied-document
and bad-words cases, and the later cases (refused rerun, --force, explain, sample, training split) reuse it.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import pyarrow.parquet as pq
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

ROWS: list[tuple[str, str, bool]] = []
PY = sys.executable


def cli(*args: str, cwd: Path) -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and seconds of ``python -m pipeline ARGS``."""
    start = time.monotonic()
    done = subprocess.run([PY, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def last_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip() and not ln.startswith(("[", "26/", "WARN"))]
    return lines[-1] if lines else ""


def row(case: str, outcome: str, held: bool) -> None:
    ROWS.append((case, outcome, held))
    print(f"{'held  ' if held else 'FAILED'} | {case} | {outcome}", flush=True)


def one_line_error(case: str, root: Path, config: str, key: str, *extra: str, command: str = "run") -> None:
    """A config that must stop before Spark with exit 2 and one line naming ``key``."""
    (root / "c.yaml").write_text(config)
    rc, _, err, secs = cli(command, "--config", "c.yaml", *extra, cwd=root)
    line = last_line(err)
    raw = "Traceback" in err or "Py4J" in err
    held = rc == 2 and key in line and not raw and "ingest" not in err.split("error")[0]
    row(case, f"rc={rc} {secs:.1f}s: {line[:150]}", held)


def base(root: Path, filters: str, extra: str = "") -> str:
    return f"""output: {root / "out"}
sources:
  - {{name: a, paths: ["{root / "a.jsonl"}"], format: jsonl}}
filter: {filters}
tokenizer: {{train: true, vocab_size: 300}}
{extra}"""


def config_cases(root: Path) -> None:
    (root / "a.jsonl").write_text(json.dumps({"text": "A small document about a fox."}) + "\n")
    (root / "notft.bin").write_bytes(b"this is not a fastText model at all" * 10)
    for case, flt, key in [
        (
            "8 model_path not fastText",
            f'[{{name: language, languages: [en], model_path: "{root}/notft.bin"}}]',
            "filter.0.model_path",
        ),
        ("10 languages: []", "[{name: language, languages: []}]", "filter.0.languages"),
        ("10 min_score: .nan", "[{name: language, languages: [en], min_score: .nan}]", "filter.0.min_score"),
        ("10 email_replacement: []", "[{name: pii, email_replacement: []}]", "filter.0.email_replacement"),
        ("10 phone_region: ZZ", "[{name: pii, remove_phones: true, phone_region: ZZ}]", "filter.0.phone_region"),
        (
            "10 missing model_path",
            f'[{{name: language, languages: [en], model_path: "{root}/nope.bin"}}]',
            "filter.0.model_path",
        ),
        ("10 negative min_doc_words", "[{name: gopher_quality, min_doc_words: -5}]", "filter.0.min_doc_words"),
        ("10 missing bad-words file", f'[{{name: c4, bad_words_file: "{root}/nope.txt"}}]', "filter.0.bad_words_file"),
        ("11 min_score: -0.1", "[{name: language, languages: [fr], min_score: -0.1}]", "filter.0.min_score"),
        ("11 min_score: 1.5", "[{name: language, languages: [fr], min_score: 1.5}]", "filter.0.min_score"),
        ("11 min_score: .inf", "[{name: language, languages: [fr], min_score: .inf}]", "filter.0.min_score"),
        ("11 dup_line_frac: 2.5", "[{name: gopher_repetition, dup_line_frac: 2.5}]", "filter.0.dup_line_frac"),
        ("11 line_punct_thr: -1", "[{name: fineweb, line_punct_thr: -1}]", "filter.0.line_punct_thr"),
        ("11 unknown language code", "[{name: language, languages: [xx]}]", "filter.0.languages"),
        ("12 same filter twice", "[{name: c4}, {name: c4, min_num_sentences: 1}]", "filter.1"),
    ]:
        one_line_error(case, root, base(root, flt), key)
    one_line_error("small: filter command, no filter list", root, base(root, "[]"), "filter", command="filter")
    (root / "c.yaml").write_text(base(root, "[]"))
    one_line_error(
        "small: training-indices, no training section", root, base(root, "[]"), "training", command="training-indices"
    )
    one_line_error(
        "small: --set filter index out of range",
        root,
        base(root, "[{name: c4}]"),
        "filter.3",
        "--set",
        "filter.3.min_num_sentences=2",
    )
    one_line_error(
        "small: --set a source's filter it lacks",
        root,
        base(root, "[{name: c4}]"),
        "sources.0.filter",
        "--set",
        "sources.0.filter.0.min_num_sentences=2",
    )


def warc_record(writer: WARCWriter, url: str, body: bytes, fields: list[tuple[str, str]]) -> None:
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"), *fields], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))


def raw_record(url: str, block: bytes) -> bytes:
    head = (
        f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n"
        f"WARC-Record-ID: <urn:uuid:{abs(hash(url)) % 10**12:012d}-0000-0000-0000-000000000000>\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(block)}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


def page(text: str) -> bytes:
    return f"<html><body><p>{text}</p></body></html>".encode()


def build_web(root: Path) -> dict[str, str]:
    """A .warc.gz: a member of 5 records (3 pages, 2 of them sharing no URL), chunked, gzip and deflate bodies,
    a bracketed blocked URL, headers running into the body. Returns texts expected in documents by label."""
    members = []
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=False)
    for k in range(5):
        warc_record(w, f"http://multi.test/{k}", page(f"Member record number {k} of five."), [])
    members.append(gzip.compress(buf.getvalue()))
    body = page("Chunked paragraph text. " * 5)
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + 30]), body[i : i + 30]) for i in range(0, len(body), 30))
    for url, data, fields in [
        ("http://chunk.test/", chunked + b"0\r\n\r\n", [("Transfer-Encoding", "chunked")]),
        ("http://gz.test/", gzip.compress(page("Gzip encoded body text.")), [("Content-Encoding", "gzip")]),
        ("http://df.test/", zlib.compress(page("Deflate encoded body text.")), [("Content-Encoding", "deflate")]),
        ("<http://blocked.test/z>", page("A page of a blocked domain."), []),
    ]:
        buf = io.BytesIO()
        warc_record(WARCWriter(buf, gzip=False), url, data, fields)
        members.append(gzip.compress(buf.getvalue()))
    for k in range(2):  # two pages with an empty URL: not "the same page"
        members.append(
            gzip.compress(
                raw_record("", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + page(f"Empty url page {k}."))
            )
        )
    members.append(
        gzip.compress(
            raw_record(
                "http://hdr.test/",
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n<html><body><p>Header ran into body.</p></body></html>",
            )
        )
    )
    (root / "web").mkdir()
    (root / "web" / "a.warc.gz").write_bytes(b"".join(members))
    (root / "block.txt").write_text("blocked.test\n")
    return {
        "multi": "Member record number",
        "chunk": "Chunked paragraph text.",
        "gzip": "Gzip encoded body text.",
        "deflate": "Deflate encoded body text.",
    }


def run_cases(root: Path) -> None:
    labels = build_web(root)
    docs = [
        f"The quick brown fox number {k} jumps over the lazy dog. It was a sunny day. Birds sang." for k in range(8)
    ]
    docs += [
        "only@example.com",
        "one@example.com two@example.org",
        "no punctuation at all here",
        "Mail me at keep@example.com please. The rest stays. Birds sang. Dogs ran.",
    ]
    (root / "a.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs))
    (root / "words.txt").write_text("zzzz\n")
    cfg = f"""output: {root / "run"}
sources:
  - {{name: a, paths: ["{root / "a.jsonl"}"], format: jsonl}}
  - {{name: w, paths: ["{root / "web"}"], format: warc}}
ingest: {{domain_blocklist: "{root / "block.txt"}"}}
filter:
  - {{name: pii, email_replacement: ""}}
  - {{name: c4, min_num_sentences: 0, bad_words_file: "{root / "words.txt"}"}}
tokenizer: {{train: true, vocab_size: 300}}
"""
    (root / "r.yaml").write_text(cfg)
    rc, out, err, secs = cli("run", "--config", "r.yaml", cwd=root)
    row("run A (web archive, emptying filters)", f"rc={rc} {secs:.0f}s {last_line(err)[:100] if rc else ''}", rc == 0)
    if rc:
        print(err[-3000:])
        return
    run = root / "run"
    man = json.loads((run / "manifest.json").read_text())
    acc = man["accounting"]
    ingest = man["stages"]["ingest"]["counts"]["sources"]
    texts = pq.read_table(run / "documents").to_pydict()
    wtexts = [t for t, s in zip(texts["text"], texts["source"], strict=True) if s == "w"]
    rej_w = ingest["w"]["rejects_by_reason"]
    row(
        "3 member of 5 records",
        f"read {ingest['w']['documents_read']}, multi texts {sum(labels['multi'] in t for t in wtexts)}",
        sum(labels["multi"] in t for t in wtexts) == 5,
    )
    chunk = [t for t in wtexts if labels["chunk"] in t]
    row("4 chunked body", repr(chunk[0][:40]) if chunk else "missing", bool(chunk) and chunk[0].startswith("Chunked"))
    for k in ("gzip", "deflate"):
        row(
            f"4 Content-Encoding {k}",
            f"found {sum(labels[k] in t for t in wtexts)}",
            any(labels[k] in t for t in wtexts),
        )
    row(
        "5 bracketed blocked URL",
        f"rejects {rej_w}",
        rej_w.get("blocked_domain") == 1 and not any("blocked domain" in t for t in wtexts),
    )
    row(
        "5 two empty URLs both kept",
        f"{sum('Empty url page' in t for t in wtexts)} of 2",
        sum("Empty url page" in t for t in wtexts) == 2,
    )
    row("small: headers into body", f"rejects {rej_w}", rej_w.get("malformed_warc_header") == 1)
    fa = acc["a"]["filtered"]
    row("2 emptied documents removed", f"a filtered {fa}", fa.get("pii.empty") == 2 and fa.get("c4.empty", 0) >= 1)
    for name, r in acc.items():
        ok = r["documents_read"] == r["rejected"] + sum(r["removed"].values()) + r["written"]
        row(f"accounting equation {name}", json.dumps({k: r[k] for k in ("documents_read", "rejected", "written")}), ok)
    kept = pq.read_table(run / "filter" / "documents").to_pydict()
    blank = [t for t in kept["text"] if not t.strip()]
    row("2 no blank text after filter", f"{len(blank)} blank", not blank)
    # explain a kept, rewritten document: the filtered text
    ids = [d for d, t in zip(kept["doc_id"], kept["text"], strict=True) if "The rest stays" in t]
    rc, out, err, _ = cli("explain", str(run), "--", str(ids[0]), cwd=root) if ids else (9, "", "no id", 0)
    row(
        "small: explain shows filtered text",
        f"rc={rc} email shown={'keep@example.com' in out}",
        rc == 0 and "The rest stays" in out and "keep@example.com" not in out,
    )
    rc, out, err, _ = cli("sample", str(run), "--filtered", "nosuch", cwd=root)
    row("small: sample --filtered nosuch", f"rc={rc}: {last_line(err)[:100]}", rc != 0 and "nosuch" in err)
    rc, out, err, _ = cli("sample", str(run), "--filtered", "pii.empty", "-n", "5", cwd=root)
    row(
        "small: sample --filtered pii.empty",
        f"rc={rc} shows only@: {'only@example.com' in out}",
        rc == 0 and "only@example.com" in out,
    )
    # item 1: edit the bad-words list
    (root / "words.txt").write_text("fox\n")
    rc, out, err, secs = cli("run", "--config", "r.yaml", cwd=root)
    row(
        "1 bad-words edited: rerun",
        f"rc={rc} {secs:.0f}s: {last_line(err)[:120]}",
        rc != 0 and "stage 'filter'" in last_line(err) and "[filter] already finished" not in err,
    )
    rc, out, err, secs = cli("run", "--config", "r.yaml", "--force", "filter", cwd=root)
    acc = json.loads((run / "manifest.json").read_text())["accounting"]
    bad = acc["a"]["filtered"].get("c4.document_removed_with_badwords", 0)
    row("1 --force filter drops the fox texts", f"rc={rc} badwords drops {bad}", rc == 0 and bad == 8)
    # item 7: an empty validation split (a holds few documents)
    rc, out, err, secs = cli(
        "training-indices",
        "--config",
        "r.yaml",
        "--set",
        "training.tokenizer={class: t}",
        "--set",
        "training.sequence_length=8",
        "--set",
        "training.samples=[10,1,0]",
        "--set",
        'training.split="98,2,0"',
        cwd=root,
    )
    line = last_line(err)
    row(
        "7 empty valid split",
        f"rc={rc} {secs:.0f}s: {line[:150]}",
        rc != 0 and "valid" in line and "Py4J" not in err and "Traceback" not in err,
    )
    # item 9: a stage directory that cannot be written (a file where its directory goes; root ignores modes)
    shutil.rmtree(run / "dedup", ignore_errors=True)
    (run / "dedup").write_text("in the way")
    rc, out, err, secs = cli("run", "--config", "r.yaml", "--force", "dedup", cwd=root)
    line = last_line(err)
    row(
        "9 stage directory blocked by a file (root ignores modes)",
        f"rc={rc} {secs:.0f}s: {line[:150]}",
        rc != 0 and "dedup" in line and "Py4J" not in err and "Traceback" not in err,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", help="work in this directory and keep it")
    parser.add_argument("--only", choices=["config", "run"])
    args = parser.parse_args()
    root = Path(args.keep or tempfile.mkdtemp(prefix="probe46-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        if args.only != "run":
            (root / "config").mkdir(exist_ok=True)
            config_cases(root / "config")
        if args.only != "config":
            (root / "spark").mkdir(exist_ok=True)
            run_cases(root / "spark")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    failed = [r for r in ROWS if not r[2]]
    print(f"{len(ROWS) - len(failed)} held, {len(failed)} failed")


if __name__ == "__main__":
    main()
