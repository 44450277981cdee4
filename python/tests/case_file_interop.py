"""The cross-language round trips' Python half (python/CMakeLists.txt): numpy arrays through the
binding to the C++ writer and back.

    case_file_interop.py copy IN OUT        read IN into numpy arrays, write them again as OUT
    case_file_interop.py write-sample OUT   build the interop sample from its formulas and write it
"""
import sys

import pmqa.cases as pc
from case_file_sample import sample_case_file


def main(argv) -> int:
    try:
        if len(argv) == 3 and argv[0] == "copy":
            pc.write_case_file(argv[2], pc.read_case_file(argv[1]))
        elif len(argv) == 2 and argv[0] == "write-sample":
            pc.write_case_file(argv[1], sample_case_file())
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except pc.CaseFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
