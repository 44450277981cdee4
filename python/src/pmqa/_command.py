"""The `pmqa` console script: runs the C++ command the wheel carries (pmqa/_bin/pmqa).

pip puts console scripts on the venv's PATH; a native executable in package data it does not. This
shim is that bridge: it replaces itself with the binary (exec), so exit statuses, signals and
output are the command's own.
"""
import os
import sys
from pathlib import Path

BINARY = Path(__file__).resolve().parent / "_bin" / "pmqa"


def main() -> int:
    if not os.access(BINARY, os.X_OK):
        print(f"pmqa: the command is not part of this installation ({BINARY} is missing): pmqa imported from "
              f"{Path(__file__).resolve().parent} is a source tree, not a built wheel. Install pmqa "
              "(pip install -v --no-build-isolation ./python) or run build/cli/pmqa from ./quickstart check.",
              file=sys.stderr)
        return 2
    os.execv(str(BINARY), ["pmqa", *sys.argv[1:]])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())
