"""The run's accounting equation (docs/stages.md, Accounting): every document read is rejected, removed, or written."""

from __future__ import annotations

from pipeline.errors import PipelineError


class AccountingError(PipelineError, RuntimeError):
    """Some documents are unaccounted for; the message lists the sources and figures."""


def account(stages: dict[str, dict]) -> dict[str, dict]:
    """Per source: read, rejected, duplicates removed, survivors, written; raises if they don't add up.

    ``stages`` maps stage names to their recorded counts (the manifest's ``stages.*.counts``).
    """
    ingest = stages["ingest"]["sources"]
    dedup = stages["dedup"]["sources"]
    merged = stages["merge-blend"]["merge"]["sources"]
    table, problems = {}, []
    for name, read in ingest.items():
        row = {
            "documents_read": read["documents_read"],
            "rejected": read["rejected"],
            "duplicates_removed": dedup[name]["duplicates_removed"],
            "survivors": dedup[name]["survivors"],
            "written": merged[name]["documents"] if merged[name]["published"] else 0,
        }
        if row["documents_read"] != row["rejected"] + row["duplicates_removed"] + row["survivors"]:
            problems.append(f"{name}: read {row['documents_read']} != rejected {row['rejected']} + "
                            f"removed {row['duplicates_removed']} + survivors {row['survivors']}")
        if row["survivors"] != row["written"]:
            problems.append(f"{name}: {row['survivors']} survivors but {row['written']} documents in megatron/")
        if dedup[name]["documents"] != dedup[name]["duplicates_removed"] + dedup[name]["survivors"]:
            problems.append(f"{name}: dedup read {dedup[name]['documents']} != removed "
                            f"{dedup[name]['duplicates_removed']} + survivors {dedup[name]['survivors']}")
        if read["documents"] != dedup[name]["documents"]:
            problems.append(f"{name}: ingest wrote {read['documents']} documents, "
                            f"dedup read {dedup[name]['documents']}")
        table[name] = row
    if problems:
        raise AccountingError("documents unaccounted for: " + "; ".join(problems))
    return table
