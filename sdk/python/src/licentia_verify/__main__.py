"""python -m licentia_verify: the licentia-verify command line."""

import sys

from .cli import main

sys.exit(main())
