"""The Spark jobs of a run, from its event log: what each job was for, how long it took, and a count per step.

    python -m bench vs_bigcode --corpus /tmp/pipeline-bench/release-corpus-200mb --mb 20 --ours-only \\
        --event-log /tmp/events
    python -m bench spark_jobs /tmp/events            # the newest log in the directory, or a log file

One line per job: its id, the step that ran it (the ``spark.job.description`` the stages set, e.g.
``dedup: verify``), its seconds, the stages it ran (of those it lists; AQE submits each shuffle stage of a
query as a job of its own), its tasks, the JVM CPU seconds of those tasks (a Python task's own CPU is not in
it) and the call site. Then jobs and seconds per step. Every job costs planning and scheduling on the driver
whatever its size, so the job count per step is the figure to compare before and after a change.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Job:
    """One Spark job of the log."""

    job_id: int
    step: str
    call_site: str
    stages: list[int]
    started_ms: int
    ended_ms: int | None = None
    tasks: int = 0
    cpu_s: float = 0.0
    ran: set[int] = field(default_factory=set)

    @property
    def seconds(self) -> float:
        return 0.0 if self.ended_ms is None else (self.ended_ms - self.started_ms) / 1000


def read_jobs(log: Path) -> list[Job]:
    """The jobs of an event log (JSON lines), in submission order."""
    jobs: dict[int, Job] = {}
    stage_job: dict[int, int] = {}
    with open(log) as f:
        for line in f:
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                props = event.get("Properties") or {}
                stages = [s["Stage ID"] for s in event["Stage Infos"]]
                job = Job(
                    event["Job ID"],
                    props.get("spark.job.description") or "",
                    props.get("callSite.short") or "",
                    stages,
                    event["Submission Time"],
                )
                jobs[job.job_id] = job
                stage_job.update({s: job.job_id for s in stages})
            elif kind == "SparkListenerJobEnd" and event["Job ID"] in jobs:
                jobs[event["Job ID"]].ended_ms = event["Completion Time"]
            elif kind == "SparkListenerTaskEnd" and event["Stage ID"] in stage_job:
                job = jobs[stage_job[event["Stage ID"]]]
                job.tasks += 1
                job.ran.add(event["Stage ID"])
                job.cpu_s += (event.get("Task Metrics") or {}).get("Executor CPU Time", 0) / 1e9
    return [jobs[k] for k in sorted(jobs)]


def newest_log(path: Path) -> Path:
    """``path`` itself, or the newest file in the directory ``path``; exits when there is none."""
    if path.is_file():
        return path
    logs = sorted((p for p in path.glob("*") if p.is_file()), key=lambda p: p.stat().st_mtime) if path.is_dir() else []
    if not logs:
        raise SystemExit(f"event log: no file at {path}")
    return logs[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log", type=Path, help="an event log file, or a directory (its newest file)")
    args = parser.parse_args()
    log = newest_log(args.log)
    jobs = read_jobs(log)
    print(f"{log}: {len(jobs)} jobs")
    print(f"{'job':>4} {'step':24}{'seconds':>8}{'stages':>8}{'tasks':>7}{'JVM CPU':>9}  call site")
    per_step: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for job in jobs:
        stages = f"{len(job.ran)}/{len(job.stages)}"
        print(
            f"{job.job_id:4} {job.step[:24]:24}{job.seconds:8.2f}{stages:>8}{job.tasks:7}{job.cpu_s:9.2f}"
            f"  {job.call_site[:70]}"
        )
        per_step[job.step][0] += 1
        per_step[job.step][1] += job.seconds
    print("per step: " + ", ".join(f"{step or '(none)'} {n:.0f} jobs {s:.1f} s" for step, (n, s) in per_step.items()))


if __name__ == "__main__":
    main()
