"""The whole pipeline on corpora of 50, 100 and 200 MB (issue: one resumable run): seconds per stage
and the growth factor from each size to the next (target: close to linear, i.e. about 2.0 per doubling).

Run: python -m bench pipeline [--sizes 50 100 200]
"""

from __future__ import annotations

import argparse
import shutil
import time

from bench.harness import DATA, config_text, corpus, session, write_result
from pipeline.config import load_config_text
from pipeline.run.manifest import Manifest
from pipeline.run.registry import STAGE_NAMES
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext


def run_once(spark, megabytes: float, overrides: list[str]) -> dict[str, float]:
    """Seconds per stage (and in all) for one fresh run over a corpus of ``megabytes`` MB."""
    raw = corpus(megabytes)
    out = DATA / f"run-pipeline-{megabytes:g}"
    shutil.rmtree(out, ignore_errors=True)
    ctx = RunContext(load_config_text(config_text(raw, out), overrides), spark=spark)
    started = time.time()
    run_stages(ctx, log=lambda *_: None)
    seconds = {name: info["seconds"] for name, info in Manifest(str(out)).data["stages"].items()}
    seconds["total"] = round(time.time() - started, 1)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=float, nargs="+", default=[50, 100, 200])
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    spark = session()
    rows = {mb: run_once(spark, mb, args.overrides) for mb in args.sizes}
    columns = [*[n for n in STAGE_NAMES if n in rows[args.sizes[0]]], "total"]
    print("MB     " + "".join(f"{c:>17}" for c in columns))
    for mb, secs in rows.items():
        print(f"{mb:<7g}" + "".join(f"{secs[c]:>17.1f}" for c in columns))
    figures: dict[str, tuple[float, str]] = {}
    for small, big in zip(args.sizes, args.sizes[1:], strict=False):
        growth = {c: rows[big][c] / max(rows[small][c], 1e-9) for c in columns}
        print(
            f"growth {small:g}->{big:g} MB (size x{big / small:g}): "
            + ", ".join(f"{c} {g:.2f}" for c, g in growth.items())
        )
        figures[f"growth {small:g}->{big:g} MB"] = (growth["total"], "x")
    for mb, secs in rows.items():
        figures.update({f"{mb:g} MB {c}": (secs[c], "s") for c in columns})
    write_result("pipeline", args, figures)
    spark.stop()


if __name__ == "__main__":
    main()
