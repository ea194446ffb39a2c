"""The I-Max Cascade example graph, shipped as workflow 35 (make_workflows.build_all, numbered from ``FIRST_NUMBER``
after the newest models'), built from graph.py's shapes and the HiFlow graphs' layout (hiflow_workflows.py): FLUX.1-dev
from a prompt to 4096² with the official README's settings. Its note is measured in both frontends like every other
note; its card is cards.py's cascade branch; tests/test_workflows.py runs it on tiny models to 4x the base latent
(tiny_cascade.py, as the demo does).
"""

from __future__ import annotations

from typing import Any

from . import floors
from .graph import LOADER_W, OPTIONAL_INPUTS, PACK, SHAPES, Graph, columns
from .hiflow_workflows import _FILES, _VRAM24, _VRAM80, CASCADE_H, CASCADE_W, PROMPTS_W, finish_cascade
from .notes import NUNCHAKU_FLUX

IMAX = "DyPESEGA_ImaxCascade"
SHAPES[IMAX] = ([("model", "MODEL"), ("positive", "CONDITIONING"), ("negative", "CONDITIONING"), ("vae", "VAE"),
                 ("latent", "LATENT"), ("stage_model", "MODEL")],
                [("seed", "INT"), ("steps", "INT"), ("cfg", "FLOAT"), ("denoise", "FLOAT")]
                + [(n, "STRING") for n in ("scales", "stage_steps", "stage_guidance")] + [("base_shift", "FLOAT")]
                + [(n, "STRING") for n in ("stage_shift", "ntk_factor")]
                + [(n, "BOOLEAN") for n in ("proportional_attention", "text_duplication", "swin")]
                + [("guidance_schedule", "COMBO"), ("wavelet_level", "INT")],
                [("latent", "LATENT"), ("base", "LATENT")], PACK)
OPTIONAL_INPUTS.add((IMAX, "stage_model"))
# The node's defaults = the official README's call (PRIS-CV/I-Max 3b38c11), in widget order; seed first, then the
# frontend's control_after_generate value.
OFFICIAL = [0, "fixed", 30, 1.0, 1.0, "4", "30", "7", 3.0, "6", "10", True, True, True, "cosine_decay", 1]
PROMPT = ("A bustling open-air café on a Parisian street, with people sitting at small tables sipping coffee and "
          "chatting, waiters weaving through the crowd, and artists sketching on the sidewalk as the Eiffel Tower "
          "looms in the background.")  # the README's example prompt

FLUX_IMAX = "FLUX.1-dev 4096x4096 I-Max cascade.json"
NAMES = (FLUX_IMAX,)
FIRST_NUMBER = 35  # after the newest models' 34
#: The peak VRAM is the 4096² stage's step: one model call at 4096² as in workflow 02 (its figures, hiflow_workflows'
#: _VRAM24 / _VRAM80; tests/test_workflows.py checks), with 8,192 text tokens instead of 512 (text duplication: 12 %
#: more tokens in that step, said, not added to the figures). Time: I-Max's 1.24x the model FLOPs of one 4096² pass
#: (BENCHMARKS.md) x that pass's time in the README (25-40 min on an RTX 4090, 6-10 min on an H100).
NOTES = {FLUX_IMAX: f"""# FLUX.1-dev · 4096² · I-Max cascade (official)
**What it does:** **I-Max Cascade** samples 1024² (30 steps, static time shift 3, guidance 3.5), then samples \
4096² from fresh noise (30 steps, time shift 6, guidance 7), every step pulled toward the 1024² image, upsampled: the \
low frequencies of its velocity follow the straight line to that image, with a weight falling from 1 to 0 (the \
"projected flow", cosine_decay). The 4096² pass uses I-Max's stage model: NTK x 10 clipped to position \
interpolation, proportional attention and **text duplication** (the prompt once per 1024² tile). All inputs are the \
official README's (PRIS-CV/I-Max). **T5TokenizerOptions min_length 512** pads the prompt as the official code does.
{_FILES}

{NUNCHAKU_FLUX}

**Where this differs, on purpose:**
- **VAE Decode (Tiled)**: a plain decode of 4096² needs several GB more VRAM.
- **Seed fixed**: the same image on every run; change it for another. docs/imax.md lists every difference from the \
official code.

**Memory and time (estimates, not measurements):** the peak is the 4096² step, as one 4096² pass (workflow 02), its \
text stream 16 copies of the prompt (8,192 tokens: 12 % more tokens in that step, so a little above these figures).
- 24 GB card (RTX 4090): weight_dtype **fp8_e4m3fn** (the file alone is 22 GB); peak {_VRAM24} VRAM, about 30–50 min \
(1.24x the model FLOPs of one 4096² pass, BENCHMARKS.md).
- 80 GB card (A100 / H100): peak {_VRAM80} VRAM, about 7–12 min (H100).
{floors.floor_line(floors.cascade("I-Max"))}

**Out of memory?** In this order: weight_dtype **fp8_e4m3fn** on the model loader; **text_duplication** off (one \
copy of the prompt: 0.03x over one pass instead of 0.24x); VAE Decode (Tiled) tile_size **256**, overlap 32; start \
ComfyUI with **--lowvram**; a smaller final size: **scales 3** (3072²)."""}


def _flux(name: str) -> dict[str, Any]:
    """Loaders; prompts and latent; the cascade; its decode and the image beside it (no wire right to left)."""
    g = Graph()
    loaders, prompts, last = columns(g, LOADER_W, PROMPTS_W, CASCADE_W)
    unet = loaders.add("UNETLoader", 82, ["flux1-dev.safetensors", "default"])
    clip = loaders.add("DualCLIPLoader", 130, ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"])
    vae = loaders.add("VAELoader", 60, ["ae.safetensors"])
    options = loaders.add("T5TokenizerOptions", 82, [0, 512])
    g.link(clip, 0, options, "clip")
    pos = prompts.add("CLIPTextEncode", 200, [PROMPT])
    g.link(options, 0, pos, "clip")
    guidance = prompts.add("FluxGuidance", 60, [3.5])
    g.link(pos, 0, guidance, "conditioning")
    neg = prompts.add("ConditioningZeroOut", 50, [])
    g.link(pos, 0, neg, "conditioning")
    latent = prompts.add("EmptySD3LatentImage", 110, [1024, 1024, 1])
    cascade = last.add(IMAX, CASCADE_H, list(OFFICIAL))  # the classic renderer's computeSize for its widgets, too
    return finish_cascade(g, last, cascade, name, (unet, guidance, neg, vae, latent), NOTES[name], beside=True)


def build_imax() -> dict[str, dict[str, Any]]:
    return {FLUX_IMAX: _flux(FLUX_IMAX)}
