"""``python <pack> COMMAND`` in a Python without torch, and in one without torch or Pillow: every ``--help`` and usage
error answers (no command imports torch or Pillow before it has read its arguments), and a valid command says in one
line what this Python lacks, what for, and which Python to use (hf-energy: Pillow alone cannot run its float64
metric), never a traceback.

The Pythons are this one started with ``-S`` (no site-packages: no torch, no ComfyUI) and ``PYTHONPATH`` holding only
Pillow, as on a machine with a system Python and Pillow installed, or nothing at all (a bare system Python).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import PIL
import pytest

PACK = Path(__file__).resolve().parents[1]
COMMANDS = {  # a valid call (torch is needed next), a usage error and what it names
    "bench": ([], ["--sides", "7"], "--sides"),
    "hf-energy": (["{image}"], ["{image}", "--box", "0", "0", "2", "2"], "--box"),
    "schedule-preview": (["--out", "{out}"], ["--width", "7"], "--width"),
}


@pytest.fixture(scope="module")
def pillow_only(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pillow_only")
    site = Path(PIL.__file__).parent.parent
    for name in ("PIL", "pillow.libs"):  # the package and the shared libraries its wheel ships beside it
        if (site / name).is_dir():
            (folder / name).symlink_to(site / name, target_is_directory=True)
    return folder


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bare")  # an empty PYTHONPATH entry: neither Pillow nor torch


def run(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COMFYUI_PATH")}
    return subprocess.run([sys.executable, "-S", str(PACK), *args], env={**env, "PYTHONPATH": str(site)},
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(("site", "has_pillow"), [("pillow_only", "True"), ("bare", "False")])
def test_the_premise_these_pythons_have_no_torch_and_pillow_or_not(site, has_pillow, request):
    probe = "import importlib.util as u; print(u.find_spec('PIL') is not None, u.find_spec('torch') is None)"
    result = subprocess.run([sys.executable, "-S", "-c", probe], env={"PYTHONPATH": str(request.getfixturevalue(site))},
                            capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split() == [has_pillow, "True"]


def test_the_pack_lists_its_commands(pillow_only):
    result = run(pillow_only, "--help")
    assert result.returncode == 0, result.stderr
    assert all(command in result.stdout for command in COMMANDS)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_and_usage_errors_need_no_torch(command, pillow_only):
    helped = run(pillow_only, command, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage:"), helped.stderr
    _, bad, names = COMMANDS[command]
    image = PACK / "icon.png"
    wrong = run(pillow_only, command, *(a.format(image=image) for a in bad))
    assert wrong.returncode == 2 and names in wrong.stderr and "(see --help)" in wrong.stderr
    assert wrong.stderr.count("\n") == 1 and "Traceback" not in wrong.stderr


def _valid_call_refused(python, command: str, lacks: str, tmp_path) -> str:
    """A valid call in a Python that lacks what it needs: one line naming what is missing and which Python to use,
    exit status 1, no output written. Returns the line."""
    good, _, _ = COMMANDS[command]
    result = run(python, command, *(a.format(image=PACK / "icon.png", out=tmp_path / "p.png") for a in good))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"this Python ({sys.executable}) has {lacks}" in result.stderr
    assert "the Python that runs ComfyUI" in result.stderr
    assert not (tmp_path / "p.png").exists()
    return result.stderr


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_valid_call_says_which_python_to_use_in_one_line(command, pillow_only, tmp_path):
    stderr = _valid_call_refused(pillow_only, command, "no torch", tmp_path)
    if command == "hf-energy":
        assert "Pillow alone cannot run it" in stderr


@pytest.mark.parametrize("command", list(COMMANDS))
def test_without_pillow_either_help_and_usage_errors_still_answer(command, bare):
    assert run(bare, command, "--help").returncode == 0
    _, bad, names = COMMANDS[command]
    wrong = run(bare, command, *(a.format(image=PACK / "icon.png") for a in bad))
    assert wrong.returncode == 2 and names in wrong.stderr and wrong.stderr.count("\n") == 1, wrong.stderr


@pytest.mark.parametrize(("command", "lacks"), [("hf-energy", "no torch and no Pillow"),
                                                ("schedule-preview", "no torch and no Pillow"), ("bench", "no torch,")])
def test_without_pillow_either_a_valid_call_names_all_it_lacks_in_one_line(command, lacks, bare, tmp_path):
    # Before: hf-energy and schedule-preview --out ended in 12- and 35-line "No module named 'PIL'" tracebacks.
    stderr = _valid_call_refused(bare, command, lacks, tmp_path)
    assert ("Pillow reads" in stderr or "Pillow writes" in stderr) == (command != "bench")


def test_an_unusual_image_suffix_needs_pillow_and_says_so_in_one_line(bare, pillow_only, tmp_path):
    # .foo: whether Pillow writes it is Pillow's to say; without Pillow the same one line as a valid call.
    assert "has no torch and no Pillow" in run(bare, "schedule-preview", "--out", str(tmp_path / "p.foo")).stderr
    refused = run(pillow_only, "schedule-preview", "--out", str(tmp_path / "p.foo"))
    assert refused.returncode == 2 and "Pillow cannot write '.foo'" in refused.stderr
