"""One example workflow per image family the pack supports beyond Flux.1 and Qwen-Image: the data each graph and its
note are built from (tests/headless/make_workflows.py builds them, notes.py writes the notes).

Model files, loader types, download links and sampler settings are those of ComfyUI's official template for the
model (PyPI ``comfyui-workflow-templates-json`` 0.1.123, named in ``template``). Where no official template exists
(Lumina-Image 2.0, HunyuanImage 2.1, Z-Image pixel space) the files are the repackaged ones of the named repository
and the note says so. Graphs use KSampler where the template uses SamplerCustomAdvanced (same sampler, scheduler,
steps and cfg); each deliberate difference is a line of ``differs``, shown in the note.
"""

from __future__ import annotations

from .family_spec import (
    AE_VAE,
    CHROMA_NEGATIVE,
    CUSTOM,
    FLUX2_VAE,
    LUMINA_SYSTEM,
    NO_SHIFT_NODE,
    PROMPT_FOREST,
    PROMPT_HARBOUR,
    PROMPT_LIBRARY,
    PROMPT_MARKET,
    PROMPT_REEF,
    PROMPT_TIGER,
    QWEN3_4B,
    T5_FP8,
    Estimate,
    FamilyWorkflow,
    hf_file,
)
from .image_families_newer import NEWER_SPECS

