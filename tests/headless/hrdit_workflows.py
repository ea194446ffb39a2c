"""The HRDiT Cascade example graphs, shipped as workflows 36 and 37 (make_workflows.build_all, numbered from
``FIRST_NUMBER`` after I-Max's 35), built from graph.py's shapes and the HiFlow graphs' layout (hiflow_workflows.py):
FLUX.1-dev from a prompt to 4096² with the official run's settings (zylwithxy/HRDiT e4aa8c6 inference.py,
configs/pipeline.json), SPA and HAP on; 37 the same with SEGA Attention alone (recipe paper) on stage_model. Their
notes are measured in the frontends like every other note; their cards are cards.py's cascade branch;
tests/test_workflows.py runs each on tiny models to 4x the base latent (tiny_cascade.py, as the demo does).
"""

from __future__ import annotations

from typing import Any

from . import floors
from .graph import LOADER_W, OPTIONAL_INPUTS, PACK, SHAPES, Graph, columns
from .hiflow_workflows import _FILES, _VRAM24, _VRAM80, CASCADE_W, PROMPTS_W, SEGA_DEFAULTS, finish_cascade

HRDIT = "DyPESEGA_HrditCascade"
SHAPES[HRDIT] = ([("model", "MODEL"), ("positive", "CONDITIONING"), ("negative", "CONDITIONING"), ("vae", "VAE"),
                  ("latent", "LATENT"), ("stage_model", "MODEL")],
                 [("seed", "INT"), ("steps", "INT"), ("cfg", "FLOAT"), ("denoise", "FLOAT")]
                 + [(n, "STRING") for n in ("scales", "stage_steps")] + [(n, "BOOLEAN") for n in ("spa", "hap")]
                 + [("spa_steps", "STRING"), ("group_num", "INT"), ("global_anchor", "INT")]
                 + [(n, "STRING") for n in ("stage_guidance", "alphas", "betas", "filter_ratio", "ntk_factor")]
                 + [(n, "BOOLEAN") for n in ("proportional_attention", "swin")]
                 + [("sharpen", "FLOAT"), ("schedule", "COMBO")],
                 [("latent", "LATENT"), ("base", "LATENT")], PACK)
OPTIONAL_INPUTS.add((HRDIT, "stage_model"))
#: HiFlow's cascade node height (hiflow_workflows.CASCADE_H, 16 widget rows) plus five rows of 24 px.
CASCADE_H = 518 + 5 * 24
SEED = 3407  # inference.py --seed
# The node's defaults = the official run (e4aa8c6), in widget order; the seed, then the frontend's
# control_after_generate value.
OFFICIAL = [SEED, "fixed", 30, 1.0, 1.0, "2, 4", "17, 10", True, True, "3, 0", 80, 32, "4.5, 6", "1.0, 0.25",
            "0.5, 0.5", "0.2, 0.2", "4, 10", True, False, 1.0, "official HiFlow (FLUX.1-dev dynamic shift)"]
PROMPT = "A textbook shows a large group of people."  # the official README's example prompt

FLUX_HRDIT = "FLUX.1-dev 4096x4096 HRDiT cascade.json"
FLUX_HRDIT_SEGA = "FLUX.1-dev 4096x4096 HRDiT cascade SEGA stages.json"
NAMES = (FLUX_HRDIT, FLUX_HRDIT_SEGA)
FIRST_NUMBER = 36  # after I-Max's 35
#: The peak VRAM is the 4096² stage's step: one model call at 4096², as one 4096² pass (workflow 02; HiFlow's
#: figures, hiflow_workflows' _VRAM24 / _VRAM80), HAP's masks a few MB. No time figure: HAP's saving is FlexAttention's
#: on CUDA, which no machine here has run (docs/hrdit.md); the note says what the time is made of instead.
#: HAP's time: fewer attention FLOPs where FlexAttention runs (CUDA), not yet timed on a GPU (docs/hrdit.md); without
#: triton it takes an exact masked path (the same image), of which no speed is claimed.
_HAP_TIME = ("HAP is expected to save time on CUDA (fewer attention FLOPs; not yet timed on a GPU); without triton "
             "(e.g. the Windows portable ComfyUI) it runs an exact blockwise attention over the kept keys instead.")
