"""Decontamination as a Filter (docs/stages.md, Filters): a document sharing at least ``min_matches`` distinct word
n-grams with one benchmark reference is dropped as ``contaminated`` (docs/dedup_index.md, Decontamination).

Pure numpy and pyarrow over one batch; the reference table is built once (on Spark, by the dedup stage) and
shipped to every task with the filter.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipeline.decontaminate.ngrams import ReferenceTable, contamination, ngram_hashes
from pipeline.stage_api.filter import FilterResult

REASON = "contaminated"
# the columns a drop adds to dedup/contaminated/: the reference it shares most with, how many n-grams, one of them
FIELDS = pa.schema([("reference", pa.string()), ("matches", pa.int64()), ("ngram", pa.string())])


class ContaminationFilter:
    """Drops documents that share ``min_matches`` or more distinct ``n``-grams with one reference of ``table``."""

    name = REASON

    def __init__(self, table: ReferenceTable, n: int, min_matches: int) -> None:
        self.table, self.n, self.min_matches = table, n, min_matches

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask, reason and detail per document; the reference, match count and one shared n-gram of a drop."""
        texts = batch.column("text").to_pylist()
        keep = np.ones(len(texts), dtype=bool)
        reason: list[str | None] = [None] * len(texts)
        detail: list[str | None] = [None] * len(texts)
        fields: dict[str, list[str | int | None]] = {f.name: [None] * len(texts) for f in FIELDS}
        for i, text in enumerate(texts):
            hashes, grams = ngram_hashes(text, self.n)
            found = contamination(hashes, self.table, self.min_matches)
            if found is None:
                continue
            ref, count, example = found
            name = self.table.names[ref]
            keep[i], reason[i] = False, REASON
            detail[i] = (
                f"{count} distinct {self.n}-grams shared with reference {name!r} (min_matches {self.min_matches})"
            )
            fields["reference"][i], fields["matches"][i] = name, count
            fields["ngram"][i] = grams[int(np.searchsorted(hashes, np.uint64(example)))]
        arrays = {f.name: pa.array(fields[f.name], f.type) for f in FIELDS}
        return FilterResult(keep, reason, detail, fields=arrays)
