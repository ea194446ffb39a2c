"""Run a shipped workflow headless: convert, validate with ComfyUI, shrink to tiny stand-ins, execute.

Shared by tests/test_workflows.py and scripts/demo.py. The tiny run keeps every stock node between the loaders and
SaveImage and our nodes as they are; it swaps the loaders for tiny_pack, scales the latent and our nodes'
``base_resolution`` by the same factor (so DyPE/SEGA see the real ratio of target to trained size, e.g. 4×), cuts
the steps, and adds an image-stats output node next to every SaveImage. The family comes from the diffusion model
file the graph loads (registry.MODEL_FAMILY), its trained size from the pack's own adapter. Video graphs
(EmptyHunyuanLatentVideo: the Wan examples) go through ``make_tiny_video``: a few frames, KSamplerAdvanced step
windows cut in proportion; HiFlow Cascade graphs through tiny_cascade.py: the last stage at the given size, the
base's and the stages' steps cut in proportion.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import host_needs, registry
from .convert import ui_to_api
from .execute import RunResult, execute, validate
from .graph import LATENT_NODES

# execute and validate live in execute.py; the tests call them through here, with the rest of a run.
__all__ = ["OUR_NODES", "STATS_NODE", "TINY_VIDEO_LOADERS", "WORKFLOWS_DIR", "RunResult", "TinyPlan", "adapter",
           "bypass_ours", "execute", "host_lacks", "load_workflow", "make_tiny", "make_tiny_video", "run_workflow_tiny",
           "to_api", "validate"]
WORKFLOWS_DIR = Path(__file__).resolve().parents[2] / "workflows"
OUR_NODES = ("DyPESEGA_PatchModel", "DyPESEGA_SEGAAttention")
TINY_LOADERS = {"UNETLoader": "DyPESEGATest_TinyModelLoader", "DualCLIPLoader": "DyPESEGATest_TinyCLIPLoader",
                "CLIPLoader": "DyPESEGATest_TinyCLIPLoader", "QuadrupleCLIPLoader": "DyPESEGATest_TinyCLIPLoader",
                "VAELoader": "DyPESEGATest_TinyVAELoader"}
STATS_NODE = "DyPESEGATest_TinyImageStats"
TINY_IMAGE = "DyPESEGATest_TinyImage"  # LoadImage's stand-in: a reference picture of its own size, any family


def load_workflow(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def to_api(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Convert against the live registry (boots the host on first use)."""
    return ui_to_api(workflow, registry.boot().object_info())


def bypass_ours(workflow: dict[str, Any]) -> dict[str, Any]:
    """A copy of a UI workflow with our nodes bypassed (mode 4), as a user compares with Ctrl+B."""
    workflow = copy.deepcopy(workflow)
    for node in workflow["nodes"]:
        if node["type"] in OUR_NODES:
            node["mode"] = 4
    return workflow


def model_family_of(prompt: dict[str, dict[str, Any]]) -> str:
    """The pack adapter of the diffusion model files the prompt loads (registry.MODEL_FAMILY); a pair of models
    (Wan 2.2 high + low noise) must be one family."""
    files = {n["inputs"].get("unet_name") for n in prompt.values() if n["class_type"] == "UNETLoader"}
    families = {registry.MODEL_FAMILY[f] for f in files if f in registry.MODEL_FAMILY}
    if len(families) != 1:
        raise ValueError(f"cannot tell the model family from diffusion model files {files}")
    return families.pop()


def adapter(family: str):
    """The pack's FamilyAdapter for ``family`` (trained size, pixels per token): one source of those facts."""
    import host

    return host.pack_submodule("nodes.families").find_adapter(family)


def host_lacks(workflow: dict[str, Any]) -> str:
    """Why the ComfyUI the tests boot cannot run this UI workflow (its model family or text encoder came later), or
    "". Read from the host's source (host_needs.py): no boot, so the demo's --list and a browser test can ask."""
    return host_needs.lacks(host_needs.workflow_needs(workflow))


def _round16(px: float, multiple: int = 16) -> int:
    return max(multiple, int(round(px / multiple)) * multiple)


