"""Write the example workflows in ``workflows/`` (UI format 0.4, as the ComfyUI frontend 1.32 saves them).

Run ``python tests/headless/make_workflows.py`` after editing; the JSON files and their same-name ``.jpg``
thumbnails (what ComfyUI's template browser shows) are committed. Node ids, link ids, slot indices and widget orders
all come from one place here, so they cannot drift apart. The node shapes below are written by hand on purpose:
tests/test_workflows.py checks every file against the live ComfyUI registry.

File names are what a user reads in the template browser (it shows the file stem as the card title), so they are
written for people. Model file names and download links are those of ComfyUI's official templates (PyPI
``comfyui-workflow-templates``: flux_dev_full_text_to_image, flux1_krea_dev, image_qwen_image), so a user who ran
one of those already has the files. The other image families (Chroma, Flux.2, Z-Image, ...) are one
``FamilyWorkflow`` each in image_families.py, built by ``family_workflow`` below.
"""

from __future__ import annotations

import json
import math
import sys
import uuid
from pathlib import Path
from typing import Any

try:
    from .image_families import SPECS, FamilyWorkflow
    from .notes import NOTES, family_note
except ImportError:  # run as a script: python tests/headless/make_workflows.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from headless.image_families import SPECS, FamilyWorkflow
    from headless.notes import NOTES, family_note

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
    "QuadrupleCLIPLoader": ([], [(f"clip_name{i}", "COMBO") for i in range(1, 5)], [("CLIP", "CLIP")], CORE),
    "T5TokenizerOptions": ([("clip", "CLIP")], [("min_padding", "INT"), ("min_length", "INT")], [("CLIP", "CLIP")],
                           CORE),
    "ModelSamplingAuraFlow": ([("model", "MODEL")], [("shift", "FLOAT")], [("MODEL", "MODEL")], CORE),
    "ModelSamplingSD3": ([("model", "MODEL")], [("shift", "FLOAT")], [("MODEL", "MODEL")], CORE),
    "CLIPTextEncode": ([("clip", "CLIP")], [("text", "STRING")], [("CONDITIONING", "CONDITIONING")], CORE),
    "FluxGuidance": ([("conditioning", "CONDITIONING")], [("guidance", "FLOAT")],
                     [("CONDITIONING", "CONDITIONING")], CORE),
    "ConditioningZeroOut": ([("conditioning", "CONDITIONING")], [], [("CONDITIONING", "CONDITIONING")], CORE),
    **{latent: ([], [("width", "INT"), ("height", "INT"), ("batch_size", "INT")], [("LATENT", "LATENT")], CORE)
       for latent in ("EmptySD3LatentImage", "EmptyLatentImage", "EmptyFlux2LatentImage",
                      "EmptyChromaRadianceLatentImage", "EmptyHunyuanImageLatent")},
    "KSampler": ([("model", "MODEL"), ("positive", "CONDITIONING"), ("negative", "CONDITIONING"),
                  ("latent_image", "LATENT")],
                 [("seed", "INT"), ("steps", "INT"), ("cfg", "FLOAT"), ("sampler_name", "COMBO"),
                  ("scheduler", "COMBO"), ("denoise", "FLOAT")], [("LATENT", "LATENT")], CORE),
    "VAEDecodeTiled": ([("samples", "LATENT"), ("vae", "VAE")],
                       [("tile_size", "INT"), ("overlap", "INT"), ("temporal_size", "INT"),
                        ("temporal_overlap", "INT")], [("IMAGE", "IMAGE")], CORE),
    "VAEDecode": ([("samples", "LATENT"), ("vae", "VAE")], [], [("IMAGE", "IMAGE")], CORE),
    "SaveImage": ([("images", "IMAGE")], [("filename_prefix", "STRING")], [], CORE),
    "DyPESEGA_PatchModel": ([("model", "MODEL")],
                            [("method", "COMBO"), ("dynamic", "BOOLEAN"), ("lambda_t", "FLOAT"),
                             ("lambda_s", "FLOAT"), ("base_resolution", "INT"), ("yarn_thresholds", "COMBO"),
                             ("variant", "COMBO")],
                            [("MODEL", "MODEL")], PACK),
    "DyPESEGA_SEGAAttention": ([("model", "MODEL")],
                               [(n, "FLOAT") for n in ("kappa", "alpha", "beta", "spread_min", "spread_max",
                                                       "spread_alpha", "floor")] + [("base_resolution", "INT"),
                                                                                    ("allocation", "COMBO"),
                                                                                    ("m_ref", "COMBO"),
                                                                                    ("variant", "COMBO")],
                               [("MODEL", "MODEL")], PACK),
}
# Inputs the node declares optional: the frontend draws (and saves) their socket as a hollow circle, shape 7.
OPTIONAL_INPUTS = {("DualCLIPLoader", "device"), ("CLIPLoader", "device"), ("DyPESEGA_SEGAAttention", "allocation"),
                   ("DyPESEGA_SEGAAttention", "m_ref"), ("DyPESEGA_PatchModel", "variant"),
                   ("DyPESEGA_SEGAAttention", "variant")}
