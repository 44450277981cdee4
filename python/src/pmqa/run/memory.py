"""Out of memory, said so: what pmqa-run tells of a worker killed by SIGKILL (the signal the kernel's
out-of-memory killer sends), beside "killed by SIGKILL": the worker's peak RSS (from the kernel's
rusage when the runner reaps it), the memory it had (the cgroup's memory.max, else the machine's),
the case file's size, and whether the kernel counted an OOM kill in pmqa-run's cgroup while the case
ran (cgroup v2 memory.events, v1 memory.oom_control: "oom_kill N"). Linux; elsewhere the words
that cannot be known are left out.
"""

from __future__ import annotations

import os
from typing import Optional, Tuple


def _cgroup_dirs() -> list:
    """The folders of this process's memory cgroup (v2 first, then v1)."""
    out = []
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            out.append(os.path.join("/sys/fs/cgroup", path.lstrip("/")))
        elif "memory" in controllers.split(","):
            out.append(os.path.join("/sys/fs/cgroup/memory", path.lstrip("/")))
    return out


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def oom_kills() -> Optional[int]:
    """The kernel's count of processes its OOM killer ended in this process's memory cgroup (None:
    unknown here)."""
    for d in _cgroup_dirs():
        for name in ("memory.events", "memory.oom_control"):
            text = _read(os.path.join(d, name))
            if text is None:
                continue
            for line in text.splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip().isdigit():
                    return int(value)
    return None


def memory_limit() -> Tuple[Optional[int], str]:
    """(bytes, what they are): the cgroup's limit where one is set, else this machine's memory."""
    for d in _cgroup_dirs():
        for name in ("memory.max", "memory.limit_in_bytes"):
            text = (_read(os.path.join(d, name)) or "").strip()
            if text.isdigit() and int(text) < (1 << 60):  # v1 writes a huge number for "no limit"
                return int(text), f"the cgroup's {name}"
    text = _read("/proc/meminfo") or ""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            fields = line.split()
            if len(fields) >= 2 and fields[1].isdigit():
                return int(fields[1]) * 1024, "this machine's memory"
    return None, ""


def size_words(n: int) -> str:
    """1536 -> "1.5 KiB", 3.2e9 -> "2.98 GiB"."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} bytes"


def oom_words(peak_rss: Optional[int], case_bytes: Optional[int], kills_before: Optional[int],
              kills_after: Optional[int]) -> str:
    """What follows "killed by SIGKILL" in a case's message."""
    if kills_before is not None and kills_after is not None and kills_after > kills_before:
        head = (f"out of memory: the kernel's OOM killer ended {kills_after - kills_before} process(es) of pmqa-run's "
                f"cgroup while the case ran (oom_kill {kills_before} -> {kills_after})")
    else:
        head = ("out of memory? (SIGKILL is what the kernel's OOM killer sends, as does a kill -9"
                + ("; the cgroup counted no OOM kill" if kills_before is not None and kills_after is not None else "")
                + ")")
    parts = [head]
    if peak_rss:
        limit, what = memory_limit()
        parts.append(f"the worker's peak RSS was {size_words(peak_rss)}"
                     + (f" of {size_words(limit)} ({what})" if limit else ""))
    else:
        parts.append("the worker's peak RSS is unknown")
    if case_bytes is not None:
        parts.append(f"the case file is {size_words(case_bytes)}")
    return "; ".join(parts)


__all__ = ["memory_limit", "oom_kills", "oom_words", "size_words"]
