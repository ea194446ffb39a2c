"""Static: every float64 of rope/, spectral/ and nodes/ is made on the device the pack's rule picked
(nodes/rope_patch/devices.py ``math_device``), read from the source (AST), so a new site cannot slip past it.

A site is a ``torch.float64`` / ``torch.double`` in code, or ``.double()``, outside a comparison. It passes when
its call names the device: ``device=D`` (a factory, ``.to``) or ``.to(D, torch.float64)``, with D

* in nodes/: the rule's answer: ``math_device(...)``, a name bound only to it, a ``.math_device`` field, or a
  ``device`` parameter (handed down: the calls below check what is handed in);
* in rope/, spectral/ (pure torch, never the rule itself): the ``device`` parameter the caller hands down, or the
  ``.device`` of a tensor parameter the caller placed.

Every call of a function that makes float64 on its ``device`` parameter (found from the source, transitively) must
hand it the same kind of device; leaving it out means the CPU, not the rule's answer. Anything else is on ALLOW,
with the reason it cannot reach a model's device. tests/test_no_float64.py checks the same at run time, where this
cannot: which device a tensor parameter really lives on.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACK = Path(__file__).resolve().parents[1]
ROOTS = ("rope", "spectral", "nodes")
NAMES = {"float64", "double"}

#: (file, function or "*" for the whole module) -> why its float64 never reaches a model's device.
ALLOW = {
    ("nodes/schedule_preview/figure.py", "*"): "the preview's drawing: CPU tensors it builds itself, no model",
    ("nodes/schedule_preview/curves.py", "*"): "the preview's curves: synthetic latents on the CPU, no model",
    ("spectral/hf_energy.py", "*"): "the HF-energy metric of image files, read on the CPU (python <pack> hf-energy)",
    ("spectral/hiflow.py", "schedule_times"): "the cascade's base grid, CPU numbers that become the sampler's sigmas",
    ("spectral/hiflow.py", "butterworth_mask"): "built on the CPU in float64, handed to the latent's device in float32",
    ("spectral/hiflow.py", "blur_width"): "one number drawn from a CPU generator",
    ("spectral/hiflow.py", "gaussian_kernel"): "built on the CPU in float64, handed to the image's device in its dtype",
    ("nodes/cascade/schedule.py", "model_sigmas"): "the sampler's sigmas on the CPU, as ComfyUI's schedulers make them",
    ("spectral/profiles.py", "fft_dtype"): "keeps a float64 input's own dtype: its device already holds float64",
}


def _area(path: str) -> str:
    return "nodes" if path.startswith("nodes/") else "pure"


class Scope:
    """A function (or the module) and the functions around it: where names are bound."""

    def __init__(self, node: ast.AST, parent: Scope | None) -> None:
        self.node, self.parent = node, parent
        args = node.args if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        self.params = {a.arg for a in (args.posonlyargs + args.args + args.kwonlyargs)} if args else set()
        self.bindings: dict[str, list[ast.AST]] = {}
        for child in _own_nodes(node):
            if isinstance(child, (ast.Assign, ast.AnnAssign)) and child.value is not None:
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            self.bindings.setdefault(name.id, []).append(child.value)
            elif isinstance(child, ast.withitem) and isinstance(child.optional_vars, ast.Name):
                self.bindings.setdefault(child.optional_vars.id, []).append(child.context_expr)
            elif isinstance(child, (ast.For, ast.comprehension)):
                for name in ast.walk(child.target):
                    if isinstance(name, ast.Name):
                        self.bindings.setdefault(name.id, []).append(ast.Constant(None))

    def name(self) -> str:
        return getattr(self.node, "name", "*")


def _own_nodes(node: ast.AST):
    """The nodes of ``node``'s body, not those of the functions inside it."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _own_nodes(child)


