"""The tiny models' configs (families.md §5): ComfyUI's own ``supported_models`` class and a ``unet_config`` per family,
production RoPE layout (head dim 128, the real axes split and theta), tiny width and depth. tiny_models.py builds them."""

from __future__ import annotations

from typing import Any

FLUX_CONFIG: dict[str, Any] = dict(
    image_model="flux", in_channels=16, out_channels=16, vec_in_dim=32, context_in_dim=32, hidden_size=256,
    mlp_ratio=2.0, num_heads=2, depth=1, depth_single_blocks=1, axes_dim=[16, 56, 56], theta=10000,
    patch_size=2, qkv_bias=True, guidance_embed=True,
)
QWEN_CONFIG: dict[str, Any] = dict(
    image_model="qwen_image", in_channels=64, out_channels=16, num_layers=1, attention_head_dim=128,
    num_attention_heads=2, joint_attention_dim=32, axes_dims_rope=[16, 56, 56],
)
TEXT_WIDTH = 32
_CHROMA_CONFIG: dict[str, Any] = dict(
    image_model="chroma", in_channels=64, out_channels=64, context_in_dim=32, hidden_size=256, mlp_ratio=2.0,
    num_heads=2, depth=1, depth_single_blocks=1, axes_dim=[16, 56, 56], theta=10000, patch_size=2, qkv_bias=True,
    in_dim=64, out_dim=256, hidden_dim=64, n_layers=1,
)
# The configs of families.md §5 (verified there on 0.3.75 to construct and sample on CPU).
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "flux": ("Flux", FLUX_CONFIG),
    "ovis_image": ("Flux", FLUX_CONFIG),  # + txt_ids_dims [1, 2] (_NEWER_PARAMS): Ovis exists only there
    "flux2": ("Flux2", dict(
        image_model="flux2", in_channels=128, out_channels=128, vec_in_dim=None, context_in_dim=32, hidden_size=256,
        mlp_ratio=3.0, num_heads=2, depth=1, depth_single_blocks=1, axes_dim=[32, 32, 32, 32], theta=2000,
        patch_size=1, qkv_bias=False, guidance_embed=True, global_modulation=True, mlp_silu_act=True, ops_bias=False,
        default_ref_method="index", ref_index_scale=10.0)),
    "chroma": ("Chroma", _CHROMA_CONFIG),
    "chroma_radiance": ("ChromaRadiance", dict(
        _CHROMA_CONFIG, image_model="chroma_radiance", in_channels=3, out_channels=3, patch_size=16,
        nerf_hidden_size=16, nerf_mlp_ratio=2, nerf_depth=1, nerf_max_freqs=8, nerf_tile_size=0,
        nerf_final_head_type="linear", nerf_embedder_dtype=None)),
    "qwen_image": ("QwenImage", QWEN_CONFIG),
    "z_image": ("ZImage", dict(
        image_model="lumina2", patch_size=2, in_channels=16, dim=256, n_layers=1, n_refiner_layers=1, n_heads=2,
        n_kv_heads=2, qk_norm=True, cap_feat_dim=32, axes_dims=[32, 48, 48], axes_lens=[1536, 512, 512],
        rope_theta=256.0, ffn_dim_multiplier=8 / 3, z_image_modulation=True, time_scale=1000.0,
        pad_tokens_multiple=32)),
    "lumina2": ("Lumina2", dict(
        image_model="lumina2", patch_size=2, in_channels=16, dim=192, n_layers=1, n_refiner_layers=1, n_heads=2,
        n_kv_heads=1, qk_norm=True, cap_feat_dim=32, axes_dims=[32, 32, 32], axes_lens=[300, 512, 512],
        rope_theta=10000.0, ffn_dim_multiplier=4.0)),
    "hidream": ("HiDream", dict(
        image_model="hidream", patch_size=2, in_channels=16, out_channels=16, num_layers=1, num_single_layers=1,
        attention_head_dim=128, num_attention_heads=2, caption_channels=[32, 32], text_emb_dim=32,
        num_routed_experts=2, num_activated_experts=1, axes_dims_rope=[64, 32, 32], max_resolution=[128, 128],
        llama_layers=[0, 0])),
    "hunyuan_image21": ("HunyuanImage21", dict(
        image_model="hunyuan_video", in_channels=64, out_channels=64, vec_in_dim=None, context_in_dim=32,
        hidden_size=256, mlp_ratio=2.0, num_heads=2, depth=1, depth_single_blocks=1, axes_dim=[64, 64], theta=256,
        patch_size=[1, 1], qkv_bias=True, guidance_embed=False, byt5=False, meanflow=False,
        use_cond_type_embedding=False, vision_in_dim=None)),
    "omnigen2": ("Omnigen2", dict(
        image_model="omnigen2", patch_size=2, in_channels=16, out_channels=None, hidden_size=240, num_layers=1,
        num_refiner_layers=1, num_attention_heads=2, num_kv_heads=1, multiple_of=16, ffn_dim_multiplier=None,
        norm_eps=1e-5, axes_dim_rope=[40, 40, 40], axes_lens=[1024, 1664, 1664], text_feat_dim=32,
        timestep_scale=1000.0)),
    # Newer hosts only (ComfyUI 0.30); configs checked there to construct and sample on CPU.
    "longcat_image": ("LongCatImage", dict(
        FLUX_CONFIG, vec_in_dim=None, context_in_dim=3584, guidance_embed=False, txt_ids_dims=[1, 2])),
    "krea2": ("Krea2", dict(
        image_model="krea2", features=256, heads=2, kvheads=2, multiplier=2, layers=1, patch=2, channels=16,
        txtdim=32, txtlayers=1, txtheads=2, txtkvheads=2)),
    "mage_flow": ("MageFlow", dict(
        image_model="mage_flow", in_channels=128, num_layers=1, attention_head_dim=128, num_attention_heads=2,
        joint_attention_dim=2560, axes_dims_rope=[16, 56, 56])),  # detection keys on the 2560-wide text norm
    "lens": ("Lens", dict(
        image_model="lens", in_channels=128, num_layers=1, attention_head_dim=64, num_attention_heads=2,
        enc_hidden_dim=32, axes_dims_rope=[8, 28, 28], multi_layer_encoder_feature=False)),
    "boogu": ("Boogu", dict(
        image_model="boogu", hidden_size=240, num_layers=1, num_double_stream_layers=1, num_refiner_layers=1,
        num_attention_heads=2, num_kv_heads=1, multiple_of=16, instruction_feat_dim=32, axes_dim_rope=[40, 40, 40],
        axes_lens=[2048, 1664, 1664])),
    "z_image_pixel": ("ZImagePixelSpace", dict(
        image_model="zimage_pixel", patch_size=16, in_channels=3, dim=256, n_layers=1, n_refiner_layers=1, n_heads=2,
        n_kv_heads=2, qk_norm=True, cap_feat_dim=32, axes_dims=[32, 48, 48], axes_lens=[1536, 512, 512],
        rope_theta=256.0, ffn_dim_multiplier=8 / 3, z_image_modulation=True, time_scale=1000.0,
        pad_tokens_multiple=32, decoder_hidden_size=32, decoder_num_res_blocks=1, decoder_max_freqs=8)),
    # The image model's axes (32, 48, 48) and rope_scale_factor (1, 1, 1), as model detection sets them.
    "kandinsky5_image": ("Kandinsky5Image", dict(
        image_model="kandinsky5", in_visual_dim=16, out_visual_dim=16, in_text_dim=32, in_text_dim2=32, time_dim=64,
        model_dim=256, ff_dim=256, visual_embed_dim=64, patch_size=(1, 2, 2), num_text_blocks=1, num_visual_blocks=1,
        axes_dims=(32, 48, 48), rope_scale_factor=(1.0, 1.0, 1.0))),
    # Anima (Cosmos-Predict2 2B): the RoPE settings model detection sets for 16-channel Cosmos/Anima checkpoints
    # (rope3d, extrapolation ratio 4 on rows and columns, no fps modulation); head dim 128 as in production.
    "anima": ("Anima", dict(
        image_model="anima", max_img_h=240, max_img_w=240, max_frames=128, in_channels=16, out_channels=16,
        patch_spatial=2, patch_temporal=1, concat_padding_mask=True, model_channels=256, num_blocks=1, num_heads=2,
        crossattn_emb_channels=32, pos_emb_cls="rope3d", pos_emb_learnable=True, pos_emb_interpolation="crop",
        min_fps=1, max_fps=30, use_adaln_lora=True, adaln_lora_dim=32, rope_h_extrapolation_ratio=4.0,
        rope_w_extrapolation_ratio=4.0, rope_t_extrapolation_ratio=1.0, extra_per_block_abs_pos_emb=False,
        rope_enable_fps_modulation=False)),
}
# Params fields newer hosts added without a default (ComfyUI 0.30: FluxParams/ChromaParams.txt_ids_dims, ...):
# set only where the host's params dataclass has them, so one config builds on both hosts.
_NEWER_PARAMS = dict(txt_ids_dims=[], vec_in_dim=None, use_x0=False, use_sequential_txt_ids=False,
                     meanflow_sum=False)
# Ovis-Image: text ids on rows and cols; yak_mlp + txt_norm are the keys model detection recognises it by.
_NEWER_PARAMS_BY_FAMILY = {"flux2": dict(txt_ids_dims=[3]),
                           "ovis_image": dict(txt_ids_dims=[1, 2], yak_mlp=True, txt_norm=True)}
_PARAMS_CLASSES = {"flux": "comfy.ldm.flux.model.FluxParams", "flux2": "comfy.ldm.flux.model.FluxParams",
                   "chroma": "comfy.ldm.chroma.model.ChromaParams",
                   "chroma_radiance": "comfy.ldm.chroma_radiance.model.ChromaRadianceParams",
                   "hunyuan_image21": "comfy.ldm.hunyuan_video.model.HunyuanVideoParams"}
