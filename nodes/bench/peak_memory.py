"""Peak memory of one call, by two gauges that share no code and that no profiler label can hide. The bench prints a
figure only when both agree (``Peak.agrees``).

* The allocation record (CPU and CUDA): every allocation and free the allocator reports to the profiler, replayed in
  time order from the profiler's raw event stream. Not from its op tree: there a free made inside a label counts as
  the label's own memory at the label's *start*, so one label around a call hid 99 MiB of stock's 163 MiB peak
  (issue 34; the bench's gauge read the tree until then).
* A second gauge outside the profiler. CUDA: the caching allocator's own high-water mark (``max_memory_allocated``).
  CPU: the high-water mark of the resident pages (``VmHWM``, reset through ``/proc/self/clear_refs``) of a separate
  process in which glibc maps every block of 64 KiB or more on its own (``MALLOC_MMAP_THRESHOLD_``): a free then
  returns its pages at once, so the resident size follows the bytes alive. Page-granular, and it counts what is
  written, which for these calls (every table is written whole) is what is allocated. Linux only.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from .sources import PACK_ROOT
from .timing import sync

MIB = 2**20
#: The two gauges agree when they differ by at most this share of the larger, or by one MiB (page and heap noise).
AGREEMENT = 0.03
CLEAR_REFS = Path("/proc/self/clear_refs")
#: glibc: blocks from 64 KiB up get their own mapping (an explicit value also stops glibc raising it after a free).
CHILD_ENV = {"MALLOC_MMAP_THRESHOLD_": str(64 * 1024)}


@dataclasses.dataclass(frozen=True)
class Peak:
    """Peak extra memory of one call (MiB) by the allocation record, by the second gauge (None: none here) and its
    name."""

    record: float
    second: float | None
    second_name: str

    def agrees(self) -> bool:
        if self.second is None:
            return False
        return abs(self.record - self.second) <= max(1.0, AGREEMENT * max(self.record, self.second))


def record_peak_mib(fn: Callable[[], object], device: torch.device) -> float:
    """Peak of the bytes allocated while ``fn`` runs above those allocated before it, from the profiler's raw record
    of every allocation and free on ``device``'s type (labels and op nesting play no part)."""
    return record_bytes(fn, device)[1] / MIB


def record_bytes(fn: Callable[[], object], device: torch.device) -> tuple[object, int, int]:
    """``fn()``'s result, the peak bytes allocated while it ran (as ``record_peak_mib``) and the bytes still
    allocated when it returned (what its result holds)."""
    sync(device)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
        sync(device)
    # kineto_results holds the stream before it is folded into events(); the public API offers no raw record.
    records = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                     if e.name() == "[memory]" and e.device_type().name == device.type.upper())
    current = peak = 0
    for _, nbytes in records:
        current += nbytes
        peak = max(peak, current)
    return result, peak, current


def allocator_peak_mib(fn: Callable[[], object], device: torch.device) -> float:
    """CUDA: the caching allocator's own high-water mark during ``fn``, above what was allocated before it."""
    sync(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    fn()
    sync(device)
    return (torch.cuda.max_memory_allocated(device) - before) / MIB


def _status_bytes(field: str) -> int:
    text = Path("/proc/self/status").read_text(encoding="ascii")
    return int(re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE).group(1)) * 1024


def resident_peak_mib(fn: Callable[[], object]) -> float:
    """CPU, in this process: the resident pages' high-water mark while ``fn`` runs, above the resident size before.
    Honest only where large blocks are mapped on their own (``CHILD_ENV``, set before the process starts)."""
    gc.collect()
    CLEAR_REFS.write_text("5", encoding="ascii")  # VmHWM := VmRSS
    before = _status_bytes("VmRSS")
    fn()
    return (_status_bytes("VmHWM") - before) / MIB


def resident_gauge_problem() -> str | None:
    """Why this machine has no resident-pages gauge, or None."""
    if not sys.platform.startswith("linux"):
        return f"no /proc here ({sys.platform})"
    if not os.access(CLEAR_REFS, os.W_OK):
        return f"{CLEAR_REFS} is not writable"
    return None


def in_child(module: str, function: str, payload: dict) -> dict:
    """Run ``module.function(payload) -> dict`` (a module of this pack, by its full name) in a fresh Python process
    with ``CHILD_ENV`` and this process's import path (ComfyUI where it was found here); its result comes back as
    JSON on the last line of its output."""
    package = module.split(".", 1)[0]
    code = (
        "import importlib, importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location({package!r}, {str(PACK_ROOT / '__init__.py')!r}, "
        f"submodule_search_locations=[{str(PACK_ROOT)!r}])\n"
        "pack = importlib.util.module_from_spec(spec); sys.modules[spec.name] = pack; spec.loader.exec_module(pack)\n"
        f"result = getattr(importlib.import_module({module!r}), {function!r})(json.loads(sys.argv[1]))\n"
        "print(json.dumps(result))\n"
    )
    no_site = ["-S"] if sys.flags.no_site else []  # a Python without its site-packages (gpu-check's dry run) stays so
    done = subprocess.run([sys.executable, *no_site, "-c", code, json.dumps(payload)], capture_output=True, text=True,
                          env={**os.environ, **CHILD_ENV, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the memory gauge's process failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
