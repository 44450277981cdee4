"""python3 -m pmqa.run --op MODULE:FUNCTION --convention NAME --cases DIR --out DIR [--bench] ..."""

import os
import sys

try:
    from .cli import main
except KeyboardInterrupt:  # a Ctrl-C this early: one line, as main() says it (pmqa.run.cli)
    os.write(2, b"pmqa-run: interrupted (SIGINT) before the run started: no case was run\n")
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main())
