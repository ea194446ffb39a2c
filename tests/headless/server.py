"""A real ComfyUI server for the browser test: the host tree, this pack installed under ``custom_nodes/``, 127.0.0.1.

Recipe from workflows.md §6: main.py runs from a shadow directory (main.py copied, everything else symlinked) so
that a vendored ``extra_model_paths.yaml`` pointing at missing folders is not read; ``--base-directory`` keeps
custom_nodes/models/input/output/user inside a temp dir, where the pack is copied as a user installs it and the
model files the workflows name exist as empty files (so the file combos list them, as on a user's machine).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import host

logger = logging.getLogger(__name__)

# What a registry install ships (.comfyignore drops tests/, scripts/, .ci/); VCS and caches never travel.
_NOT_SHIPPED = shutil.ignore_patterns("tests", "scripts", ".ci", ".git", ".venv", "out", "__pycache__", "*.pyc",
                                      ".pytest_cache", ".ruff_cache")
_SKIP_IN_SHADOW = {"main.py", "extra_model_paths.yaml", "__pycache__", "custom_nodes", "models", "input", "output",
                   "temp", "user"}


def pinned(root: Path, package: str) -> str | None:
    """The version of ``package`` the host's requirements.txt pins, if any."""
    req = root / "requirements.txt"
    for line in req.read_text(encoding="utf-8").splitlines() if req.is_file() else []:
        name, _, version = line.partition("==")
        if name.strip().lower().replace("_", "-") == package:
            return version.split(";")[0].strip()
    return None


def pinned_frontend(root: Path) -> str | None:
    """The ``comfyui-frontend-package`` version the host's requirements.txt pins, if any."""
    return pinned(root, "comfyui-frontend-package")


