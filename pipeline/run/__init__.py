"""Running stages: the runner (order, resume, force), run context, manifest, accounting, report, run lock."""
