"""The real ComfyUI node registry in-process: core + comfy_extras + this pack + the tiny stand-in pack.

``object_info()`` is what ``GET /object_info`` would answer (workflows.md §4), built without a server. Model file
names are registered first (empty files in a temp dir) so the loaders' file combos list them, as on a user's machine.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import host

TINY_PACK_DIR = Path(__file__).resolve().parent / "tiny_pack"
VIRTUAL_NODES = frozenset({"MarkdownNote", "Note", "Reroute", "PrimitiveNode"})  # frontend-only, never sent
OUR_NODE = "DyPESEGA_PatchModel"

# The model files the shipped workflows name, by ComfyUI model folder (what users download).
MODEL_FILES: dict[str, tuple[str, ...]] = {
    "diffusion_models": (
        "flux1-dev.safetensors", "flux1-krea-dev_fp8_scaled.safetensors", "qwen_image_fp8_e4m3fn.safetensors",
        "Chroma1-HD-fp8mixed.safetensors", "chroma-radiance-x0.safetensors", "flux2_dev_fp8mixed.safetensors",
        "flux-2-klein-4b.safetensors", "z_image_turbo_bf16.safetensors", "lumina_2_model_bf16.safetensors",
        "hidream_i1_dev_fp8.safetensors", "hunyuanimage2.1_bf16.safetensors", "omnigen2_fp16.safetensors",
        "ovis_image_bf16.safetensors", "longcat_image_bf16.safetensors", "krea2_turbo_fp8_scaled.safetensors",
        "mage_flow_int8_convrot.safetensors", "lens_bf16.safetensors", "boogu_image_turbo_fp8_scaled.safetensors",
        "zeta-chroma-base-x0-pixel-dino-distance.safetensors", "wan2.1_t2v_1.3B_fp16.safetensors",
        "wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors", "wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors",
        "kandinsky5lite_t2i.safetensors", "anima-base-v1.0.safetensors",
        "qwen_image_edit_2509_fp8_e4m3fn.safetensors", "flux1-dev-kontext_fp8_scaled.safetensors",
        "qwen_image_2.1_int8_convrot.safetensors"),
    "text_encoders": (
        "clip_l.safetensors", "t5xxl_fp16.safetensors", "qwen_2.5_vl_7b_fp8_scaled.safetensors",
        "t5xxl_fp8_e4m3fn_scaled.safetensors", "mistral_3_small_flux2_bf16.safetensors", "qwen_3_4b.safetensors",
        "gemma_2_2b_fp16.safetensors", "clip_l_hidream.safetensors", "clip_g_hidream.safetensors",
        "llama_3.1_8b_instruct_fp8_scaled.safetensors", "qwen_2.5_vl_7b.safetensors",
        "byt5_small_glyphxl_fp16.safetensors", "qwen_2.5_vl_fp16.safetensors", "ovis_2.5.safetensors",
        "qwen3vl_4b_fp8_scaled.safetensors", "qwen3vl_4b_bf16.safetensors", "gpt_oss_20b_nvfp4.safetensors",
        "qwen3vl_8b_fp8_scaled.safetensors", "umt5_xxl_fp8_e4m3fn_scaled.safetensors", "qwen_3_06b_base.safetensors",
        "qwen3vl_8b_int8_convrot.safetensors"),
    "vae": ("ae.safetensors", "qwen_image_vae.safetensors", "flux2-vae.safetensors",
            "hunyuan_image_2.1_vae_fp16.safetensors", "mage_flow_vae_bf16.safetensors", "wan_2.1_vae.safetensors",
            "qwen_image_2.1_vae_bf16.safetensors"),
}
# The pack's family adapter (nodes/families) of each diffusion model file the workflows load: how the tests know a
# workflow's family (its tiny stand-ins, its trained size). One plain table for image and video workflows.
MODEL_FAMILY: dict[str, str] = {
    "flux1-dev.safetensors": "flux",
    "flux1-krea-dev_fp8_scaled.safetensors": "flux",
    "qwen_image_fp8_e4m3fn.safetensors": "qwen_image",
    "Chroma1-HD-fp8mixed.safetensors": "chroma",
    "chroma-radiance-x0.safetensors": "chroma_radiance",
    "flux2_dev_fp8mixed.safetensors": "flux2",
    "flux-2-klein-4b.safetensors": "flux2",
    "z_image_turbo_bf16.safetensors": "z_image",
    "lumina_2_model_bf16.safetensors": "lumina2",
    "hidream_i1_dev_fp8.safetensors": "hidream",
    "hunyuanimage2.1_bf16.safetensors": "hunyuan_image21",
    "omnigen2_fp16.safetensors": "omnigen2",
    "ovis_image_bf16.safetensors": "ovis_image",
    "longcat_image_bf16.safetensors": "longcat_image",
    "krea2_turbo_fp8_scaled.safetensors": "krea2",
    "mage_flow_int8_convrot.safetensors": "mage_flow",
    "lens_bf16.safetensors": "lens",
    "boogu_image_turbo_fp8_scaled.safetensors": "boogu",
    "zeta-chroma-base-x0-pixel-dino-distance.safetensors": "z_image_pixel",
    "wan2.1_t2v_1.3B_fp16.safetensors": "wan21_1_3b",
    "wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors": "wan_14b",
    "wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors": "wan_14b",
    "kandinsky5lite_t2i.safetensors": "kandinsky5_image",
    "anima-base-v1.0.safetensors": "anima",
    "qwen_image_edit_2509_fp8_e4m3fn.safetensors": "qwen_image",
    "flux1-dev-kontext_fp8_scaled.safetensors": "flux",
    "qwen_image_2.1_int8_convrot.safetensors": "qwen_image21",
}
#: The ComfyUI release that brought a model newer than every test host: its card and the top of its note say so,
#: before the frontend's missing-node dialog does. Qwen-Image 2.1 came with ComfyUI 0.37 (newest_workflows.py); the
#: pack's support is tested on a stand-in.
NEWER_HOST: dict[str, str] = {"qwen_image_2.1_int8_convrot.safetensors": "0.37"}
# What a host must have, beyond the family's model class, to run a model file's workflow: (module, attribute, what).
# Flux.2 Klein is a Flux2 model (0.3.75 has the class) with a Qwen3 text encoder that came later.
MODEL_NEEDS: dict[str, tuple[str, str, str]] = {
    "flux-2-klein-4b.safetensors": ("comfy.text_encoders.flux", "klein_te", "Flux.2 Klein's Qwen3 text encoder"),
    "qwen_image_2.1_int8_convrot.safetensors": (
        "comfy.model_base", "QwenImage21",
        f"Qwen-Image 2.1 (ComfyUI {NEWER_HOST['qwen_image_2.1_int8_convrot.safetensors']}+)"),
}


@dataclass
class Host:
    """The booted host: what loaded, and why the pack did not (if it did not)."""

    pack_nodes: list[str] = field(default_factory=list)
    pack_error: str | None = None
    model_dir: Path | None = None
    _object_info_json: str | None = field(default=None, repr=False)

    def object_info(self) -> dict[str, Any]:
        """``/object_info`` for every registered node, JSON round-tripped (tuples become lists); a fresh copy each
        call. Built once: the nodes and model files are registered at boot and never change after it (building it
        asks each of ~600 nodes for its schema, 0.3 s; tests convert dozens of workflows)."""
        if self._object_info_json is None:
            self._object_info_json = self._build_object_info()
        return json.loads(self._object_info_json)

    def _build_object_info(self) -> str:
        from comfy_api.internal import _ComfyNodeInternal

        import nodes

        infos: dict[str, Any] = {}
        for name, cls in nodes.NODE_CLASS_MAPPINGS.items():
            if issubclass(cls, _ComfyNodeInternal):
                infos[name] = cls.GET_NODE_INFO_V1()
            else:
                infos[name] = {"input": cls.INPUT_TYPES(), "output": list(cls.RETURN_TYPES),
                               "display_name": nodes.NODE_DISPLAY_NAME_MAPPINGS.get(name, name)}
        return json.dumps(infos, default=str)

    def pack_defines_our_nodes(self) -> bool:
        """Whether the pack's source mentions our node id at all (the nodes may not have landed yet)."""
        return any(OUR_NODE in p.read_text(encoding="utf-8", errors="replace")
                   for p in (host.PACK_DIR / "nodes").rglob("*.py")) if (host.PACK_DIR / "nodes").is_dir() else False


