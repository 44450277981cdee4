"""Where pmqa's reviewed data lives: the one lookup for every part of the package.

The files are reviewed in the source tree (the C++ libraries compile the same files in); a wheel
carries copies in pmqa/data/. `data_path` looks in the package first, then in the source tree the
package sits in (python/src/pmqa -> the repository root), so a checkout works without installing.
`read_json` reads one of them (or a file a user names) as JSON, a DataError naming the file on any problem.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Union

# name in pmqa/data -> its path in the source tree
IN_TREE = {
    "arch_matrix.json": "fixtures/arch_matrix.json",
    "arch_table.json": "dispatch/data/arch_table.json",
    "envelopes": "cases/data/envelopes",
    "kernel_names.json": "cases/data/kernel_names.json",
}

PACKAGE_DATA = Path(__file__).resolve().parents[1] / "data"  # pmqa/data, beside this pmqa/cases
SOURCE_ROOT = Path(__file__).resolve().parents[4]  # python/src/pmqa/cases/data.py -> the repository root


class DataError(Exception):
    """A reviewed data file that is missing, unreadable or invalid."""


def data_path(name: str) -> Path:
    """A file or folder of pmqa's reviewed data (IN_TREE's names): package data first, then the tree."""
    if name not in IN_TREE:
        raise DataError(f"{name} is not one of pmqa's data files ({', '.join(IN_TREE)})")
    packaged = PACKAGE_DATA / name
    if packaged.exists():
        return packaged
    in_tree = SOURCE_ROOT / IN_TREE[name]
    if in_tree.exists():
        return in_tree
    raise DataError(f"{name} is neither in {PACKAGE_DATA} (an installed package) nor at {in_tree} (the source tree)")


def read_json(path: Union[str, Path]) -> Any:
    """A data file's JSON; an unreadable file or invalid JSON is a DataError naming the file."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: {exc}") from exc
