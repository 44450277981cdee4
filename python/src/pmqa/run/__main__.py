"""python3 -m pmqa.run --op MODULE:FUNCTION --convention NAME --cases DIR --out DIR [--bench] ..."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
