"""The HiFlow Cascade example graphs, shipped as workflows 26-28 (make_workflows.build_all), built from graph.py's
shapes and layout. Their notes are measured in both frontends (note_heights.py) like every other note; their cards
are cards.py's cascade branch; tests/test_workflows.py runs each on tiny models to 4x the base latent.
"""

from __future__ import annotations

from typing import Any

from . import floors
from .graph import (
    GAP_X,
    LAYOUT_BOTTOM,
    LOAD_IMAGE_H,
    LOADER_W,
    OURS_W,
    PROMPT_W,
    SAMPLER_W,
    Column,
    Graph,
    add_note,
    columns,
)
from .notes import NUNCHAKU_FLUX

HIFLOW = "DyPESEGA_HiFlowCascade"
# The node's defaults = the official code's (run_hiflow.py at da351a8), in widget order; seed first, then the
# frontend's control_after_generate value.
OFFICIAL = [0, "fixed", 30, 1.0, 1.0, "2, 4", "16, 10", "4.5, 6", "1.0, 0.25", "0.5, 0.5", "0.2, 0.2", "10, 10",
            True, True, 1.0, "official HiFlow (FLUX.1-dev dynamic shift)"]
DYPE_DEFAULTS = ["yarn", True, 2.0, 2.0, 0, "multiply", "auto"]
SEGA_DEFAULTS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, "rank", "power", "paper (official SEGA code)", "auto"]
PROMPT = ("A robot standing in the rain reading a newspaper, rusty and worn down, in a dystopian cyberpunk street, "
          "photo-realistic, highly detailed")

FLUX_HIFLOW = "FLUX.1-dev 4096x4096 HiFlow cascade.json"
FLUX_HIFLOW_DYPE_SEGA = "FLUX.1-dev 4096x4096 HiFlow cascade DyPE + SEGA stages.json"
FLUX_IMAGE_HIFLOW = "FLUX.1-dev 4096x4096 HiFlow from image.json"
NAMES = (FLUX_HIFLOW, FLUX_HIFLOW_DYPE_SEGA, FLUX_IMAGE_HIFLOW)

_FILES = """**Model files** (the names ComfyUI's own Flux templates use; the loaders offer the download links):
- diffusion_models: **flux1-dev.safetensors**
- text_encoders: **clip_l.safetensors**, **t5xxl_fp16.safetensors**
- vae: **ae.safetensors**"""
#: The peak VRAM is the 4096² stage's step: the same model call as one 4096² pass, so its figures are workflow 02's
#: (notes.py, "FLUX.1-dev 4096x4096 DyPE"; tests/test_hiflow_workflows.py checks they agree), plus the ~100 MB of the
#: step's stored prediction. Time: the cascade's 0.41x of that pass's model FLOPs (BENCHMARKS.md) x its time.
_VRAM24, _VRAM80 = "≈ 18–22 GB", "≈ 30–40 GB"


def _estimate(base_steps: int = floors.BASE_STEPS) -> str:
    """The memory and time bullets; ``base_steps``: the base pass's steps (from an image: the last ones only)."""
    floor = floors.floor_line(floors.cascade("HiFlow", base_steps))
    return f"""**Memory and time (estimates, not measurements):** the peak is the 4096² stage's step, as one 4096² pass \
(workflow 02) plus ~100 MB; the stored predictions take about 95 MB of system RAM.
- 24 GB card (RTX 4090): weight_dtype **fp8_e4m3fn** (the file alone is 22 GB); peak {_VRAM24} VRAM, about 10–15 min \
(0.41x the model FLOPs of one 4096² pass, BENCHMARKS.md).
- 80 GB card (A100 / H100): peak {_VRAM80} VRAM, about 3–5 min (H100).
{floor}

**Out of memory?** In this order: weight_dtype **fp8_e4m3fn** on the model loader; VAE Decode (Tiled) tile_size \
**256**, overlap 32; start ComfyUI with **--lowvram**; a smaller final size: **scales 2, 3** (3072²)."""

