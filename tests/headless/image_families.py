"""One example workflow per image family the pack supports beyond Flux.1 and Qwen-Image: the data each graph and its
note are built from (tests/headless/make_workflows.py builds them, notes.py writes the notes).

Model files, loader types, download links and sampler settings are those of ComfyUI's official template for the
model (PyPI ``comfyui-workflow-templates-json`` 0.1.123, named in ``template``). Where no official template exists
(Lumina-Image 2.0, HunyuanImage 2.1, Z-Image pixel space) the files are the repackaged ones of the named repository
and the note says so. Graphs use KSampler where the template uses SamplerCustomAdvanced (same sampler, scheduler,
steps and cfg); each deliberate difference is a line of ``differs``, shown in the note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_HF = "https://huggingface.co"
AE = f"{_HF}/Comfy-Org/Lumina_Image_2.0_Repackaged/resolve/main/split_files/vae/ae.safetensors"  # the one ae link


@dataclass(frozen=True)
class ModelFile:
    name: str
    folder: str  # ComfyUI models/ subfolder
    url: str


@dataclass(frozen=True)
class Estimate:
    """Peak VRAM and wall time at the workflow's size (estimates, not measurements: FLOPs of the model size and
    token count at 90 / 150 / 300 effective TFLOP/s on a 4090 / A100 / H100, scaled like the measured-free Flux.1
    notes)."""

    vram24: str  # what to set on a 24 GB card, and the peak
    time24: str
    mem80: str
    time80: str


@dataclass(frozen=True)
class FamilyWorkflow:
    file: str  # workflows/<file>; the template browser shows the stem
    title: str  # the note's heading
    family: str  # pack adapter name (registry.MODEL_FAMILY maps the unet file to it)
    template: str  # the official template followed, or where the files come from
    unet: ModelFile
    clip_loader: str  # CLIPLoader / DualCLIPLoader / QuadrupleCLIPLoader
    clip_files: tuple[ModelFile, ...]
    clip_type: str | None  # the loader's type widget (QuadrupleCLIPLoader has none)
    vae: ModelFile | None  # None: pixel space (VAELoader "pixel_space")
    latent: str  # the empty-latent node the template uses
    steps: int
    cfg: float
    sampler: str
    scheduler: str
    prompt: str
    negative: str | None  # None: ConditioningZeroOut of the positive prompt (cfg 1 never evaluates it)
    seed: int
    estimate: Estimate
    shift: tuple[str, float] | None = None  # (ModelSamplingAuraFlow / ModelSamplingSD3, shift)
    guidance: float | None = None  # FluxGuidance
    t5_options: bool = False  # Chroma's T5TokenizerOptions (min_padding 0, min_length 0)
    width: int = 4096
    height: int = 4096
    sega: bool = True
    newer_host: bool = False  # only ComfyUI 0.30 and later has this model (or its text encoder)
    differs: tuple[str, ...] = ()  # deliberate differences from the template, each with its reason
    remarks: tuple[str, ...] = ()  # other facts the user needs (variants, trained size, source of a setting)
    variant: str = "auto"  # our nodes' ``variant``: the checkpoint, where the family's class has several
    slug: str = field(default="")

    @property
    def files(self) -> tuple[ModelFile, ...]:
        return (self.unet, *self.clip_files, *((self.vae,) if self.vae else ()))


def _file(repo_path: str, folder: str) -> ModelFile:
    return ModelFile(repo_path.rsplit("/", 1)[-1], folder, f"{_HF}/{repo_path}")


_T5_FP8 = _file("comfyanonymous/flux_text_encoders/resolve/main/t5xxl_fp8_e4m3fn_scaled.safetensors",
                "text_encoders")
_QWEN3_4B = _file("Comfy-Org/z_image_turbo/resolve/main/split_files/text_encoders/qwen_3_4b.safetensors",
                  "text_encoders")
_FLUX2_VAE = _file("Comfy-Org/flux2-dev/resolve/main/split_files/vae/flux2-vae.safetensors", "vae")
_AE = ModelFile("ae.safetensors", "vae", AE)
_QWEN_VAE = _file("Comfy-Org/Qwen-Image_ComfyUI/resolve/main/split_files/vae/qwen_image_vae.safetensors", "vae")
_QWEN25_VL_FP8 = _file("Comfy-Org/Qwen-Image_ComfyUI/resolve/main/split_files/text_encoders/"
                       "qwen_2.5_vl_7b_fp8_scaled.safetensors", "text_encoders")

PROMPT_TIGER = (
    "This is a nature documentary close-up photograph of the right side of the face of a tiger, centered on its "
    "highly detailed speckled eye surrounded by intricately detailed fur, whiskers and wet nose. Amateur "
    "photography. Unfiltered. Real life. Natural light. Subtle shadows."
)
PROMPT_HARBOUR = (
    "A fishing harbour at dawn seen from a hill, dozens of wooden boats with ropes, nets and buoys, stacked crates, "
    "gulls on the pier posts, colourful houses with tiny windows climbing the slope behind, mist over the water, "
    "highly detailed photograph"
)
PROMPT_LIBRARY = (
    "The interior of a vast old library, carved wooden shelves full of leather books with legible gold lettering "
    "on the spines, spiral staircases, a glass dome letting in soft daylight, dust in the light beams, reading "
    "tables with brass lamps, ultra detailed architectural photograph"
)
PROMPT_MARKET = (
    "A night market street in the rain, neon signs reflected in the wet pavement, food stalls with steam rising, "
    "hanging paper lanterns, people with umbrellas, shop signs with small readable text, cinematic, highly "
    "detailed photograph"
)
PROMPT_FOREST = (
    "A moss-covered ancient forest with giant ferns, a small stream over smooth stones, sunbeams through the "
    "canopy, mushrooms and fallen leaves on the ground, every leaf and droplet sharp, ultra detailed nature "
    "photograph"
)
PROMPT_REEF = (
    "A coral reef seen from just below the surface, schools of small silver fish, sea turtles, anemones and "
    "branching corals in many colours, light caustics on the sand, crystal clear water, ultra detailed "
    "underwater photograph"
)
LUMINA_SYSTEM = ("You are an assistant designed to generate superior images with the superior degree of image-text "
                 "alignment based on textual prompts or user prompts. <Prompt Start> ")
CHROMA_NEGATIVE = (
    "This low quality greyscale unfinished sketch is inaccurate and flawed. The image is very blurred and lacks "
    "detail with excessive chromatic aberrations and artifacts. The image is overly saturated with excessive bloom."
)
_ZERO_OUT_WHY = "negative = ConditioningZeroOut (cfg 1 never evaluates it), as in the template"
_CUSTOM = "KSampler where the template uses SamplerCustomAdvanced: the same sampler, scheduler, steps and cfg"
_NO_SHIFT_NODE = ("no resolution-dependent shift node: ComfyUI's fitted shift at 4096² extrapolates far beyond its "
                  "range (nearly every step at sigma ≈ 1); the model's own default shift is used")

SPECS: tuple[FamilyWorkflow, ...] = (
    FamilyWorkflow(
        file="Chroma1-HD 4096x4096 DyPE + SEGA.json", title="Chroma1-HD · 4096×4096 · DyPE + SEGA", family="chroma",
        template="image_chroma_text_to_image", slug="chroma1-hd_4096",
        unet=_file("Comfy-Org/Chroma1-HD_repackaged/resolve/main/split_files/diffusion_models/"
                   "Chroma1-HD-fp8mixed.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_T5_FP8,), clip_type="chroma", vae=_AE, latent="EmptySD3LatentImage",
        shift=("ModelSamplingAuraFlow", 1.0), t5_options=True, steps=26, cfg=3.5, sampler="euler",
        scheduler="beta", prompt=PROMPT_TIGER, negative=CHROMA_NEGATIVE, seed=11,
        differs=(_CUSTOM + " (CFGGuider 3.5, BasicScheduler beta 26).",),
        variant="Chroma1-HD (1024x1024)",
        remarks=("Both nodes name the checkpoint (variant **Chroma1-HD**, 1024²). For **Chroma1-Base** (trained at "
                 "512²) pick its variant on both nodes.",),
        estimate=Estimate("the fp8mixed file fits as it is; peak ≈ 16–20 GB VRAM", "40–65 min",
                          "≈ 20–26 GB", "12–20 min (H100) or 24–40 min (A100)")),
    FamilyWorkflow(
        file="Chroma1-Radiance 4096x4096 DyPE + SEGA.json", title="Chroma1-Radiance · 4096×4096 · DyPE + SEGA",
        family="chroma_radiance", template="image_chroma1_radiance_text_to_image", slug="chroma1-radiance_4096",
        unet=_file("Comfy-Org/Chroma1-Radiance_Repackaged/resolve/main/split_files/diffusion_models/"
                   "chroma-radiance-x0.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_T5_FP8,), clip_type="chroma", vae=None,
        latent="EmptyChromaRadianceLatentImage", shift=("ModelSamplingAuraFlow", 1.0), t5_options=True, steps=30,
        cfg=3.5, sampler="euler", scheduler="beta", prompt=PROMPT_REEF, negative=CHROMA_NEGATIVE, seed=12,
        differs=(_CUSTOM + "; KSampler's beta scheduler (α = β = 0.6) where the template's BetaSamplingScheduler "
                 "uses 0.4 / 0.4.",
                 "ChromaRadianceOptions left out (its defaults change nothing here).",
                 "VAE Decode, not Tiled: pixel space has no VAE to tile (the decode is a copy)."),
        estimate=Estimate("set weight_dtype to **fp8_e4m3fn** (the file is bf16, 17.8 GB); peak ≈ 18–22 GB VRAM",
                          "45–75 min", "≈ 28–36 GB", "14–22 min (H100) or 28–45 min (A100)")),
    FamilyWorkflow(
        file="FLUX.2-dev 4096x4096 DyPE + SEGA.json", title="FLUX.2 [dev] · 4096×4096 · DyPE + SEGA",
        family="flux2", template="image_flux2_text_to_image", slug="flux2-dev_4096",
        unet=_file("Comfy-Org/flux2-dev/resolve/main/split_files/diffusion_models/flux2_dev_fp8mixed.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/flux2-dev/resolve/main/split_files/text_encoders/mistral_3_small_flux2_bf16.safetensors",
            "text_encoders"),), clip_type="flux2", vae=_FLUX2_VAE, latent="EmptyFlux2LatentImage", guidance=4.0,
        steps=20, cfg=1.0, sampler="euler", scheduler="simple", prompt=PROMPT_MARKET, negative=None, seed=21,
        differs=(_CUSTOM + " (BasicGuider, FluxGuidance 4, euler, 20 steps).",
                 "Flux2Scheduler left out: " + _NO_SHIFT_NODE + " (μ 2.02, what Flux2Scheduler gives near 1024²).",
                 "VAE **flux2-vae.safetensors** (Comfy-Org/flux2-dev, as the FLUX.2 fp8 template) instead of the "
                 "t2i template's full_encoder_small_decoder from black-forest-labs: same latent space."),
        remarks=("Turbo LoRA and reference images of the template are left out: plain text to image.",),
        estimate=Estimate("the 35 GB fp8 model does not fit; ComfyUI offloads part of it to system RAM (96 GB "
                          "recommended); peak ≈ 23 GB VRAM", "60–120 min",
                          "≈ 45–55 GB", "11–18 min (H100) or 22–36 min (A100)")),
    FamilyWorkflow(
        file="FLUX.2-klein-4B 4096x4096 DyPE + SEGA.json", title="FLUX.2 [klein] 4B · 4096×4096 · DyPE + SEGA",
        family="flux2", template="image_flux2_klein_text_to_image (distilled 4B)", slug="flux2-klein-4b_4096",
        unet=_file("Comfy-Org/flux2-klein/resolve/main/split_files/diffusion_models/flux-2-klein-4b.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/flux2-klein/resolve/main/split_files/text_encoders/qwen_3_4b.safetensors", "text_encoders"),),
        clip_type="flux2", vae=_FLUX2_VAE, latent="EmptyFlux2LatentImage", steps=4, cfg=1.0, sampler="euler",
        scheduler="simple", prompt=PROMPT_HARBOUR, negative=None, seed=22, newer_host=True,
        differs=(_CUSTOM + " (CFGGuider 1, euler, 4 steps).",
                 "Flux2Scheduler left out: " + _NO_SHIFT_NODE + "."),
        remarks=("Klein is a Flux.2 model (same adapter: nothing in the model tells them apart, and no size of "
                 "Klein's own was found, so it gets FLUX.2's 2048²). The 9B and the base (undistilled) "
                 "models load in the same graph: ComfyUI's Klein base templates sample 20 steps at cfg 5. Klein's "
                 "Qwen3 text encoder came after ComfyUI 0.3.75.",),
        estimate=Estimate("fits as it is; peak ≈ 12–16 GB VRAM", "2–4 min", "≈ 14–18 GB",
                          "0.5–1 min (H100) or 1–2 min (A100)")),
    FamilyWorkflow(
        file="Z-Image-Turbo 4096x4096 DyPE + SEGA.json", title="Z-Image-Turbo · 4096×4096 · DyPE + SEGA",
        family="z_image", template="image_z_image_turbo", slug="z-image-turbo_4096",
        unet=_file("Comfy-Org/z_image_turbo/resolve/main/split_files/diffusion_models/z_image_turbo_bf16.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_QWEN3_4B,), clip_type="lumina2", vae=_AE,
        latent="EmptySD3LatentImage", shift=("ModelSamplingAuraFlow", 3.0), steps=8, cfg=1.0,
        sampler="res_multistep", scheduler="simple", prompt=PROMPT_LIBRARY, negative=None, seed=31,
        remarks=("Z-Image (base, **z_image_bf16.safetensors**, Comfy-Org/z_image) loads in the same graph: its "
                 "template samples 25 steps at cfg 4 with a text negative.",),
        estimate=Estimate("fits as it is (fp8_e4m3fn if tight); peak ≈ 18–22 GB VRAM", "4–7 min", "≈ 20–26 GB",
                          "1–2 min (H100) or 3–4 min (A100)")),
    FamilyWorkflow(
        file="Lumina-Image-2.0 4096x4096 DyPE + SEGA.json", title="Lumina-Image 2.0 · 4096×4096 · DyPE + SEGA",
        family="lumina2",
        template="no official template in comfyui-workflow-templates 0.1.123: the split files of "
                 "Comfy-Org/Lumina_Image_2.0_Repackaged; shift, steps, cfg and sampler of the Lumina 2 based "
                 "image_netayume_lumina_t2i template", slug="lumina-image-2_4096",
        unet=_file("Comfy-Org/Lumina_Image_2.0_Repackaged/resolve/main/split_files/diffusion_models/"
                   "lumina_2_model_bf16.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/Lumina_Image_2.0_Repackaged/resolve/main/split_files/text_encoders/gemma_2_2b_fp16.safetensors",
            "text_encoders"),), clip_type="lumina2", vae=_AE, latent="EmptySD3LatentImage",
        shift=("ModelSamplingAuraFlow", 4.0), steps=30, cfg=4.0, sampler="res_multistep", scheduler="simple",
        prompt=LUMINA_SYSTEM + PROMPT_FOREST, negative="You are an assistant designed to generate low-quality "
        "images based on textual prompts <Prompt Start> blurry, worst quality, low quality, jpeg artifacts", seed=41,
        remarks=("Lumina 2 is prompted like an LLM: both prompts start with its system line and <Prompt Start>.",),
        estimate=Estimate("fits as it is; peak ≈ 10–14 GB VRAM", "15–25 min", "≈ 12–16 GB",
                          "5–8 min (H100) or 9–15 min (A100)")),
    FamilyWorkflow(
        file="HiDream-I1-Dev 4096x4096 DyPE + SEGA.json", title="HiDream-I1 Dev · 4096×4096 · DyPE + SEGA",
        family="hidream", template="hidream_i1_dev", slug="hidream-i1-dev_4096",
        unet=_file("Comfy-Org/HiDream-I1_ComfyUI/resolve/main/split_files/diffusion_models/"
                   "hidream_i1_dev_fp8.safetensors", "diffusion_models"),
        clip_loader="QuadrupleCLIPLoader", clip_files=tuple(_file(
            f"Comfy-Org/HiDream-I1_ComfyUI/resolve/main/split_files/text_encoders/{name}", "text_encoders")
            for name in ("clip_l_hidream.safetensors", "clip_g_hidream.safetensors",
                         "t5xxl_fp8_e4m3fn_scaled.safetensors", "llama_3.1_8b_instruct_fp8_scaled.safetensors")),
        clip_type=None, vae=_AE, latent="EmptySD3LatentImage", shift=("ModelSamplingSD3", 6.0), steps=28, cfg=1.0,
        sampler="lcm", scheduler="normal", prompt=PROMPT_HARBOUR,
        negative="bad ugly jpeg artifacts", seed=51,
        remarks=("HiDream-I1 **Full** (hidream_i1_full_fp8.safetensors, same folder) loads in the same graph: its "
                 "template samples 50 steps of uni_pc at cfg 5, ModelSamplingSD3 3.0.",),
        estimate=Estimate("the 17 GB fp8 model plus the 4096² activations exceed 24 GB: ComfyUI offloads part of "
                          "it (64 GB system RAM); peak ≈ 22–24 GB VRAM", "25–45 min", "≈ 30–40 GB",
                          "7–11 min (H100) or 14–22 min (A100)")),
    FamilyWorkflow(
        file="HunyuanImage-2.1 4096x4096 DyPE + SEGA.json", title="HunyuanImage 2.1 · 4096×4096 · DyPE + SEGA",
        family="hunyuan_image21",
        template="no official template in comfyui-workflow-templates 0.1.123: the files of "
                 "Comfy-Org/HunyuanImage_2.1_ComfyUI; 50 steps and cfg 3.5 of the model card "
                 "(tencent/HunyuanImage-2.1), ComfyUI's default shift (5)", slug="hunyuanimage-2.1_4096",
        unet=_file("Comfy-Org/HunyuanImage_2.1_ComfyUI/resolve/main/split_files/diffusion_models/"
                   "hunyuanimage2.1_bf16.safetensors", "diffusion_models"),
        clip_loader="DualCLIPLoader", clip_files=tuple(_file(
            f"Comfy-Org/HunyuanImage_2.1_ComfyUI/resolve/main/split_files/text_encoders/{name}", "text_encoders")
            for name in ("qwen_2.5_vl_7b.safetensors", "byt5_small_glyphxl_fp16.safetensors")),
        clip_type="hunyuan_image", vae=_file("Comfy-Org/HunyuanImage_2.1_ComfyUI/resolve/main/split_files/vae/"
                                             "hunyuan_image_2.1_vae_fp16.safetensors", "vae"),
        latent="EmptyHunyuanImageLatent", steps=50, cfg=3.5, sampler="euler", scheduler="simple",
        prompt=PROMPT_MARKET, negative="blurry, low quality, distorted, ugly, watermark", seed=61,
        remarks=("HunyuanImage 2.1 is a 2K model (32× VAE): 2048² and up to 2560 per side (2560×1536, its "
                 "README), so the pack's base is 2560 and 4096² is 1.6× per side.",),
        estimate=Estimate("set weight_dtype to **fp8_e4m3fn** (the file is bf16, 34 GB); peak ≈ 20–23 GB VRAM "
                          "with partial offload (64 GB system RAM)", "15–30 min", "≈ 42–50 GB",
                          "5–8 min (H100) or 9–15 min (A100)")),
    FamilyWorkflow(
        file="OmniGen2 4096x4096 DyPE + SEGA.json", title="OmniGen2 · 4096×4096 · DyPE + SEGA", family="omnigen2",
        template="image_omnigen2_t2i", slug="omnigen2_4096",
        unet=_file("Comfy-Org/Omnigen2_ComfyUI_repackaged/resolve/main/split_files/diffusion_models/"
                   "omnigen2_fp16.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/Omnigen2_ComfyUI_repackaged/resolve/main/split_files/text_encoders/"
            "qwen_2.5_vl_fp16.safetensors", "text_encoders"),), clip_type="omnigen2", vae=_AE,
        latent="EmptySD3LatentImage", steps=20, cfg=5.0, sampler="euler", scheduler="simple", prompt=PROMPT_REEF,
        negative="blurry, low quality, distorted, ugly, bad anatomy, deformed, poorly drawn", seed=71,
        differs=("KSampler cfg 5 where the template's DualCFGGuider has cfg 5 (text) and 2 (image): text to image "
                 "has no reference image, so the image scale changes nothing.",),
        estimate=Estimate("fits as it is; peak ≈ 12–16 GB VRAM", "15–25 min", "≈ 16–20 GB",
                          "5–8 min (H100) or 9–15 min (A100)")),
    # Newer hosts only (ComfyUI 0.30): tested on that leg, skipped with the reason on 0.3.75.
    FamilyWorkflow(
        file="Ovis-Image 4096x4096 DyPE + SEGA.json", title="Ovis-Image · 4096×4096 · DyPE + SEGA",
        family="ovis_image", template="image_ovis_text_to_image", slug="ovis-image_4096", newer_host=True,
        unet=_file("Comfy-Org/Ovis-Image/resolve/main/split_files/diffusion_models/ovis_image_bf16.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/Ovis-Image/resolve/main/split_files/text_encoders/ovis_2.5.safetensors", "text_encoders"),),
        clip_type="ovis", vae=_AE, latent="EmptySD3LatentImage", shift=("ModelSamplingAuraFlow", 3.0), steps=20,
        cfg=5.0, sampler="euler", scheduler="simple", prompt=PROMPT_LIBRARY, negative="", seed=81,
        estimate=Estimate("set weight_dtype to **fp8_e4m3fn** if it does not fit; peak ≈ 16–20 GB VRAM",
                          "20–35 min", "≈ 22–28 GB", "6–10 min (H100) or 12–20 min (A100)")),
    FamilyWorkflow(
        file="LongCat-Image 4096x4096 DyPE + SEGA.json", title="LongCat-Image · 4096×4096 · DyPE + SEGA",
        family="longcat_image", template="image_longcat_text_to_image", slug="longcat-image_4096", newer_host=True,
        unet=_file("Comfy-Org/LongCat-Image/resolve/main/split_files/diffusion_models/longcat_image_bf16.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_QWEN25_VL_FP8,), clip_type="longcat_image", vae=_AE,
        latent="EmptySD3LatentImage", steps=20, cfg=4.0, sampler="euler", scheduler="simple", prompt=PROMPT_TIGER,
        negative="blurry, low resolution, oversaturated, harsh lighting, messy composition, distorted face, "
        "watermark, text, logo", seed=91,
        differs=("The template's FluxGuidance nodes left out: LongCat-Image drops the guidance value (ComfyUI's "
                 "model ignores it).",
                 "The template's CFGNorm left out: plain cfg 4, so the graph runs on every host that has the "
                 "model; add it back between the loader and DyPE if you prefer it."),
        estimate=Estimate("fits as it is (fp8_e4m3fn if tight); peak ≈ 16–20 GB VRAM", "18–30 min",
                          "≈ 20–26 GB", "5–9 min (H100) or 11–18 min (A100)")),
    FamilyWorkflow(
        file="Krea-2-Turbo 4096x4096 DyPE + SEGA.json", title="Krea 2 Turbo · 4096×4096 · DyPE + SEGA",
        family="krea2", template="image_krea2_turbo_t2i", slug="krea-2-turbo_4096", newer_host=True,
        unet=_file("Comfy-Org/Krea-2/resolve/main/diffusion_models/krea2_turbo_fp8_scaled.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/Krea-2/resolve/main/text_encoders/qwen3vl_4b_fp8_scaled.safetensors", "text_encoders"),),
        clip_type="krea2", vae=_QWEN_VAE, latent="EmptyLatentImage", steps=8, cfg=1.0, sampler="euler",
        scheduler="simple", prompt=PROMPT_FOREST, negative=None, seed=101,
        differs=("The template's LoRA and prompt-enhancer (TextGenerate) are left out: plain text to image.",),
        variant="Krea 2 Turbo (2048x2048)",
        remarks=("Both nodes name the checkpoint (variant **Krea 2 Turbo**: 1k to 2k, krea-ai/krea-2 README), so "
                 "4096² is 2× per side. For **Krea 2 Raw** (up to 1k) pick its variant on both nodes.",),
        estimate=Estimate("the fp8 file fits; peak ≈ 14–20 GB VRAM (a model no larger than Flux.1 assumed: "
                          "ComfyUI's code does not state its size)", "7–12 min", "≈ 18–26 GB",
                          "2–4 min (H100) or 4–7 min (A100)")),
    FamilyWorkflow(
        file="Mage-Flow 4096x4096 DyPE + SEGA.json", title="Mage-Flow · 4096×4096 · DyPE + SEGA",
        family="mage_flow", template="image_mage_flow_t2i_int8", slug="mage-flow_4096", newer_host=True,
        unet=_file("Comfy-Org/Mage-Flow/resolve/main/diffusion_models/mage_flow_int8_convrot.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/Mage-Flow/resolve/main/text_encoders/qwen3vl_4b_bf16.safetensors", "text_encoders"),),
        clip_type="mage", vae=_file("Comfy-Org/Mage-Flow/resolve/main/vae/mage_flow_vae_bf16.safetensors", "vae"),
        latent="EmptyFlux2LatentImage", steps=30, cfg=5.0, sampler="euler", scheduler="simple",
        prompt=PROMPT_HARBOUR, negative=" ", seed=111,
        differs=("CLIP Text Encode + Empty Flux 2 Latent where the template uses TextEncodeMageFlowEdit: without "
                 "reference images that node is exactly these two (the prompt, a \" \" negative, a 128-channel "
                 "latent at 1/16).",),
        estimate=Estimate("the int8 file fits; peak ≈ 16–22 GB VRAM (a model no larger than Flux.1 assumed: "
                          "ComfyUI's code does not state its size)", "50–85 min", "≈ 22–30 GB",
                          "15–25 min (H100) or 30–50 min (A100)")),
    FamilyWorkflow(
        file="Lens 4096x4096 DyPE + SEGA.json", title="Lens · 4096×4096 · DyPE + SEGA", family="lens",
        template="image_lens_t2i", slug="lens_4096", newer_host=True,
        unet=_file("Comfy-Org/Lens/resolve/main/diffusion_models/lens_bf16.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/Lens/resolve/main/text_encoders/gpt_oss_20b_nvfp4.safetensors", "text_encoders"),),
        clip_type="lens", vae=_FLUX2_VAE, latent="EmptyLatentImage", steps=20, cfg=5.0, sampler="euler",
        scheduler="simple", prompt=PROMPT_FOREST, negative="", seed=121,
        differs=("KSampler where the template uses SamplerCustom: the same sampler, scheduler, steps and cfg.",
                 "ModelSamplingFlux left out: " + _NO_SHIFT_NODE + " (μ 1.829, ComfyUI's value for 1440²).",
                 "The template's CFGNorm left out: plain cfg 5; add it back between the loader and DyPE if you "
                 "prefer it."),
        remarks=("ComfyUI's Lens templates are 'the Lens 1440 base-resolution workflow family': the pack's base "
                 "for Lens is 1440².",),
        estimate=Estimate("set weight_dtype to **fp8_e4m3fn**; peak ≈ 18–23 GB VRAM (a model no larger than "
                          "Flux.1 assumed: ComfyUI's code does not state its size)", "35–60 min",
                          "≈ 26–34 GB", "10–16 min (H100) or 20–32 min (A100)")),
    FamilyWorkflow(
        file="Boogu-Image-Turbo 4096x4096 DyPE + SEGA.json", title="Boogu-Image Turbo · 4096×4096 · DyPE + SEGA",
        family="boogu", template="image_boogu_image_0_1_turbo_t2i", slug="boogu-image-turbo_4096", newer_host=True,
        unet=_file("Comfy-Org/Boogu-Image/resolve/main/diffusion_models/boogu_image_turbo_fp8_scaled.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "Comfy-Org/Boogu-Image/resolve/main/text_encoders/qwen3vl_8b_fp8_scaled.safetensors", "text_encoders"),),
        clip_type="boogu", vae=_AE, latent="EmptyLatentImage", steps=4, cfg=1.0, sampler="lcm",
        scheduler="sgm_uniform", prompt=PROMPT_REEF, negative=None, seed=131,
        estimate=Estimate("the fp8 file fits; peak ≈ 12–18 GB VRAM", "3–6 min", "≈ 16–22 GB",
                          "1–2 min (H100) or 2–3 min (A100)")),
    FamilyWorkflow(
        file="Z-Image pixel space 4096x4096 DyPE + SEGA.json",
        title="Z-Image pixel space (Zeta-Chroma) · 4096×4096 · DyPE + SEGA", family="z_image_pixel",
        template="no official template or Comfy-Org repackage: the checkpoint of lodestones/Zeta-Chroma (the "
                 "pixel-space Z-Image ComfyUI loads as ZImagePixelSpace), Z-Image's qwen_3_4b text encoder; "
                 "25 steps, cfg 4 and the er_sde sampler as its published examples", slug="z-image-pixel_4096",
        newer_host=True,
        unet=_file("lodestones/Zeta-Chroma/resolve/main/zeta-chroma-base-x0-pixel-dino-distance.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_QWEN3_4B,), clip_type="lumina2", vae=None,
        latent="EmptyChromaRadianceLatentImage", steps=25, cfg=4.0, sampler="er_sde", scheduler="simple",
        prompt=PROMPT_LIBRARY, negative="low quality, worst quality, blurry, deformed", seed=141,
        differs=("VAE Decode, not Tiled: pixel space has no VAE to tile (the decode is a copy).",),
        remarks=("A work-in-progress community checkpoint (lodestones), not a Comfy-Org file: check its model "
                 "card for the current file name.",),
        estimate=Estimate("fits as it is (fp8_e4m3fn if tight); peak ≈ 16–20 GB VRAM", "3–8 min", "≈ 18–24 GB",
                          "1–2 min (H100) or 2–4 min (A100); 4× that if the checkpoint uses 16-px patches")),
    FamilyWorkflow(
        file="Kandinsky-5.0-T2I-Lite 4096x4096 DyPE + SEGA.json",
        title="Kandinsky 5.0 Image Lite · 4096×4096 · DyPE + SEGA", family="kandinsky5_image",
        template="image_kandinsky5_t2i", slug="kandinsky5-t2i-lite_4096", newer_host=True,
        unet=_file("kandinskylab/Kandinsky-5.0-T2I-Lite/resolve/main/model/kandinsky5lite_t2i.safetensors",
                   "diffusion_models"),
        clip_loader="DualCLIPLoader", clip_files=(_QWEN25_VL_FP8, ModelFile(
            "clip_l.safetensors", "text_encoders",
            "https://huggingface.co/comfyanonymous/flux_text_encoders/resolve/main/clip_l.safetensors")),
        clip_type="kandinsky5_image", vae=_AE, latent="EmptyLatentImage", steps=50, cfg=3.5, sampler="euler",
        scheduler="simple", prompt=PROMPT_MARKET, negative="", seed=151, shift=("ModelSamplingSD3", 3.0),
        remarks=("Kandinsky 5 Image is trained at 1K in several aspect ratios up to 1408×640 (its pipeline's "
                 "sizes), so the pack's base is 1408 and 4096² is 2.9× per side. The Kandinsky 5 *video* models "
                 "interpolate their own positions and are refused.",),
        estimate=Estimate("set weight_dtype to **fp8_e4m3fn** if it does not fit (the file is 11 GB); peak ≈ "
                          "14–20 GB VRAM", "45–75 min", "≈ 18–26 GB", "12–20 min (H100) or 25–40 min (A100)")),
    FamilyWorkflow(
        file="Anima-Base-v1.0 4096x4096 DyPE + SEGA.json", title="Anima Base v1.0 · 4096×4096 · DyPE + SEGA",
        family="anima", template="image_anima_base_v1", slug="anima-base-v1_4096", newer_host=True,
        unet=_file("circlestone-labs/Anima/resolve/main/split_files/diffusion_models/anima-base-v1.0.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(_file(
            "circlestone-labs/Anima/resolve/main/split_files/text_encoders/qwen_3_06b_base.safetensors",
            "text_encoders"),),
        clip_type="stable_diffusion", vae=_QWEN_VAE, latent="EmptyLatentImage", steps=30, cfg=4.0,
        sampler="euler", scheduler="simple",
        prompt="masterpiece, best quality, anime illustration, a sprawling floating city above the clouds at "
        "sunset, countless tiny windows and bridges, airships, a girl with a red scarf on a balcony in the "
        "foreground, wind, detailed background, wide shot",
        negative="worst quality, low quality, score_1, score_2, score_3, blurry, jpeg artifacts, sepia", seed=161,
        differs=("The template's Turbo LoRA switch is left out (off there too): the base model at 30 steps.",
                 "ResolutionSelector left out: the latent's size is set directly."),
        remarks=("Anima is a Cosmos-Predict2 2B model: its rotary table comes from Cosmos' own module, which the "
                 "pack replaces as a whole (rows and columns scheduled, time untouched). That table is shared by "
                 "every image of a batch, so SEGA needs batch size 1 here (DyPE alone takes any batch).",
                 "The pack takes Anima as trained at 1024² (the template's size; about 1 MP per its model card): "
                 "for a non-square 1 MP size, set base_resolution to its long side."),
        estimate=Estimate("fits as it is (a 2B model, 3.9 GB); peak ≈ 8–14 GB VRAM", "12–22 min", "≈ 10–16 GB",
                          "4–7 min (H100) or 8–14 min (A100)")),
)