HOLLOW_CIRCLE = 7
# Download links the frontend offers for missing files (node properties.models): the ungated Comfy-Org repackaged
# files ComfyUI's official templates link (comfyui-workflow-templates-json 0.1.123).
_QWEN = "https://huggingface.co/Comfy-Org/Qwen-Image_ComfyUI/resolve/main/split_files"
_FLUX_TE = "https://huggingface.co/comfyanonymous/flux_text_encoders/resolve/main"
MODEL_URLS: dict[str, tuple[str, str]] = {  # file -> (url, models/ subfolder)
    "flux1-dev.safetensors": (
        "https://huggingface.co/Comfy-Org/flux1-dev/resolve/main/flux1-dev.safetensors", "diffusion_models"),
    "flux1-krea-dev_fp8_scaled.safetensors": (
        "https://huggingface.co/Comfy-Org/FLUX.1-Krea-dev_ComfyUI/resolve/main/split_files/diffusion_models/"
        "flux1-krea-dev_fp8_scaled.safetensors", "diffusion_models"),
    "clip_l.safetensors": (f"{_FLUX_TE}/clip_l.safetensors", "text_encoders"),
    "t5xxl_fp16.safetensors": (f"{_FLUX_TE}/t5xxl_fp16.safetensors", "text_encoders"),
    "ae.safetensors": (
        "https://huggingface.co/Comfy-Org/Lumina_Image_2.0_Repackaged/resolve/main/split_files/vae/ae.safetensors",
        "vae"),
    "qwen_image_fp8_e4m3fn.safetensors": (
        f"{_QWEN}/diffusion_models/qwen_image_fp8_e4m3fn.safetensors", "diffusion_models"),
    "qwen_2.5_vl_7b_fp8_scaled.safetensors": (
        f"{_QWEN}/text_encoders/qwen_2.5_vl_7b_fp8_scaled.safetensors", "text_encoders"),
    "qwen_image_vae.safetensors": (f"{_QWEN}/vae/qwen_image_vae.safetensors", "vae"),
}
for _spec in SPECS:  # the other families' files: their templates' links (image_families.py)
    for _f in _spec.files:
        if MODEL_URLS.setdefault(_f.name, (_f.url, _f.folder))[1] != _f.folder:
            raise ValueError(f"{_f.name}: two download folders")
DYPE_DEFAULTS = ["yarn", True, 2.0, 2.0, 0, "multiply", "auto"]
SEGA_DEFAULTS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, "rank", "power", "auto"]  # the port's recipe


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
                | ({"shape": HOLLOW_CIRCLE} if (node_type, n) in OPTIONAL_INPUTS else {})
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
            "extra": {"ds": self._view(), "frontendVersion": "1.32.9", "workflowRendererVersion": "LG"},
            "version": 0.4,
        }

    def _view(self) -> dict[str, Any]:
        # The canvas opens at extra.ds: screen = (graph + offset) * scale. Put the graph's top-left corner right of
        # the frontend's sidebar and below its tab bar and breadcrumb (1.32.9 at 1920×1080: sidebar 59 px wide,
        # chrome 140 px high); the layout below is narrow enough to end left of the minimap at this zoom.
        left = min(n["pos"][0] for n in self.nodes)
        top = min(n["pos"][1] for n in self.nodes) - TITLE_H
        return {"scale": VIEW_SCALE, "offset": [round(VIEW_ORIGIN[0] / VIEW_SCALE - left),
                                                round(VIEW_ORIGIN[1] / VIEW_SCALE - top)]}


