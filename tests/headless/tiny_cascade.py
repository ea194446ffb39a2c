"""A cascade graph (HiFlow: workflows 26-28, I-Max: 35, HRDiT: 36) on tiny stand-ins: ``runner.make_tiny``'s route for a graph
the cascade samples. Its image is the last stage's, so the base is ``side`` / the last scale (256 px out: a 64 px base, stages
128 and 256); every pass is shortened in proportion (the base to ``steps``, each stage to its share of them, at
least one and never more than the base runs), as a user shortens the node's widgets.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .graph import LATENT_NODES
from .hiflow_workflows import HIFLOW
from .hrdit_workflows import HRDIT
from .imax_workflows import IMAX
from .runner import (
    OUR_NODES,
    STATS_NODE,
    TINY_IMAGE,
    TINY_LOADERS,
    TinyPlan,
    _round16,
    adapter,
    is_sega_alone,
    model_family_of,
    trained_px,
)

ENCODING_VAE = "DyPESEGATest_TinyEncodingVAELoader"  # the cascade encodes each stage's image again
BASE_SIZE_NODES = (*LATENT_NODES, "ImageScale")  # from a prompt: the empty latent; from an image: its scaling


CASCADE_NODES = (HIFLOW, IMAX, HRDIT)  # their widgets shorten alike: steps, scales, stage_steps, denoise


def is_cascade(prompt: dict[str, dict[str, Any]]) -> bool:
    return any(n["class_type"] in CASCADE_NODES for n in prompt.values())


def numbers(text: str) -> list[float]:
    """ "2, 4" -> [2.0, 4.0]: the node's list inputs (nodes/inputs/rules.py parses them for the run)."""
    return [float(part) for part in str(text).replace(";", ",").split(",") if part.strip()]


@dataclass
class TinyCascadePlan(TinyPlan):
    base_steps: tuple[int, int] = (0, 0)  # (tiny, workflow)
    stage_steps: tuple[list[int], list[int]] = field(default_factory=lambda: ([], []))  # (tiny, workflow)
    scales: list[float] = field(default_factory=list)
    image_px: tuple[int, int] = (0, 0)  # (width, height) of the last stage: the saved image


def stage_steps(real: list[int], real_steps: int, steps: int, denoise: float) -> list[int]:
    """Each stage's share of ``steps`` as in the workflow, within what the node accepts: 1 to the base steps run."""
    ran = max(1, round(steps * denoise))
    return [min(ran, max(1, round(s * steps / real_steps))) for s in real]


def make_tiny_cascade(prompt: dict[str, dict[str, Any]], *, side: int = 256, steps: int = 4,
                      base_px: int | None = None) -> tuple[dict[str, dict[str, Any]], TinyCascadePlan]:
    tiny = copy.deepcopy(prompt)
    family = model_family_of(prompt)
    (cascade,) = [n["inputs"] for n in tiny.values() if n["class_type"] in CASCADE_NODES]
    scales = numbers(cascade["scales"])
    sizes = [n["inputs"] for n in tiny.values() if n["class_type"] in BASE_SIZE_NODES]
    real_side = max(max(s["width"], s["height"]) for s in sizes)
    scale = _round16(side / scales[-1]) / real_side
    real_stage_steps = [int(s) for s in numbers(cascade["stage_steps"])]
    plan = TinyCascadePlan(family, scale, base_steps=(steps, cascade["steps"]), scales=scales)
    plan.stage_steps = (stage_steps(real_stage_steps, cascade["steps"], steps, cascade["denoise"]), real_stage_steps)
    cascade["steps"], cascade["stage_steps"] = steps, ", ".join(map(str, plan.stage_steps[0]))
    if "spa_steps" in cascade:  # HRDiT: SPA's leading steps, at most the shortened stage's
        spa = [int(s) for s in numbers(cascade["spa_steps"])]
        spa = spa * len(scales) if len(spa) == 1 else spa
        cascade["spa_steps"] = ", ".join(str(min(a, b)) for a, b in zip(spa, plan.stage_steps[0], strict=True))
    for node_id, node in list(tiny.items()):
        inputs, kind = node["inputs"], node["class_type"]
        if kind == "VAELoader":
            node["class_type"], node["inputs"] = ENCODING_VAE, {"family": family, "seed": 0}
        elif kind in TINY_LOADERS:
            node["class_type"], node["inputs"] = TINY_LOADERS[kind], {"family": family, "seed": 0}
        elif kind == "LoadImage":
            node["class_type"], node["inputs"] = TINY_IMAGE, {"width": 96, "height": 64, "seed": 0}
        elif kind in BASE_SIZE_NODES:
            inputs["width"], inputs["height"] = _round16(inputs["width"] * scale), _round16(inputs["height"] * scale)
            plan.latent_px.append((inputs["width"], inputs["height"]))
            plan.image_px = (round(inputs["width"] * scales[-1]), round(inputs["height"] * scales[-1]))
        elif kind in OUR_NODES:
            inputs["base_resolution"] = base_px if base_px is not None else _round16(
                trained_px(inputs, adapter(family), is_sega_alone(prompt, kind)) * scale)
            plan.base_px[node_id] = inputs["base_resolution"]
        elif kind == "VAEDecodeTiled":
            inputs["tile_size"], inputs["overlap"] = 128, 32
        elif kind == "SaveImage":
            tiny[f"{node_id}_stats"] = {"class_type": STATS_NODE, "inputs": {"images": inputs["images"]},
                                        "_meta": {"title": "tiny image stats"}}
    return tiny, plan
