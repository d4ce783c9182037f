"""``python -m devutils``: the same command as ``devutils``."""

import sys

from devutils.cli import main

if __name__ == "__main__":
    sys.exit(main())
