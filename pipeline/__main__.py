"""``python -m pipeline``: see :mod:`pipeline.cli`."""

import sys

from pipeline.cli import main

sys.exit(main())
