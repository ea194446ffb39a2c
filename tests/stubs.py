"""Test-only import stubs for the optional media libraries ComfyUI imports at load time.

PyPI's torchvision crashes beside the CPU torch the tests pin, and torchaudio needs its own torch build. ComfyUI
imports them from modules our tests never exercise (0.3.75: ``torchvision.transforms``; newer hosts also
``torchvision.ops`` for SAM3/BiRefNet and ``torchaudio`` for the LTX audio VAE via ``comfy/sd.py``). When the real
library is missing, a meta-path finder serves every ``torchvision.*`` / ``torchaudio.*`` module as a stub whose
attributes are placeholders: importing works, *using* one raises a clear error. Never installed by the pack.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

STUBBED = ("torchvision", "torchaudio")


class _Placeholder(type):
    """A stand-in class for any attribute of a stubbed module: subclassable, attribute chains work, calls raise."""

    def __getattr__(cls, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{cls.__qualname__}.{name}")

    def __call__(cls, *args, **kwargs):
        raise RuntimeError(f"{cls.__qualname__} comes from a test stub: torchvision/torchaudio are not installed in "
                           "the test environment (tests/stubs.py).")


def _placeholder(qualname: str) -> type:
    return _Placeholder(qualname.rsplit(".", 1)[-1], (), {"__qualname__": qualname})


class _StubModule(ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{self.__name__}.{name}")


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".", 1)[0] not in self.roots:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []  # a package, so any submodule import resolves through this finder too
        return module

    def exec_module(self, module) -> None:
        return None


def install() -> tuple[str, ...]:
    """Stub whichever of ``STUBBED`` cannot be imported for real; returns the stubbed names. Idempotent."""
    if any(isinstance(f, _StubFinder) for f in sys.meta_path):
        return next(f.roots for f in sys.meta_path if isinstance(f, _StubFinder))
    missing = tuple(name for name in STUBBED if name not in sys.modules and importlib.util.find_spec(name) is None)
    if missing:
        sys.meta_path.append(_StubFinder(missing))
    return missing
