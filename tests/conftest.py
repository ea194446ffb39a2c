"""Shared fixtures. Host tests boot a real ComfyUI in-process (tests/host.py); pure-math tests never do."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


#: Set by scripts/gpu-check.sh: the host boots on the GPU and the tests marked ``cuda`` run.
CUDA_ENV = "DYPE_SEGA_TEST_DEVICE"


def _xdist_worker(config) -> bool:
    """Whether this process is one of pytest-xdist's workers (scripts/test.sh runs one per CPU, ``-n logical``)."""
    return hasattr(config, "workerinput")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "cuda: needs a CUDA device; runs in scripts/gpu-check.sh (skipped elsewhere)")
    if _xdist_worker(config):
        import torch

        torch.set_num_threads(1)  # one worker per CPU: torch's own threads on top would oversubscribe every core


#: The browser test module: it spends most of its time waiting on the real frontend (~35 s a leg).
BROWSER_MODULE = "test_browser.py"


def pytest_collection_modifyitems(config, items) -> None:
    """The browser module first (stable order otherwise): under xdist the worker that takes it starts its longest file
    at once while the others share the rest. Tests marked ``cuda`` run only under scripts/gpu-check.sh (which boots
    the host on the GPU) on a machine with CUDA; anywhere else they are skipped with the reason."""
    items.sort(key=lambda item: item.path.name != BROWSER_MODULE)
    cuda_items = [item for item in items if "cuda" in item.keywords]
    if not cuda_items:
        return
    reason = ""
    if os.environ.get(CUDA_ENV) != "cuda":
        reason = f"CUDA-only: runs in scripts/gpu-check.sh on a GPU machine ({CUDA_ENV}=cuda)"
    else:
        import torch

        if not torch.cuda.is_available():
            reason = f"CUDA-only and this torch sees no CUDA device (torch {torch.__version__})"
    if reason:
        for item in cuda_items:
            item.add_marker(pytest.mark.skip(reason=reason))


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
        import gc

        import comfy.model_management

        # Tests drop their models without unloading them. If the garbage collector ran inside unload_all_models'
        # loop, a dropped model's weakref finalizer (ComfyUI's cleanup_models) would shrink the list that loop
        # indexes (0.30: IndexError in free_memory). No collection during the unload, then (a full gc.collect()
        # per test instead would cost 0.2 s each).
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            comfy.model_management.unload_all_models()
        finally:
            if was_enabled:
                gc.enable()
