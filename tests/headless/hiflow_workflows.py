"""The HiFlow Cascade example graphs, shipped as workflows 26-28 (make_workflows.build_all), built from graph.py's
shapes and layout. Their notes are measured in both frontends (note_heights.py) like every other note; their cards
are cards.py's cascade branch; tests/test_workflows.py runs each on tiny models to 4x the base latent.
"""

from __future__ import annotations

from typing import Any

from .graph import LOAD_IMAGE_H, Graph, Layout, add_note

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
_ESTIMATE = ("**Time and memory (an estimate, not measured):** about 0.41x the model FLOPs of one 4096² pass "
             "(BENCHMARKS.md): on a 24 GB card roughly 10-15 min with weight_dtype fp8, on an 80 GB card about "
             "3-5 min. The stored predictions take about 95 MB of system RAM; the VRAM peak is the 4096² stage's "
             "step plus ~100 MB, and VAE Decode (Tiled) at 4096².")
NOTES = {
    FLUX_HIFLOW: f"""# FLUX.1-dev · 4096² · HiFlow cascade (official)
**What it does:** **HiFlow Cascade** samples 1024² (30 steps), then 2048² (the last 16 steps of the same schedule) \
and 4096² (the last 10), each stage pulled toward the previous one's predictions. All inputs are the official \
code's defaults (Bujiazi/HiFlow, run_hiflow.py): guidance 3.5 then 4.5 and 6, alphas 1.0 / 0.25, betas 0.5 / 0.5, \
NTK factor 10, proportional attention, swin patchify. **T5TokenizerOptions min_length 512** pads the prompt as the \
official code does. docs/hiflow.md lists where we differ.
{_FILES}

{_ESTIMATE}""",
    FLUX_HIFLOW_DYPE_SEGA: f"""# FLUX.1-dev · 4096² · HiFlow cascade, DyPE + SEGA stages
**What it does:** the official cascade, but its 2048² and 4096² stages run the **DyPE Patch Model → SEGA \
Attention** model (connected to **stage_model**) instead of the official NTK x 10 + proportional attention. This \
composition is **ours**: no published numbers. The base pass runs the plain model.
{_FILES}

{_ESTIMATE}""",
    FLUX_IMAGE_HIFLOW: f"""# FLUX.1-dev · image → 4096² · HiFlow cascade
**What it does:** your image, scaled to 1024² and encoded, goes through a 1024² img2img pass at **denoise 0.6** (the \
last 18 of 30 steps), whose trajectory the 2048² and 4096² stages then follow. Raise denoise for more change, lower \
it (not below 16/30 with 16 stage steps) to keep more of the image. Choose your image in **Load Image**.
{_FILES}

{_ESTIMATE}""",
}


def _flux(name: str, *, image: bool = False, stages: str = "official") -> dict[str, Any]:
    g = Graph()
    at = Layout(g)
    unet = at.loaders.add("UNETLoader", 82, ["flux1-dev.safetensors", "default"])
    clip = at.loaders.add("DualCLIPLoader", 130, ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"])
    vae = at.loaders.add("VAELoader", 60, ["ae.safetensors"])
    options = at.loaders.add("T5TokenizerOptions", 82, [0, 512])
    g.link(clip, 0, options, "clip")
    stage_model = None
    if stages == "dype+sega":
        dype = at.ours.add("DyPESEGA_PatchModel", 210, DYPE_DEFAULTS)
        g.link(unet, 0, dype, "model")
        stage_model = at.ours.add("DyPESEGA_SEGAAttention", 345, SEGA_DEFAULTS)
        g.link(dype, 0, stage_model, "model")
    pos = at.prompts.add("CLIPTextEncode", 200, [PROMPT])
    g.link(options, 0, pos, "clip")
    guidance = at.prompts.add("FluxGuidance", 60, [3.5])
    g.link(pos, 0, guidance, "conditioning")
    neg = at.prompts.add("ConditioningZeroOut", 50, [])
    g.link(pos, 0, neg, "conditioning")
    # the pack's column holds DyPE -> SEGA (27) or the image chain (28); the cascade goes where there is room
    if image:
        load = at.ours.add("LoadImage", LOAD_IMAGE_H, ["example.png", "image"])
        scale = at.ours.add("ImageScale", 130, ["lanczos", 1024, 1024, "center"])
        g.link(load, 0, scale, "image")
        latent = at.ours.add("VAEEncode", 50, [])
        g.link(scale, 0, latent, "pixels")
        g.link(vae, 0, latent, "vae")
    else:
        latent = at.prompts.add("EmptySD3LatentImage", 110, [1024, 1024, 1])
    widgets = list(OFFICIAL)
    if image:
        widgets[4] = 0.6
    # Its 15 widgets: 518 units in the classic renderer, about 620 with Nodes 2.0 (its rows are taller).
    beside = image or stage_model is not None  # the pack's column is taken: the cascade heads the last column
    cascade = (at.sampler if beside else at.ours).add(HIFLOW, 640, widgets)
    for src, slot in ((unet, "model"), (guidance, "positive"), (neg, "negative"), (vae, "vae"), (latent, "latent")):
        g.link(src, 0, cascade, slot)
    if stage_model is not None:
        g.link(stage_model, 0, cascade, "stage_model")
    decode = (at.prompts if beside else at.sampler).add("VAEDecodeTiled", 150, [512, 64, 64, 8])
    g.link(cascade, 0, decode, "samples")
    g.link(vae, 0, decode, "vae")
    save = at.sampler.fill("SaveImage", [f"dype/{name.removesuffix('.json').replace(' ', '_')}"])
    g.link(decode, 0, save, "images")
    add_note(g, NOTES[name])
    return g.to_json(name)


def build() -> dict[str, dict[str, Any]]:
    return {FLUX_HIFLOW: _flux(FLUX_HIFLOW), FLUX_HIFLOW_DYPE_SEGA: _flux(FLUX_HIFLOW_DYPE_SEGA, stages="dype+sega"),
            FLUX_IMAGE_HIFLOW: _flux(FLUX_IMAGE_HIFLOW, image=True)}

