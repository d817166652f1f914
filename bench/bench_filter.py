"""Benchmark: each filter of the filter stage beside datatrove's, on the same real documents, one core each.

    python -m bench filter                 # 100 MB of real documents (corpora/real.py)
    python -m bench filter --mb 10 --only language pii

How it measures: docs/benchmarks.md, Method notes, filter.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from bench.harness import arguments, best_of, write_result
from corpora.real import build, read
from pipeline.numba_backend import FILTER

LANGUAGES, MIN_SCORE = ["en"], 0.65
# name -> (datatrove's module, datatrove's class)
RULE_FILTERS = {
    "gopher_repetition": ("gopher_repetition_filter", "GopherRepetitionFilter"),
    "gopher_quality": ("gopher_quality_filter", "GopherQualityFilter"),
    "c4": ("c4_filters", "C4QualityFilter"),
    "fineweb": ("fineweb_quality_filter", "FineWebQualityFilter"),
}
ORDER = ["language", "pii", *RULE_FILTERS, "fasttext_classifier"]


Row = tuple[float, float, str, bool]  # one filter's line of the table: theirs and ours CPU s, what was checked, ok
REPEAT = [2]  # rounds per side (--repeat); the best is kept: a first round also pays for fresh memory pages


def _batches(texts: list[str], rows: int) -> list[pa.RecordBatch]:
    whole = pa.table({"doc_id": pa.array(range(len(texts)), pa.int64()), "text": pa.array(texts, pa.string())})
    whole = whole.add_column(1, "source", pa.array(["bench"] * len(texts), pa.string()))
    return whole.to_batches(max_chunksize=rows) if texts else []


def _ours(filter_: Any, batches: list[pa.RecordBatch]) -> list[Any]:
    return [filter_.apply(batch) for batch in batches]


def bench_language(texts: list[str], batches: list[pa.RecordBatch]) -> Row:
    """fastText's predict per document (datatrove's call and decision) vs LanguageFilter."""
    import fasttext

    from pipeline.filter.rules.language import LanguageFilter, default_model_path

    model = fasttext.load_model(default_model_path())

    def theirs() -> list[tuple[str, float, bool]]:
        out = []
        for text in texts:
            labels, probs = model.predict(text.replace("\n", " "), k=-1)
            scores = {label[9:]: p for label, p in zip(labels, probs, strict=True)}
            best = max(scores.items(), key=lambda kv: kv[1])
            out.append((best[0], best[1], any(scores.get(lang, 0.0) > MIN_SCORE for lang in LANGUAGES)))
        return out

    ours_filter = LanguageFilter(languages=LANGUAGES, min_score=MIN_SCORE)
    ours_filter.apply(batches[0].slice(0, 1))  # the model and the kernel load once per process, outside the timing
    theirs_s, expected = best_of(theirs, REPEAT[0])

    ours_s, results = best_of(lambda: _ours(ours_filter, batches), REPEAT[0])
    labels = [x for r in results for x in r.columns["language"].to_pylist()]
    scores = np.concatenate([r.columns["language_score"].to_numpy() for r in results])
    keep = np.concatenate([r.keep for r in results])
    same_label = sum(a == b[0] for a, b in zip(labels, expected, strict=True))
    diff = np.abs(scores - np.array([e[1] for e in expected]))
    worst, same_keep = float(diff.max()), int((keep == np.array([e[2] for e in expected])).sum())
    checked = f"label {same_label}/{len(texts)}, keep {same_keep}/{len(texts)}, max score diff {worst:.1e}"
    checked += f" ({int((diff > 1e-6).sum())} over 1e-6)"
    ok = same_label == same_keep == len(texts) and worst <= 1e-6
    return theirs_s, ours_s, checked, ok


def bench_fasttext_classifier(texts: list[str], batches: list[pa.RecordBatch]) -> Row:
    """datatrove's FastTextClassifierFilter (document mode) vs ours, on a softmax bigram model (dim 100, the
    train-classifier stage's defaults with the issue's ``wordNgrams: 2``) trained here on a quarter of the documents
    (labels: longer than the median or not), keep_labels [[long, 0.5]]. Beside it: fastText's own batched predict
    of the same lines, and the train-classifier stage's training task vs ``fasttext.train_supervised`` alone."""
    import resource
    import subprocess

    scratch = tempfile.TemporaryDirectory(prefix="bench-fasttext-")  # two models of about 0.8 GB each
    folder = Path(scratch.name)

    from datatrove.data import Document
    from datatrove.pipeline.filters.fasttext_filter import FastTextClassifierFilter
    from fasttext.FastText import _FastText

    from pipeline.filter.rules.fasttext_classifier import FastTextClassifierFilter as Ours
    from pipeline.train_classifier.batches import SAMPLE_SCHEMA, TrainPlan, train_task
    from pipeline.train_classifier.prepare import training_args, training_line

    median = sorted(map(len, texts))[len(texts) // 2]
    sample = [("hq" if len(t) > median else "cc", t) for t in texts[::4]]
    args = training_args({"wordNgrams": 2}, 0)
    (folder / "train.txt").write_text("".join(training_line(label, t) for label, t in sample), encoding="utf-8")
    model = str(folder / "model.bin")

    def children() -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    def alone() -> None:  # train_supervised on the stage's own training file and arguments, in a child too
        train = "import fasttext,json,sys; fasttext.train_supervised(input=sys.argv[1], **json.loads(sys.argv[3]))"
        code = train + ".save_model(sys.argv[2])"
        subprocess.run([sys.executable, "-c", code, str(folder / "train.txt"), model, json.dumps(args)], check=True)

    columns = [range(len(sample)), [lab for lab, _ in sample], ["bench"] * len(sample), [t for _, t in sample]]
    rows = pa.RecordBatch.from_arrays([pa.array(c) for c in columns], schema=SAMPLE_SCHEMA)
    plan = TrainPlan("hq", "cc", 0.0, args, str(folder / "stage.bin"), str(folder / "t.txt"), str(folder / "h.txt"))
    clock = lambda: time.process_time() + children()  # noqa: E731
    train_alone = best_of(alone, REPEAT[0], clock=clock)[0]
    train_stage = best_of(lambda: list(train_task([rows], plan)), REPEAT[0], clock=clock)[0]
    same_bytes = Path(model).read_bytes() == Path(plan.model).read_bytes()
    print(f"training: train_supervised alone {train_alone:.2f} s, the stage's task {train_stage:.2f} s "
          f"({train_stage / train_alone:.2f}x), the same model bytes: {same_bytes}")  # fmt: skip
    library = _FastText(model_path=model)
    oracle = FastTextClassifierFilter(model, keep_labels=[("hq", 0.5)])
    oracle._model = library
    ours_filter = Ours(model=model, keep_labels=[["hq", 0.5]])
    ours_filter.apply(batches[0].slice(0, 1))  # the model loads once per process, outside the timing
    lines = [t.strip().replace("\n", "") for t in texts]
    bare_s, _ = best_of(lambda: library.predict(lines, k=-1), REPEAT[0])
    theirs_s, expected = best_of(
        lambda: [bool(oracle.filter(Document(text=t, id=str(i)))) for i, t in enumerate(texts)], REPEAT[0]
    )
    ours_s, results = best_of(lambda: _ours(ours_filter, batches), REPEAT[0])
    keep = np.concatenate([r.keep for r in results])
    same = int((keep == np.array(expected)).sum())
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"fastText's batched predict alone {mb / bare_s:.2f} MB/s: ours {bare_s / ours_s:.1f}x it")
    scratch.cleanup()
    return theirs_s, ours_s, f"keep {same}/{len(texts)}", same == len(texts) and same_bytes


