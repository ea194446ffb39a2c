"""The README's main command (scripts/demo.py): its default workflow is shipped, a workflow can be named by number
or name, a bad name is one clear line. .ci/run runs the default itself on a fresh clone (that run is the end-to-end
check; here only what it resolves)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo():
    spec = importlib.util.spec_from_file_location("dype_sega_demo", ROOT / "scripts" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_default_workflow_is_shipped(demo):
    assert demo.resolve_workflow(demo.DEFAULT_WORKFLOW) == ROOT / "workflows" / f"{demo.DEFAULT_WORKFLOW}.json"


def test_workflow_by_number_name_or_path(demo):
    path = demo.resolve_workflow(demo.DEFAULT_WORKFLOW)
    number = path.stem.split(" ", 1)[0]
    assert demo.resolve_workflow(number) == path
    assert demo.resolve_workflow(path.name) == path
    assert demo.resolve_workflow(str(path)) == path


def test_unknown_workflow_is_one_clear_line(demo):
    with pytest.raises(SystemExit) as raised:
        demo.resolve_workflow("99 no such workflow")
    message = str(raised.value)
    assert "--workflow '99 no such workflow'" in message and "--list" in message and "\n" not in message


def test_list_names_every_shipped_workflow():
    listed = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py"), "--list"], capture_output=True,
                            text=True, timeout=300, check=True).stdout
    shipped = sorted(p.stem for p in (ROOT / "workflows").glob("*.json"))
    assert [line.split("   (")[0] for line in listed.splitlines() if line[:2].isdigit()] == shipped
    assert "(default)" in listed
