"""
Keep `import haystack` from importing torch, so that work without a model (BM25-only pipelines, the dictionary,
the CLI's `dict` commands) starts in a fraction of the time.

Haystack's `haystack.utils.device` runs `import torch` at import time inside a `LazyImport` block, which (as its
own docstring says) imports an installed package at once: every `import haystack` pays for torch (2 to 6 s on two
busy cores) whether or not a model is ever loaded. `install()` (called when this package is imported) puts a
finder in front of `sys.meta_path` that acts once, on the first import of `haystack`: that import runs while
`import torch` is refused, so `LazyImport` merely records torch as deferred; then `haystack.utils.device` gets a
stand-in module that imports the real torch on its first attribute read, and its recorded error is cleared.

Nothing else changes: `sys.modules` never holds a stand-in (any other `import torch` is the real one), a process
that imported haystack or torch before this package is left alone, and where torch is not installed haystack's
own "PyTorch must be installed" error stays.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Sequence
from typing import Any

_TORCH = "torch"
_HAYSTACK = "haystack"
_DEVICE = "haystack.utils.device"
_LOCK = threading.Lock()


class _RefuseTorch:  # a meta path finder (duck-typed: `importlib.abc` would import importlib.resources)
    """Makes `import torch` fail as if torch were not installed, while haystack's own modules are imported."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == _TORCH or fullname.startswith(_TORCH + "."):
            raise ModuleNotFoundError(f"import of {fullname} deferred by code-alias", name=fullname)
        return None


class TorchOnFirstUse(types.ModuleType):
    """Stands in for `torch` inside `haystack.utils.device`: the first attribute read imports the real module."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(_TORCH), name)


def _give_device_a_stand_in() -> None:
    device = sys.modules.get(_DEVICE)
    if device is None or isinstance(getattr(device, "torch", None), types.ModuleType):
        return  # not imported (it will import torch itself when it is), or it holds the real torch
    from haystack.lazy_imports import LazyImport

    usable = LazyImport(message=getattr(device.torch_import, "import_error_msg", "Run 'pip install torch'"))
    with usable:  # a block that raised nothing: `usable.check()` passes
        pass
    device.torch = TorchOnFirstUse(_TORCH)  # type: ignore[attr-defined]
    device.torch_import = usable  # type: ignore[attr-defined]


class _TorchRefusingLoader:
    """haystack's own loader, run while torch is refused; everything else is forwarded to it."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        if importlib.util.find_spec(_TORCH) is None:  # not installed: haystack's own handling, untouched
            self._loader.exec_module(module)
            return
        refuse = _RefuseTorch()
        sys.meta_path.insert(0, refuse)
        try:
            self._loader.exec_module(module)
        finally:
            sys.meta_path.remove(refuse)
        _give_device_a_stand_in()

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, get_source, is_package...
        return getattr(self._loader, name)


class _OnFirstHaystackImport:
    """Finds `haystack` once, as the path finder would, with a loader that defers torch; then steps aside."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _HAYSTACK:
            return None
        _remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _TorchRefusingLoader(spec.loader)  # type: ignore[assignment]  # a Loader by duck typing
        return spec


def _remove(finder: object) -> None:
    with _LOCK:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)


def install() -> bool:
    """
    Defer torch on the first `import haystack` of this process, unless haystack or torch is already imported.

    :returns: Whether the finder was installed (False when it already is, or there is nothing to defer).
    """
    with _LOCK:
        if _HAYSTACK in sys.modules or _TORCH in sys.modules:
            return False
        if any(isinstance(finder, _OnFirstHaystackImport) for finder in sys.meta_path):
            return False
        sys.meta_path.insert(0, _OnFirstHaystackImport())
        return True


def torch_imported() -> bool:
    """Whether the real torch has been imported in this process (e.g. by loading an embedding model)."""
    return _TORCH in sys.modules