def bench_pii(texts: list[str], batches: list[pa.RecordBatch]) -> Row:
    """datatrove's PIIFormatter (cycles restarted per document) vs PIIFilter."""
    from datatrove.pipeline.formatters.pii import PIIFormatter

    from pipeline.filter.rules.pii import PIIFilter

    formatter = PIIFormatter()

    def theirs() -> list[str]:
        out = []
        for text in texts:
            formatter.emails_replacer._replace_i = formatter.ip_replacer._replace_i = 0
            out.append(formatter.format(text))
        return out

    for text in texts[:50]:  # first calls (compute kernels) outside the timing, for both
        formatter.format(text)
    PIIFilter().apply(batches[0].slice(0, 50))
    theirs_s, expected = best_of(theirs, REPEAT[0])
    # a fresh filter per round: its IP verdicts start empty
    ours_s, results = best_of(lambda: _ours(PIIFilter(), batches), REPEAT[0])
    got: list[str] = []
    for batch, result in zip(batches, results, strict=True):
        got += (result.text if result.text is not None else batch.column("text")).to_pylist()
    same = sum(a == b for a, b in zip(got, expected, strict=True))
    changed = sum(a != b for a, b in zip(texts, expected, strict=True))
    checked = f"text {same}/{len(texts)} ({changed} rewritten)"
    return theirs_s, ours_s, checked, same == len(texts)


