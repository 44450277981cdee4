"""python3 -m pmqa.cases: inspect, check and copy case files.

    python3 -m pmqa.cases info FILE...      one line per file (exit 2 if any is invalid)
    python3 -m pmqa.cases header FILE       print the JSON header
    python3 -m pmqa.cases copy IN OUT       read IN strictly, write it again as OUT
    python3 -m pmqa.cases write-sample OUT  write the interop sample case
"""

from __future__ import annotations

import argparse
import json
import sys

from .case_file import CaseFileError, read_case_file, write_case_file
from .sample import sample_case_file


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m pmqa.cases", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("info", help="check files and print one line each")
    p.add_argument("files", nargs="+")
    p = sub.add_parser("header", help="print a file's JSON header")
    p.add_argument("file")
    p = sub.add_parser("copy", help="read a file strictly and write it again")
    p.add_argument("src")
    p.add_argument("dst")
    p = sub.add_parser("write-sample", help="write the interop sample case")
    p.add_argument("dst")
    args = parser.parse_args(argv)

    try:
        if args.command == "info":
            bad = 0
            for path in args.files:
                try:
                    cf = read_case_file(path)
                    logits = "logits" if cf.logits is not None else "no logits"
                    print(f"{path}: {cf.describe()} contract={cf.contract} {logits} producer={cf.producer!r}")
                except CaseFileError as e:
                    print(f"error: {e}", file=sys.stderr)
                    bad += 1
            return 2 if bad else 0
        if args.command == "header":
            with open(args.file, "rb") as f:
                length = int.from_bytes(f.read(8), "little")
                if length > (16 << 20):
                    raise CaseFileError(args.file, "header length", f"{length} bytes is over the limit")
                print(json.dumps(json.loads(f.read(length)), indent=2, ensure_ascii=False))
            return 0
        if args.command == "copy":
            write_case_file(args.dst, read_case_file(args.src))
            return 0
        if args.command == "write-sample":
            write_case_file(args.dst, sample_case_file())
            return 0
    except CaseFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
