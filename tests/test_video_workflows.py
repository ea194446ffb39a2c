"""The video example workflows (Wan 2.1 1.3B at 1280x720, the Wan 2.2 14B pair at 1920x1088) run headless.

tests/test_workflows.py checks them as files (generated, widgets against the live schema, validate_prompt,
thumbnail, on screen); here they run end to end on tiny stand-ins of the same family (headless/tiny_pack/video.py):
five frames (two latent frames), each KSamplerAdvanced's step window cut in proportion, our nodes active above
their scaled trained size and the stock graph at it.
"""

from __future__ import annotations

from pathlib import Path

import host
import pytest
from headless import make_workflows, registry, runner, video_workflows
from headless.tiny_pack.video import VIDEO_FAMILIES

VIDEO = [runner.WORKFLOWS_DIR / make_workflows.shipped(name) for name in video_workflows.NAMES]


@pytest.fixture(scope="module")
def comfy() -> registry.Host:
    comfy = registry.boot()
    if registry.OUR_NODE not in comfy.object_info():
        pytest.fail(f"{registry.OUR_NODE} is not registered; pack load: {comfy.pack_error or 'ok'}")
    return comfy


@pytest.mark.parametrize("path", VIDEO, ids=[p.name for p in VIDEO])
def test_video_workflow_runs_end_to_end_on_tiny_models(path: Path, tmp_path: Path, comfy):
    result, plan = runner.run_workflow_tiny(path, tmp_path, side=128)  # 128x80: the 3-D VAE decode dominates
    assert result.success, result.error()
    (video,) = result.images
    assert video.suffix == ".webm" and video.is_file() and video.stat().st_size > 0
    (stats,) = result.stats
    width, height = plan.latent_px[0]
    assert stats["shape"] == [plan.frames[0], height, width, 3] and plan.frames[0] > 1
    assert stats["finite"] and stats["frame_std_min"] > 0, "a frame came out flat"
    adapter = host.pack_submodule("nodes.families").find_adapter(plan.family)
    grid = (height / adapter.px_per_token, width / adapter.px_per_token)
    for base_px in plan.base_px.values():  # the long side; the trained grid keeps the family's aspect
        trained = adapter.base_grid(base_px, grid)
        assert grid[0] > trained[0] and grid[1] > trained[1], f"our nodes must be active: {grid} vs {trained}"
    assert plan.base_px


def test_wan22_pair_changes_the_video_only_above_its_base(tmp_path: Path, comfy):
    # The pair: each model patched by its own DyPE node, the high-noise sampler handing over at half the steps.
    wf = runner.load_workflow(runner.WORKFLOWS_DIR / make_workflows.shipped(video_workflows.WAN22_1088P))
    plain, _ = runner.make_tiny(runner.to_api(runner.bypass_ours(wf)))
    active, plan = runner.make_tiny(runner.to_api(wf))
    assert len(plan.base_px) == 2 and sorted(plan.step_windows.values()) == [(0, 1), (1, 2)]
    width, height = plan.latent_px[0]
    assert (width, height) == (256, 144)  # 1920x1088 / 7.5: the trained 16:9 grid at base 256 (16 x 9 tokens)
    at_base, _ = runner.make_tiny(runner.to_api(wf), base_px=width)
    digests = {}
    for name, prompt in (("plain", plain), ("active", active), ("at_base", at_base)):
        result = runner.execute(_latent_out(prompt), tmp_path / name)
        assert result.success, result.error()
        digests[name] = result.stats[0]["sha1"]
    assert digests["active"] != digests["plain"], "DyPE above base left the video unchanged"
    assert digests["at_base"] == digests["plain"], "at the trained size the patched pair must equal the plain one"


def _latent_out(prompt: dict) -> dict:
    """The prompt up to the last sampler, its LATENT digested (the decode is covered by the end-to-end test)."""
    kept = {i: n for i, n in prompt.items() if n["class_type"] not in ("VAEDecodeTiled", "SaveWEBM", runner.STATS_NODE)}
    last = next(i for i, n in kept.items() if n["class_type"] == "KSamplerAdvanced"
                and n["inputs"]["add_noise"] == "disable")
    return kept | {"stats": {"class_type": "DyPESEGATest_TinyLatentStats", "inputs": {"samples": [last, 0]}}}


@pytest.mark.parametrize("unet_name", sorted(f for f, family in registry.MODEL_FAMILY.items() if family in VIDEO_FAMILIES))
def test_tiny_stand_in_is_detected_as_the_files_family(unet_name: str, comfy):
    # The runner picks the stand-in by the file's family; the pack must then detect that same family in it.
    import nodes

    family = registry.MODEL_FAMILY[unet_name]
    (model,) = nodes.NODE_CLASS_MAPPINGS[runner.TINY_VIDEO_LOADERS["UNETLoader"]]().load(family, 0)
    assert host.pack_submodule("nodes.families").detect_family(model.model).name == family
