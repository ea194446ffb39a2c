"""What a release needs: CHANGELOG.md's top entry is pyproject.toml's version, the publish workflow is the Comfy
registry's own action on a published release with its one input, and the issue forms (model request, bug report) are
whole; the README's troubleshooting links the bug report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
yaml = pytest.importorskip("yaml", reason="PyYAML (a ComfyUI requirement) reads the GitHub files")


def _pyproject_version() -> str:
    found = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert found, "pyproject.toml has no version"
    return found.group(1)


def test_changelog_top_entry_is_the_version():
    entries = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert entries, "CHANGELOG.md has no '## <version>' entry"
    assert entries[0] == _pyproject_version(), f"CHANGELOG.md's top entry {entries[0]} is not pyproject.toml's " \
                                               f"{_pyproject_version()}"
    assert len(entries) == len(set(entries)), "a version appears twice in CHANGELOG.md"


def test_publish_workflow_runs_the_registry_action_on_a_release():
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "publish.yml").read_text(encoding="utf-8"))
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["release"]["types"] == ["published"]
    steps = [step for job in flow["jobs"].values() for step in job["steps"]]
    publish = [s for s in steps if str(s.get("uses", "")).startswith("Comfy-Org/publish-node-action@")]
    assert len(publish) == 1
    # The action's one input (its action.yml: personal_access_token, required), from a repository secret.
    assert publish[0]["with"] == {"personal_access_token": "${{ secrets.REGISTRY_ACCESS_TOKEN }}"}
    check = next(s for s in steps if "CHANGELOG.md" in s.get("run", ""))
    assert steps.index(check) < steps.index(publish[0]), "the version check must run before publishing"


def test_ci_workflow_runs_ci_run():
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))
    runs = [s.get("run", "") for job in flow["jobs"].values() for s in job["steps"]]
    assert "bash .ci/run" in runs


def test_model_request_form():
    form = yaml.safe_load((ROOT / ".github" / "ISSUE_TEMPLATE" / "model-request.yml").read_text(encoding="utf-8"))
    assert form["name"] and form["description"]
    required = {item["id"] for item in form["body"] if item.get("validations", {}).get("required")}
    assert {"model", "model_class", "trained_sizes", "comfyui"} <= required


def test_bug_report_form():
    form = yaml.safe_load((ROOT / ".github" / "ISSUE_TEMPLATE" / "bug-report.yml").read_text(encoding="utf-8"))
    assert form["name"] and form["description"]
    ids = [item["id"] for item in form["body"] if "id" in item]
    assert len(ids) == len(set(ids))
    required = {item["id"] for item in form["body"] if item.get("validations", {}).get("required")}
    assert {"comfyui", "frontend", "system", "workflow", "log"} <= required
    log = next(item for item in form["body"] if item.get("id") == "log")
    assert log["attributes"]["render"] == "text"  # pasted as a code block, tracebacks kept whole
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "issues/new?template=bug-report.yml" in readme
