"""A second measure of the bench's CPU times that does not depend on the machine's load: the instructions the CPU
runs inside each measured region, counted by valgrind's callgrind (user-space instructions, deterministic up to
allocation; other processes cannot change them, unlike the wall clock and, on shared or hyper-threaded cores, this
process's CPU time).

    COMFYUI_PATH=/path/to/ComfyUI python scripts/instruction_count.py [--hiflow-side 128] [--call flux 2048 1 ...]

It runs the bench's own code (nodes/bench/: the cascades' routes, hiflow_rows.hiflow_row, and the per-call variants,
embedder_rows.case_calls) once under ``valgrind --tool=callgrind`` with instrumentation off until the measured part
(boot and the untimed rounds run uninstrumented) and collection on only inside the measured regions: each model call
of the cascades' timed round (the bench's ``span`` hook), one call of each per-call variant after its warm-up. It
prints the instructions per route (of the model calls only, as the bench's "inside the model calls" row) and per
variant, with their ratios. Needs Linux, valgrind (callgrind.h) and a C compiler for the 10-line client-request
helper it builds in a temporary directory. Not shipped (scripts/ is not part of the pack); about 10-20 minutes at the
defaults. Caveats: instructions are not time; memory-bound work (page faults of fresh memory: the bench's "floor")
costs time that no user-space instruction shows. Valgrind emulates AVX2's fused multiply-adds lane by lane in C
(a 512 x 512 matrix product: 6.2 s under it against 2.8 ms natively), so the child runs torch's and MKL's SSE4.2
kernels instead (``SSE_KERNELS``: 25 ms there): the counts are of that code path, not of the AVX-512 one a native
run takes on this machine.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

PACK_DIR = Path(__file__).resolve().parents[1]
PACKAGE = "dype_sega"
#: torch's, MKL's and oneDNN's kernels without AVX2 / FMA, which valgrind emulates hundreds of times slower.
SSE_KERNELS = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "DNNL_MAX_CPU_ISA": "SSE41"}
HELPER = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cg_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void cg_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
int cg_running(void) { return RUNNING_ON_VALGRIND; }
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hiflow-side", type=int, default=128, help="the cascades' tiny base side, px (0: skip)")
    parser.add_argument("--call", nargs=3, action="append", default=[], metavar=("FAMILY", "SIDE", "BATCH"),
                        help="a per-call case (flux or qwen_image, px, batch); repeatable")
    parser.add_argument("--keep", type=Path, default=None, help="write callgrind's dump files to this folder")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    return parser


def _import_pack():
    spec = importlib.util.spec_from_file_location(PACKAGE, PACK_DIR / "__init__.py",
                                                  submodule_search_locations=[str(PACK_DIR)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)


def _child(args: argparse.Namespace) -> None:
    """Under valgrind: the measured regions, each dumped under its name (route or variant)."""
    helper = ctypes.CDLL(args.child)
    if not helper.cg_running():
        raise SystemExit("instruction_count: the child must run under valgrind")
    _import_pack()
    model = importlib.import_module(f"{PACKAGE}.nodes.bench.model")
    model.boot()
    import torch

    torch.set_num_threads(1)
    print(f"torch's CPU kernels: {torch.backends.cpu.get_cpu_capability()}", flush=True)
    started = [False]
    last = [None]

    def start() -> None:
        if not started[0]:
            helper.cg_start()
            started[0] = True

    @contextlib.contextmanager
    def region(name: str):
        if last[0] is not None and last[0] != name:
            helper.cg_dump(last[0].encode())
        last[0] = name
        start()
        helper.cg_toggle()
        try:
            yield
        finally:
            helper.cg_toggle()

    def span(route: str, round_index: int):
        return region(f"route {route}") if round_index >= 0 else contextlib.nullcontext()

    cpu = torch.device("cpu")
    if args.hiflow_side:
        rows = importlib.import_module(f"{PACKAGE}.nodes.bench.hiflow_rows")
        result = rows.hiflow_row(args.hiflow_side, 1, cpu, span=span)
        print("calls per route:", {name: route["calls"] for name, route in result.items()}, flush=True)
    embedder = importlib.import_module(f"{PACKAGE}.nodes.bench.embedder_rows")
    for family, side, batch in args.call:
        case = embedder.Case(family, int(side), int(batch))
        fns, _ = embedder.case_calls(case, cpu)
        with torch.no_grad():
            for fn in fns.values():  # warm-up, uninstrumented until the first measured call
                fn()
            for name, fn in fns.items():
                with region(f"call {case.label} {name}"):
                    fn()
    if last[0] is not None:
        helper.cg_dump(last[0].encode())


def _counts(folder: Path) -> dict[str, int]:
    """Instructions per region name, summed over callgrind's dump files."""
    totals: dict[str, int] = defaultdict(int)
    for path in sorted(folder.glob("cg.out*")):
        text = path.read_text(encoding="utf-8", errors="replace")
        name = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if name and total:
            totals[name[1]] += int(total[1])
    return dict(totals)


def main() -> int:
    args = _parser().parse_args()
    if args.child:
        _child(args)
        return 0
    for tool in ("valgrind", "cc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"instruction_count: {tool} not found on PATH")
    with tempfile.TemporaryDirectory() as folder:
        work = args.keep or Path(folder)
        work.mkdir(parents=True, exist_ok=True)
        (work / "helper.c").write_text(HELPER, encoding="utf-8")
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(work / "helper.so"), str(work / "helper.c")],
                       check=True)
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                   f"--callgrind-out-file={work / 'cg.out'}", sys.executable, str(Path(__file__).resolve()),
                   "--child", str(work / "helper.so"), "--hiflow-side", str(args.hiflow_side)]
        for case in args.call:
            command += ["--call", *case]
        print(f"load average at start {', '.join(f'{v:.1f}' for v in os.getloadavg())} (instruction counts do not "
              "depend on it)", flush=True)
        subprocess.run(command, check=True, env={**os.environ, "PYTHONHASHSEED": "0", **SSE_KERNELS})
        counts = _counts(work)
    routes = {k[len("route "):]: v for k, v in counts.items() if k.startswith("route ")}
    if routes:
        one = routes.get("one pass")
        print("\n| route | instructions inside the model calls, G | / one pass |\n|---|---|---|")
        for name, value in routes.items():
            print(f"| {name} | {value / 1e9:.2f} | {value / one:.3f} |" if one else f"| {name} | {value / 1e9:.2f} | – |")
    calls = {k[len("call "):]: v for k, v in counts.items() if k.startswith("call ")}
    if calls:
        print("\n| case and variant | instructions of one call, M | / stock |\n|---|---|---|")
        for name, value in calls.items():
            stock = calls.get(name.rsplit(" ", 1)[0] + " stock")
            print(f"| {name} | {value / 1e6:.1f} | {value / stock:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
