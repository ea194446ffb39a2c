"""HunyuanVideo 1.0 (T2V, I2V, SkyReels I2V): ids (frame, row, col) from 0 in ``x.dtype``, EmbedND(128, 256,
[16, 56, 56]), patch (1, 2, 2) on the 8x VAE (16 px per token). Image tokens come first, then text at 0 on every
column (never moved). The I2V ``ref_latent`` is prepended at frame -1 with its columns shifted by the width: it
shares the columns' schedule and never changes the scale, which is the generated latent's. Column 0 is time and
keeps the model's own frequencies (the spatial-only rule, nodes/rope_patch/spatial_only.py).

Trained sizes are (rows, cols) landscape, compared with the latent in its own orientation (base.py). Where a
family documents several aspect ratios per class, the class's size is the per-axis maximum over them, so none of
them is rescaled (HunyuanVideo 720p: 1280x720, 1104x832 and 960x960 give 1280 x 960).
"""

from .base import FamilyAdapter, TokenEmbedding, Variant

_HY_README = "Tencent-Hunyuan/HunyuanVideo README, supported resolutions"
_HY15 = "Tencent-Hunyuan/HunyuanVideo-1.5 README (480p and 720p checkpoints)"

HUNYUAN_VIDEO = FamilyAdapter(
    name="hunyuan_video",
    video=True,
    display_name="HunyuanVideo 1.0 (T2V, I2V)",
    model_base_classes=frozenset({"HunyuanVideo", "HunyuanVideoI2V", "HunyuanVideoSkyreelsI2V"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.img_in.proj", "conv"),
    px_per_token=16,
    default_base_px=1280,
    default_base_hw=(960, 1280),
    trained_sizes=((960, 1280), (720, 960)),
    base_source=f"{_HY_README}: 720p (recommended) 1280x720, 1104x832, 960x960 (and portrait): per axis 1280 x "
    "960; 540p 960x544, 832x624, 720x720: 960 x 720 (base_resolution 960)",
    theta=256.0,
    axes_dim=(16, 56, 56),
    preview_shift=("linear", 7.0),
)

#: HunyuanVideo 1.5: the same DiT class and ids with patch (1, 1, 1) on a 32-channel 16x VAE (16 px per token);
#: text, byT5 and vision tokens sit at 0. Two checkpoints per task share one architecture: 720p (the default, the
#: larger) and 480p (the ``variant``, or base_resolution 848). The super-resolution model is refused (registry).
HUNYUAN_VIDEO15 = FamilyAdapter(
    name="hunyuan_video15",
    video=True,
    display_name="HunyuanVideo 1.5 (T2V, I2V; 480p / 720p)",
    model_base_classes=frozenset({"HunyuanVideo15"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=1,
    token_embedding=TokenEmbedding("diffusion_model.img_in.proj", "conv"),
    px_per_token=16,
    default_base_px=1280,
    default_base_hw=(720, 1280),
    trained_sizes=((720, 1280), (480, 848)),
    base_source=f"{_HY15}; the 16:9 sizes 1280x720 and 848x480 (ComfyUI's EmptyHunyuanVideo15Latent default; "
    "template video_hunyuan_video_1.5_720p_t2v 1280x720)",
    variants=(Variant("HunyuanVideo 1.5 720p", (720, 1280), _HY15), Variant("HunyuanVideo 1.5 480p", (480, 848), _HY15)),
    theta=256.0,
    axes_dim=(16, 56, 56),
    preview_shift=("linear", 7.0),
)