SPECS: tuple[FamilyWorkflow, ...] = (
    FamilyWorkflow(
        file="Chroma1-HD 4096x4096 DyPE + SEGA.json", title="Chroma1-HD · 4096×4096 · DyPE + SEGA", family="chroma",
        template="image_chroma_text_to_image", slug="chroma1-hd_4096",
        unet=hf_file("Comfy-Org/Chroma1-HD_repackaged/resolve/main/split_files/diffusion_models/"
                   "Chroma1-HD-fp8mixed.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(T5_FP8,), clip_type="chroma", vae=AE_VAE, latent="EmptySD3LatentImage",
        shift=("ModelSamplingAuraFlow", 1.0), t5_options=True, steps=26, cfg=3.5, sampler="euler",
        scheduler="beta", prompt=PROMPT_TIGER, negative=CHROMA_NEGATIVE, seed=11,
        differs=(CUSTOM + " (CFGGuider 3.5, BasicScheduler beta 26).",),
        variant="Chroma1-HD (1024x1024)",
        remarks=("Both nodes name the checkpoint (variant **Chroma1-HD**, 1024²). For **Chroma1-Base** (trained at "
                 "512²) pick its variant on both nodes.",),
        estimate=Estimate("the fp8mixed file fits as it is; peak ≈ 16–20 GB VRAM", "40–65 min",
                          "≈ 20–26 GB", "12–20 min (H100) or 24–40 min (A100)")),
    FamilyWorkflow(
        file="Chroma1-Radiance 4096x4096 DyPE + SEGA.json", title="Chroma1-Radiance · 4096×4096 · DyPE + SEGA",
        family="chroma_radiance", template="image_chroma1_radiance_text_to_image", slug="chroma1-radiance_4096",
        unet=hf_file("Comfy-Org/Chroma1-Radiance_Repackaged/resolve/main/split_files/diffusion_models/"
                   "chroma-radiance-x0.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(T5_FP8,), clip_type="chroma", vae=None,
        latent="EmptyChromaRadianceLatentImage", shift=("ModelSamplingAuraFlow", 1.0), t5_options=True, steps=30,
        cfg=3.5, sampler="euler", scheduler="beta", prompt=PROMPT_REEF, negative=CHROMA_NEGATIVE, seed=12,
        differs=(CUSTOM + "; KSampler's beta scheduler (α = β = 0.6) where the template's BetaSamplingScheduler "
                 "uses 0.4 / 0.4.",
                 "ChromaRadianceOptions left out (its defaults change nothing here).",
                 "VAE Decode, not Tiled: pixel space has no VAE to tile (the decode is a copy)."),
        estimate=Estimate("set weight_dtype to **fp8_e4m3fn** (the file is bf16, 17.8 GB); peak ≈ 18–22 GB VRAM",
                          "45–75 min", "≈ 28–36 GB", "14–22 min (H100) or 28–45 min (A100)")),
    FamilyWorkflow(
        file="FLUX.2-dev 4096x4096 DyPE + SEGA.json", title="FLUX.2 [dev] · 4096×4096 · DyPE + SEGA",
        family="flux2", template="image_flux2_text_to_image", slug="flux2-dev_4096",
        unet=hf_file("Comfy-Org/flux2-dev/resolve/main/split_files/diffusion_models/flux2_dev_fp8mixed.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/flux2-dev/resolve/main/split_files/text_encoders/mistral_3_small_flux2_bf16.safetensors",
            "text_encoders"),), clip_type="flux2", vae=FLUX2_VAE, latent="EmptyFlux2LatentImage", guidance=4.0,
        steps=20, cfg=1.0, sampler="euler", scheduler="simple", prompt=PROMPT_MARKET, negative=None, seed=21,
        differs=(CUSTOM + " (BasicGuider, FluxGuidance 4, euler, 20 steps).",
                 "Flux2Scheduler left out: " + NO_SHIFT_NODE + " (μ 2.02, what Flux2Scheduler gives near 1024²).",
                 "VAE **flux2-vae.safetensors** (Comfy-Org/flux2-dev, as the FLUX.2 fp8 template) instead of the "
                 "t2i template's full_encoder_small_decoder from black-forest-labs: same latent space."),
        remarks=("Turbo LoRA and reference images of the template are left out: plain text to image.",),
        estimate=Estimate("the 35 GB fp8 model does not fit; ComfyUI offloads part of it to system RAM (96 GB "
                          "recommended); peak ≈ 23 GB VRAM", "60–120 min",
                          "≈ 45–55 GB", "11–18 min (H100) or 22–36 min (A100)")),
    FamilyWorkflow(
        file="FLUX.2-klein-4B 4096x4096 DyPE + SEGA.json", title="FLUX.2 [klein] 4B · 4096×4096 · DyPE + SEGA",
        family="flux2", template="image_flux2_klein_text_to_image (distilled 4B)", slug="flux2-klein-4b_4096",
        unet=hf_file("Comfy-Org/flux2-klein/resolve/main/split_files/diffusion_models/flux-2-klein-4b.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/flux2-klein/resolve/main/split_files/text_encoders/qwen_3_4b.safetensors", "text_encoders"),),
        clip_type="flux2", vae=FLUX2_VAE, latent="EmptyFlux2LatentImage", steps=4, cfg=1.0, sampler="euler",
        scheduler="simple", prompt=PROMPT_HARBOUR, negative=None, seed=22, newer_host=True,
        differs=(CUSTOM + " (CFGGuider 1, euler, 4 steps).",
                 "Flux2Scheduler left out: " + NO_SHIFT_NODE + "."),
        remarks=("Klein is a Flux.2 model (same adapter: nothing in the model tells them apart, and no size of "
                 "Klein's own was found, so it gets FLUX.2's 2048²). The 9B and the base (undistilled) "
                 "models load in the same graph: ComfyUI's Klein base templates sample 20 steps at cfg 5. Klein's "
                 "Qwen3 text encoder came after ComfyUI 0.3.75.",),
        estimate=Estimate("fits as it is; peak ≈ 12–16 GB VRAM", "2–4 min", "≈ 14–18 GB",
                          "0.5–1 min (H100) or 1–2 min (A100)")),
    FamilyWorkflow(
        file="Z-Image-Turbo 4096x4096 DyPE + SEGA.json", title="Z-Image-Turbo · 4096×4096 · DyPE + SEGA",
        family="z_image", template="image_z_image_turbo", slug="z-image-turbo_4096",
        unet=hf_file("Comfy-Org/z_image_turbo/resolve/main/split_files/diffusion_models/z_image_turbo_bf16.safetensors",
                   "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(QWEN3_4B,), clip_type="lumina2", vae=AE_VAE,
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
        unet=hf_file("Comfy-Org/Lumina_Image_2.0_Repackaged/resolve/main/split_files/diffusion_models/"
                   "lumina_2_model_bf16.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/Lumina_Image_2.0_Repackaged/resolve/main/split_files/text_encoders/gemma_2_2b_fp16.safetensors",
            "text_encoders"),), clip_type="lumina2", vae=AE_VAE, latent="EmptySD3LatentImage",
        shift=("ModelSamplingAuraFlow", 4.0), steps=30, cfg=4.0, sampler="res_multistep", scheduler="simple",
        prompt=LUMINA_SYSTEM + PROMPT_FOREST, negative="You are an assistant designed to generate low-quality "
        "images based on textual prompts <Prompt Start> blurry, worst quality, low quality, jpeg artifacts", seed=41,
        remarks=("Lumina 2 is prompted like an LLM: both prompts start with its system line and <Prompt Start>.",),
        estimate=Estimate("fits as it is; peak ≈ 10–14 GB VRAM", "15–25 min", "≈ 12–16 GB",
                          "5–8 min (H100) or 9–15 min (A100)")),
    FamilyWorkflow(
        file="HiDream-I1-Dev 4096x4096 DyPE + SEGA.json", title="HiDream-I1 Dev · 4096×4096 · DyPE + SEGA",
        family="hidream", template="hidream_i1_dev", slug="hidream-i1-dev_4096",
        unet=hf_file("Comfy-Org/HiDream-I1_ComfyUI/resolve/main/split_files/diffusion_models/"
                   "hidream_i1_dev_fp8.safetensors", "diffusion_models"),
        clip_loader="QuadrupleCLIPLoader", clip_files=tuple(hf_file(
            f"Comfy-Org/HiDream-I1_ComfyUI/resolve/main/split_files/text_encoders/{name}", "text_encoders")
            for name in ("clip_l_hidream.safetensors", "clip_g_hidream.safetensors",
                         "t5xxl_fp8_e4m3fn_scaled.safetensors", "llama_3.1_8b_instruct_fp8_scaled.safetensors")),
        clip_type=None, vae=AE_VAE, latent="EmptySD3LatentImage", shift=("ModelSamplingSD3", 6.0), steps=28, cfg=1.0,
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
        unet=hf_file("Comfy-Org/HunyuanImage_2.1_ComfyUI/resolve/main/split_files/diffusion_models/"
                   "hunyuanimage2.1_bf16.safetensors", "diffusion_models"),
        clip_loader="DualCLIPLoader", clip_files=tuple(hf_file(
            f"Comfy-Org/HunyuanImage_2.1_ComfyUI/resolve/main/split_files/text_encoders/{name}", "text_encoders")
            for name in ("qwen_2.5_vl_7b.safetensors", "byt5_small_glyphxl_fp16.safetensors")),
        clip_type="hunyuan_image", vae=hf_file("Comfy-Org/HunyuanImage_2.1_ComfyUI/resolve/main/split_files/vae/"
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
        unet=hf_file("Comfy-Org/Omnigen2_ComfyUI_repackaged/resolve/main/split_files/diffusion_models/"
                   "omnigen2_fp16.safetensors", "diffusion_models"),
        clip_loader="CLIPLoader", clip_files=(hf_file(
            "Comfy-Org/Omnigen2_ComfyUI_repackaged/resolve/main/split_files/text_encoders/"
            "qwen_2.5_vl_fp16.safetensors", "text_encoders"),), clip_type="omnigen2", vae=AE_VAE,
        latent="EmptySD3LatentImage", steps=20, cfg=5.0, sampler="euler", scheduler="simple", prompt=PROMPT_REEF,
        negative="blurry, low quality, distorted, ugly, bad anatomy, deformed, poorly drawn", seed=71,
        differs=("KSampler cfg 5 where the template's DualCFGGuider has cfg 5 (text) and 2 (image): text to image "
                 "has no reference image, so the image scale changes nothing.",),
        estimate=Estimate("fits as it is; peak ≈ 12–16 GB VRAM", "15–25 min", "≈ 16–20 GB",
                          "5–8 min (H100) or 9–15 min (A100)")),
    # Newer hosts only (ComfyUI 0.30): tested on that leg, skipped with the reason on 0.3.75.
    *NEWER_SPECS,
)
