"""The video example workflows (Wan 2.1 and Wan 2.2), built with graph.py's ``Graph``; ``build_video()`` is
merged into ``make_workflows.build_all()``.

Graphs follow ComfyUI's official templates (comfyui-workflow-templates-json 0.1.123: ``text_to_video_wan`` and
``video_wan2_2_14B_t2v`` with its Lightning LoRA off): same model files, shift, sampler, steps, cfg and negative
prompt, the Wan 2.2 pair as two KSamplerAdvanced over one 20-step schedule. The differences are listed in each note.
"""

from __future__ import annotations

from typing import Any

from .graph import LOADER_W, MODEL_URLS, OURS_W, PROMPT_W, SAMPLER_W, SHAPES, Graph, add_note, columns
from .make_workflows import DYPE_DEFAULTS

_CORE = {"cnr_id": "comfy-core", "ver": "0.3.75"}
# The video graphs' node shapes and download links join graph.py's tables here, so image and video builders
# change separately; build_all imports this module before any video graph is built.
SHAPES.update({
    "ModelSamplingSD3": ([("model", "MODEL")], [("shift", "FLOAT")], [("MODEL", "MODEL")], _CORE),
    "EmptyHunyuanLatentVideo": ([], [("width", "INT"), ("height", "INT"), ("length", "INT"), ("batch_size", "INT")],
                                [("LATENT", "LATENT")], _CORE),
    "KSamplerAdvanced": ([("model", "MODEL"), ("positive", "CONDITIONING"), ("negative", "CONDITIONING"),
                          ("latent_image", "LATENT")],
                         [("add_noise", "COMBO"), ("noise_seed", "INT"), ("steps", "INT"), ("cfg", "FLOAT"),
                          ("sampler_name", "COMBO"), ("scheduler", "COMBO"), ("start_at_step", "INT"),
                          ("end_at_step", "INT"), ("return_with_leftover_noise", "COMBO")], [("LATENT", "LATENT")],
                         _CORE),
    "SaveWEBM": ([("images", "IMAGE")], [("filename_prefix", "STRING"), ("codec", "COMBO"), ("fps", "FLOAT"),
                                         ("crf", "FLOAT")], [], _CORE),
})
_WAN21 = "https://huggingface.co/Comfy-Org/Wan_2.1_ComfyUI_repackaged/resolve/main/split_files"
_WAN22 = "https://huggingface.co/Comfy-Org/Wan_2.2_ComfyUI_Repackaged/resolve/main/split_files"
MODEL_URLS.update({
    "wan2.1_t2v_1.3B_fp16.safetensors": (
        f"{_WAN21}/diffusion_models/wan2.1_t2v_1.3B_fp16.safetensors", "diffusion_models"),
    "wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors": (
        f"{_WAN22}/diffusion_models/wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors", "diffusion_models"),
    "wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors": (
        f"{_WAN22}/diffusion_models/wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors", "diffusion_models"),
    "umt5_xxl_fp8_e4m3fn_scaled.safetensors": (
        f"{_WAN21}/text_encoders/umt5_xxl_fp8_e4m3fn_scaled.safetensors", "text_encoders"),
    "wan_2.1_vae.safetensors": (f"{_WAN21}/vae/wan_2.1_vae.safetensors", "vae"),
})

WAN21_720P = "Wan2.1-T2V-1.3B 1280x720 33 frames DyPE.json"  # the DyPE paper's video setting
WAN22_1088P = "Wan2.2-T2V-A14B 1920x1088 33 frames DyPE.json"
WAN_720P = "Wan 14B 720P (1280x720)"  # the pair's checkpoint variant (the 14B models were trained at 480P too)
NAMES = (WAN21_720P, WAN22_1088P)

FPS = 16.0  # Wan's frame rate (the templates' CreateVideo 16)
WEBM = ["vp9", FPS, 32.0]  # Save WEBM: codec, fps, crf (ComfyUI's default crf)
# The templates' negative prompt (Wan's own default, in Chinese as the model was trained with it).
NEGATIVE = ("色调艳丽，过曝，静态，细节模糊不清，字幕，风格，作品，画作，画面，静止，整体发灰，最差质量，低质量，JPEG压缩残留，丑陋的，"
            "残缺的，多余的手指，画得不好的手部，画得不好的脸部，畸形的，毁容的，形态畸形的肢体，手指融合，静止不动的画面，杂乱的背景，"
            "三条腿，背景人很多，倒着走")
PROMPT_FOX = ("A red fox trotting through fresh snow in a sunlit winter forest, every hair of its fur and each "
              "snow crystal sharp, frosted pine branches, mountains in the distance, tracking camera, cinematic, "
              "highly detailed")
PROMPT_HARBOUR = ("Slow aerial shot over a Mediterranean harbour town at golden hour, hundreds of small boats with "
                  "ropes and fenders, colourful houses with shutters and balconies, people walking on the quay, "
                  "gentle waves glinting, ultra detailed, 4K cinematic footage")

