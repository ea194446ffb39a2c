"""What an image family's example workflow is made of (``FamilyWorkflow``), and the model files, prompts and
reasons several families share. The families themselves: image_families.py and image_families_newer.py."""

from __future__ import annotations

from dataclasses import dataclass, field

HF = "https://huggingface.co"
AE = f"{HF}/Comfy-Org/Lumina_Image_2.0_Repackaged/resolve/main/split_files/vae/ae.safetensors"  # the one ae link


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


def hf_file(repo_path: str, folder: str) -> ModelFile:
    return ModelFile(repo_path.rsplit("/", 1)[-1], folder, f"{HF}/{repo_path}")


T5_FP8 = hf_file("comfyanonymous/flux_text_encoders/resolve/main/t5xxl_fp8_e4m3fn_scaled.safetensors",
                "text_encoders")
QWEN3_4B = hf_file("Comfy-Org/z_image_turbo/resolve/main/split_files/text_encoders/qwen_3_4b.safetensors",
                  "text_encoders")
FLUX2_VAE = hf_file("Comfy-Org/flux2-dev/resolve/main/split_files/vae/flux2-vae.safetensors", "vae")
AE_VAE = ModelFile("ae.safetensors", "vae", AE)
QWEN_VAE = hf_file("Comfy-Org/Qwen-Image_ComfyUI/resolve/main/split_files/vae/qwen_image_vae.safetensors", "vae")
QWEN25_VL_FP8 = hf_file("Comfy-Org/Qwen-Image_ComfyUI/resolve/main/split_files/text_encoders/"
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
ZERO_OUT_WHY = "negative = ConditioningZeroOut (cfg 1 never evaluates it), as in the template"
CUSTOM = "KSampler where the template uses SamplerCustomAdvanced: the same sampler, scheduler, steps and cfg"
NO_SHIFT_NODE = ("no resolution-dependent shift node: ComfyUI's fitted shift at 4096² extrapolates far beyond its "
                  "range (nearly every step at sigma ≈ 1); the model's own default shift is used")
