"""Write the example workflows in ``workflows/`` (UI format 0.4, as the ComfyUI frontend 1.32 saves them).

Run ``python tests/headless/make_workflows.py`` after editing; the JSON files are committed. Node ids, link ids, slot
indices and widget orders all come from one place here, so they cannot drift apart. The node shapes below are
written by hand on purpose: tests/test_workflows.py checks every file against the live ComfyUI registry.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

try:
    from .notes import NOTES
except ImportError:  # run as a script: python tests/headless/make_workflows.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from headless.notes import NOTES

WORKFLOWS_DIR = Path(__file__).resolve().parents[2] / "workflows"
CORE = {"cnr_id": "comfy-core", "ver": "0.3.75"}
PACK = {"cnr_id": "comfyui-dype-sega", "ver": "0.1.0"}

# type -> (socket inputs, widget inputs, outputs, properties). Sockets come first, then one socket per widget
# (frontend ≥ 1.16 gives every widget a socket), mirroring litegraphService #addInputs.
Shape = tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]], dict]
SHAPES: dict[str, Shape] = {
    "UNETLoader": ([], [("unet_name", "COMBO"), ("weight_dtype", "COMBO")], [("MODEL", "MODEL")], CORE),
    "DualCLIPLoader": ([], [("clip_name1", "COMBO"), ("clip_name2", "COMBO"), ("type", "COMBO"),
                            ("device", "COMBO")], [("CLIP", "CLIP")], CORE),
    "CLIPLoader": ([], [("clip_name", "COMBO"), ("type", "COMBO"), ("device", "COMBO")], [("CLIP", "CLIP")], CORE),
    "VAELoader": ([], [("vae_name", "COMBO")], [("VAE", "VAE")], CORE),
    "ModelSamplingAuraFlow": ([("model", "MODEL")], [("shift", "FLOAT")], [("MODEL", "MODEL")], CORE),
    "CLIPTextEncode": ([("clip", "CLIP")], [("text", "STRING")], [("CONDITIONING", "CONDITIONING")], CORE),
    "FluxGuidance": ([("conditioning", "CONDITIONING")], [("guidance", "FLOAT")],
                     [("CONDITIONING", "CONDITIONING")], CORE),
    "EmptySD3LatentImage": ([], [("width", "INT"), ("height", "INT"), ("batch_size", "INT")],
                            [("LATENT", "LATENT")], CORE),
    "KSampler": ([("model", "MODEL"), ("positive", "CONDITIONING"), ("negative", "CONDITIONING"),
                  ("latent_image", "LATENT")],
                 [("seed", "INT"), ("steps", "INT"), ("cfg", "FLOAT"), ("sampler_name", "COMBO"),
                  ("scheduler", "COMBO"), ("denoise", "FLOAT")], [("LATENT", "LATENT")], CORE),
    "VAEDecodeTiled": ([("samples", "LATENT"), ("vae", "VAE")],
                       [("tile_size", "INT"), ("overlap", "INT"), ("temporal_size", "INT"),
                        ("temporal_overlap", "INT")], [("IMAGE", "IMAGE")], CORE),
    "SaveImage": ([("images", "IMAGE")], [("filename_prefix", "STRING")], [], CORE),
    "DyPESEGA_PatchModel": ([("model", "MODEL")],
                            [("method", "COMBO"), ("dynamic", "BOOLEAN"), ("lambda_t", "FLOAT"),
                             ("lambda_s", "FLOAT"), ("base_resolution", "INT"), ("yarn_thresholds", "COMBO")],
                            [("MODEL", "MODEL")], PACK),
    "DyPESEGA_SEGAAttention": ([("model", "MODEL")],
                               [(n, "FLOAT") for n in ("kappa", "alpha", "beta", "spread_min", "spread_max",
                                                       "spread_alpha", "floor")] + [("base_resolution", "INT"),
                                                                                    ("allocation", "COMBO"),
                                                                                    ("m_ref", "COMBO")],
                               [("MODEL", "MODEL")], PACK),
}
# Download links the frontend offers for missing files (node properties.models, as in Comfy's own templates).
_QWEN = "https://huggingface.co/Comfy-Org/Qwen-Image_ComfyUI/resolve/main/split_files"
MODEL_URLS: dict[str, tuple[str, str]] = {  # file -> (url, models/ subfolder)
    "flux1-dev.safetensors": (
        "https://huggingface.co/black-forest-labs/FLUX.1-dev/resolve/main/flux1-dev.safetensors", "diffusion_models"),
    "flux1-krea-dev.safetensors": (
        "https://huggingface.co/black-forest-labs/FLUX.1-Krea-dev/resolve/main/flux1-krea-dev.safetensors",
        "diffusion_models"),
    "clip_l.safetensors": (
        "https://huggingface.co/comfyanonymous/flux_text_encoders/resolve/main/clip_l.safetensors", "text_encoders"),
    "t5xxl_fp16.safetensors": (
        "https://huggingface.co/comfyanonymous/flux_text_encoders/resolve/main/t5xxl_fp16.safetensors",
        "text_encoders"),
    "ae.safetensors": ("https://huggingface.co/black-forest-labs/FLUX.1-schnell/resolve/main/ae.safetensors", "vae"),
    "qwen_image_fp8_e4m3fn.safetensors": (
        f"{_QWEN}/diffusion_models/qwen_image_fp8_e4m3fn.safetensors", "diffusion_models"),
    "qwen_2.5_vl_7b_fp8_scaled.safetensors": (
        f"{_QWEN}/text_encoders/qwen_2.5_vl_7b_fp8_scaled.safetensors", "text_encoders"),
    "qwen_image_vae.safetensors": (f"{_QWEN}/vae/qwen_image_vae.safetensors", "vae"),
}
DYPE_DEFAULTS = ["yarn", True, 2.0, 2.0, 0, "multiply"]
SEGA_DEFAULTS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, "rank", "power"]  # the port's recipe


class Graph:
    """A UI graph under construction: nodes and links numbered from 1 in creation order."""

    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.links: list[list[Any]] = []

    def add(self, node_type: str, pos: tuple[int, int], size: tuple[int, int], widgets: list) -> int:
        node_id = len(self.nodes) + 1
        node: dict[str, Any] = {"id": node_id, "type": node_type, "pos": list(pos), "size": list(size), "flags": {},
                                "order": 0, "mode": 0}
        if node_type == "MarkdownNote":
            node.update(inputs=[], outputs=[], properties={}, widgets_values=widgets, color="#432", bgcolor="#653")
        else:
            sockets, widget_inputs, outputs, props = SHAPES[node_type]
            node["inputs"] = [{"localized_name": n, "name": n, "type": t, "link": None} for n, t in sockets] + [
                {"localized_name": n, "name": n, "type": t, "widget": {"name": n}, "link": None}
                for n, t in widget_inputs]
            node["outputs"] = [{"localized_name": n, "name": n, "type": t, "links": []} for n, t in outputs]
            node["properties"] = {**props, "Node name for S&R": node_type}
            files = [v for v in widgets if isinstance(v, str) and v in MODEL_URLS]
            if files:
                node["properties"]["models"] = [{"name": f, "url": MODEL_URLS[f][0], "directory": MODEL_URLS[f][1]}
                                                for f in files]
            node["widgets_values"] = widgets
        self.nodes.append(node)
        return node_id

    def link(self, src: int, src_slot: int, dst: int, dst_input: str) -> None:
        link_id = len(self.links) + 1
        out = self.nodes[src - 1]["outputs"][src_slot]
        inputs = self.nodes[dst - 1]["inputs"]
        dst_slot = next(i for i, s in enumerate(inputs) if s["name"] == dst_input)
        inputs[dst_slot]["link"] = link_id
        out["links"].append(link_id)
        self.links.append([link_id, src, src_slot, dst, dst_slot, out["type"]])

    def _set_order(self) -> None:
        # "order" is the frontend's execution order: a topological sort of the links.
        deps = {n["id"]: {lk[1] for lk in self.links if lk[3] == n["id"]} for n in self.nodes}
        done: list[int] = []
        while len(done) < len(deps):
            ready = sorted(i for i, d in deps.items() if i not in done and d <= set(done))
            done.extend(ready)
        for order, node_id in enumerate(done):
            self.nodes[node_id - 1]["order"] = order

    def to_json(self, name: str) -> dict[str, Any]:
        self._set_order()
        return {
            "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"comfyui-dype-sega/workflows/{name}")),
            "revision": 0, "last_node_id": len(self.nodes), "last_link_id": len(self.links),
            "nodes": self.nodes, "links": self.links, "groups": [], "config": {},
            "extra": {"ds": {"scale": 0.7, "offset": [60, 80]}, "frontendVersion": "1.32.9"},
            "version": 0.4,
        }


def _tail(g: Graph, model: int, clip: int, vae: int, *, prompt: str, negative: str, width: int, height: int,
          seed: int, steps: int, cfg: float, guidance: float | None, prefix: str) -> None:
    """Prompts, latent, sampler, tiled decode and save: the part every example shares."""
    pos = g.add("CLIPTextEncode", (430, 460), (420, 200), [prompt])
    neg = g.add("CLIPTextEncode", (430, 710), (420, 120), [negative])
    g.link(clip, 0, pos, "clip")
    g.link(clip, 0, neg, "clip")
    if guidance is not None:
        fg = g.add("FluxGuidance", (900, 460), (300, 60), [guidance])
        g.link(pos, 0, fg, "conditioning")
        pos = fg
    latent = g.add("EmptySD3LatentImage", (900, 600), (300, 110), [width, height, 1])
    ks = g.add("KSampler", (1250, 80), (320, 480), [seed, "fixed", steps, cfg, "euler", "simple", 1.0])
    g.link(model, 0, ks, "model")
    g.link(pos, 0, ks, "positive")
    g.link(neg, 0, ks, "negative")
    g.link(latent, 0, ks, "latent_image")
    dec = g.add("VAEDecodeTiled", (1620, 80), (280, 150), [512, 64, 64, 8])
    g.link(ks, 0, dec, "samples")
    g.link(vae, 0, dec, "vae")
    save = g.add("SaveImage", (1620, 280), (520, 560), [prefix])
    g.link(dec, 0, save, "images")


def _patches(g: Graph, model: int, sega: bool, x: int = 430, dype: bool = True) -> int:
    """DyPE, DyPE → SEGA (our composition) or SEGA alone (the published SEGA recipe: static NTK positions)."""
    if dype:
        node = g.add("DyPESEGA_PatchModel", (x, 80), (320, 200), list(DYPE_DEFAULTS))
        g.link(model, 0, node, "model")
        model, x = node, x + 360
    if not sega:
        return model
    node = g.add("DyPESEGA_SEGAAttention", (x, 80), (320, 300), list(SEGA_DEFAULTS))
    g.link(model, 0, node, "model")
    return node


def flux(name: str, unet: str, *, sega: bool, width: int, height: int, guidance: float, prompt: str,
         seed: int, dype: bool = True) -> dict[str, Any]:
    g = Graph()
    unet_id = g.add("UNETLoader", (20, 80), (360, 90), [unet, "default"])
    clip = g.add("DualCLIPLoader", (20, 220), (360, 140),
                 ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"])
    vae = g.add("VAELoader", (20, 410), (360, 60), ["ae.safetensors"])
    model = _patches(g, unet_id, sega, dype=dype)
    _tail(g, model, clip, vae, prompt=prompt, negative="", width=width, height=height, seed=seed, steps=28,
          cfg=1.0, guidance=guidance, prefix=f"dype/{Path(name).stem}")
    g.add("MarkdownNote", (-560, 80), (540, 900), [NOTES[name]])
    return g.to_json(name)


def qwen(name: str, *, width: int, height: int, prompt: str, seed: int) -> dict[str, Any]:
    g = Graph()
    unet_id = g.add("UNETLoader", (20, 80), (360, 90), ["qwen_image_fp8_e4m3fn.safetensors", "default"])
    clip = g.add("CLIPLoader", (20, 220), (360, 110),
                 ["qwen_2.5_vl_7b_fp8_scaled.safetensors", "qwen_image", "default"])
    vae = g.add("VAELoader", (20, 410), (360, 60), ["qwen_image_vae.safetensors"])
    shift = g.add("ModelSamplingAuraFlow", (430, 330), (300, 60), [3.1])
    g.link(unet_id, 0, shift, "model")
    model = _patches(g, shift, sega=True)
    _tail(g, model, clip, vae, prompt=prompt, negative=" ", width=width, height=height, seed=seed, steps=20,
          cfg=2.5, guidance=None, prefix=f"dype/{Path(name).stem}")
    g.add("MarkdownNote", (-560, 80), (540, 900), [NOTES[name]])
    return g.to_json(name)


PROMPT_LANDSCAPE = (
    "A vast alpine valley at golden hour, a turquoise glacial lake in the foreground with every pebble visible "
    "through the clear water, pine forests on the slopes, a wooden cabin with smoke rising from the chimney, "
    "snow-capped granite peaks with fine rock strata, thin clouds, ultra detailed landscape photograph, 8k"
)
PROMPT_PORTRAIT = (
    "Close-up portrait of an elderly fisherman on a harbour pier, weathered skin with fine wrinkles and stubble, "
    "knitted wool sweater with visible fibres, soft overcast light, fishing boats and ropes softly out of focus, "
    "natural colours, shot on medium format film, highly detailed"
)
PROMPT_CITY = (
    "An old European market square seen from above, cobblestones, colourful facades with tiny window details, "
    "market stalls full of fruit and flowers, people walking, a clock tower, crisp morning light, "
    "highly detailed architectural photograph"
)
PROMPT_WIDE = (
    "Cinematic wide shot of a coastal road winding along steep cliffs at sunset, waves breaking on the rocks, "
    "a red vintage car on the road, wildflowers on the cliff edge, distant lighthouse, high dynamic range, "
    "highly detailed 16:9 landscape photograph"
)


def build_all() -> dict[str, dict[str, Any]]:
    """File name → workflow JSON for every shipped example."""
    return {
        "flux1-dev_dype_4096.json": flux(
            "flux1-dev_dype_4096.json", "flux1-dev.safetensors", sega=False, width=4096, height=4096,
            guidance=3.5, prompt=PROMPT_LANDSCAPE, seed=42),
        "flux1-krea-dev_sega_4096.json": flux(  # the published SEGA recipe: SEGA alone, guidance 4.5, 28 steps
            "flux1-krea-dev_sega_4096.json", "flux1-krea-dev.safetensors", sega=True, dype=False, width=4096,
            height=4096, guidance=4.5, prompt=PROMPT_PORTRAIT, seed=7),
        "flux1-krea-dev_dype_sega_4096.json": flux(  # our composition: DyPE's dynamic positions + SEGA
            "flux1-krea-dev_dype_sega_4096.json", "flux1-krea-dev.safetensors", sega=True, width=4096,
            height=4096, guidance=4.5, prompt=PROMPT_PORTRAIT, seed=7),
        "qwen-image_dype_sega_4k.json": qwen(
            "qwen-image_dype_sega_4k.json", width=4096, height=4096, prompt=PROMPT_CITY, seed=1234),
        "flux1-dev_dype_3840x2160.json": flux(
            "flux1-dev_dype_3840x2160.json", "flux1-dev.safetensors", sega=False, width=3840, height=2160,
            guidance=3.5, prompt=PROMPT_WIDE, seed=2024),
    }


def render(workflow: dict[str, Any]) -> str:
    """The exact text written to disk (the test compares the committed files against it)."""
    return json.dumps(workflow, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    WORKFLOWS_DIR.mkdir(exist_ok=True)
    for name, workflow in build_all().items():
        (WORKFLOWS_DIR / name).write_text(render(workflow), encoding="utf-8")
        print(f"wrote workflows/{name}")


if __name__ == "__main__":
    main()