def _model_chain(g: Graph, loaders, ours, unet: str, shift: float, variant: str = "auto") -> int:
    """UNETLoader → ModelSamplingSD3 (the templates' shift) → DyPE Patch Model naming the checkpoint ``variant``;
    returns the patched model."""
    loader = loaders.add("UNETLoader", 82, [unet, "default"])
    sampling = loaders.add("ModelSamplingSD3", 60, [shift])
    g.link(loader, 0, sampling, "model")
    dype = ours.add("DyPESEGA_PatchModel", 210, [*DYPE_DEFAULTS[:-1], variant])
    g.link(sampling, 0, dype, "model")
    return dype


def _text_and_latent(g: Graph, loaders, prompts, prompt: str, width: int, height: int,
                     frames: int) -> tuple[int, int, int, int]:
    """Text encoder, VAE, the two prompts and the latent: (positive, negative, latent, vae)."""
    clip = loaders.add("CLIPLoader", 110, ["umt5_xxl_fp8_e4m3fn_scaled.safetensors", "wan", "default"])
    vae = loaders.add("VAELoader", 60, ["wan_2.1_vae.safetensors"])
    pos = prompts.add("CLIPTextEncode", 170, [prompt])
    neg = prompts.add("CLIPTextEncode", 150, [NEGATIVE])
    g.link(clip, 0, pos, "clip")
    g.link(clip, 0, neg, "clip")
    latent = prompts.add("EmptyHunyuanLatentVideo", 130, [width, height, frames, 1])
    return pos, neg, latent, vae


def _output(g: Graph, decode_column, save_column, samples: int, vae: int, prefix: str) -> None:
    """Decode, then Save WEBM down to the layout's bottom (its four widgets and the clip's preview), or at least 170
    high under Wan 2.2's two samplers."""
    dec = decode_column.add("VAEDecodeTiled", 150, [512, 64, 64, 8])
    g.link(samples, 0, dec, "samples")
    g.link(vae, 0, dec, "vae")
    save = save_column.fill("SaveWEBM", [prefix, *WEBM], at_least=170)
    g.link(dec, 0, save, "images")


def wan21(name: str) -> dict[str, Any]:
    """Wan 2.1 T2V 1.3B (trained 832×480) at 1280×720, 33 frames: the DyPE paper's video setting."""
    g = Graph()
    loaders, ours, prompts, samplers = columns(g, LOADER_W, OURS_W, PROMPT_W, SAMPLER_W)
    model = _model_chain(g, loaders, ours, "wan2.1_t2v_1.3B_fp16.safetensors", shift=8.0)
    pos, neg, latent, vae = _text_and_latent(g, loaders, prompts, PROMPT_FOX, 1280, 720, 33)
    ks = samplers.add("KSampler", 270, [42, "fixed", 30, 6.0, "uni_pc", "simple", 1.0])
    for src, dst in ((model, "model"), (pos, "positive"), (neg, "negative"), (latent, "latent_image")):
        g.link(src, 0, ks, dst)
    _output(g, samplers, samplers, ks, vae, "dype/wan2.1_t2v_1.3B_1280x720")
    add_note(g, NOTES[name])
    return g.to_json(name)


def wan22(name: str) -> dict[str, Any]:
    """Wan 2.2 T2V A14B (high + low noise, trained 1280×720) at 1920×1088, 33 frames; each model its own DyPE.
    The two samplers fill their column, so the decode sits under the latent."""
    g = Graph()
    loaders, ours, prompts, samplers = columns(g, LOADER_W, OURS_W, PROMPT_W, SAMPLER_W)
    high = _model_chain(g, loaders, ours, "wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors", shift=5.0,
                        variant=WAN_720P)
    low = _model_chain(g, loaders, ours, "wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors", shift=5.0,
                       variant=WAN_720P)
    pos, neg, latent, vae = _text_and_latent(g, loaders, prompts, PROMPT_HARBOUR, 1920, 1088, 33)
    first = samplers.add("KSamplerAdvanced", 334, ["enable", 42, "fixed", 20, 3.5, "euler", "simple", 0, 10, "enable"])
    second = samplers.add("KSamplerAdvanced", 334,
                          ["disable", 0, "fixed", 20, 3.5, "euler", "simple", 10, 10000, "disable"])
    for ks, model, start in ((first, high, latent), (second, low, first)):
        for src, dst in ((model, "model"), (pos, "positive"), (neg, "negative"), (start, "latent_image")):
            g.link(src, 0, ks, dst)
    _output(g, prompts, samplers, second, vae, "dype/wan2.2_t2v_a14b_1920x1088")
    add_note(g, NOTES[name])
    return g.to_json(name)


def build_video() -> dict[str, dict[str, Any]]:
    """File name → workflow JSON for the video examples."""
    return {WAN21_720P: wan21(WAN21_720P), WAN22_1088P: wan22(WAN22_1088P)}