# Layout, in graph units (the frontend draws node titles above pos, TITLE_H high). Columns left to right in the order
# a user reads the graph: recipe note; loaders with the model patches under them; prompts + latent; sampler + decode;
# image. Compact enough to open at 0.85 (the frontend stops drawing text below 0.6).
VIEW_SCALE = 0.85
VIEW_ORIGIN = (80, 160)  # screen px of the graph's top-left corner
TITLE_H = 30
NOTE = (0, 460)  # x, width
LOADERS, PROMPTS, SAMPLER, IMAGE = 500, 880, 1280, 1620  # column x; the model patches sit under the loaders


def _tail(g: Graph, model: int, clip: int, vae: int, *, prompt: str, negative: str | None, width: int, height: int,
          seed: int, steps: int, cfg: float, guidance: float | None, prefix: str, latent_node: str = "EmptySD3LatentImage",
          sampler: str = "euler", scheduler: str = "simple", decode: str = "VAEDecodeTiled") -> None:
    """Prompts, latent, sampler, decode and save: the part every example shares.

    ``negative=None`` is Flux's empty negative as ComfyUI's Flux templates build it: ConditioningZeroOut of the
    positive prompt (cfg 1 never evaluates it).
    """
    if guidance is not None and negative is not None:
        raise ValueError("FluxGuidance sits where a text negative would: give one or the other")
    pos = g.add("CLIPTextEncode", (PROMPTS, 0), (360, 200), [prompt])
    g.link(clip, 0, pos, "clip")
    if negative is None:
        neg = g.add("ConditioningZeroOut", (PROMPTS, 350), (300, 50), [])
        g.link(pos, 0, neg, "conditioning")
    else:
        neg = g.add("CLIPTextEncode", (PROMPTS, 250), (360, 120), [negative])
        g.link(clip, 0, neg, "clip")
    if guidance is not None:
        fg = g.add("FluxGuidance", (PROMPTS, 250), (300, 60), [guidance])
        g.link(pos, 0, fg, "conditioning")
        pos = fg
    latent = g.add(latent_node, (PROMPTS, 440), (300, 110), [width, height, 1])
    ks = g.add("KSampler", (SAMPLER, 0), (300, 270), [seed, "fixed", steps, cfg, sampler, scheduler, 1.0])
    g.link(model, 0, ks, "model")
    g.link(pos, 0, ks, "positive")
    g.link(neg, 0, ks, "negative")
    g.link(latent, 0, ks, "latent_image")
    if decode == "VAEDecodeTiled":
        dec = g.add("VAEDecodeTiled", (SAMPLER, 330), (300, 150), [512, 64, 64, 8])
    else:
        dec = g.add(decode, (SAMPLER, 330), (300, 50), [])
    g.link(ks, 0, dec, "samples")
    g.link(vae, 0, dec, "vae")
    save = g.add("SaveImage", (IMAGE, 0), (340, 480), [prefix])
    g.link(dec, 0, save, "images")


def _patches(g: Graph, model: int, sega: bool, y: int, dype: bool = True, variant: str = "auto") -> int:
    """DyPE, DyPE → SEGA (our composition) or SEGA alone (the published SEGA recipe: static NTK positions), each
    naming the checkpoint ``variant`` (the family's, where it has several trained sizes)."""
    if dype:
        node = g.add("DyPESEGA_PatchModel", (LOADERS, y), (340, 210), [*DYPE_DEFAULTS[:-1], variant])
        g.link(model, 0, node, "model")
        model, y = node, y + 250
    if not sega:
        return model
    node = g.add("DyPESEGA_SEGAAttention", (LOADERS, y), (340, 320), [*SEGA_DEFAULTS[:-1], variant])
    g.link(model, 0, node, "model")
    return node