_FLOOR = floors.floor_line(floors.cascade("HRDiT"), "; HAP as FlexAttention computes it")
#: Nunchaku's FLUX.1 takes no attention override, so SPA and HAP (on in both graphs) are refused on it.
_NUNCHAKU = "**Nunchaku FLUX:** not for this graph: SPA and HAP are refused on it (its fused attention takes no override)."
_OOM = """**Out of memory?** In this order: weight_dtype **fp8_e4m3fn** on the model loader; VAE Decode (Tiled) \
tile_size **256**, overlap 32; start ComfyUI with **--lowvram**; a smaller final size: **scales 2, 3** (3072²)."""
NOTES = {FLUX_HRDIT: f"""# FLUX.1-dev · 4096² · HRDiT cascade (official)
**What it does:** **HRDiT Cascade** samples 1024² (30 steps), then 2048² (the last 17 steps of the same schedule, NTK \
x 4) and 4096² (the last 10, NTK x 10), each stage pulled toward the earlier predictions (HiFlow's rule). **SPA** \
averages the attention over bundled positions on the first 3 steps at 2048² (structure above 2K); **HAP** prunes \
each head's attention to the authors' scope plan on every stage step (a shorter run). All inputs are the official \
run's (zylwithxy/HRDiT: inference.py, configs/pipeline.json). **T5TokenizerOptions min_length 512** pads the prompt \
as the official code does (HAP counts it as text).
{_FILES}

{_NUNCHAKU}

**Where this differs, on purpose:**
- **VAE Decode (Tiled)**: a plain decode of 4096² needs several GB more VRAM.
- **Seed fixed** (the official 3407): the same image on every run; change it for another. docs/hrdit.md lists \
every difference from the official code.

**Memory and time (estimates, not measurements):** the peak is the 4096² stage's step, as one 4096² pass (workflow \
02).
- 24 GB card (RTX 4090): weight_dtype **fp8_e4m3fn** (the file alone is 22 GB); peak {_VRAM24} VRAM.
- 80 GB card (A100 / H100): peak {_VRAM80} VRAM.
{_FLOOR}
- Time: HiFlow's cascade (workflow 26) with one more 2048² step, SPA's 3 bundle variants on 3 steps at 2048², and \
HAP's pruned attention (at 4096² about 10 % of the attention entries) on every stage step. {_HAP_TIME}

{_OOM}""",
         # SEGA alone, not DyPE -> SEGA: docs/hrdit.md's composition section and notes.py's _SEGA_ALONE
         FLUX_HRDIT_SEGA: f"""# FLUX.1-dev · 4096² · HRDiT cascade, SEGA stages
**What it does:** workflow 36's HRDiT cascade (SPA and HAP on, the official run's inputs), but its 2048² and 4096² \
stages run **SEGA Attention** (recipe **paper (official SEGA code)**, connected to **stage_model**) instead of the \
official NTK x 4 / x 10 + proportional attention: SEGA's static NTK positions and per-pair temperatures. On SPA's \
steps SPA's bundled positions replace SEGA's and keep its temperatures; HAP is unchanged. The base pass runs the \
plain model. This composition is **ours**: no published numbers.

**Why SEGA alone, not DyPE → SEGA:** SEGA alone on its static NTK is the published SEGA recipe, the code behind the \
SEGA paper's FLUX.1-dev numbers; DyPE under it would be a second composition of ours (workflow 27 shows it in \
HiFlow's cascade). **T5TokenizerOptions min_length 512** pads the prompt as the official code does.

{_FILES}

{_NUNCHAKU}

**Where this differs, on purpose:**
- **stage_model**: SEGA in the stages instead of the official stage model (ours; leave it empty for the official \
HRDiT cascade, workflow 36).
- **VAE Decode (Tiled)**: a plain decode of 4096² needs several GB more VRAM.
- **Seed fixed** (the official 3407): change it for another image. docs/hrdit.md lists every difference.

**Memory and time (estimates, not measurements):** as workflow 36: the peak is the 4096² stage's step, as one \
4096² pass (workflow 02).
- 24 GB card (RTX 4090): weight_dtype **fp8_e4m3fn** (the file alone is 22 GB); peak {_VRAM24} VRAM.
- 80 GB card (A100 / H100): peak {_VRAM80} VRAM.
{_FLOOR}
- Time: workflow 36's, plus SEGA's FFT and patch embedding on each stage step. {_HAP_TIME}

{_OOM}"""}


def _flux(name: str, *, sega: bool = False) -> dict[str, Any]:
    """Loaders; prompts and latent, [SEGA Attention under them, 37]; the cascade; its decode and the image beside it
    (no wire right to left). SEGA sits under the prompts rather than in a column of its own: with the image's column
    the graph would be six columns wide, its fit zoom about 0.68 instead of 0.76."""
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
    stage_model = None
    if sega:
        stage_model = prompts.add("DyPESEGA_SEGAAttention", 345, SEGA_DEFAULTS)
        g.link(unet, 0, stage_model, "model")
    cascade = last.add(HRDIT, CASCADE_H, list(OFFICIAL))
    return finish_cascade(g, last, cascade, name, (unet, guidance, neg, vae, latent), NOTES[name], stage_model,
                          beside=True)


def build_hrdit() -> dict[str, dict[str, Any]]:
    return {FLUX_HRDIT: _flux(FLUX_HRDIT), FLUX_HRDIT_SEGA: _flux(FLUX_HRDIT_SEGA, sega=True)}
