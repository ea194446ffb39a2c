"""The pack's shape, read from its source (docs/ARCHITECTURE.md draws it):

* no import circle, lazy imports (inside functions, under ``TYPE_CHECKING``) included;
* arrows only downward: node classes → the preview's drawing, the cascades, the bench → the shared inputs and the
  patch engine → family adapters → rope/ and spectral/ (a package may import its own modules, never upwards or sideways);
* the top of nodes/ holds only the node classes and the extension that lists them;
* no module over 300 lines: the pack's (nodes/, rope/, spectral/, __init__.py, __main__.py) and the tests';
* the pure parts (rope/, spectral/, the family facts, the preview's drawing) import no ComfyUI, not even lazily.

The checks run on any source tree, so the last test feeds them a small tree with each fault and sees each caught.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACK = Path(__file__).resolve().parents[1]
MAX_LINES = 300
PACK_PARTS = ("nodes", "rope", "spectral", "__init__.py", "__main__.py")
TEST_DIRS = ("tests",)
#: torch only, never ComfyUI: the math, the family facts and the preview's drawing (its node imports ComfyUI).
PURE = ("rope", "spectral", "nodes/families", "nodes/schedule_preview", "nodes/hap")
NODE_CLASSES = ("nodes.dype_node", "nodes.sega_node", "nodes.preview_node", "nodes.hiflow_node", "nodes.imax_node",
                "nodes.hrdit_node")

#: package -> rank: a module may import the modules of its own package and those of any lower rank.
PACKAGES: dict[str, int] = {
    "rope": 0, "spectral": 0,
    "nodes.families": 1,
    "nodes.rope_patch": 2, "nodes.hap": 2,  # HAP's kernel reaches the engine as a value (an AttentionPlan's)
    "nodes.inputs": 2,  # the input rules: the node classes, the cascades' settings and the preview's CLI read them
    "nodes.schedule_preview": 3, "nodes.cascade": 3,
    "nodes.bench": 4,  # it times the cascades (nodes.cascade) against one pass
}
#: single modules -> rank ("" is the pack's __init__.py, "nodes" nodes/__init__.py)
MODULES: dict[str, int] = {**dict.fromkeys(NODE_CLASSES, 4), "nodes.extension": 5, "nodes": 5, "": 6, "__main__": 6}


def module_files(root: Path, parts=PACK_PARTS) -> dict[str, Path]:
    """Dotted module name (relative to the pack; "" is the pack itself) -> file, for the pack's own modules."""
    found = {}
    for part in parts:
        path = root / part
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for file in files:
            relative = file.relative_to(root).with_suffix("")
            names = [p for p in relative.parts if p != "__init__"]
            found[".".join(names)] = file
    return found


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The pack modules ``name`` imports anywhere in its file (module level, functions, TYPE_CHECKING blocks)."""
    package = name if _is_package(path) else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
            if node.module:
                base = base + node.module.split(".")
            target = ".".join(base)
            for alias in node.names:
                submodule = f"{target}.{alias.name}" if target else alias.name
                targets.add(submodule if submodule in modules else target)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for imported in names:
                if imported.split(".")[0] in {"nodes", "rope", "spectral"}:
                    targets.add(f"<absolute import {imported}: the pack is a package, import it relatively>")
    return {t for t in targets if t != name}


def command_modules(path: Path) -> set[str]:
    """The modules __main__.py's COMMANDS table names (imported by name at run time)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "COMMANDS":
            return {value[0] for value in ast.literal_eval(node.value).values()}
    raise AssertionError("__main__.py has no COMMANDS table")


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = module_files(root)
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    if "__main__" in graph:
        graph["__main__"] |= command_modules(modules["__main__"])
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each as the path that closes it (depth-first search)."""
    found, state, stack = [], {}, []

    def visit(name: str) -> None:
        state[name] = "open"
        stack.append(name)
        for target in sorted(graph.get(name, ())):
            if state.get(target) == "open":
                found.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return found


def group_of(name: str) -> tuple[str, int] | None:
    """The layer of a module: itself in MODULES, or the package of PACKAGES it is in; None: in no layer."""
    if name in MODULES:
        return name, MODULES[name]
    for package, rank in PACKAGES.items():
        if name == package or name.startswith(package + "."):
            return package, rank
    return None


def bad_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Arrows that go up or sideways between layers, imports of modules that do not exist, modules in no layer."""
    problems = []
    for name, targets in sorted(graph.items()):
        source = group_of(name)
        if source is None:
            problems.append(f"{name or '<pack>'}: in no layer (add it to PACKAGES or MODULES where it belongs)")
            continue
        for target in sorted(targets):
            if target not in graph:
                problems.append(f"{name or '<pack>'} -> {target}: not a module of the pack")
                continue
            goal = group_of(target)
            if goal is not None and goal != source and goal[1] >= source[1]:
                problems.append(f"{name or '<pack>'} (layer {source[0] or '<pack>'}) -> {target} "
                                f"(layer {goal[0]}): {'upward' if goal[1] > source[1] else 'sideways'}")
    return problems


