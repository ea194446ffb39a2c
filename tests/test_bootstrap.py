"""scripts/bootstrap.sh's stamp: after a complete set-up it records a hash of what the set-up was made from, and a
later run with nothing changed answers at once, without the full check (which imports torch and runs pip check:
5-7 s, what made the demo's --list, --help and typos slow). Any change redoes the full check: a pin or requirement
file, the second host's tree, a distribution installed into the environment, a removed stamp; a set-up that fails
leaves no stamp.

The script runs as it is, copied into a scratch checkout with the files it reads, on a scratch environment: a real
venv (its Python, its own empty site-packages) whose ``python`` is a wrapper that logs every call and answers the
full check's import probes itself, and whose ``pip`` only logs (nothing is ever installed). The log shows which path
a run took: the full check probes ``import torch``; the quick path runs only the hash.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HASH_CALL = "import hashlib"  # the one Python call of the quick path (setup_hash)
FULL_CHECK = "import torch"  # the first probe of the full check


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    for name in ("scripts/bootstrap.sh", ".ci/constraints.txt", ".ci/requirements-host.txt",
                 ".ci/requirements-host-0.30.txt", ".ci/host-0.30.txt"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, repo / name)
    second = repo / ".hosts" / "comfyui-0.30.0"
    second.mkdir(parents=True)
    (second / "comfyui_version.py").write_text('__version__ = "0.30.0"\n', encoding="utf-8")
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    real = venv / "bin" / "python-real"  # the venv's own Python (python3 and python3.11 link to "python")
    real.symlink_to(os.readlink(venv / "bin" / "python"))
    (venv / "bin" / "python").unlink()
    (venv / "bin" / "python").write_text(
        "#!/bin/sh\n"
        'printf "python %s\\n" "$*" >> "$BOOTSTRAP_LOG"\n'
        f'case "$*" in *"{HASH_CALL}"*) exec "{real}" "$@";; esac\n'
        'exit "${FAIL_PROBES:-0}"\n', encoding="utf-8")
    (venv / "bin" / "pip").write_text('#!/bin/sh\nprintf "pip %s\\n" "$*" >> "$BOOTSTRAP_LOG"\nexit "${FAIL_PIP:-0}"\n',
                                      encoding="utf-8")
    for tool in ("python", "pip"):
        (venv / "bin" / tool).chmod(0o755)
    return repo


def bootstrap(repo: Path, **env: str) -> tuple[int, str]:
    """Run the copied bootstrap.sh; its exit status and the calls it made (the log: "python ARGS" / "pip ARGS")."""
    log = repo / "calls.log"
    log.write_text("", encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if k not in ("COMFYUI_PATH", "VENV", "PYTHON")}
    result = subprocess.run(["bash", str(repo / "scripts" / "bootstrap.sh")], env={**clean, "BOOTSTRAP_LOG": str(log),
                            "TORCH_CPU_INDEX": "", **env}, capture_output=True, text=True, timeout=120, check=False)
    return result.returncode, log.read_text(encoding="utf-8")


def site_packages(repo: Path) -> Path:
    return next((repo / ".venv" / "lib").glob("python3*/site-packages"))


@pytest.mark.parametrize("env", [{}, {"COMFYUI_PATH": "/any/ComfyUI"}], ids=["hosts", "COMFYUI_PATH"])
def test_nothing_changed_answers_without_the_full_check(checkout, env):
    status, calls = bootstrap(checkout, **env)
    assert status == 0 and FULL_CHECK in calls
    kind = "venv" if env else "hosts"
    assert (checkout / ".venv" / f".bootstrap-{kind}").read_text(encoding="utf-8").strip()
    status, calls = bootstrap(checkout, **env)
    assert status == 0 and calls.startswith(f"python -I -c {HASH_CALL}") and calls.count("\npython ") == 0
    assert "pip " not in calls  # the hash, nothing else


def test_a_complete_hosts_setup_also_stamps_the_environment_alone(checkout):
    assert bootstrap(checkout)[0] == 0
    status, calls = bootstrap(checkout, COMFYUI_PATH="/any/ComfyUI")
    assert status == 0 and FULL_CHECK not in calls


@pytest.mark.parametrize("change", ["pin", "install", "second host", "stamp removed"])
def test_any_change_redoes_the_full_check(checkout, change):
    assert bootstrap(checkout)[0] == 0
    if change == "pin":
        with (checkout / ".ci" / "constraints.txt").open("a", encoding="utf-8") as pins:
            pins.write("example-package==1.0\n")
    elif change == "install":  # what pip leaves in the environment: a new distribution's metadata folder
        (site_packages(checkout) / "example_package-1.0.dist-info").mkdir()
    elif change == "second host":
        (checkout / ".hosts" / "comfyui-0.30.0" / "comfyui_version.py").write_text(
            '__version__ = "0.30.0"\n# patched\n', encoding="utf-8")
    else:
        (checkout / ".venv" / ".bootstrap-hosts").unlink()
    status, calls = bootstrap(checkout)
    assert status == 0 and FULL_CHECK in calls
    assert FULL_CHECK not in bootstrap(checkout)[1]  # stamped again


def test_a_failed_setup_leaves_no_stamp(checkout):
    # The probes say torch is missing and the install fails: the script fails, and the next run checks in full.
    status, calls = bootstrap(checkout, FAIL_PROBES="1", FAIL_PIP="1")
    assert status != 0 and "pip install" in calls
    assert not (checkout / ".venv" / ".bootstrap-hosts").exists()
    assert not (checkout / ".venv" / ".bootstrap-venv").exists()