def _rule_device(expr: ast.AST, scope: Scope, area: str, seen: frozenset = frozenset()) -> bool:
    """Whether ``expr`` is the device the rule picked, by the area's terms (module docstring)."""
    if isinstance(expr, ast.BoolOp):
        return all(_rule_device(v, scope, area, seen) for v in expr.values)
    if isinstance(expr, ast.IfExp):
        return _rule_device(expr.body, scope, area, seen) and _rule_device(expr.orelse, scope, area, seen)
    if area == "nodes":
        if isinstance(expr, ast.Call):
            return _called(expr) == "math_device"
        if isinstance(expr, ast.Attribute):
            return expr.attr == "math_device"
    elif isinstance(expr, ast.Attribute) and expr.attr == "device" and isinstance(expr.value, ast.Name):
        return _is_param(expr.value.id, scope)
    if not isinstance(expr, ast.Name):
        return False
    while scope is not None and expr.id not in scope.params and expr.id not in scope.bindings:
        scope = scope.parent
    if scope is None or scope.parent is None:
        return False  # unbound, or a module constant
    handed = expr.id == "device" and expr.id in scope.params  # the device parameter: its callers are checked
    values = scope.bindings.get(expr.id, [])
    if expr.id in seen or not values:
        return handed
    if expr.id in scope.params and not handed:
        return False
    return all(_rule_device(v, scope, area, seen | {expr.id}) for v in values)


def _is_param(name: str, scope: Scope) -> bool:
    while scope is not None and scope.parent is not None:
        if name in scope.params and name not in scope.bindings:
            return True
        if name in scope.bindings:
            return False
        scope = scope.parent
    return False


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _is_float64(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in NAMES and isinstance(node.value, ast.Name)
            and node.value.id == "torch")


def _device_arg(call: ast.Call, position: int | None) -> ast.AST | None:
    for keyword in call.keywords:
        if keyword.arg == "device":
            return keyword.value
    if position is not None and position < len(call.args) and not _is_float64(call.args[position]):
        return call.args[position]
    return None


def _walk(path: Path):
    """(file, scope, node, parents) for every node, with its enclosing scope and its chain of parents."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(PACK).as_posix()

    def visit(node: ast.AST, scope: Scope, parents: tuple):
        for child in ast.iter_child_nodes(node):
            inner = Scope(child, scope) if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else scope
            yield rel, inner, child, parents + (node,)
            yield from visit(child, inner, parents + (node,))

    yield from visit(tree, Scope(tree, None), ())


def _files():
    return sorted(p for root in ROOTS for p in (PACK / root).rglob("*.py"))


def _allowed(rel: str, scope: Scope) -> bool:
    names = set()
    while scope is not None:
        names.add(scope.name())
        scope = scope.parent
    return any((rel, name) in ALLOW for name in names)


def float64_site_problems(files) -> list[str]:
    """Every float64 site that names no device of the rule, as ``file:line: what``."""
    problems = []
    for path in files:
        for rel, scope, node, parents in _walk(path):
            site = isinstance(node, ast.Call) and _called(node) == "double" and not node.args
            if not (_is_float64(node) or site) or _allowed(rel, scope):
                continue
            parent = parents[-1]
            if isinstance(parent, ast.Compare):
                continue  # a test of a dtype, not a float64 made
            call = node if site else parent if isinstance(parent, ast.Call) else None
            if call is None and isinstance(parent, ast.keyword) and isinstance(parents[-2], ast.Call):
                call = parents[-2]
            if call is None:
                problems.append(f"{rel}:{node.lineno}: float64 chosen outside a call that names its device")
                continue
            device = _device_arg(call, 0 if _called(call) == "to" else None)
            if device is None or not _rule_device(device, scope, _area(rel)):
                shown = "no device" if device is None else ast.unparse(device)
                problems.append(f"{rel}:{node.lineno}: float64 on {shown}, not the device the rule picked")
    return problems


def producers(files) -> dict[str, int]:
    """Functions that make float64 on their ``device`` parameter, directly or through another: name -> position."""
    defs = {}
    for path in files:
        for _, _, node, _ in _walk(path):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [a.arg for a in node.args.posonlyargs + node.args.args]
                if "device" in names + [a.arg for a in node.args.kwonlyargs]:
                    position = names.index("device") if "device" in names else None
                    defs[node.name] = (node, position - ("self" in names[:1]) if position is not None else None)
    found: dict[str, int] = {}
    while True:
        grown = False
        for name, (func, position) in defs.items():
            if name in found:
                continue
            for node in ast.walk(func):
                if not isinstance(node, ast.Call):
                    continue
                hands = _device_arg(node, found.get(_called(node)) if _called(node) in found else
                                    (0 if _called(node) == "to" else None))
                makes = any(_is_float64(n) for n in ast.walk(node)) or _called(node) in found
                if makes and isinstance(hands, ast.Name) and hands.id == "device":
                    found[name], grown = position, True
                    break
        if not grown:
            return found


def asks_the_rule_by_default(files) -> set[str]:
    """nodes/ functions that replace a device left out by the rule's answer (``device = device or math_device(..)``)."""
    names = set()
    for path in files:
        for rel, scope, node, _ in _walk(path):
            if _area(rel) == "nodes" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = Scope(node, scope)
                values = inner.bindings.get("device", [])
                if values and all(_rule_device(v, inner, "nodes", frozenset({"device"})) for v in values):
                    names.add(node.name)
    return names