_HOST: Host | None = None


def _register_model_files() -> Path:
    import folder_paths

    root = Path(tempfile.mkdtemp(prefix="dype_sega_models_"))
    for folder, names in MODEL_FILES.items():
        (root / folder).mkdir()
        for name in names:
            (root / folder / name).touch()
        folder_paths.add_model_folder_path(folder, str(root / folder))
    return root


def boot() -> Host:
    """Boot once per process: ComfyUI, its extra nodes, this pack (if loadable), the tiny pack, model files."""
    global _HOST
    if _HOST is not None:
        return _HOST
    host.boot()
    import nodes

    from . import builtin_nodes

    builtin_nodes.load()  # its expected import failures in one line
    result = Host()
    try:
        host.load_pack_via_comfyui()
        result.pack_nodes = list(host._booted.get("pack_nodes", []))
    except RuntimeError as exc:  # the pack may be mid-edit; callers decide whether that is a skip or a failure
        result.pack_error = str(exc)
    if not asyncio.run(nodes.load_custom_node(str(TINY_PACK_DIR), module_parent="custom_nodes")):
        raise RuntimeError(f"ComfyUI refused to load the tiny stand-in pack at {TINY_PACK_DIR}")
    result.model_dir = _register_model_files()
    _HOST = result
    return result
