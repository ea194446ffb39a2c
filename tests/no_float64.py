"""A device without float64, simulated on the CPU: the host's own check says "no float64", and a torch function mode
tells the two sides apart that a real Mac (MPS), Intel XPU or DirectML machine keeps apart by device.

On such a machine the pack's rule (nodes/rope_patch/devices.py ``math_device``) sends float64 math to the CPU, and
a float64 tensor made on the model's device raises. Here every tensor is on the CPU, so device alone cannot tell a
float64 tensor "on the rule's device" from one "on the model's": ``RuleSide`` follows each tensor's side instead.

* The rule's side: tensors made on a device object the rule returned (wrapped: ``rule_device``), or the ``.device``
  of such a tensor; factories on torch's default device (the CPU, where float64 always works); ``.cpu()``; and
  whatever an op computes from rule-side tensors. A move to another device object (the latent's ``x.device``, a
  string) puts the copy on the model's side; the mode copies where the CPU would alias, as a real move copies.
* The model's side: everything else: the weights, the latent, ids, sigmas, whatever was made before the run.

An op called from the pack's code (rope/, spectral/, nodes/: the first frame outside torch and the standard library)
fails the run when it makes a float64 tensor on the model's side (a real device without float64 raises there), or
when it mixes a rule-side tensor of one or more dimensions with a model-side one (different devices there). Each
failure names the pack's file, line and the torch op. Host code is followed (sides propagate) but not judged: the
host's own rope() follows its own check.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass, field

import host
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

PACK_PARTS = tuple(str(host.PACK_DIR / part) + os.sep for part in ("rope", "spectral", "nodes"))
_SKIPPED = (os.path.dirname(torch.__file__) + os.sep, sysconfig.get_paths()["stdlib"] + os.sep, __file__)
_DEVICE_GETTER = torch._C.TensorBase.__dict__["device"]


@dataclass
class Violation:
    where: str  # pack file:line
    op: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.op}: {self.what}"


def _pack_frame() -> str | None:
    """``file:line`` of the innermost frame outside torch and the standard library, if it is the pack's code."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIPPED):
        frame = frame.f_back
    if frame is None or not frame.f_code.co_filename.startswith(PACK_PARTS):
        return None
    return f"{os.path.relpath(frame.f_code.co_filename, host.PACK_DIR)}:{frame.f_lineno}"


@dataclass(eq=False)
class RuleSide(TorchFunctionMode):
    devices: dict = field(default_factory=dict)  # id -> device object the rule gave (kept alive: ids stay unique)
    rule_tensors: dict = field(default_factory=dict)  # id -> tensor on the rule's side (kept alive likewise)
    checked: list = field(default_factory=list)  # pack sites that made float64 on the rule's side
    asked: list = field(default_factory=list)  # the rule's answers during the run
    violations: list = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def rule_device(self, device: torch.device) -> torch.device:
        self.devices[id(device)] = device
        return device

    def _rule(self, tensor: torch.Tensor) -> bool:
        return id(tensor) in self.rule_tensors

    def _target(self, func, args, kwargs) -> bool | None:
        """The side an explicit device puts the result on (True: the rule's), None where the op names none."""
        name = getattr(func, "__name__", "")
        if name == "cpu":
            return True
        if name == "cuda":
            return False
        candidates = [kwargs["device"]] if "device" in kwargs else []
        if name == "to":
            candidates += [a for a in args[1:] if isinstance(a, (torch.device, str, int)) and not isinstance(a, bool)]
            others = [a for a in args[1:] if isinstance(a, torch.Tensor)]
            if others:
                return self._rule(others[0])
        if not candidates:
            return None
        device = candidates[0]
        return device is None or id(device) in self.devices  # None: torch's default device, the CPU

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if getattr(func, "__self__", None) is _DEVICE_GETTER:
            if self._rule(args[0]):
                self.devices[id(out)] = out
            return out
        inputs = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        target = self._target(func, args, kwargs)
        model_inputs = [t for t in inputs if not self._rule(t)]
        if target is None:  # a CPU scalar (0-d) may join a device op, whose result stays on the device
            mixes = bool(model_inputs) and any(t.dim() for t in inputs if self._rule(t))
            side = not model_inputs
        else:
            mixes, side = False, target
        outputs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        float64 = any(t.dtype == torch.float64 for t in outputs)
        if mixes or float64:
            where = _pack_frame()
            if where is not None:
                op = getattr(func, "__qualname__", repr(func))
                if mixes:
                    self.violations.append(Violation(where, op, "mixes the rule's device with the model's"))
                elif not side:
                    self.violations.append(Violation(where, op, "makes float64 on the model's device"))
                else:
                    self.checked.append(where)
        aliased = [o for o in outputs if any(o is i for i in inputs)]
        if aliased and target is not None and self._rule(aliased[0]) != target:
            out = outputs[0] = out.clone()  # a move to the other side aliases on the CPU; a real device copies
        elif aliased:
            return out  # in place, or a no-op: the tensor keeps its side
        for tensor in outputs:
            if side:
                self.rule_tensors[id(tensor)] = tensor
            else:
                self.rule_tensors.pop(id(tensor), None)
        return out


def host_says_no_float64(monkeypatch) -> str:
    """The host's own check answers "no float64" for every device: ``supports_fp64`` where the host has it, else
    0.3.75's DirectML check (one of the three its flux/math.py rope() reads). Returns what was patched."""
    import comfy.model_management as mm

    if hasattr(mm, "supports_fp64"):
        monkeypatch.setattr(mm, "supports_fp64", lambda device=None: False)
        return "supports_fp64"
    monkeypatch.setattr(mm, "is_directml_enabled", lambda: True)
    return "is_directml_enabled"


@contextlib.contextmanager
def no_float64(monkeypatch) -> Iterator[RuleSide]:
    """Inside: the host has no float64 and ``RuleSide`` watches every torch op. The rule's answers are recorded
    wherever a pack module imported it; the shape-only spectral tables are rebuilt (a table cached before the run
    would be on neither side). Yields the mode; its ``violations`` are for the caller to assert on."""
    host_says_no_float64(monkeypatch)
    pack = host.import_pack()
    for part in pkgutil.walk_packages(pack.__path__, prefix=f"{host.PACK_NAME}."):
        if part.name.split(".")[1] in ("rope", "spectral", "nodes"):
            importlib.import_module(part.name)  # every module that imports the rule holds it before it is wrapped
    devices = host.pack_submodule("nodes.rope_patch.devices")
    host.pack_submodule("spectral.shape_cache").release()
    mode = RuleSide()
    real = devices.math_device

    def recording(device: torch.device) -> torch.device:
        answer = real(device)
        assert answer.type == "cpu" and answer is not device, "the forced host check did not reach the rule"
        mode.asked.append(answer)
        return mode.rule_device(answer)

    for name, module in list(sys.modules.items()):
        if name.startswith(f"{host.PACK_NAME}.") and getattr(module, "math_device", None) is real:
            monkeypatch.setattr(module, "math_device", recording)
    with mode:
        yield mode
    host.pack_submodule("spectral.shape_cache").release()