def handed_device_problems(files) -> list[str]:
    """Calls of a float64 maker whose device is not the rule's answer (or is left out)."""
    made = producers(files)
    defaults = asks_the_rule_by_default(files)
    problems = []
    for path in files:
        for rel, scope, node, _ in _walk(path):
            if not isinstance(node, ast.Call) or _called(node) not in made or _allowed(rel, scope):
                continue
            defining = scope.node if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            device = _device_arg(node, made[_called(node)])
            if device is None and (_called(node) in defaults or defining is not None and defining.name == _called(node)):
                continue  # its own default is the rule's answer, or a recursion
            if device is None or not _rule_device(device, scope, _area(rel)):
                shown = "nothing (the CPU)" if device is None else ast.unparse(device)
                problems.append(f"{rel}:{node.lineno}: {_called(node)}() is handed {shown}, not the rule's device")
    return problems


def test_every_float64_names_the_device_the_rule_picked():
    assert float64_site_problems(_files()) == []


def test_every_float64_maker_is_handed_the_rules_device():
    assert producers(_files()), "the scan found no function that makes float64 on a device it is handed"
    assert handed_device_problems(_files()) == []


def test_the_allow_list_names_sites_that_exist():
    for (rel, name), reason in ALLOW.items():
        source = (PACK / rel).read_text(encoding="utf-8")
        assert reason and (name == "*" or f"def {name}(" in source), (rel, name)


BYPASSES = {  # the pack's own bypasses before the rule reached them, as they were written
    "I-Max's stage table on the ids' device": ("nodes/x.py", "def forward(self, ids):\n"
                                               "    return imax_frequencies(8, 1e4, 2.0, 9, 4, device=ids.device)\n"),
    "SPA's bundle ids in the ids' own place": ("rope/x.py", "def bundle_positions(positions, first, size):\n"
                                               "    return positions.to(torch.float64)\n"),
    "SEGA's own MPS-only dtype rule": ("spectral/x.py", "def small_dtype(device):\n"
                                       "    return torch.float32 if device.type == 'mps' else torch.float64\n"),
    "a float64 table on the latent's device": ("nodes/y.py", "def f(x):\n"
                                               "    return torch.zeros(3, dtype=torch.float64, device=x.device)\n"),
}


@pytest.mark.parametrize("name", BYPASSES)
def test_each_known_bypass_is_found(name, tmp_path, monkeypatch):
    rel, source = BYPASSES[name]
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_text(source, encoding="utf-8")
    (tmp_path / "rope").mkdir(exist_ok=True)
    (tmp_path / "rope" / "imax.py").write_text(
        "def imax_frequencies(dim, theta, factor, tokens, trained, device=None):\n"
        "    return torch.arange(0, dim, 2, dtype=torch.float64, device=device)\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "PACK", tmp_path)
    files = sorted(tmp_path.rglob("*.py"))
    problems = float64_site_problems(files) + handed_device_problems(files)
    assert any(problem.startswith(rel) for problem in problems), (name, problems)
