"""`python -m fakepeer` is `ryusen-conform`."""

import sys

from fakepeer.cli import main

sys.exit(main())