def note_text(name: str) -> str:
    """The note of a shipped workflow: written out in notes.py, or built from its family's spec and the pack's
    adapter (trained size and name come from the pack, not from a copy)."""
    if name in NOTES:
        return NOTES[name]
    import host

    spec = next(s for s in SPECS if s.file == name)
    facts = host.pack_submodule("nodes.families").find_adapter(spec.family)
    return family_note(spec, facts.default_base_px, facts.display_name)


def _note(g: Graph, name: str) -> None:
    text = note_text(name)
    g.add("MarkdownNote", (NOTE[0], 0), (NOTE[1], note_height(text)), [text])


def note_height(text: str) -> int:
    """Room for the note's text, so it opens without a scroll bar or a blank half. The frontend 1.32.9 renders the
    markdown at 10 graph units (about 90 characters a line at this width); measured content heights of the shipped
    notes were 379-411 units, this estimate gives 416-432 plus the title bar and margins."""
    wrapped = sum(-(-len(line) // 90) for line in text.splitlines() if line.strip() and not line.startswith("# "))
    return 16 * wrapped + 40


def flux(name: str, unet: str, *, sega: bool, width: int, height: int, guidance: float, prompt: str, seed: int,
         slug: str, dype: bool = True) -> dict[str, Any]:
    g = Graph()
    unet_id = g.add("UNETLoader", (LOADERS, 0), (340, 82), [unet, "default"])
    clip = g.add("DualCLIPLoader", (LOADERS, 120), (340, 130),
                 ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"])
    vae = g.add("VAELoader", (LOADERS, 290), (340, 60), ["ae.safetensors"])
    model = _patches(g, unet_id, sega, y=390, dype=dype)
    _tail(g, model, clip, vae, prompt=prompt, negative=None, width=width, height=height, seed=seed, steps=28,
          cfg=1.0, guidance=guidance, prefix=f"dype/{slug}")
    _note(g, name)
    return g.to_json(name)


def qwen(name: str, *, width: int, height: int, prompt: str, seed: int, slug: str) -> dict[str, Any]:
    g = Graph()
    unet_id = g.add("UNETLoader", (LOADERS, 0), (340, 82), ["qwen_image_fp8_e4m3fn.safetensors", "default"])
    clip = g.add("CLIPLoader", (LOADERS, 120), (340, 110),
                 ["qwen_2.5_vl_7b_fp8_scaled.safetensors", "qwen_image", "default"])
    vae = g.add("VAELoader", (LOADERS, 270), (340, 60), ["qwen_image_vae.safetensors"])
    shift = g.add("ModelSamplingAuraFlow", (LOADERS, 370), (340, 60), [3.1])
    g.link(unet_id, 0, shift, "model")
    model = _patches(g, shift, sega=True, y=470)
    _tail(g, model, clip, vae, prompt=prompt, negative=" ", width=width, height=height, seed=seed, steps=20,
          cfg=2.5, guidance=None, prefix=f"dype/{slug}")
    _note(g, name)
    return g.to_json(name)


LATENT_NODES = ("EmptySD3LatentImage", "EmptyLatentImage", "EmptyFlux2LatentImage", "EmptyChromaRadianceLatentImage",
                "EmptyHunyuanImageLatent")
CLIP_LOADER_HEIGHT = {"CLIPLoader": 110, "DualCLIPLoader": 130, "QuadrupleCLIPLoader": 170}


def family_workflow(spec: FamilyWorkflow) -> dict[str, Any]:
    """One family's example (image_families.py): its template's loaders and sampler settings, our nodes after the
    loaders. The loaders column holds the loaders and our nodes; the model and text-encoder options of the template
    (shift, T5 tokenizer options) sit under the latent, so the graph stays within one screen."""
    g = Graph()
    unet = g.add("UNETLoader", (LOADERS, 0), (340, 82), [spec.unet.name, "default"])
    clip_h = CLIP_LOADER_HEIGHT[spec.clip_loader]
    names = [f.name for f in spec.clip_files]
    widgets = names if spec.clip_type is None else [*names, spec.clip_type, "default"]
    clip = g.add(spec.clip_loader, (LOADERS, 120), (340, clip_h), widgets)
    vae_y = 120 + clip_h + 40
    vae = g.add("VAELoader", (LOADERS, vae_y), (340, 60), [spec.vae.name if spec.vae else "pixel_space"])
    model, extra_y = unet, 610
    if spec.shift is not None:
        node_type, value = spec.shift
        shift = g.add(node_type, (PROMPTS, extra_y), (300, 60), [value])
        g.link(unet, 0, shift, "model")
        model, extra_y = shift, extra_y + 100
    if spec.t5_options:
        options = g.add("T5TokenizerOptions", (PROMPTS, extra_y), (300, 82), [0, 0])
        g.link(clip, 0, options, "clip")
        clip = options
    model = _patches(g, model, spec.sega, y=vae_y + 100, variant=spec.variant)
    _tail(g, model, clip, vae, prompt=spec.prompt, negative=spec.negative, width=spec.width, height=spec.height,
          seed=spec.seed, steps=spec.steps, cfg=spec.cfg, guidance=spec.guidance, prefix=f"dype/{spec.slug}",
          latent_node=spec.latent, sampler=spec.sampler, scheduler=spec.scheduler,
          decode="VAEDecodeTiled" if spec.vae else "VAEDecode")
    _note(g, spec.file)
    return g.to_json(spec.file)


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

# File names as the template browser shows them (card title = file stem). ASCII, no characters Windows forbids.
FLUX_DEV_4096 = "FLUX.1-dev 4096x4096 DyPE.json"
FLUX_KREA_SEGA = "FLUX.1-Krea-dev 4096x4096 SEGA.json"  # the published SEGA recipe: SEGA alone
FLUX_KREA_4096 = "FLUX.1-Krea-dev 4096x4096 DyPE + SEGA.json"  # our composition: DyPE's dynamic positions + SEGA
QWEN_4096 = "Qwen-Image 4096x4096 DyPE + SEGA.json"
FLUX_DEV_UHD = "FLUX.1-dev 3840x2160 UHD DyPE.json"


def build_all() -> dict[str, dict[str, Any]]:
    """File name → workflow JSON for every shipped example."""
    return {
        FLUX_DEV_4096: flux(
            FLUX_DEV_4096, "flux1-dev.safetensors", sega=False, width=4096, height=4096, guidance=3.5,
            prompt=PROMPT_LANDSCAPE, seed=42, slug="flux1-dev_4096"),
        FLUX_KREA_SEGA: flux(
            FLUX_KREA_SEGA, "flux1-krea-dev_fp8_scaled.safetensors", sega=True, dype=False, width=4096,
            height=4096, guidance=4.5, prompt=PROMPT_PORTRAIT, seed=7, slug="flux1-krea-dev_sega_4096"),
        FLUX_KREA_4096: flux(
            FLUX_KREA_4096, "flux1-krea-dev_fp8_scaled.safetensors", sega=True, width=4096, height=4096,
            guidance=4.5, prompt=PROMPT_PORTRAIT, seed=7, slug="flux1-krea-dev_4096"),
        QWEN_4096: qwen(QWEN_4096, width=4096, height=4096, prompt=PROMPT_CITY, seed=1234, slug="qwen-image_4096"),
        FLUX_DEV_UHD: flux(
            FLUX_DEV_UHD, "flux1-dev.safetensors", sega=False, width=3840, height=2160, guidance=3.5,
            prompt=PROMPT_WIDE, seed=2024, slug="flux1-dev_3840x2160"),
        **{spec.file: family_workflow(spec) for spec in SPECS},
    } | _video_workflows().build_video()


def _video_workflows():
    """tests/headless/video_workflows.py (Wan), which builds on this module."""
    try:
        from . import video_workflows
    except ImportError:  # run as a script
        from headless import video_workflows
    return video_workflows


def render(workflow: dict[str, Any]) -> str:
    """The exact text written to disk (the test compares the committed files against it)."""
    return json.dumps(workflow, indent=2, ensure_ascii=False) + "\n"


def thumbnail(workflow: dict[str, Any], title: str):
    """The template-browser picture: the workflow's own DyPE/SEGA schedule, drawn by the pack's preview renderer
    from the graph's settings, under its title. Square, like the browser's cards."""
    import host
    from PIL import Image, ImageDraw, ImageFont

    preview = host.pack_submodule("nodes.schedule_preview")
    rope = host.pack_submodule("rope")
    spectral = host.pack_submodule("spectral")
    try:
        from . import registry
    except ImportError:  # run as a script
        from headless import registry

    by_type = {n["type"]: n["widgets_values"] for n in workflow["nodes"]}
    video = _video_workflows().preview_fields(workflow)
    if video:
        family, width, height, steps, shift = video
    else:
        family = registry.MODEL_FAMILY[by_type["UNETLoader"][0]]
        width, height, _ = next(by_type[t] for t in LATENT_NODES if t in by_type)
        steps = by_type["KSampler"][2]
        rule = host.pack_submodule("nodes.families").find_adapter(family).preview_shift[0]
        shift = next((by_type[t][0] for t in ("ModelSamplingAuraFlow", "ModelSamplingSD3") if t in by_type), None)
        if shift is not None and rule == "exponential":  # a linear shift s is Flux's exponential form at mu = ln s
            shift = math.log(shift)
    dype = by_type.get("DyPESEGA_PatchModel")
    sega = by_type.get("DyPESEGA_SEGAAttention")
    schedule = rope.PositionSchedule()
    if dype:
        method, dynamic, lambda_t, lambda_s, _, thresholds, *_ = dype
        schedule = rope.PositionSchedule(method=method, dynamic=dynamic, lambda_t=lambda_t, lambda_s=lambda_s,
                                         threshold_rule=thresholds)
    settings = spectral.SegaSettings()
    if sega:
        kappa, alpha, beta, spread_min, spread_max, spread_alpha, floor, _, allocation, m_ref, *_ = sega
        settings = spectral.SegaSettings(kappa=kappa, alpha=alpha, beta=beta, spread_min=spread_min,
                                         spread_max=spread_max, spread_alpha=spread_alpha, floor=floor,
                                         allocation=allocation, m_ref=m_ref)
    widgets = dype or sega
    families = host.pack_submodule("nodes.families")
    base_px = widgets[4 if dype else 7] or families.variant_base_px(widgets[-1], families.find_adapter(family))
    request = preview.PreviewRequest(
        family=family, width=width, height=height, steps=steps, shift=shift, schedule=schedule, base_px=base_px,
        sega=sega is not None, sega_settings=settings, sega_alone=sega is not None and dype is None)
    chart = preview.render(request)
    side, pad = 768, 12
    top = 224  # below the title lines
    fit = min((side - 2 * pad) / chart.width, (side - top - pad) / chart.height)
    chart = chart.resize((round(chart.width * fit), round(chart.height * fit)), Image.LANCZOS)
    image = Image.new("RGB", (side, side), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    model, _, rest = title.partition(" ")
    draw.text((pad + 8, 28), model, fill=(20, 20, 20), font=ImageFont.load_default(size=64))
    draw.text((pad + 8, 112), rest, fill=(60, 60, 60), font=ImageFont.load_default(size=44))
    draw.text((pad + 8, 186), "its schedule: RoPE compression and attention temperature per step",
              fill=(90, 90, 90), font=ImageFont.load_default(size=22))
    image.paste(chart, ((side - chart.width) // 2, side - pad - chart.height))
    return image


ICON = WORKFLOWS_DIR.parent / "icon.png"  # pyproject [tool.comfy] Icon points at its raw URL


def icon():
    """The registry icon: DyPE's frequency-compression map (Flux.1 at 4096², 28 steps) as the preview renderer draws
    it, the top-left panel only, 400×400."""
    import host

    preview = host.pack_submodule("nodes.schedule_preview")
    chart = preview.render(preview.PreviewRequest(sega=False))
    margin, top, panel_w, panel_h = 56, 60, 28 * 12, 28 * 8  # render()'s first panel: 28 steps × 28 pairs
    return chart.crop((margin, top, margin + panel_w, top + panel_h)).resize((400, 400))


def main() -> None:
    icon().save(ICON, optimize=True)
    WORKFLOWS_DIR.mkdir(exist_ok=True)
    for name, workflow in build_all().items():
        path = WORKFLOWS_DIR / name
        path.write_text(render(workflow), encoding="utf-8")
        thumbnail(workflow, path.stem).save(path.with_suffix(".jpg"), quality=88, optimize=True)
        print(f"wrote workflows/{name} and its thumbnail")


if __name__ == "__main__":
    main()
