"""``python -m pipeline``: see :mod:`pipeline.cli.commands`; a missing third-party package is one line, exit 1."""

import sys

from pipeline.errors import missing_dependency, one_line

try:
    from pipeline.cli.commands import main
except ImportError as exc:
    missing = missing_dependency(exc)
    if missing is None:
        raise
    print(f"error: {one_line(missing)}", file=sys.stderr)
    sys.exit(missing.exit_code)

sys.exit(main())
