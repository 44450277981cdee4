"""Shards: the split of a suite into N parts (model/include/pmqa/model/shard.hpp, through pmqa._core).

``--shard K/N`` of pmqa-run and ``--pmqa-shard K/N`` of the pytest plugin use the very split pmqa
gen, check and verify make: cases sorted by work (descending), then by name, each to the shard with
the least work so far.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

from .._native import core

shard_work = core.shard_work  # (batch, next_n, heads, head_dim, max_model_len) -> int


def parse_shard(text: str) -> Tuple[int, int]:
    """(K, N) from "K/N", 1 <= K <= N <= 4096; ValueError with the C++ message otherwise."""
    return core.parse_shard(str(text))


def assign_shards(items: Sequence[Tuple[str, int]], count: int) -> List[int]:
    """The shard (1-based) of each (name, work) item, in the items' order."""
    return core.assign_shards([(str(n), int(w)) for n, w in items], count)


def in_shard(items: Sequence[Tuple[str, int]], shard: Tuple[int, int]) -> List[bool]:
    """Which items shard (K, N) takes."""
    k, n = shard
    return [s == k for s in assign_shards(items, n)]
