"""``python -m pipeline``: see :mod:`pipeline.cli.commands`."""

import sys

from pipeline.cli.commands import main

sys.exit(main())
