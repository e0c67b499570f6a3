"""`python -m lessons_lib.cli`: the `lessons` command without its console script."""

import sys

from lessons_lib.cli import main

sys.exit(main())