_DIFFERS = """**Where this differs, on purpose:**
{lines}- **VAE Decode (Tiled)**: a plain decode of 4096² needs several GB more VRAM.
- **Seed fixed**: the same image on every run; change it for another. docs/hiflow.md lists every difference from \
the official code."""
_DIFFERS_STAGES = _DIFFERS.format(lines="- **stage_model**: DyPE → SEGA in the stages instead of the official stage "
                                  "model (ours; leave it empty for the official cascade, workflow 26).\n")
_DIFFERS_IMAGE = _DIFFERS.format(lines="- **From an image** (ours: the official code starts from a prompt only): the "
                                 "base pass is img2img on the last steps x denoise; denoise 1 is the official route.\n")
NOTES = {
    FLUX_HIFLOW: f"""# FLUX.1-dev · 4096² · HiFlow cascade (official)
**What it does:** **HiFlow Cascade** samples 1024² (30 steps), then 2048² (the last 16 steps of the same schedule) \
and 4096² (the last 10), each stage pulled toward the previous one's predictions. All inputs are the official \
code's defaults (Bujiazi/HiFlow, run_hiflow.py): guidance 3.5 then 4.5 and 6, alphas 1.0 / 0.25, betas 0.5 / 0.5, \
NTK factor 10, proportional attention, swin patchify. **T5TokenizerOptions min_length 512** pads the prompt as the \
official code does.
{_FILES}

{NUNCHAKU_FLUX}

{_DIFFERS.format(lines="")}

{_estimate()}""",
    FLUX_HIFLOW_DYPE_SEGA: f"""# FLUX.1-dev · 4096² · HiFlow cascade, DyPE + SEGA stages
**What it does:** the official cascade, but its 2048² and 4096² stages run the **DyPE Patch Model → SEGA \
Attention** model (connected to **stage_model**) instead of the official NTK x 10 + proportional attention. This \
composition is **ours**: no published numbers. The base pass runs the plain model.
{_FILES}

{NUNCHAKU_FLUX}

{_DIFFERS_STAGES}

{_estimate()}""",
    FLUX_IMAGE_HIFLOW: f"""# FLUX.1-dev · image → 4096² · HiFlow cascade
**What it does:** your image, scaled to 1024² and encoded, goes through a 1024² img2img pass at **denoise 0.6** (the \
last 18 of 30 steps), whose trajectory the 2048² and 4096² stages then follow. Raise denoise for more change, lower \
it (not below 16/30 with 16 stage steps) to keep more of the image. Choose your image in **Load Image**.
{_FILES}

{NUNCHAKU_FLUX}

{_DIFFERS_IMAGE}

{_estimate(18)}""",
}


#: The cascade's column: wide enough for the 'schedule' combo to show its label beside the official value (frontend
#: 1.32 hides the label below ~380 units). The node's height, 518, is what the classic renderer needs for its 15
#: widgets (LGraphNode.computeSize on 1.32, 1.47 and 1.53; the frontends grow a node saved shorter, and Nodes 2.0
#: keeps the saved height as the least, so a taller one leaves an empty area when the advanced inputs are folded).
#: Below it the column leaves the room the node takes with its advanced inputs shown (graph.Column: 658 for HiFlow).
CASCADE_W, CASCADE_H = 380, 518
#: Where the image column ends. A graph of loaders, prompts and the cascade (26; 35, 36, 37 likewise) puts the decode
#: and the image in a column of their own beside the cascade (``beside``); one with a column between them (27, 28:
#: DyPE → SEGA or the image chain) under it. Either way the graph is five columns wide (the note's included), the
#: prompts' column a little narrower than elsewhere, and tall enough for its width that the window's fit
#: (headless/graph.py fit_view) is set by its height and leaves the minimap's corner free (zoom 0.79, or 0.74 with
#: the image under the cascade).
PROMPTS_W, BOTTOM = PROMPT_W - 20, LAYOUT_BOTTOM + 46
SAVE_MIN_H = 58  # the least the frontends draw a SaveImage node (a smaller saved height comes back as 58)


