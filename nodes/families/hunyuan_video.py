"""HunyuanVideo 1.0 (T2V, I2V, SkyReels I2V): ids (frame, row, col) from 0 in ``x.dtype``, EmbedND(128, 256,
[16, 56, 56]), patch (1, 2, 2) on the 8x VAE (16 px per token). Image tokens come first, then text at 0 on every
column (never moved). The I2V ``ref_latent`` is prepended at frame -1 with its columns shifted by the width: it
shares the columns' schedule and never changes the scale, which is the generated latent's. Column 0 is time and
keeps the model's own frequencies.
"""

from .base import FamilyAdapter, TokenEmbedding

HUNYUAN_VIDEO = FamilyAdapter(
    name="hunyuan_video",
    display_name="HunyuanVideo 1.0 (T2V, I2V)",
    model_base_classes=frozenset({"HunyuanVideo", "HunyuanVideoI2V", "HunyuanVideoSkyreelsI2V"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.img_in.proj", "conv"),
    px_per_token=16,
    default_base_px=1280,
    default_base_hw=(720, 1280),
    trained_sizes=((720, 1280), (544, 960)),
    base_source="HunyuanVideo model card: 720p (1280x720), also 540p (960x544) (INFERRED)",
    theta=256.0,
    axes_dim=(16, 56, 56),
    text="text ids 0 (never moved), after the video tokens; time on column 0 (never scaled)",
    preview_shift=("linear", 7.0),
)

#: HunyuanVideo 1.5: the same DiT class and ids with patch (1, 1, 1) on a 32-channel 16x VAE (16 px per token);
#: text, byT5 and vision tokens sit at 0. Two checkpoints per task share one architecture: 480p (ComfyUI's latent
#: node default, 848x480) and 720p (set base_resolution 1280). The super-resolution model is refused (registry).
HUNYUAN_VIDEO15 = FamilyAdapter(
    name="hunyuan_video15",
    display_name="HunyuanVideo 1.5 (T2V, I2V; 480p / 720p)",
    model_base_classes=frozenset({"HunyuanVideo15"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=1,
    token_embedding=TokenEmbedding("diffusion_model.img_in.proj", "conv"),
    px_per_token=16,
    default_base_px=848,
    default_base_hw=(480, 848),
    trained_sizes=((480, 848), (720, 1280)),
    base_source="EmptyHunyuanVideo15Latent default 848x480; 720p checkpoints 1280x720",
    theta=256.0,
    axes_dim=(16, 56, 56),
    text="text / byT5 / vision ids 0 (never moved), after the video tokens; time on column 0 (never scaled)",
    preview_shift=("linear", 7.0),
)
