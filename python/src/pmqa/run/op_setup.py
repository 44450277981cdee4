"""What a worker sets up before its first case: the backend, the op (and its metadata function), the
envelope and the kernel names, as the CaseRunner that runs the cases."""

from __future__ import annotations

import argparse
import importlib
from typing import Any, Callable, List, Tuple

from pmqa.cases.envelope import Envelope, EnvelopeError, make_envelope, read_envelope_file

from .backend import BackendError
from .backend_registry import make_backend
from .case_run import CaseRunner
from .conventions import CONVENTIONS, RunOptions
from .kernel_names import KernelNamesError, load_kernel_names
from .option_checks import parse_kwargs
from .options import UsageError
from .worker import SetupError


def load_callable(spec: str, what: str) -> Tuple[Callable[..., Any], Any]:
    """MODULE:FUNCTION (FUNCTION may be dotted) -> (the callable, the module)."""
    if spec.count(":") != 1:
        raise UsageError(f"{what} {spec!r}: expected MODULE:FUNCTION")
    module_name, attr = spec.split(":")
    if not module_name or not attr:
        raise UsageError(f"{what} {spec!r}: expected MODULE:FUNCTION")
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - any import failure is reported the same way
        raise UsageError(f"{what} {spec}: cannot import {module_name}: {type(e).__name__}: {e}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{what} {spec}: {module_name} has no attribute {attr}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{what} {spec}: {attr} is a {type(obj).__name__}, not callable")
    return obj, module


def load_envelope(convention: str, platform: str, overlays: List[str], backend) -> Envelope:
    """The convention's envelope on --platform (auto: the backend's), with the --envelope overlays."""
    try:
        files = [read_envelope_file(p) for p in overlays]
        chosen = backend.platform() if platform == "auto" else platform
        return make_envelope(convention, chosen, files)
    except EnvelopeError as e:
        raise UsageError(f"--envelope: {e}") from None


def build_case_runner(args: argparse.Namespace, heartbeat: Callable[[], None] = lambda: None,
                      stage: Callable[[str], None] = lambda text: None) -> CaseRunner:
    """Everything that touches the device: the backend, the op, its envelope (a worker process, or
    pmqa-run itself with --in-process). A usage error is a SetupError. stage(text) says what it is
    doing (a worker's start-up timeout names it)."""
    try:
        convention = CONVENTIONS[args.convention]
        kwargs = parse_kwargs(args.op_kwarg, convention.reserved_kwargs, convention.name)
        stage(f"setting up the {args.backend} backend (importing it, finding the device)")
        backend = make_backend(args.backend, args.device, args.num_sms)
        envelope = load_envelope(convention.name, args.platform, args.envelope, backend)
        stage(f"importing the op's module ({args.op.split(':')[0]})")
        op, module = load_callable(args.op, "--op")
        stage("setting up the op's metadata function and kernel names")
        metadata_fn = None
        if args.metadata_fn:
            if convention.name not in ("deepgemm", "vllm-rocm"):
                raise UsageError(f"--metadata-fn: only the deepgemm and vllm-rocm conventions use one, not "
                                 f"{convention.name}")
            metadata_fn, _ = load_callable(args.metadata_fn, "--metadata-fn")
        elif convention.name == "deepgemm":
            metadata_fn = getattr(module, "get_paged_mqa_logits_metadata", None)
            if not callable(metadata_fn):
                raise UsageError(f"--op {args.op}: deepgemm needs a schedule-metadata function and "
                                 f"{module.__name__} has no get_paged_mqa_logits_metadata; name one with "
                                 f"--metadata-fn MODULE:FUNCTION")
        names = load_kernel_names(args.kernel_names) if args.expect_path else None
    except (UsageError, BackendError, KernelNamesError) as e:
        raise SetupError(str(e)) from None
    options = RunOptions(op_kwargs=kwargs, out_row_pad=args.out_row_pad, metadata_fn=metadata_fn)
    return CaseRunner(args, convention, envelope, backend, op, options, names, heartbeat)