@dataclass
class TinyPlan:
    """What make_tiny changed, for logs and assertions."""

    family: str
    scale: float
    latent_px: list[tuple[int, int]] = field(default_factory=list)  # (width, height) per latent node
    base_px: dict[str, int] = field(default_factory=dict)  # our node id -> tiny base_resolution


def trained_px(inputs: dict[str, Any], facts, sega_alone: bool = False) -> float:
    """The real trained long side one of our nodes uses: its base_resolution, else its variant's, else, for SEGA
    Attention alone on recipe paper, the SEGA authors' code's (FamilyAdapter.paper_quirks: Qwen-Image 1024), else
    the family default (``PatchConfig.base_px`` and ``axis_plan.plan_call``; test_recipes_host.py checks workflow 33
    against the engine)."""
    import host

    families = host.pack_submodule("nodes.families")
    recipe = inputs.get("recipe", "paper")  # a graph saved before the input existed: the node's default
    paper = sega_alone and host.pack_submodule("spectral").recipe_from_label(recipe) == "paper"
    return (inputs.get("base_resolution") or families.variant_base_px(inputs.get("variant", "auto"), facts)
            or (paper and facts.paper_quirks.base_px) or facts.default_base_px)


def is_sega_alone(prompt: dict[str, dict[str, Any]], kind: str) -> bool:
    """Whether a node of ``kind`` is SEGA Attention in a graph without DyPE (its recipe then sets the positions)."""
    return kind == OUR_NODES[1] and not any(n["class_type"] == OUR_NODES[0] for n in prompt.values())


def make_tiny(prompt: dict[str, dict[str, Any]], *, side: int = 256, steps: int = 2,
              base_px: int | None = None) -> tuple[dict[str, dict[str, Any]], TinyPlan]:
    """A copy of ``prompt`` on tiny stand-ins with the long side ``side`` px; ``base_px`` overrides our nodes'."""
    if is_video(prompt):
        return make_tiny_video(prompt, side=side, steps=steps, base_px=base_px)
    from .tiny_cascade import is_cascade, make_tiny_cascade  # it builds on this module's rules

    if is_cascade(prompt):
        return make_tiny_cascade(prompt, side=side, steps=steps, base_px=base_px)
    tiny = copy.deepcopy(prompt)
    family = model_family_of(prompt)
    facts = adapter(family)
    grid = max(16, facts.px_per_token)  # whole tokens (HunyuanImage: 32 px)
    latents = [n for n in tiny.values() if n["class_type"] in LATENT_NODES]
    if not latents:
        raise ValueError(f"no empty latent ({', '.join(LATENT_NODES)}) in the workflow")
    scale = side / max(max(n["inputs"]["width"], n["inputs"]["height"]) for n in latents)
    plan = TinyPlan(family, scale)
    for node_id, node in list(tiny.items()):
        inputs, kind = node["inputs"], node["class_type"]
        if kind in TINY_LOADERS:
            node["class_type"], node["inputs"] = TINY_LOADERS[kind], {"family": family, "seed": 0}
        elif kind == "LoadImage":  # an edit's reference: its own small size, never scaled with the latent
            node["class_type"], node["inputs"] = TINY_IMAGE, {"width": 96, "height": 64, "seed": 0}
        elif kind in LATENT_NODES:
            inputs["width"], inputs["height"] = (_round16(inputs["width"] * scale, grid),
                                                 _round16(inputs["height"] * scale, grid))
            plan.latent_px.append((inputs["width"], inputs["height"]))
        elif kind in OUR_NODES:
            real = trained_px(inputs, facts, is_sega_alone(prompt, kind))
            inputs["base_resolution"] = base_px if base_px is not None else _round16(real * scale)
            plan.base_px[node_id] = inputs["base_resolution"]
        elif kind in ("KSampler", "KSamplerAdvanced"):
            inputs["steps"] = steps
        elif kind == "VAEDecodeTiled":
            inputs["tile_size"], inputs["overlap"] = 128, 32  # still several tiles at 256 px
        elif kind == "SaveImage":
            tiny[f"{node_id}_stats"] = {"class_type": STATS_NODE, "inputs": {"images": inputs["images"]},
                                        "_meta": {"title": "tiny image stats"}}
    return tiny, plan


