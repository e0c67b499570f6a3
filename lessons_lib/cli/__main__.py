import sys

from lessons_lib.cli import main

sys.exit(main())
