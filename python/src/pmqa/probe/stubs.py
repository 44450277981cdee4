"""Generated stand-ins for what an engine's files import but the probed entry must not need.

A stub is a class (so a real class may subclass it and an annotation may use it, `Stub | None`
included) whose attributes are further stubs and whose call returns a stub, or, called with a single
function or class, returns that argument (so `@stub_decorator` and `@stub_factory(...)` leave the
decorated function in place). That is enough for a module's top level to run.

While the entry runs, the guard is on: any use of a stub (attribute, call, truth value, iteration)
raises StubUsedError naming it, because a decision that depends on a stub is the probe's, not the
engine's. Code that runs while a module is being imported (a lazy import inside the entry) is exempt:
the loaders below suspend the guard for the module's top level.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Dict, Iterable, Optional


class StubUsedError(RuntimeError):
    """The entry used a name the probe stubbed (or a feature its torch stand-in lacks)."""


_state = {"guard": False, "suspended": 0, "log": None,
          "missing_real": {}}  # module the adapter runs from the tree -> the file the tree lacks


@contextmanager
def guarded():
    """The entry's call: stub use is an error."""
    old = _state["guard"]
    _state["guard"] = True
    try:
        yield
    finally:
        _state["guard"] = old


@contextmanager
def suspended():
    """A module's top level runs (an import inside the entry): stubs may be used."""
    _state["suspended"] += 1
    try:
        yield
    finally:
        _state["suspended"] -= 1


def set_usage_log(log: Optional[list]) -> None:
    """Where names of stubs used at import time are collected (for the report), or None."""
    _state["log"] = log


def _missing_file(name: str) -> Optional[tuple]:
    """(module, file) when name lies in a module the probe runs from the tree but the tree lacks."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        if module in _state["missing_real"]:
            return module, _state["missing_real"][module]
    return None


def check(name: str, how: str) -> None:
    if _state["guard"] and not _state["suspended"]:
        missing = _missing_file(name)
        if missing:
            raise StubUsedError(
                f"the entry used {name}{how}, from {missing[0]}, which the source tree lacks ({missing[1]})")
        raise StubUsedError(
            f"the entry used {name}{how}, which the probe stubbed: the engine's decision may not depend on it "
            "(declare it in the adapter: a real module, a provided one, or a patched global)")
    log = _state["log"]
    if log is not None and name not in log:
        log.append(name)


def _is_decoratable(obj) -> bool:
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                            staticmethod, classmethod, property, functools.partial))


class StubMeta(type):
    """Metaclass of every stub: class-level attribute access, calls and operators yield stubs."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        qual = f"{type.__getattribute__(cls, '_stub_name')}.{name}"
        check(qual, "")
        children = type.__getattribute__(cls, "_stub_children")
        if name not in children:
            children[name] = make_stub(qual)
        return children[name]

    def __call__(cls, *args, **kwargs):
        if not cls.__dict__.get("_stub_pure", False):
            return type.__call__(cls, *args, **kwargs)  # a real class that subclasses a stub
        check(cls._stub_name, "(...)")
        if len(args) == 1 and not kwargs and _is_decoratable(args[0]):
            return args[0]
        return make_stub(f"{cls._stub_name}(...)")

    def __getitem__(cls, item):
        return cls

    def __iter__(cls):
        check(cls._stub_name, " as an iterable")
        return iter(())

    def __len__(cls):
        return 0

    def __bool__(cls):
        check(cls._stub_name, " as a truth value")
        return True

    def __repr__(cls):
        return f"<pmqa-probe stub {cls._stub_name}>"

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __eq__(cls, other):
        return cls is other

    def __hash__(cls):
        return id(cls)


class StubBase(metaclass=StubMeta):
    """Instances of real subclasses of a stub answer unknown attributes with stubs as well."""

    _stub_name = "stub"
    _stub_children: dict = {}
    _stub_pure = True

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        qual = f"{type(self)._stub_name}().{name}"
        check(qual, "")
        return make_stub(qual)


def make_stub(qualname: str) -> type:
    return StubMeta(qualname.rsplit(".", 1)[-1] or "stub", (StubBase,),
                    {"_stub_name": qualname, "_stub_children": {}, "_stub_pure": True,
                     "__module__": qualname.rsplit(".", 1)[0] if "." in qualname else qualname})