def _flux(name: str, *, image: bool = False, stages: str = "official") -> dict[str, Any]:
    """Columns left to right as the data flows: loaders; the pack's DyPE -> SEGA or the image chain (27, 28);
    prompts and latent; the cascade, with its decode and the image beside it (26) or under it. No wire runs right
    to left."""
    g = Graph()
    middle = image or stages == "dype+sega"
    widths = (LOADER_W, OURS_W, PROMPTS_W, CASCADE_W) if middle else (LOADER_W, PROMPTS_W, CASCADE_W)
    loaders, *rest = columns(g, *widths)
    ours, prompts, last = rest if middle else (None, *rest)
    unet = loaders.add("UNETLoader", 82, ["flux1-dev.safetensors", "default"])
    clip = loaders.add("DualCLIPLoader", 130, ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"])
    vae = loaders.add("VAELoader", 60, ["ae.safetensors"])
    options = loaders.add("T5TokenizerOptions", 82, [0, 512])
    g.link(clip, 0, options, "clip")
    stage_model = None
    if stages == "dype+sega":
        dype = ours.add("DyPESEGA_PatchModel", 210, DYPE_DEFAULTS)
        g.link(unet, 0, dype, "model")
        stage_model = ours.add("DyPESEGA_SEGAAttention", 345, SEGA_DEFAULTS)
        g.link(dype, 0, stage_model, "model")
    pos = prompts.add("CLIPTextEncode", 200, [PROMPT])
    g.link(options, 0, pos, "clip")
    guidance = prompts.add("FluxGuidance", 60, [3.5])
    g.link(pos, 0, guidance, "conditioning")
    neg = prompts.add("ConditioningZeroOut", 50, [])
    g.link(pos, 0, neg, "conditioning")
    if image:
        load = ours.add("LoadImage", LOAD_IMAGE_H, ["example.png", "image"])
        scale = ours.add("ImageScale", 130, ["lanczos", 1024, 1024, "center"])
        g.link(load, 0, scale, "image")
        latent = ours.add("VAEEncode", 50, [])
        g.link(scale, 0, latent, "pixels")
        g.link(vae, 0, latent, "vae")
    else:
        latent = prompts.add("EmptySD3LatentImage", 110, [1024, 1024, 1])
    widgets = list(OFFICIAL)
    if image:
        widgets[4] = 0.6
    cascade = last.add(HIFLOW, CASCADE_H, widgets)
    return finish_cascade(g, last, cascade, name, (unet, guidance, neg, vae, latent), NOTES[name], stage_model,
                          beside=not middle)


def finish_cascade(g: Graph, last: Column, cascade: int, name: str, inputs: tuple[int, int, int, int, int],
                   note: str, stage_model: int | None = None, *, beside: bool = False) -> dict[str, Any]:
    """Every cascade graph's end: its inputs wired (model, positive, negative, vae, latent; stage_model if given),
    its tiled decode and the image, down to BOTTOM (at least SAVE_MIN_H), in a column beside the cascade's
    (``beside``) or under the cascade in its column; the note."""
    for src, slot in zip(inputs, ("model", "positive", "negative", "vae", "latent"), strict=True):
        g.link(src, 0, cascade, slot)
    if stage_model is not None:
        g.link(stage_model, 0, cascade, "stage_model")
    vae = inputs[3]
    out = Column(g, last.x + last.width + GAP_X, SAMPLER_W) if beside else last
    decode = out.add("VAEDecodeTiled", 150, [512, 64, 64, 8])
    g.link(cascade, 0, decode, "samples")
    g.link(vae, 0, decode, "vae")
    room = BOTTOM - out.next_y("SaveImage")
    save = out.fill("SaveImage", [f"dype/{name.removesuffix('.json').replace(' ', '_')}"],
                    at_least=max(SAVE_MIN_H, room))
    g.link(decode, 0, save, "images")
    add_note(g, note)
    return g.to_json(name)


def build() -> dict[str, dict[str, Any]]:
    return {FLUX_HIFLOW: _flux(FLUX_HIFLOW), FLUX_HIFLOW_DYPE_SEGA: _flux(FLUX_HIFLOW_DYPE_SEGA, stages="dype+sega"),
            FLUX_IMAGE_HIFLOW: _flux(FLUX_IMAGE_HIFLOW, image=True)}