def bench_rules(name: str, texts: list[str], batches: list[pa.RecordBatch]) -> Row:
    """datatrove's rule filter vs ours (keep identical, and the text for C4), when ours exists."""
    from datatrove.data import Document

    from pipeline.filter import registry

    their_module, their_class = RULE_FILTERS[name]
    ours_filter = registry.filter_class(name)()

    theirs_filter = getattr(importlib.import_module(f"datatrove.pipeline.filters.{their_module}"), their_class)()
    for i, text in enumerate(texts[:50]):  # first calls (the word tokenizer, caches) outside the timing, for both
        theirs_filter.filter(Document(text=text, id=str(i)))
    ours_filter.apply(batches[0].slice(0, 50))
    docs: list[Any] = []

    def theirs() -> list[bool]:
        docs[:] = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]  # C4 rewrites a document in place
        out = []
        for doc in docs:
            verdict = theirs_filter.filter(doc)
            out.append(verdict[0] if isinstance(verdict, tuple) else bool(verdict))
        return out

    theirs_s, expected = best_of(theirs, REPEAT[0])
    ours_s, results = best_of(lambda: _ours(ours_filter, batches), REPEAT[0])
    keep = np.concatenate([r.keep for r in results])
    same = int((keep == np.array(expected)).sum())
    checked = f"keep {same}/{len(texts)} ({len(texts) - sum(expected)} dropped)"
    ok = same == len(texts)
    if name == "c4":
        got: list[str] = []
        for batch, result in zip(batches, results, strict=True):
            got += (result.text if result.text is not None else batch.column("text")).to_pylist()
        kept = [i for i, k in enumerate(expected) if k]
        same_text = sum(got[i] == docs[i].text for i in kept)
        checked += f", text {same_text}/{len(kept)} kept"
        ok = ok and same_text == len(kept)
    return theirs_s, ours_s, checked, ok


BENCHES = {"language": bench_language, "pii": bench_pii, "fasttext_classifier": bench_fasttext_classifier}


def main() -> None:
    """Build or reuse the corpus, run the filters and print the table."""
    parser = arguments(__doc__, mb=100.0, batch_rows=1000, repeat=2)
    parser.add_argument("--only", nargs="*", choices=ORDER, default=ORDER, help="the filters to run")
    args = parser.parse_args()
    REPEAT[0] = max(1, args.repeat)
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core for both sides
    FILTER.set(True)  # compiled kernels from the first call (a worker takes its first 2 MB through numpy)
    texts = [r["text"] for r in read(build(args.mb))]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    batches = _batches(texts, args.batch_rows)
    print(f"{len(texts)} real documents, {mb:.1f} MB, one core, CPU seconds, load average {os.getloadavg()[0]:.2f}")
    print(f"{'filter':<18} {'theirs MB/s':>14} {'ours MB/s':>10} {'ratio':>7}  checked")
    figures: dict[str, tuple[float, str]] = {}
    for name in args.only:
        theirs_s, ours_s, checked, ok = BENCHES.get(name, partial(bench_rules, name))(texts, batches)
        theirs, ours, note = mb / theirs_s, mb / ours_s, "" if ok else "MISMATCH"
        print(f"{name:<18} {theirs:>14.2f} {ours:>10.2f} {ours / theirs:>6.1f}x  {checked} {note}", flush=True)
        figures |= {f"{name} theirs": (theirs, "MB/s"), f"{name} ours": (ours, "MB/s")}
    write_result("filter", args, figures)


if __name__ == "__main__":
    main()
