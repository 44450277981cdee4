"""One arch in a fresh interpreter: simulate the GPU, import the engine, call its entry per row.

Run as `python3 -m pmqa.probe.child PLAN.json RESULT.json` by the probe (runner.py). The plan names
the engine, the mode (source tree or installed engine), the arch, and the configurations to run:
the kernel library present and switched on, present and switched off, or absent. Each
configuration imports the engine's modules afresh, so their import-time switches (vLLM reads
VLLM_ROCM_USE_AITER and looks for AITER when _aiter_ops is imported) are computed by the engine's
own code; the arch stays the one this interpreter simulates. The result lists, per row, the calls
the recorders saw, the entry's return value (shape, dtype) or what it raised.
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
import traceback
from pathlib import Path

from . import fake_torch, identity, recorders, stubs, triton_standin
from .adapters import Adapter, load


def _tail(limit: int = 14) -> str:
    lines = traceback.format_exc().rstrip().splitlines()
    return "\n".join(lines[-limit:])


def _purge(adapter: Adapter) -> None:
    tops = [adapter.package] + [lib.top for lib in adapter.libraries]
    for name in list(sys.modules):
        if any(name == t or name.startswith(t + ".") for t in tops):
            del sys.modules[name]
    sys.meta_path[:] = [f for f in sys.meta_path
                        if not isinstance(f, (stubs.EngineTreeFinder, recorders.LibraryFinder))]
    importlib.invalidate_caches()


def _accepts(signature, name: str) -> bool:
    if signature is None:
        return True
    params = signature.parameters.values()
    return name in signature.parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _import_torch(mode: str, ident: identity.Identity):
    if mode != "stand-in":
        try:
            import torch  # noqa: F401  (an installed torch)
            identity.patch_real_torch(torch, ident)
            return torch, f"torch {torch.__version__}"
        except ImportError:
            if mode == "real":
                raise
    torch = fake_torch.install(lambda: ident)
    return torch, "the probe's stand-in (torch is not installed)" if mode == "auto" else "the probe's stand-in"


def run_config(plan: dict, adapter: Adapter, ident: identity.Identity, config: dict, torch) -> dict:
    out = {"key": config["key"], "error": None, "rows": [], "stubbed": [], "missing_real_modules": [],
           "third_party_stubbed": []}
    _purge(adapter)
    for key, value in adapter.environment(config["present"], config["enabled"]).items():
        os.environ[key] = value
    log = recorders.CallLog()
    for lib in adapter.libraries:
        if lib.vendor == ident.vendor and config["present"]:
            sys.meta_path.insert(0, recorders.LibraryFinder(lib, log))
        else:
            sys.modules[lib.top] = None  # absent: import fails and find_spec answers None, as without it
    tree = None
    if plan["mode"] == "source":
        tree = stubs.EngineTreeFinder(Path(plan["source"]), adapter.package, adapter.real_modules,
                                      adapter.provided_modules)
        sys.meta_path.insert(0, tree)
    importlib.invalidate_caches()

    def fail(kind, message, tb=None, missing=None):
        out["error"] = {"kind": kind, "message": message, "traceback": tb, "missing": missing}
        return out

    usage: list = []
    stubs.set_usage_log(usage)
    try:
        try:
            module = importlib.import_module(adapter.entry_module)
        except Exception as exc:  # noqa: BLE001  (the engine's import failed: report it)
            missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
            if missing and (adapter.entry_module == missing or adapter.entry_module.startswith(missing + ".")):
                return fail("missing", f"module {adapter.entry_module} is not importable ({exc})", _tail(),
                            adapter.entry_module)
            return fail("import", f"importing {adapter.entry_module} raised {type(exc).__name__}: {exc}", _tail())
        if tree is not None and adapter.entry_module in tree.missing:
            rel = adapter.entry_module.replace(".", "/") + ".py"
            return fail("missing", f"{plan['source']} has no {rel} (the adapter's entry module "
                                   f"{adapter.entry_module})", missing=adapter.entry_module)
        entry = module.__dict__.get(adapter.entry)
        if not callable(entry):
            return fail("missing", f"{adapter.entry_module} has no {adapter.entry} (the adapter's entry point; "
                                   "did it move?)", missing=f"{adapter.entry_module}.{adapter.entry}")
        for spec in adapter.engine_entries:
            if spec.function in module.__dict__:
                module.__dict__[spec.function] = recorders.make_recorder(spec, log, adapter.entry_module)
            elif spec.required:
                return fail("missing", f"{adapter.entry_module} has no {spec.function} (the adapter's "
                                       f"{spec.name} entry, path {spec.path})",
                            missing=f"{adapter.entry_module}.{spec.function}")
        for name, value in list(vars(module).items()):
            if triton_standin.is_kernel(value) and not isinstance(value, triton_standin.Kernel):
                setattr(module, name, recorders.RecordingKernel(value, log))
        for name, factory in adapter.entry_globals.items():
            if name in module.__dict__:
                module.__dict__[name] = factory(log)
        for name in adapter.preimport:
            try:
                importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001
                return fail("import", f"importing {name} raised {type(exc).__name__}: {exc}", _tail())
        try:
            fp8 = adapter.fp8_dtype()
        except Exception as exc:  # noqa: BLE001
            return fail("import", f"asking the engine for its fp8 dtype raised {type(exc).__name__}: {exc}", _tail())
        try:
            signature = inspect.signature(entry)
        except (TypeError, ValueError):
            signature = None
        for row in config["rows"]:
            out["rows"].append(run_row(adapter, entry, signature, torch, fp8, row, log))
    finally:
        stubs.set_usage_log(None)
        out["stubbed"] = sorted(set(usage))
        if tree is not None:
            out["missing_real_modules"] = sorted(set(tree.missing))
            _name_missing_files(out, tree)
    return out


def _name_missing_files(out: dict, tree: "stubs.EngineTreeFinder") -> None:
    """A module the adapter runs from the tree and the tree lacks is stubbed, so whatever fails next
    points at a stub; every error of this configuration says first which file to put in the tree."""
    if not tree.missing:
        return
    files = sorted({str(Path(*m.split(".")).with_suffix(".py")) for m in tree.missing})
    note = (f"the source tree {tree.root} lacks {', '.join(files)}: the probe runs "
            f"{'that module' if len(files) == 1 else 'those modules'} from the tree, so put "
            f"{'it' if len(files) == 1 else 'them'} there (it was stubbed meanwhile)")
    for err in [out.get("error")] + [r.get("error") for r in out["rows"]]:
        if err and not err.get("message", "").startswith(note):
            err["message"] = f"{note}; then: {err.get('message', '')}"


def run_row(adapter: Adapter, entry, signature, torch, fp8, row: dict, log: recorders.CallLog) -> dict:
    r = {"id": row["id"], "calls": [], "launches": [], "imports": [], "workspace": [], "returned": None,
         "error": None, "not_expressed": None, "fp8_dtype": recorders.dtype_name(fp8)}
    for key in row.get("entry_kwargs") or {}:
        if not _accepts(signature, key):
            r["not_expressed"] = f"this version's {adapter.entry} takes no keyword {key!r}"
            return r
    log.reset()
    triton_standin.LAUNCHES.clear()
    try:
        args, kwargs, r["out_shape"] = adapter.inputs(torch, fp8, row)
        r["out_shape"] = [int(s) for s in r["out_shape"]]
    except Exception as exc:  # noqa: BLE001
        r["error"] = {"kind": "probe-limit", "type": type(exc).__name__,
                      "message": f"building the call's arguments raised {type(exc).__name__}: {exc}",
                      "traceback": _tail()}
        return r
    try:
        with stubs.guarded():
            value = entry(*args, **kwargs)
        r["returned"] = recorders.summary(value)
    except stubs.StubUsedError as exc:
        r["error"] = {"kind": "probe-limit", "type": type(exc).__name__, "message": str(exc), "traceback": _tail()}
    except Exception as exc:  # noqa: BLE001  (the engine raised: the parent decides what that means)
        r["error"] = {"kind": "raised", "type": type(exc).__name__, "message": str(exc), "traceback": _tail()}
    r["calls"] = list(log.calls)
    r["launches"] = list(log.launches) + list(triton_standin.LAUNCHES)
    r["imports"] = list(log.imports)
    r["workspace"] = list(log.workspace)
    return r


def run(plan: dict) -> dict:
    sys.dont_write_bytecode = True
    adapter = load(plan["engine"])
    ident = identity.identity_for(plan["arch"], plan.get("product", ""))
    result = {"arch": plan["arch"], "identity": ident.describe(), "torch": None, "configs": [], "error": None}
    try:
        torch, result["torch"] = _import_torch(plan.get("torch", "auto"), ident)
    except ImportError as exc:
        result["error"] = {"kind": "import", "message": f"--real-torch: torch is not importable ({exc})"}
        return result
    if ident.vendor == "amd":
        stubs.install_module("amdsmi", identity.amdsmi_module(ident))
    if plan["mode"] == "source":
        sys.meta_path.append(stubs.FallbackStubFinder(adapter.third_party_stubs, adapter.third_party_aliases))
    for config in plan["configs"]:
        result["configs"].append(run_config(plan, adapter, ident, config, torch))
    return result


def main(argv) -> int:
    plan = json.loads(Path(argv[1]).read_text())
    try:
        result = run(plan)
    except Exception as exc:  # noqa: BLE001  (a probe bug: still answer, so the parent can show it)
        result = {"arch": plan.get("arch"), "configs": [], "torch": None,
                  "error": {"kind": "probe", "message": f"the probe's child raised {type(exc).__name__}: {exc}",
                            "traceback": _tail(30)}}
    Path(argv[2]).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
