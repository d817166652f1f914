"""The rule filters (Gopher repetition, Gopher quality, C4, FineWeb) vs datatrove 0.10.1's own, one core each.

Same real documents (tests/filter_corpus.py: the shared fixtures, Python sources, Debian HTML documentation and
copyright files), decisions checked identical (reason per document, C4's rewritten text). Prints per filter MB/s
of CPU time for datatrove and ours and their ratio; then both again with word and sentence splits looked up from
the first run (the rules alone, what is left once the splitting costs nothing), and the ratio of datatrove's
whole filter to our rules.

    python -m bench filter_rules --megabytes 20
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import pyarrow as pa

from bench.harness import write_result
from pipeline.filter.rules import c4, fineweb, gopher_quality, gopher_repetition
from tests.filter_corpus import real_documents

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
BATCH = 512


def _ours(name: str) -> Any:
    return {
        "gopher_repetition": gopher_repetition.GopherRepetitionFilter,
        "gopher_quality": gopher_quality.GopherQualityFilter,
        "c4": c4.C4Filter,
        "fineweb": fineweb.FineWebFilter,
    }[name]()


def _theirs(name: str) -> Any:
    from datatrove.pipeline import filters

    return {
        "gopher_repetition": filters.GopherRepetitionFilter,
        "gopher_quality": filters.GopherQualityFilter,
        "c4": filters.C4QualityFilter,
        "fineweb": filters.FineWebQualityFilter,
    }[name]()


def run_theirs(name: str, texts: list[str]) -> tuple[float, list[tuple[str | None, str]]]:
    """CPU seconds of datatrove's filter over ``texts`` and its (reason, text) per document."""
    from datatrove.data import Document

    step = _theirs(name)
    out: list[tuple[str | None, str]] = []
    start = time.process_time()
    for i, text in enumerate(texts):
        doc = Document(text=text, id=str(i))
        result = step.filter(doc)
        out.append((f"{name}.{result[1]}" if isinstance(result, tuple) else None, doc.text))
    return time.process_time() - start, out


def run_ours(name: str, texts: list[str]) -> tuple[float, list[tuple[str | None, str]]]:
    """CPU seconds of our filter over ``texts`` in batches and its (reason, text) per document."""
    step = _ours(name)
    out: list[tuple[str | None, str]] = []
    start = time.process_time()
    for at in range(0, len(texts), BATCH):
        chunk = texts[at : at + BATCH]
        batch = pa.RecordBatch.from_pydict({"doc_id": range(len(chunk)), "source": ["b"] * len(chunk), "text": chunk})
        result = step.apply(batch)
        rewritten = chunk if result.text is None else result.text.to_pylist()
        out += [(result.reason[i], rewritten[i]) for i in range(len(chunk))]
    return time.process_time() - start, out


def _recording(split: Callable[..., Any], memo: dict[Any, Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = (args, tuple(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = split(*args, **kwargs)
        return list(memo[key])

    return wrapper


class Splits:
    """Replace the split functions of both sides by recording wrappers; then every split is a lookup."""

    def __init__(self) -> None:
        import datatrove.utils.text as dt_text

        self.dt_text = dt_text
        self.original = dt_text.split_into_parts
        self.ours = {m: (m.__dict__.get("split_words"), m.__dict__.get("split_sentences")) for m in _MODULES}

    def __enter__(self) -> Splits:
        theirs: dict[Any, Any] = {}
        self.dt_text.split_into_parts = _recording(self.original.__wrapped__, theirs)
        memo_w: dict[Any, Any] = {}
        memo_s: dict[Any, Any] = {}
        for module, (words, sentences) in self.ours.items():
            if words is not None:
                module.split_words = _recording(words, memo_w)  # type: ignore[attr-defined]
            if sentences is not None:
                module.split_sentences = _recording(sentences, memo_s)  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        self.dt_text.split_into_parts = self.original
        for module, (words, sentences) in self.ours.items():
            if words is not None:
                module.split_words = words  # type: ignore[attr-defined]
            if sentences is not None:
                module.split_sentences = sentences  # type: ignore[attr-defined]


_MODULES = (gopher_repetition, gopher_quality, c4, fineweb)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=float, default=20.0, help="documents to filter (default 20 MB)")
    parser.add_argument("--filters", default="gopher_repetition,gopher_quality,c4,fineweb")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    per_kind = int(args.megabytes * 1e6 / 3)
    docs = real_documents(FIXTURES, per_kind, args.seed, max_file=100_000)
    texts = [text for _, text in docs]
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"{len(texts)} documents, {megabytes:.1f} MB (UTF-8); CPU seconds of one process pinned to one core")
    _ours("gopher_quality").apply(pa.RecordBatch.from_pydict({"doc_id": [0], "source": ["b"], "text": ["warm up"]}))
    head = f"{'filter':<18} {'datatrove':>10} {'ours':>8} {'ratio':>6} | {'dt rules':>9} {'our rules':>9} "
    print(head + f"{'rules ratio':>11} {'dt/our rules':>12} {'agree':>7}")
    figures: dict[str, tuple[float, str]] = {}
    for name in args.filters.split(","):
        with Splits():
            dt_seconds, theirs = run_theirs(name, texts)
            our_seconds, ours = run_ours(name, texts)
            dt_rules, theirs_again = run_theirs(name, texts)
            our_rules, ours_again = run_ours(name, texts)
        agree = sum(a == b for a, b in zip(theirs, ours, strict=True))
        assert theirs == theirs_again and ours == ours_again
        mbps = [megabytes / s for s in (dt_seconds, our_seconds, dt_rules, our_rules)]
        print(
            f"{name:<18} {mbps[0]:>7.2f} MB/s {mbps[1]:>5.2f} {our_seconds and dt_seconds / our_seconds:>6.2f} | "
            f"{mbps[2]:>6.2f} MB/s {mbps[3]:>6.2f} {dt_rules / our_rules:>11.1f} {dt_seconds / our_rules:>12.1f} "
            f"{agree}/{len(texts)}",
            flush=True,
        )
        if agree != len(texts):
            raise SystemExit(f"{name}: {len(texts) - agree} documents differ from datatrove")
        figures |= {f"{name} ours/datatrove": (dt_seconds / our_seconds, "x"), f"{name} ours": (mbps[1], "MB/s")}
        figures[f"{name} rules ours/datatrove"] = (dt_rules / our_rules, "x")
    write_result("filter_rules", args, figures)


if __name__ == "__main__":
    main()
