"""Shared fixtures. Host tests boot a real ComfyUI in-process (tests/host.py); pure-math tests never do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def comfy_host():
    import host

    return host.boot()


@pytest.fixture(scope="session")
def pack(comfy_host):
    import host

    return host.import_pack()


@pytest.fixture(autouse=True)
def _unload_models_after_host_tests(request):
    yield
    if "comfy_host" in request.fixturenames:
        import comfy.model_management

        comfy.model_management.unload_all_models()
