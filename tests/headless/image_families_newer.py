"""The image families whose models only ComfyUI 0.30 and later runs (Ovis-Image, LongCat-Image, Krea 2, Mage-Flow,
Lens, Boogu, Z-Image pixel space, Kandinsky 5.0 Image, Anima): their example workflows' data, as in
image_families.py (which lists them after its own in ``SPECS``)."""

from __future__ import annotations

from .family_spec import (
    AE_VAE,
    FLUX2_VAE,
    NO_SHIFT_NODE,
    PROMPT_FOREST,
    PROMPT_HARBOUR,
    PROMPT_LIBRARY,
    PROMPT_MARKET,
    PROMPT_REEF,
    PROMPT_TIGER,
    QWEN3_4B,
    QWEN25_VL_FP8,
    QWEN_VAE,
    Estimate,
    FamilyWorkflow,
    ModelFile,
    hf_file,
)

NEWER_SPECS: tuple[FamilyWorkflow, ...] = (
    FamilyWorkflow(
        file="Ovis-Image 4096x4096 DyPE + SEGA.json", title="Ovis-Image · 4096×4096 · DyPE + SEGA",
        family="ovis_image", template="image_ovis_text_to_image", slug="ovis-image_4096", newer_host=True,
        unet=hf_file("Comfy-Org/Ovis-Image/resolve/main/split_files/diffusion_models/ovis_image_bf16.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/Ovis-Image/resolve/main/split_files/text_encoders/ovis_2.5.safetensors", "text_encoders"),),
        clip_type="ovis", vae=AE_VAE, latent="EmptySD3LatentImage", shift=("ModelSamplingAuraFlow", 3.0), steps=20,
        cfg=5.0, sampler="euler", scheduler="simple", prompt=PROMPT_LIBRARY, negative="", seed=81,
        estimate=Estimate("set weight_dtype to **fp8_e4m3fn** if it does not fit; peak ≈ 16–20 GB VRAM",
                          "20–35 min", "≈ 22–28 GB", "6–10 min (H100) or 12–20 min (A100)")),
    FamilyWorkflow(
        file="LongCat-Image 4096x4096 DyPE + SEGA.json", title="LongCat-Image · 4096×4096 · DyPE + SEGA",
        family="longcat_image", template="image_longcat_text_to_image", slug="longcat-image_4096", newer_host=True,
        unet=hf_file("Comfy-Org/LongCat-Image/resolve/main/split_files/diffusion_models/longcat_image_bf16.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(QWEN25_VL_FP8,), clip_type="longcat_image", vae=AE_VAE,
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
        unet=hf_file("Comfy-Org/Krea-2/resolve/main/diffusion_models/krea2_turbo_fp8_scaled.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/Krea-2/resolve/main/text_encoders/qwen3vl_4b_fp8_scaled.safetensors", "text_encoders"),),
        clip_type="krea2", vae=QWEN_VAE, latent="EmptyLatentImage", steps=8, cfg=1.0, sampler="euler",
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
        unet=hf_file("Comfy-Org/Mage-Flow/resolve/main/diffusion_models/mage_flow_int8_convrot.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/Mage-Flow/resolve/main/text_encoders/qwen3vl_4b_bf16.safetensors", "text_encoders"),),
        clip_type="mage", vae=hf_file("Comfy-Org/Mage-Flow/resolve/main/vae/mage_flow_vae_bf16.safetensors", "vae"),
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
        unet=hf_file("Comfy-Org/Lens/resolve/main/diffusion_models/lens_bf16.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/Lens/resolve/main/text_encoders/gpt_oss_20b_nvfp4.safetensors", "text_encoders"),),
        clip_type="lens", vae=FLUX2_VAE, latent="EmptyLatentImage", steps=20, cfg=5.0, sampler="euler",
        scheduler="simple", prompt=PROMPT_FOREST, negative="", seed=121,
        differs=("KSampler where the template uses SamplerCustom: the same sampler, scheduler, steps and cfg.",
                 "ModelSamplingFlux left out: " + NO_SHIFT_NODE + " (μ 1.829, ComfyUI's value for 1440²).",
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
        unet=hf_file("Comfy-Org/Boogu-Image/resolve/main/diffusion_models/boogu_image_turbo_fp8_scaled.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/Boogu-Image/resolve/main/text_encoders/qwen3vl_8b_fp8_scaled.safetensors", "text_encoders"),),
        clip_type="boogu", vae=AE_VAE, latent="EmptyLatentImage", steps=4, cfg=1.0, sampler="lcm",
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
        unet=hf_file("lodestones/Zeta-Chroma/resolve/main/zeta-chroma-base-x0-pixel-dino-distance.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(QWEN3_4B,), clip_type="lumina2", vae=None,
        latent="EmptyChromaRadianceLatentImage", steps=25, cfg=4.0, sampler="er_sde", scheduler="simple",
        prompt=PROMPT_LIBRARY, negative="low quality, worst quality, blurry, deformed", seed=141,
        differs=("VAE Decode, not Tiled: pixel space has no VAE to tile (the decode is a copy).",),
        remarks=("A work-in-progress community checkpoint (lodestones), not a Comfy-Org file: check its model "
                 "card for the current file name.",),
        estimate=Estimate("fits as it is (fp8_e4m3fn if tight); peak ≈ 16–20 GB VRAM", "3–8 min", "≈ 18–24 GB",
                          "1–2 min (H100) or 2–4 min (A100); 4× that if the checkpoint uses 16-px patches")),
    FamilyWorkflow(
        file="Kandinsky-5.0-T2I-Lite 4096x4096 DyPE + SEGA.json",
        title="Kandinsky 5.0 T2I Lite · 4096×4096 · DyPE + SEGA", family="kandinsky5_image",
        template="image_kandinsky5_t2i", slug="kandinsky5-t2i-lite_4096", newer_host=True,
        unet=hf_file("kandinskylab/Kandinsky-5.0-T2I-Lite/resolve/main/model/kandinsky5lite_t2i.safetensors",
                   "diffusion_models"),
        clip_loader="DualCLIPLoader", clip_files=(QWEN25_VL_FP8, ModelFile(
            "clip_l.safetensors", "text_encoders",
            "https://huggingface.co/comfyanonymous/flux_text_encoders/resolve/main/clip_l.safetensors")),
        clip_type="kandinsky5_image", vae=AE_VAE, latent="EmptyLatentImage", steps=50, cfg=3.5, sampler="euler",
        scheduler="simple", prompt=PROMPT_MARKET, negative="", seed=151, shift=("ModelSamplingSD3", 3.0),
        remarks=("Kandinsky 5 Image is trained at 1K in several aspect ratios up to 1408×640 (its pipeline's "
                 "sizes), so the pack's base is 1408 and 4096² is 2.9× per side. The Kandinsky 5 *video* models "
                 "interpolate their own positions and are refused.",),
        estimate=Estimate("set weight_dtype to **fp8_e4m3fn** if it does not fit (the file is 11 GB); peak ≈ "
                          "14–20 GB VRAM", "45–75 min", "≈ 18–26 GB", "12–20 min (H100) or 25–40 min (A100)")),
    FamilyWorkflow(
        file="Anima-Base-v1.0 4096x4096 DyPE + SEGA.json", title="Anima Base v1.0 · 4096×4096 · DyPE + SEGA",
        family="anima", template="image_anima_base_v1", slug="anima-base-v1_4096", newer_host=True,
        unet=hf_file("circlestone-labs/Anima/resolve/main/split_files/diffusion_models/anima-base-v1.0.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "circlestone-labs/Anima/resolve/main/split_files/text_encoders/qwen_3_06b_base.safetensors",
            "text_encoders"),),
        clip_type="stable_diffusion", vae=QWEN_VAE, latent="EmptyLatentImage", steps=30, cfg=4.0,
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
