"""Shared fixtures. Host tests boot a real ComfyUI in-process (tests/host.py); pure-math tests never do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_report_header(config) -> str:
    """Name the ComfyUI host in the log: the suite runs on several (scripts/test.sh)."""
    import host

    try:
        root = host.comfyui_root()
    except RuntimeError as exc:
        return f"ComfyUI host: none ({exc})"
    version_file = root / "comfyui_version.py"
    version = "unknown"
    if version_file.is_file():
        for line in version_file.read_text(encoding="utf-8").splitlines():
            if line.startswith("__version__"):
                version = line.split("=", 1)[1].strip().strip("\"'")
    return f"ComfyUI host: {version} at {root}"


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
