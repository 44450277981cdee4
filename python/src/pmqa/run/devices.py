"""--devices: the device ids it names, and each device's worker settings."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import List

from .options import UsageError
from .text import clean_line


def resolve_devices(args: argparse.Namespace) -> List[str]:
    """--devices LIST|all as the device ids the workers get ("0", "1", ...)."""
    text = str(args.devices).strip()
    if args.in_process:
        raise UsageError("--devices runs one worker process per device; --in-process runs none")
    if args.device:
        raise UsageError("--device and --devices: give one (--devices sets each worker's device)")
    if text == "all":
        count = count_devices(args.backend, args.startup_timeout_s)
        if count < 1:
            raise UsageError("--devices all: torch sees no CUDA/ROCm device here")
        return [str(i) for i in range(count)]
    parts = text.split(",")
    if not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in parts):
        raise UsageError(f"--devices {clean_line(text)}: expected a comma list of device indices (e.g. 0,1) or all")
    ids = [str(int(p)) for p in parts]
    dupes = sorted({d for d in ids if ids.count(d) > 1}, key=int)
    if dupes:
        raise UsageError(f"--devices {text}: device {', '.join(dupes)} given twice (one worker per device)")
    return ids


def count_devices(backend: str, timeout_s: float) -> int:
    """The devices --devices all means: torch's CUDA/ROCm devices (counted in a child process, so this
    one never initialises a device), or on the numpy backend one fake device per core available."""
    if backend == "numpy":
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return os.cpu_count() or 1
    code = "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=timeout_s if timeout_s and timeout_s > 0 else None)
    except subprocess.TimeoutExpired:
        raise UsageError(f"--devices all: counting torch's devices took over {timeout_s:g} s") from None
    if p.returncode != 0 or not p.stdout.strip().isdigit():
        last = (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"--devices all: cannot count torch's devices: {clean_line(last)}")
    return int(p.stdout.strip())


def device_args(args: argparse.Namespace, device: str) -> argparse.Namespace:
    """A worker's settings for one of --devices: torch gets cuda:N, the numpy backend a fake device."""
    ns = argparse.Namespace(**vars(args))
    ns.device = f"cuda:{device}" if args.backend == "torch" else f"fake:{device}"
    return ns
