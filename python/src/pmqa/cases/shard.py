"""Shards: the split of a suite into N parts that pmqa's C++ tools make (model/include/pmqa/model/shard.hpp).

``--shard K/N`` of pmqa-run and ``--pmqa-shard K/N`` of the pytest plugin use this; pmqa gen, check and
verify use the C++ one. The split depends only on each case's name and work (``shard_work``, from its
shape): cases sorted by work (descending), then by name, each goes to the shard with the least work
so far (the lowest index on a tie). A test compares this with the C++ split on random suites.
"""
from __future__ import annotations

import re
from typing import List, Sequence, Tuple

_SHARD = re.compile(r"([0-9]+)/([0-9]+)")


def parse_shard(text: str) -> Tuple[int, int]:
    """(K, N) from "K/N", 1 <= K <= N <= 4096; ValueError naming the text otherwise."""
    m = _SHARD.fullmatch(str(text))
    if not m:
        raise ValueError(f"--shard {text}: expected K/N, two whole numbers (e.g. 2/8)")
    k, n = int(m.group(1)), int(m.group(2))
    if not 1 <= n <= 4096:
        raise ValueError(f"--shard {text}: N must be 1 to 4096")
    if not 1 <= k <= n:
        raise ValueError(f"--shard {text}: K must be 1 to N (shards are numbered from 1)")
    return k, n


def shard_work(batch: int, next_n: int, heads: int, head_dim: int, max_model_len: int) -> int:
    """B*N*H*D*max_model_len + 1: what balances the shards (the C++ shard_work)."""
    work = 1
    for v in (batch, next_n, heads, head_dim, max_model_len):
        work *= max(int(v), 0)
    return work + 1


def assign_shards(items: Sequence[Tuple[str, int]], count: int) -> List[int]:
    """The shard (1-based) of each (name, work) item, in the items' order."""
    if count < 1:
        raise ValueError("assign_shards: count must be at least 1")
    order = sorted(range(len(items)), key=lambda i: (-int(items[i][1]), _c_order(items[i][0]), i))
    load = [0] * count
    shard = [0] * len(items)
    for i in order:
        least = min(range(count), key=lambda k: (load[k], k))
        load[least] += int(items[i][1])
        shard[i] = least + 1
    return shard


def _c_order(name: str) -> bytes:
    """Names compare as the C++ std::string does: by their UTF-8 bytes."""
    return name.encode("utf-8", "surrogateescape")


def in_shard(items: Sequence[Tuple[str, int]], shard: Tuple[int, int]) -> List[bool]:
    """Which items shard (K, N) takes."""
    k, n = shard
    return [s == k for s in assign_shards(items, n)]
