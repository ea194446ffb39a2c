"""Command line of the pack: ``python -m <pack> COMMAND ...`` or ``python /path/to/pack COMMAND ...``.

Each command lives in its own module as ``function(argv, prog=...) -> exit code``; adding one is one entry in
``COMMANDS``. Nothing here imports ComfyUI (``bench`` does, in its own module: it times ComfyUI's embedder), and no
command imports torch or Pillow before it has read its arguments: ``--help`` and usage errors answer at once, in any
Python; where torch or Pillow is missing, the command then says in one line what is missing and which Python to run
it with.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

# Import name used when the pack directory is run as a script (no package context); matches the test host's.
STANDALONE_PACKAGE = "dype_sega"

# command -> (module inside the pack, function, one-line help, what it uses torch for)
COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "bench": ("nodes.bench.cli", "main", "embedder and patched sampling vs stock, side by side (needs ComfyUI)",
              "it times ComfyUI's own sampling"),
    "hf-energy": ("spectral.hf_energy_cli", "main", "variance of the Laplacian (HF energy) of images over a flat box",
                  "the metric runs in float64 in torch, the code the tests check; Pillow alone cannot run it"),
    "schedule-preview": ("nodes.schedule_preview.cli", "main", "draw the DyPE/SEGA schedule of a target size as a PNG",
                         "it computes the patch engine's own schedules"),
}
#: The commands that use Pillow (imported, like torch, only after the arguments are read), and what for.
USES_PILLOW = {"hf-energy": "Pillow reads the images", "schedule-preview": "Pillow writes the figure"}
#: Where torch is: the Python that runs ComfyUI (the pack's own tests: .venv/bin/python after scripts/bootstrap.sh).
WHICH_PYTHON = ("run it with the Python that runs ComfyUI (its venv's python, or python_embeded\\python.exe in the "
                "Windows portable build)")


def _package() -> str:
    """The pack's import name; when run as ``python <pack dir>``, import the directory as ``dype_sega`` first."""
    if __package__:
        return __package__
    if STANDALONE_PACKAGE not in sys.modules:
        pack_dir = Path(__file__).resolve().parent
        init = pack_dir / "__init__.py"
        if init.is_file():
            spec = importlib.util.spec_from_file_location(
                STANDALONE_PACKAGE, init, submodule_search_locations=[str(pack_dir)]
            )
        else:
            spec = importlib.machinery.ModuleSpec(STANDALONE_PACKAGE, None, is_package=True)
            spec.submodule_search_locations = [str(pack_dir)]
        if spec is None:
            raise ImportError(f"Cannot import {pack_dir} as package {STANDALONE_PACKAGE!r}.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[STANDALONE_PACKAGE] = module
        try:
            if spec.loader is not None:
                spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[STANDALONE_PACKAGE]
            raise
    return STANDALONE_PACKAGE


def main(argv: Sequence[str] | None = None) -> int:
    prog = f"python -m {__package__}" if __package__ else f"python {sys.argv[0]}"
    command_line = importlib.import_module(f"{_package()}.spectral.command_line")  # one-line usage errors
    parser = command_line.OneLineParser(
        prog=prog,
        description="DyPE + SEGA command-line tools. Run '%(prog)s COMMAND --help' for a command's options.",
        epilog="commands:\n" + "\n".join(f"  {name:<20}{info[2]}" for name, info in COMMANDS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=sorted(COMMANDS), metavar="COMMAND", help="one of: " + ", ".join(COMMANDS))
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the command")
    args = parser.parse_args(argv)
    module_name, function_name = COMMANDS[args.command][:2]
    try:
        module = importlib.import_module(f"{_package()}.{module_name}")
        return int(getattr(module, function_name)(args.args, prog=f"{prog} {args.command}") or 0)
    except ModuleNotFoundError as error:
        if error.name not in ("torch", "PIL"):
            raise
        parser.exit(1, f"{prog} {args.command}: error: {missing_message(args.command, error.name)}\n")


def missing_message(command: str, failed: str) -> str:
    """One line: what of torch and Pillow this Python lacks for ``command`` (all of it, not only the import that
    failed first), what the command uses it for, and which Python has both."""
    uses = {"torch": COMMANDS[command][3], "Pillow": USES_PILLOW.get(command)}
    lacking = {"torch": failed == "torch" or importlib.util.find_spec("torch") is None,
               "Pillow": command in USES_PILLOW and (failed == "PIL" or importlib.util.find_spec("PIL") is None)}
    missing = [name for name, lacks in lacking.items() if lacks]
    return (f"this Python ({sys.executable}) has no {' and no '.join(missing)}, which the command needs "
            f"({'; '.join(uses[name] for name in missing)}): {WHICH_PYTHON}")


if __name__ == "__main__":
    sys.exit(main())