class StubModule(types.ModuleType):
    """A generated module: every public name is a stub; dunder names behave as on a real module.
    Stubs are kept outside the module's __dict__, so every access passes the guard."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        qual = f"{self.__name__}.{name}"
        check(qual, "")
        made = self.__dict__.setdefault("_pmqa_stubs", {})
        if name not in made:
            made[name] = make_stub(qual)
        return made[name]


class _StubLoader(importlib.abc.Loader):
    def __init__(self, preset: Optional[Dict[str, object]] = None):
        self.preset = preset or {}

    def create_module(self, spec):
        module = StubModule(spec.name)
        module.__dict__["__pmqa_stub__"] = True
        return module

    def exec_module(self, module):
        module.__path__ = []
        for key, value in self.preset.items():
            setattr(module, key, value)


class _ProvidedLoader(importlib.abc.Loader):
    """A module the probe builds (a factory taking the module's name)."""

    def __init__(self, factory: Callable[[str], types.ModuleType]):
        self.factory = factory

    def create_module(self, spec):
        module = self.factory(spec.name)
        module.__spec__ = spec
        return module

    def exec_module(self, module):
        pass


class _SourceLoader(importlib.machinery.SourceFileLoader):
    """An engine file run as it is; its top level may use stubs."""

    def exec_module(self, module):
        with suspended():
            super().exec_module(module)


def module_spec(name: str, loader, is_package: bool = True):
    spec = importlib.machinery.ModuleSpec(name, loader, is_package=is_package)
    return spec


class EngineTreeFinder(importlib.abc.MetaPathFinder):
    """Serves an engine's package from a source tree without running the package's own __init__ files.

    Modules named in `real` run from their files under `root`; names in `provided` come from the
    probe's factories; every other module under `prefix` is a generated stub. A real module whose file
    is missing is stubbed too and remembered in `missing`, so the probe can name it.
    """

    def __init__(self, root: Path, prefix: str, real: Iterable[str],
                 provided: Dict[str, Callable[[str], types.ModuleType]]):
        self.root = Path(root)
        self.prefix = prefix
        self.real = set(real)
        self.provided = dict(provided)
        self.missing: list = []
        self.stubbed: list = []

    def file_of(self, fullname: str) -> Optional[Path]:
        rel = Path(*fullname.split("."))
        for candidate in (self.root / rel.with_suffix(".py"), self.root / rel / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.provided:
            return module_spec(fullname, _ProvidedLoader(self.provided[fullname]))
        if fullname != self.prefix and not fullname.startswith(self.prefix + "."):
            return None
        if fullname in self.real:
            file = self.file_of(fullname)
            if file is not None:
                is_package = file.name == "__init__.py"
                return importlib.util.spec_from_file_location(
                    fullname, file, loader=_SourceLoader(fullname, str(file)),
                    submodule_search_locations=[str(file.parent)] if is_package else None)
            self.missing.append(fullname)
            _state["missing_real"][fullname] = str(self.root / Path(*fullname.split(".")).with_suffix(".py"))
        self.stubbed.append(fullname)
        return module_spec(fullname, _StubLoader())


class FallbackStubFinder(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: third-party modules the engine's files import at their top level and this
    interpreter lacks. `aliases` maps a name to a real module that can stand in (regex -> re)."""

    def __init__(self, names: Iterable[str], aliases: Optional[Dict[str, str]] = None):
        self.names = set(names)
        self.aliases = dict(aliases or {})
        self.used: list = []

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        if top not in self.names and top not in self.aliases:
            return None
        self.used.append(fullname)
        if fullname in self.aliases:
            alias = self.aliases[fullname]
            return module_spec(fullname, _ProvidedLoader(lambda name: importlib.import_module(alias)),
                               is_package=False)
        return module_spec(fullname, _StubLoader())


def provided_module(name: str, attributes: Dict[str, object], package: bool = False,
                    fallback_stubs: bool = True) -> types.ModuleType:
    """A module holding `attributes`; with fallback_stubs, other public names are stubs."""
    module = StubModule(name) if fallback_stubs else types.ModuleType(name)
    for key, value in attributes.items():
        setattr(module, key, value)
    if package:
        module.__path__ = []
    return module


def install_module(name: str, module: types.ModuleType, package: bool = False) -> types.ModuleType:
    """Puts a probe-built module in sys.modules with a spec, so importlib.util.find_spec sees it."""
    module.__spec__ = module_spec(name, None, is_package=package)
    if package and not hasattr(module, "__path__"):
        module.__path__ = []
    sys.modules[name] = module
    return module
