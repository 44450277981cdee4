"""Where pmqa-run's reviewed data lives: the one lookup.

pmqa's data files sit in the source tree's fixtures/data/ (the C++ library compiles the envelopes in
from there); an installed package carries copies in its own data/ folder. `data_path` looks in the
package first, then in the source tree this package sits in.
"""

from __future__ import annotations

from pathlib import Path


class DataError(Exception):
    """A reviewed data file that is missing, unreadable or invalid."""


def data_path(name: str) -> Path:
    """fixtures/data/<name> (a file or a folder): package data first, then the source tree."""
    here = Path(__file__).resolve().parent
    packaged = here / "data" / name
    if packaged.exists():
        return packaged
    in_tree = here.parents[3] / "fixtures" / "data" / name
    if in_tree.exists():
        return in_tree
    raise DataError(f"{name} is neither in {here / 'data'} (an installed package) nor in {in_tree.parent} "
                    "(the source tree)")
