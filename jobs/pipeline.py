"""spark-submit entry point for the whole run, every stage in order (SPEC §8); logic lives in `pipeline`.

    spark-submit --py-files pretrain_pipeline.zip jobs/pipeline.py --config CONFIG [--date YYYY-MM-DD]
        [--set k=v ...] [--force STAGE]
"""

import os
import sys

# This script is named like the package, and Python puts the script's directory first on sys.path:
# drop it so that `import pipeline` finds the package (from --py-files or an install), not this file.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

from pipeline.schedule import job_main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(job_main("run"))