# --- video workflows (Wan): EmptyHunyuanLatentVideo, KSamplerAdvanced step windows, Save WEBM ---------------------

VIDEO_LATENT = "EmptyHunyuanLatentVideo"
TINY_VIDEO_LOADERS = {"UNETLoader": "DyPESEGATest_TinyVideoModelLoader",
                      "CLIPLoader": "DyPESEGATest_TinyVideoCLIPLoader", "VAELoader": "DyPESEGATest_TinyVideoVAELoader"}


def is_video(prompt: dict[str, dict[str, Any]]) -> bool:
    return any(n["class_type"] == VIDEO_LATENT for n in prompt.values())


@dataclass
class TinyVideoPlan(TinyPlan):
    frames: list[int] = field(default_factory=list)  # pixel frames per latent node
    step_windows: dict[str, tuple[int, int]] = field(default_factory=dict)  # KSamplerAdvanced id -> (start, end)


def make_tiny_video(prompt: dict[str, dict[str, Any]], *, side: int = 256, steps: int = 2, frames: int = 5,
                    base_px: int | None = None) -> tuple[dict[str, dict[str, Any]], TinyVideoPlan]:
    """``make_tiny`` for a video graph: ``frames`` pixel frames (5: two latent frames of Wan's 4x temporal VAE),
    each KSamplerAdvanced's step window cut in proportion (Wan 2.2's high/low split stays a split), every UNETLoader
    its own seed (the pair is two models), a stats node on the frames Save WEBM receives."""
    tiny = copy.deepcopy(prompt)
    family = model_family_of(prompt)
    latents = [n for n in tiny.values() if n["class_type"] == VIDEO_LATENT]
    scale = side / max(max(n["inputs"]["width"], n["inputs"]["height"]) for n in latents)
    plan = TinyVideoPlan(family, scale)
    unets = 0
    for node_id, node in list(tiny.items()):
        inputs, kind = node["inputs"], node["class_type"]
        if kind in TINY_VIDEO_LOADERS:
            seed = unets if kind == "UNETLoader" else 0
            unets += kind == "UNETLoader"
            node["class_type"], node["inputs"] = TINY_VIDEO_LOADERS[kind], {"family": family, "seed": seed}
        elif kind == VIDEO_LATENT:
            inputs["width"], inputs["height"] = _round16(inputs["width"] * scale), _round16(inputs["height"] * scale)
            inputs["length"] = frames
            plan.latent_px.append((inputs["width"], inputs["height"]))
            plan.frames.append(frames)
        elif kind in OUR_NODES:
            real = trained_px(inputs, adapter(family), is_sega_alone(prompt, kind))
            inputs["base_resolution"] = base_px if base_px is not None else _round16(real * scale)
            plan.base_px[node_id] = inputs["base_resolution"]
        elif kind == "KSampler":
            inputs["steps"] = steps
        elif kind == "KSamplerAdvanced":
            real = inputs["steps"]
            start = round(inputs["start_at_step"] * steps / real)
            end = steps if inputs["end_at_step"] >= real else round(inputs["end_at_step"] * steps / real)
            inputs["steps"], inputs["start_at_step"], inputs["end_at_step"] = steps, start, end
            plan.step_windows[node_id] = (start, end)
        elif kind == "VAEDecodeTiled":  # one tile: the 3-D VAE decodes overlapping tiles slowly on a CPU
            inputs["tile_size"], inputs["overlap"] = _round16(side) * 2, 64
        elif kind == "SaveWEBM":
            tiny[f"{node_id}_stats"] = {"class_type": STATS_NODE, "inputs": {"images": inputs["images"]},
                                        "_meta": {"title": "tiny frame stats"}}
    return tiny, plan


def run_workflow_tiny(path: str | Path, out_dir: Path, **tiny_kwargs: Any) -> tuple[RunResult, TinyPlan]:
    """Load a UI workflow, convert it, swap in the tiny stand-ins and execute it."""
    tiny, plan = make_tiny(to_api(load_workflow(path)), **tiny_kwargs)
    return execute(tiny, out_dir), plan
