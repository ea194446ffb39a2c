"""requirements.txt and pyproject.toml's dependencies list exactly the distributions the shipped modules import.

Derived from the source: every ``import`` of every module the registry ships (the pack less tests/ and scripts/,
as .comfyignore leaves it), less the standard library, the pack's own relative imports, and what the host provides:
torch (a pack never reinstalls ComfyUI's torch) and ComfyUI's own modules. The command-line tools run without
ComfyUI (``python <pack> schedule-preview``, ``hf-energy``), so what they import is listed even where ComfyUI's own
requirements already hold it (Pillow).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_SHIPPED = {"tests", "scripts"}
# Import names the host brings: torch, the modules of ComfyUI's own tree (0.3.75 and 0.30), and aiohttp, which the
# pack imports only inside ComfyUI's running server (nodes/extension.py: the 0.38 card-picture route).
HOST = {"torch", "comfy", "comfy_api", "comfy_extras", "comfy_execution", "comfy_kitchen", "folder_paths",
        "node_helpers", "nodes", "server", "latent_preview", "app", "aiohttp"}


def shipped_modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py")
                  if not p.relative_to(ROOT).parts[0].startswith(".") and p.relative_to(ROOT).parts[0] not in NOT_SHIPPED)


def imported_names(path: Path) -> set[str]:
    """Top-level names of the absolute imports in one module (lazy ones inside functions included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def third_party_imports() -> dict[str, list[str]]:
    """Import name -> the shipped modules importing it, less the standard library and the host."""
    found: dict[str, list[str]] = {}
    for path in shipped_modules():
        for name in imported_names(path) - set(sys.stdlib_module_names) - HOST:
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def required_distributions() -> set[str]:
    by_import = importlib.metadata.packages_distributions()
    missing = {name: where for name, where in third_party_imports().items() if name not in by_import}
    assert not missing, f"imported but installed by no distribution here: {missing}"
    return {_normalized(dist) for name in third_party_imports() for dist in by_import[name]}


def test_the_walk_sees_the_packs_imports():
    # A negative control for the walk itself: Pillow (PIL) is imported by the preview and the metric, lazily too.
    found = third_party_imports()
    assert {"nodes/schedule_preview/figure.py", "spectral/hf_energy.py"} <= set(found.get("PIL", []))
    assert not any(p.parts[0] in NOT_SHIPPED for p in (Path(m) for ms in found.values() for m in ms))


def test_requirements_txt_lists_exactly_the_imports():
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    listed = {_normalized(re.split(r"[<>=!~;\[ ]", line)[0]) for line in lines if line}
    assert listed == required_distributions(), f"requirements.txt lists {sorted(listed)}; the shipped modules import " \
                                               f"{sorted(third_party_imports())}"


def test_pyproject_dependencies_equal_requirements_txt():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"^dependencies = \[(.*?)\]", text, re.M | re.S)
    assert deps, "pyproject.toml has no dependencies list"
    listed = {_normalized(re.split(r"[<>=!~;\[ ]", d)[0]) for d in re.findall(r'"([^"]+)"', deps.group(1))}
    assert listed == required_distributions()