def preview_fields(workflow: dict[str, Any]) -> tuple[str, int, int, int, float] | None:
    """(family, width, height, steps, shift) the thumbnail draws for a video workflow; None for an image one."""
    from .registry import MODEL_FAMILY

    by_type = {n["type"]: n["widgets_values"] for n in workflow["nodes"]}
    if "EmptyHunyuanLatentVideo" not in by_type:
        return None
    width, height, _, _ = by_type["EmptyHunyuanLatentVideo"]
    steps = by_type["KSampler"][2] if "KSampler" in by_type else by_type["KSamplerAdvanced"][3]
    return MODEL_FAMILY[by_type["UNETLoader"][0]], width, height, steps, by_type["ModelSamplingSD3"][0]


_WHY_DIFFERENT = """\
**Where this differs from ComfyUI's template, on purpose:**
- **Save WEBM** (vp9, 16 fps) instead of CreateVideo → Save Video (mp4): Save Video's codec input and CreateVideo's \
inputs changed between ComfyUI versions; Save WEBM is the same on every version this pack is tested on. Swap them \
back freely.
- **VAE Decode (Tiled)**: a plain decode of {size} needs several GB more VRAM.
- **Seed fixed**: queue again with the DyPE node{s} bypassed (select, Ctrl+B) to compare the same video without it."""

_OOM = ("**Out of memory?** In this order: VAE Decode (Tiled) tile_size **256**, overlap 32; start ComfyUI with "
        "**--lowvram**; fewer frames (length 17: the time axis is never scaled, so this only shortens the clip).")

NOTES: dict[str, str] = {
    WAN21_720P: f"""\
# Wan 2.1 T2V 1.3B · 1280×720 · DyPE

**The DyPE paper's video setting**: Wan 2.1 at 1280×720, 33 frames, where Dy-YaRN beat plain Wan 2.1 across \
VBench categories and, unlike static YaRN, improved Imaging Quality. The 1.3B model is trained at 832×480, so \
this is 1.54× wide and 1.5× high.

**Model files** (as in ComfyUI's Wan 2.1 text-to-video template, all from Comfy-Org/Wan_2.1_ComfyUI_repackaged):
- diffusion_models: **wan2.1_t2v_1.3B_fp16.safetensors**
- text_encoders: **umt5_xxl_fp8_e4m3fn_scaled.safetensors** (Load CLIP type wan)
- vae: **wan_2.1_vae.safetensors**

**Recipe** (the template's): ModelSamplingSD3 shift 8, uni_pc, simple, **30 steps**, cfg 6, Wan's negative prompt.

**DyPE Patch Model** on its defaults (yarn, dynamic; base_resolution 0 = the model's trained 832×480, detected \
from the model). It rescales the two spatial axes only; **frames keep the model's own RoPE**. At or below \
832×480 the output is identical.

{_WHY_DIFFERENT.format(size="1280×720×33", s="")}

**Memory and time (estimates, not measurements):** 1280×720×33 frames is 32,400 tokens, as many as the model's \
own 832×480×81.
- 24 GB card (RTX 4090): peak ≈ 8–12 GB VRAM, about 3–5 min. 32 GB system RAM (the text encoder is 6.7 GB).
- 80 GB card (A100 / H100): peak ≈ 8–12 GB VRAM, about 1–2 min (H100) or 2–3 min (A100).

{_OOM}
""",
    WAN22_1088P: f"""\
# Wan 2.2 T2V A14B · 1920×1088 · DyPE

1920×1088, 33 frames (2 s at 16 fps). Wan 2.2's 14B pair is trained at 1280×720 (and 832×480), so this is 1.5× per side.

**Model files** (as in ComfyUI's Wan 2.2 14B text-to-video template, Comfy-Org/Wan_2.2_ComfyUI_Repackaged):
- diffusion_models: **wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors** and \
**wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors**
- text_encoders: **umt5_xxl_fp8_e4m3fn_scaled.safetensors** (Load CLIP type wan)
- vae: **wan_2.1_vae.safetensors**

**Recipe** (the template's, Lightning LoRA off): ModelSamplingSD3 shift 5 on each model, euler, simple, cfg 3.5, \
**20 steps** split by two KSampler (Advanced): the high-noise model runs steps 0–10 and returns the leftover noise, \
the low-noise model runs 10–20.

**One DyPE Patch Model per model, same settings** (defaults: yarn, dynamic, base_resolution 0 = 1280×720). Each \
reads t from the sigma its own sampler passes, so the two halves form one continuous schedule across the hand-over. \
Frames keep the model's own RoPE. SEGA Attention can follow each DyPE node (same settings on both); it is not in \
this graph.

{_WHY_DIFFERENT.format(size="1920×1088×33", s="s")}

**Memory and time (estimates, not measurements):** 33 frames at 1920×1088 is 73,440 tokens, about the model's own \
1280×720×81 (75,600). The template's own table gives 536 s for 640×640×81 on a 24 GB RTX 4090D.
- 24 GB card (RTX 4090): each fp8 model is 13.3 GB and loads in turn; peak ≈ 20–23 GB VRAM (ComfyUI offloads part \
of the model if needed), about 30–45 min. 64 GB system RAM recommended.
- 80 GB card (A100 / H100): both models stay loaded, peak ≈ 35–45 GB VRAM, about 10–15 min (H100) or 20–30 min \
(A100).

{_OOM}
""",
}