def long_modules(files: list[Path], root: Path) -> list[str]:
    return [f"{f.relative_to(root)}: {n} lines" for f in files
            if (n := len(f.read_text(encoding="utf-8").splitlines())) > MAX_LINES]


def test_the_import_graph_has_no_circle():
    graph = import_graph(PACK)
    assert len(graph) > 40 and graph["nodes.rope_patch.wrappers"]  # the premise: the whole pack was read
    assert cycles(graph) == []


def test_every_arrow_points_down():
    assert bad_arrows(import_graph(PACK)) == []


def test_no_module_is_longer_than_300_lines():
    pack = list(module_files(PACK).values())
    tests = [f for d in TEST_DIRS for f in sorted((PACK / d).rglob("*.py"))]
    assert len(tests) > 30
    assert long_modules(pack + tests, PACK) == []


def comfy_imports(files: list[Path]) -> list[str]:
    """Every ``import comfy…`` / ``from comfy… import`` / ``comfy_api`` import in these files, anywhere in them."""
    found = []
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{file.name}: {n}" for n in names if n.split(".")[0] in {"comfy", "comfy_api", "comfy_extras"}]
    return found


def test_the_pure_parts_import_no_comfy():
    pure = [f for part in PURE for f in sorted((PACK / part).rglob("*.py"))]
    assert len(pure) > 25
    assert comfy_imports(pure) == []
    assert comfy_imports([PACK / "nodes" / "rope_patch" / "wrappers.py"])  # the premise: the check sees imports


def test_the_top_of_nodes_is_the_node_classes_and_the_extension():
    top = sorted(p.stem for p in (PACK / "nodes").glob("*.py"))
    assert top == sorted(["__init__", "extension", *(n.split(".")[1] for n in NODE_CLASSES)])
    for name in NODE_CLASSES:
        tree = ast.parse((PACK / (name.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        assert [ast.unparse(b) for c in classes for b in c.bases] == ["io.ComfyNode"], name
    assert import_graph(PACK)["nodes.extension"] == set(NODE_CLASSES)


def test_the_checks_catch_each_fault(tmp_path):
    """A small pack with a lazy import circle, an upward arrow, an absolute import, a module in no layer and a long
    module: each is reported."""
    files = {
        "__init__.py": "",
        "rope/__init__.py": "def f():\n    from ..nodes.rope_patch import wrappers\n",  # upward, and lazy
        "spectral/__init__.py": "import nodes.families\n",  # absolute: works only with nodes on sys.path
        "nodes/__init__.py": "",
        "nodes/rope_patch/__init__.py": "",
        "nodes/rope_patch/wrappers.py": "from .schedule import x\n",
        "nodes/rope_patch/schedule.py": "def g():\n    from . import wrappers\n",  # closes a circle, lazily
        "nodes/stray.py": "\n" * (MAX_LINES + 1),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path)
    assert cycles(graph) == [["nodes.rope_patch.schedule", "nodes.rope_patch.wrappers", "nodes.rope_patch.schedule"]]
    problems = bad_arrows(graph)
    assert any(p.startswith("rope (layer rope) -> nodes.rope_patch.wrappers") and "upward" in p for p in problems)
    assert any(p.startswith("spectral -> <absolute import nodes.families") for p in problems)
    assert "nodes.stray: in no layer (add it to PACKAGES or MODULES where it belongs)" in problems
    stray = Path("nodes") / "stray.py"
    assert long_modules(list(module_files(tmp_path).values()), tmp_path) == [f"{stray}: {MAX_LINES + 1} lines"]