def installed(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def installed_frontend() -> str | None:
    return installed("comfyui-frontend-package")


TEMPLATES = "comfyui-workflow-templates"


def templates_path(root: Path) -> tuple[Path | None, str]:
    """Where the server finds the ``comfyui-workflow-templates`` version the host pins (ComfyUI's own template
    library, which a real install has): ``(None, why)`` the installed one, ``(dir, why)`` a copy under .hosts/ that
    goes first on the server's PYTHONPATH (scripts/browser-setup.sh puts it there); LookupError when neither."""
    want, have = pinned(root, TEMPLATES), installed(TEMPLATES)
    if want is None or want == have:
        return None, f"{TEMPLATES} {have} (installed)"
    copy = host.PACK_DIR / ".hosts" / f"templates-{want}"
    if (copy / "comfyui_workflow_templates").is_dir():
        return copy, f"{TEMPLATES} {want} from {copy}"
    raise LookupError(f"the host at {root} pins {TEMPLATES} {want}, installed is {have}; "
                      "run scripts/browser-setup.sh to put the pinned one under .hosts/")


#: Frontends newer than either test host's, which the browser test also runs on the 0.30 host, each with
#: ``DYPE_SEGA_FRONTEND=<version>`` (.ci/run); scripts/browser-setup.sh puts each under .hosts/. The one ComfyUI 0.38
#: pins (its requirements.txt: comfyui-frontend-package==1.53.6) and the newest on PyPI (``pip index versions
#: comfyui-frontend-package``: 1.58.1, checked when it was added here; raise it with a look at that frontend).
COMFYUI_038_FRONTEND = "1.53.6"
NEWEST_FRONTEND = "1.58.1"
EXTRA_FRONTENDS = (COMFYUI_038_FRONTEND, NEWEST_FRONTEND)
FRONTEND_ENV = "DYPE_SEGA_FRONTEND"  # a version (a copy under .hosts/frontend-<version>) or a --target folder


def chosen_frontend() -> tuple[Path, str] | None:
    """The frontend ``DYPE_SEGA_FRONTEND`` asks for instead of the host's pin: its static folder and version."""
    chosen = os.environ.get(FRONTEND_ENV)
    if not chosen:
        return None
    folder = Path(chosen) if os.sep in chosen else host.PACK_DIR / ".hosts" / f"frontend-{chosen}"
    static = folder / "comfyui_frontend_package" / "static"
    infos = sorted(folder.glob("comfyui_frontend_package-*.dist-info"))
    if not (static / "index.html").is_file() or not infos:
        raise LookupError(f"{FRONTEND_ENV}={chosen}: no comfyui-frontend-package in {folder}; run scripts/browser-setup.sh "
                          f"(it installs {', '.join(EXTRA_FRONTENDS)} there) or pip install --target it")
    return static, infos[-1].name.removeprefix("comfyui_frontend_package-").removesuffix(".dist-info")


def frontend_root(root: Path) -> tuple[Path | None, str]:
    """Which frontend to serve for the host at ``root``: ``(None, why)`` means the installed package is the one the
    host pins; ``(path, why)`` a copy of the pinned version under .hosts/ (scripts/browser-setup.sh puts it there),
    or the one ``DYPE_SEGA_FRONTEND`` names; raises LookupError with what to run when none is available."""
    chosen = chosen_frontend()
    if chosen is not None:
        return chosen[0], f"comfyui-frontend-package {chosen[1]} from {chosen[0]} ({FRONTEND_ENV})"
    pinned, installed = pinned_frontend(root), installed_frontend()
    if pinned is None or pinned == installed:
        return None, f"comfyui-frontend-package {installed} (installed)"
    copy = host.PACK_DIR / ".hosts" / f"frontend-{pinned}" / "comfyui_frontend_package" / "static"
    if (copy / "index.html").is_file():
        return copy, f"comfyui-frontend-package {pinned} from {copy}"
    raise LookupError(f"the host at {root} pins comfyui-frontend-package {pinned}, installed is {installed}; "
                      "run scripts/browser-setup.sh to put the pinned one under .hosts/")


#: The browser tests' wait for ComfyUI to answer after its start, in seconds (docs/development.md). Unset: the machine
#: decides (WAIT_PER_CORE_LOAD s for each unit of load per CPU, at least WAIT_FLOOR s). A server alone answered after
#: 24.5 s at load 11 on 2 cores; on such a machine, with the browser tests' own servers and frontends, a fixed 90 s
#: ran out for every browser test.
WAIT_SETTING = "DYPE_SEGA_SERVER_WAIT"
WAIT_FLOOR, WAIT_PER_CORE_LOAD = 90.0, 60.0


def start_wait() -> tuple[float, str]:
    """How long to wait for the server, and where that number came from (said when the wait runs out)."""
    given = os.environ.get(WAIT_SETTING, "").strip()
    if given:
        try:
            seconds = float(given)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds < float("inf"):
            raise ValueError(f"{WAIT_SETTING}={given!r}: give the seconds to wait for ComfyUI's start, e.g. 300")
        return seconds, f"{WAIT_SETTING}={given}"
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    seconds = max(WAIT_FLOOR, WAIT_PER_CORE_LOAD * load / cores)
    return seconds, f"the default for load {load:.1f} on {cores} CPUs; set {WAIT_SETTING}=SECONDS to wait longer"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ComfyServer:
    """``with ComfyServer(tmp, model_files) as srv:`` → ``srv.url``; the process is stopped by its pid on exit."""

    def __init__(self, work_dir: Path, model_files: dict[str, tuple[str, ...]], front_end_root: Path | None = None,
                 start_timeout: float | None = None, templates: Path | None = None) -> None:
        self.work_dir = work_dir
        self.front_end_root = front_end_root
        self.templates = templates
        self.model_files = model_files
        self.start_timeout, self.wait_source = (start_timeout, "given") if start_timeout else start_wait()
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = work_dir / "server.log"
        self._proc: subprocess.Popen | None = None
        self._started = 0.0

    def _prepare(self) -> tuple[Path, Path]:
        root = host.comfyui_root()
        shadow, base = self.work_dir / "comfy", self.work_dir / "base"
        shadow.mkdir(parents=True)
        for entry in root.iterdir():
            if entry.name not in _SKIP_IN_SHADOW:
                (shadow / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        shutil.copy2(root / "main.py", shadow / "main.py")  # main.py finds the yaml via realpath(__file__)
        shutil.copytree(host.PACK_DIR, base / "custom_nodes" / "comfyui-dype-sega", ignore=_NOT_SHIPPED)
        (base / "input").mkdir(parents=True)
        for picture in (root / "input").glob("*.png"):  # example.png, as every install has it (the edit workflows)
            shutil.copy2(picture, base / "input" / picture.name)
        for folder, names in self.model_files.items():
            (base / "models" / folder).mkdir(parents=True, exist_ok=True)
            for name in names:
                (base / "models" / folder / name).touch()
        return shadow, base

    def start(self) -> ComfyServer:
        """Start the server process and return at once; ``__enter__`` (or ``wait``) waits until it answers."""
        if self._proc is not None:
            return self
        shadow, base = self._prepare()
        # main.py run as __main__ from the shadow dir, after the test stubs for torchvision/torchaudio (tests/stubs.py)
        # are installed in the server process: ComfyUI imports them at load time, the pack never uses them.
        tests_dir = str(Path(host.__file__).resolve().parent)
        launcher = ("import runpy, sys; d = sys.argv.pop(1); sys.path.insert(1, d); import stubs; stubs.install(); "
                    "sys.path.remove(d); sys.argv[0] = 'main.py'; runpy.run_path('main.py', run_name='__main__')")
        cmd = [sys.executable, "-c", launcher, tests_dir, "--cpu", "--listen", "127.0.0.1", "--port", str(self.port),
               "--base-directory", str(base), "--disable-auto-launch", "--database-url", "sqlite:///:memory:"]
        if self.front_end_root is not None:
            cmd += ["--front-end-root", str(self.front_end_root)]
        env = dict(os.environ)
        if self.templates is not None:  # the host's own template library, ahead of an installed other version
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.templates), env.get("PYTHONPATH")) if p)
        self._log = self.log_path.open("w")
        self._proc = subprocess.Popen(cmd, cwd=shadow, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        self._started = time.monotonic()
        return self

    def wait(self) -> ComfyServer:
        """Wait until the started server answers (``start_timeout`` from its start; asked at least once)."""
        assert self._proc is not None, "start() first"
        deadline = self._started + self.start_timeout
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"ComfyUI exited with {self._proc.returncode}; log:\n{self.log()}")
            try:
                self.stats = self.get("/system_stats")
                return self
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.25)
        self.__exit__(None, None, None)
        raise RuntimeError(f"the wait for ComfyUI's start ran out: no answer on {self.url} within "
                           f"{self.start_timeout:.0f} s ({self.wait_source}); log:\n{self.log()}")

    def __enter__(self) -> ComfyServer:
        return self.start().wait()

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:  # noqa: S310 (our own localhost)
            return json.loads(response.read())

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-6000:]

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._log.close()
