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
import re
import sys
import uuid
from pathlib import Path
from typing import Any

try:
    from . import note_heights
    from .image_families import SPECS, FamilyWorkflow
    from .notes import NOTES, family_note
except ImportError:  # run as a script: python tests/headless/make_workflows.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from headless import note_heights
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
                                                                                    ("recipe", "COMBO"),
                                                                                    ("variant", "COMBO")],
                               [("MODEL", "MODEL")], PACK),
}
# Inputs the node declares optional: the frontend draws (and saves) their socket as a hollow circle, shape 7.
OPTIONAL_INPUTS = {("DualCLIPLoader", "device"), ("CLIPLoader", "device"), ("DyPESEGA_SEGAAttention", "allocation"),
                   ("DyPESEGA_SEGAAttention", "m_ref"), ("DyPESEGA_SEGAAttention", "recipe"),
                   ("DyPESEGA_PatchModel", "variant"), ("DyPESEGA_SEGAAttention", "variant")}
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
SEGA_DEFAULTS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, "rank", "power", "paper (official SEGA code)", "auto"]


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
        return fit_view([(*n["pos"], *n["size"]) for n in self.nodes])


def fit_view(boxes: list[tuple[float, float, float, float]]) -> dict[str, Any]:
    """The view a 1920×1080 window opens the graph at: what the frontend's own "fit view" computes (1.47
    ``LGraphCanvas.fitToBounds`` as ``app.loadGraphData`` calls it for a template card: the nodes' bounds, title bars
    included, padded by 10 units, filling 75 % of the window, centred). Saved as ``extra.ds``, so Workflow › Open
    (which restores ``extra.ds``) and a template card (which fits on frontend 1.47) show the same picture."""
    left = min(x for x, _, _, _ in boxes) - FIT_PAD
    top = min(y for _, y, _, _ in boxes) - TITLE_H - FIT_PAD
    width = max(x + w for x, _, w, _ in boxes) + FIT_PAD - left
    height = max(y + h for _, y, _, h in boxes) + FIT_PAD - top
    scale = min(FIT_ZOOM * WINDOW[0] / max(width, 300), FIT_ZOOM * WINDOW[1] / max(height, 300))
    offset = [-left - width / 2 + WINDOW[0] / scale / 2, -top - height / 2 + WINDOW[1] / scale / 2]
    return {"scale": round(scale, 6), "offset": [round(v, 3) for v in offset]}


# Layout, in graph units. Columns left to right in the order a user reads the graph: recipe note; loaders; this pack's
# nodes; prompts + latent; sampler, decode, image. Each column stacks its nodes top-down (``Column``), GAP apart; a
# node that shows a badge gets BADGE_H more room above its title: the frontend draws badges (the pack's name on ours,
# "[BETA]" on experimental core nodes) right-aligned just above the title bar (litegraph ``LGraphNode.drawBadges``:
# 20 high, 2 above the title), where they would otherwise sit on the node above. The graph is compact enough that
# the fit view (``fit_view``) is about 0.83 (the frontend draws text from 0.6 up), and tall enough for its width
# that the fit leaves a margin left and right: the minimap sits in the window's bottom-right corner (x > 1664 px at
# 1920 wide), where a graph filling the width would end.
WINDOW = (1920, 1080)  # the window size the saved view is computed for
FIT_ZOOM, FIT_PAD = 0.75, 10  # the frontend's fitToBounds fill fraction and createBounds padding
TITLE_H = 30  # LiteGraph.NODE_TITLE_HEIGHT: titles are drawn above pos
GAP, GAP_X = 20, 24
BADGE_H = 24
BADGED = frozenset({"DyPESEGA_PatchModel", "DyPESEGA_SEGAAttention", "VAEDecodeTiled", "SaveWEBM", "T5TokenizerOptions"})
NOTE_W, LOADER_W, OURS_W, PROMPT_W, SAMPLER_W = 400, 300, 280, 300, 280
# Where the last column ends: Save Image fills the sampler column down to here, which makes the graph tall enough
# for the margins above (about 1676 × 974 units with the fit's padding).
LAYOUT_BOTTOM = 954


class Column:
    """One column of the layout: ``add`` puts a node under the previous one."""

    def __init__(self, g: Graph, x: int, width: int) -> None:
        self.g, self.x, self.width, self.bottom = g, x, width, None

    def add(self, node_type: str, height: int, widgets: list) -> int:
        y = self._next_y(node_type)
        self.bottom = y + height
        return self.g.add(node_type, (self.x, y), (self.width, height), widgets)

    def fill(self, node_type: str, widgets: list, at_least: int = 0) -> int:
        """A node reaching down to LAYOUT_BOTTOM, or ``at_least`` high where the column is already longer."""
        return self.add(node_type, max(at_least, LAYOUT_BOTTOM - self._next_y(node_type)), widgets)

    def _next_y(self, node_type: str) -> int:
        top = 0 if self.bottom is None else self.bottom + GAP
        return top + (BADGE_H if node_type in BADGED else 0) + TITLE_H


def columns(g: Graph, *widths: int, x: int = NOTE_W + GAP_X) -> list[Column]:
    """Columns of these widths right of the note, GAP_X apart."""
    out = []
    for width in widths:
        out.append(Column(g, x, width))
        x += width + GAP_X
    return out


class Layout:
    """The image graphs' columns: loaders, this pack's nodes, prompts + latent, sampler + decode + image."""

    def __init__(self, g: Graph) -> None:
        self.loaders, self.ours, self.prompts, self.sampler = columns(g, LOADER_W, OURS_W, PROMPT_W, SAMPLER_W)


def _tail(g: Graph, at: Layout, model: int, clip: int, vae: int, *, prompt: str, negative: str | None, width: int,
          height: int, seed: int, steps: int, cfg: float, guidance: float | None, prefix: str,
          latent_node: str = "EmptySD3LatentImage", sampler: str = "euler", scheduler: str = "simple",
          decode: str = "VAEDecodeTiled") -> None:
    """Prompts, latent, sampler, decode and save: the part every example shares.

    ``negative=None`` is Flux's empty negative as ComfyUI's Flux templates build it: ConditioningZeroOut of the
    positive prompt (cfg 1 never evaluates it).
    """
    if guidance is not None and negative is not None:
        raise ValueError("FluxGuidance sits where a text negative would: give one or the other")
    pos = at.prompts.add("CLIPTextEncode", 200, [prompt])
    g.link(clip, 0, pos, "clip")
    if guidance is not None:
        fg = at.prompts.add("FluxGuidance", 60, [guidance])
        g.link(pos, 0, fg, "conditioning")
    if negative is None:
        neg = at.prompts.add("ConditioningZeroOut", 50, [])
        g.link(pos, 0, neg, "conditioning")
    else:
        neg = at.prompts.add("CLIPTextEncode", 120, [negative])
        g.link(clip, 0, neg, "clip")
    if guidance is not None:
        pos = fg
    latent = at.prompts.add(latent_node, 110, [width, height, 1])
    ks = at.sampler.add("KSampler", 270, [seed, "fixed", steps, cfg, sampler, scheduler, 1.0])
    g.link(model, 0, ks, "model")
    g.link(pos, 0, ks, "positive")
    g.link(neg, 0, ks, "negative")
    g.link(latent, 0, ks, "latent_image")
    if decode == "VAEDecodeTiled":
        dec = at.sampler.add("VAEDecodeTiled", 150, [512, 64, 64, 8])
    else:
        dec = at.sampler.add(decode, 50, [])
    g.link(ks, 0, dec, "samples")
    g.link(vae, 0, dec, "vae")
    save = at.sampler.fill("SaveImage", [prefix])
    g.link(dec, 0, save, "images")


def _patches(g: Graph, column: Column, model: int, sega: bool, dype: bool = True, variant: str = "auto") -> int:
    """DyPE, DyPE → SEGA (our composition) or SEGA alone (the published SEGA recipe), each naming the checkpoint
    ``variant`` (the family's, where it has several trained sizes)."""
    if dype:
        node = column.add("DyPESEGA_PatchModel", 210, [*DYPE_DEFAULTS[:-1], variant])
        g.link(model, 0, node, "model")
        model = node
    if not sega:
        return model
    node = column.add("DyPESEGA_SEGAAttention", 345, [*SEGA_DEFAULTS[:-1], variant])
    g.link(model, 0, node, "model")
    return node


def note_text(name: str) -> str:
    """The note of a shipped workflow (by its key): written out in notes.py, or built from its family's spec and the
    pack's adapter (trained size and name come from the pack, not from a copy)."""
    if name in NOTES:
        return NOTES[name]
    import host

    spec = next(s for s in SPECS if s.file == name)
    facts = host.pack_submodule("nodes.families").find_adapter(spec.family)
    return family_note(spec, facts.default_base_px, facts.display_name)


def add_note(g: Graph, text: str) -> None:
    """The recipe note, left of everything, as tall as its text measured in the browser (note_heights.py)."""
    g.add("MarkdownNote", (0, TITLE_H), (NOTE_W, note_heights.height(text, NOTE_W)), [text])


def flux(name: str, unet: str, *, sega: bool, width: int, height: int, guidance: float, prompt: str, seed: int,
         slug: str, dype: bool = True) -> dict[str, Any]:
    g = Graph()
    at = Layout(g)
    unet_id = at.loaders.add("UNETLoader", 82, [unet, "default"])
    clip = at.loaders.add("DualCLIPLoader", 130, ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"])
    vae = at.loaders.add("VAELoader", 60, ["ae.safetensors"])
    model = _patches(g, at.ours, unet_id, sega, dype=dype)
    _tail(g, at, model, clip, vae, prompt=prompt, negative=None, width=width, height=height, seed=seed, steps=28,
          cfg=1.0, guidance=guidance, prefix=f"dype/{slug}")
    add_note(g, note_text(name))
    return g.to_json(name)


def qwen(name: str, *, width: int, height: int, prompt: str, seed: int, slug: str) -> dict[str, Any]:
    g = Graph()
    at = Layout(g)
    unet_id = at.loaders.add("UNETLoader", 82, ["qwen_image_fp8_e4m3fn.safetensors", "default"])
    clip = at.loaders.add("CLIPLoader", 110, ["qwen_2.5_vl_7b_fp8_scaled.safetensors", "qwen_image", "default"])
    vae = at.loaders.add("VAELoader", 60, ["qwen_image_vae.safetensors"])
    shift = at.loaders.add("ModelSamplingAuraFlow", 60, [3.1])
    g.link(unet_id, 0, shift, "model")
    model = _patches(g, at.ours, shift, sega=True)
    _tail(g, at, model, clip, vae, prompt=prompt, negative=" ", width=width, height=height, seed=seed, steps=20,
          cfg=2.5, guidance=None, prefix=f"dype/{slug}")
    add_note(g, note_text(name))
    return g.to_json(name)


LATENT_NODES = ("EmptySD3LatentImage", "EmptyLatentImage", "EmptyFlux2LatentImage", "EmptyChromaRadianceLatentImage",
                "EmptyHunyuanImageLatent")
CLIP_LOADER_HEIGHT = {"CLIPLoader": 110, "DualCLIPLoader": 130, "QuadrupleCLIPLoader": 170}


def family_workflow(spec: FamilyWorkflow) -> dict[str, Any]:
    """One family's example (image_families.py): its template's loaders and sampler settings, our nodes after the
    loaders. The model and text-encoder options of the template (shift, T5 tokenizer options) sit under the loaders."""
    g = Graph()
    at = Layout(g)
    unet = at.loaders.add("UNETLoader", 82, [spec.unet.name, "default"])
    names = [f.name for f in spec.clip_files]
    widgets = names if spec.clip_type is None else [*names, spec.clip_type, "default"]
    clip = at.loaders.add(spec.clip_loader, CLIP_LOADER_HEIGHT[spec.clip_loader], widgets)
    vae = at.loaders.add("VAELoader", 60, [spec.vae.name if spec.vae else "pixel_space"])
    model = unet
    if spec.shift is not None:
        node_type, value = spec.shift
        shift = at.loaders.add(node_type, 60, [value])
        g.link(unet, 0, shift, "model")
        model = shift
    if spec.t5_options:
        options = at.loaders.add("T5TokenizerOptions", 82, [0, 0])
        g.link(clip, 0, options, "clip")
        clip = options
    model = _patches(g, at.ours, model, spec.sega, variant=spec.variant)
    _tail(g, at, model, clip, vae, prompt=spec.prompt, negative=spec.negative, width=spec.width, height=spec.height,
          seed=spec.seed, steps=spec.steps, cfg=spec.cfg, guidance=spec.guidance, prefix=f"dype/{spec.slug}",
          latent_node=spec.latent, sampler=spec.sampler, scheduler=spec.scheduler,
          decode="VAEDecodeTiled" if spec.vae else "VAEDecode")
    add_note(g, note_text(spec.file))
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

# Each workflow's key: its model, size and recipe, ASCII. The shipped file name (``SHIPPED``) is made from it.
FLUX_DEV_4096 = "FLUX.1-dev 4096x4096 DyPE.json"
FLUX_KREA_SEGA = "FLUX.1-Krea-dev 4096x4096 published SEGA recipe.json"  # SEGA alone
FLUX_KREA_4096 = "FLUX.1-Krea-dev 4096x4096 DyPE + SEGA.json"  # our composition: DyPE's dynamic positions + SEGA
QWEN_4096 = "Qwen-Image 4096x4096 DyPE + SEGA.json"
FLUX_DEV_UHD = "FLUX.1-dev 3840x2160 DyPE.json"

# The card names. The template browser shows the file stem as the card's title and description, and its search
# (Fuse.js, threshold 0.3, distance 100, on the name only for a custom node's templates) finds a word only within
# about 30 characters of the name's start. So: a number giving the order a user should meet them in (A→Z sorting,
# and the server's own listing where the file system lists by name, as on Windows); the model; the words people
# search for, "4K" (or the video size) and "upscale-free"; then the recipe.
SIZE_WORDS = {(4096, 4096): "4K", (3840, 2160): "4K UHD", (1280, 720): "720p", (1920, 1088): "1080p"}


def card_name(key: str, number: int) -> str:
    """``FLUX.1-dev 4096x4096 DyPE.json``, 2 → ``02 FLUX.1-dev 4K upscale-free DyPE.json``."""
    size = re.search(r"(\d+)x(\d+)", key)
    if size is None or (int(size[1]), int(size[2])) not in SIZE_WORDS:
        raise ValueError(f"{key}: name its size in SIZE_WORDS (what a user would search for)")
    words = SIZE_WORDS[int(size[1]), int(size[2])]
    return f"{number:02d} {key[:size.start()]}{words} upscale-free{key[size.end():]}"


def _keys() -> list[str]:
    """All workflows in card order: the published SEGA recipe and plain DyPE on Flux.1-dev first, the other Flux.1
    and Qwen-Image ones, every other image family A→Z, then video."""
    families = sorted((spec.file for spec in SPECS), key=str.lower)
    return [FLUX_KREA_SEGA, FLUX_DEV_4096, FLUX_DEV_UHD, FLUX_KREA_4096, QWEN_4096, *families,
            *_video_workflows().NAMES]


def shipped(key: str) -> str:
    """The file name in workflows/ of the workflow with this key."""
    return {k: card_name(k, number) for number, k in enumerate(_keys(), start=1)}[key]


def build_all() -> dict[str, dict[str, Any]]:
    """File name → workflow JSON for every shipped example, in card order."""
    built = {
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
    return {shipped(key): built[key] for key in _keys()}


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


# The three recipes a card can show, each with its own colour so cards tell them apart at a glance.
RECIPES = {
    "dype": ("DyPE", (37, 99, 175)),
    "dype+sega": ("DyPE + SEGA · ours", (22, 122, 88)),
    "sega": ("published SEGA recipe", (190, 84, 0)),
}
THUMB = 768  # px, square like the browser's cards (shown about 250 px wide: type below 30 px is not readable)


def card_facts(workflow: dict[str, Any]) -> dict[str, Any]:
    """What a template card says about a workflow, all read from the graph (and the pack's adapter for the trained
    size): model (the note's heading), recipe, target size, trained size, sampler settings, the model chain."""
    import host

    try:
        from . import registry
    except ImportError:  # run as a script
        from headless import registry

    nodes = workflow["nodes"]
    by_type = {n["type"]: n["widgets_values"] for n in nodes}
    heading = next(n for n in nodes if n["type"] == "MarkdownNote")["widgets_values"][0].splitlines()[0]
    model = re.sub(r" \(.*\)$", "", heading.removeprefix("# ").split(" · ")[0])  # "(Zeta-Chroma)": in the note
    dype, sega = by_type.get("DyPESEGA_PatchModel"), by_type.get("DyPESEGA_SEGAAttention")
    recipe = "dype+sega" if dype and sega else "dype" if dype else "sega"
    video = "EmptyHunyuanLatentVideo" in by_type
    width, height, *rest = next(by_type[t] for t in (*LATENT_NODES, "EmptyHunyuanLatentVideo") if t in by_type)
    unets = [n["widgets_values"][0] for n in nodes if n["type"] == "UNETLoader"]
    adapter = host.pack_submodule("nodes.families").find_adapter(registry.MODEL_FAMILY[unets[0]])
    families = host.pack_submodule("nodes.families")
    widgets = dype or sega
    short, long = adapter.trained_size(widgets[4 if dype else 7] or families.variant_base_px(widgets[-1], adapter))
    trained = (long, short) if width >= height else (short, long)
    if "KSampler" in by_type:
        seed, _, steps, cfg, sampler, scheduler, _ = by_type["KSampler"]
    else:
        _, seed, _, steps, cfg, sampler, scheduler, *_ = by_type["KSamplerAdvanced"]
    return {"model": model, "recipe": recipe, "size": (width, height), "frames": rest[0] if video else None,
            "trained": (round(trained[0]), round(trained[1])), "steps": steps, "cfg": cfg, "sampler": sampler,
            "guidance": by_type.get("FluxGuidance", [None])[0], "models": len(unets)}


def _fit_font(draw, text: str, size: int, width: int):
    from PIL import ImageFont

    while size > 20 and draw.textlength(text, font=ImageFont.load_default(size=size)) > width:
        size -= 2
    return ImageFont.load_default(size=size)


def thumbnail(workflow: dict[str, Any]):
    """The template card's picture, readable at card size: the recipe on a band of its colour, the model, the
    size, the key numbers and a drawing of the model chain with this pack's nodes in the recipe's colour. Only facts
    of the graph: no sample image (none is made here), no invented output."""
    from PIL import Image, ImageDraw

    f = card_facts(workflow)
    label, colour = RECIPES[f["recipe"]]
    image = Image.new("RGB", (THUMB, THUMB), (248, 248, 246))
    draw = ImageDraw.Draw(image)
    pad, text_w = 40, THUMB - 80
    draw.rectangle([0, 0, THUMB, 128], fill=colour)
    draw.text((pad, 64), label, fill="white", font=_fit_font(draw, label, 60, text_w), anchor="lm",
              stroke_width=1, stroke_fill="white")
    draw.text((pad, 206), f["model"], fill=(20, 20, 20), font=_fit_font(draw, f["model"], 80, text_w), anchor="lm",
              stroke_width=2, stroke_fill=(20, 20, 20))
    (w, h), frames = f["size"], f["frames"]
    size = f"{w} x {h}" + (f" x {frames} frames" if frames else "")  # Pillow's own font has no "×" or "→"
    draw.text((pad, 306), size, fill=(20, 20, 20), font=_fit_font(draw, size, 64, text_w), anchor="lm",
              stroke_width=1, stroke_fill=(20, 20, 20))
    tw, th = f["trained"]
    factor = f"{w / tw:.2g}x per side" if abs(w / tw - h / th) < 0.05 else f"{w / tw:.2g}x wide, {h / th:.2g}x high"
    numbers = [f"trained at {tw} x {th}: {factor}",
               f"{f['steps']} steps · {f['sampler']} · cfg {f['cfg']:g}"
               + (f" · guidance {f['guidance']:g}" if f["guidance"] is not None else ""),
               "one pass, no upscaler"]
    for i, line in enumerate(numbers):
        draw.text((pad, 396 + 56 * i), line, fill=(60, 60, 60), font=_fit_font(draw, line, 40, text_w), anchor="lm")
    _draw_chain(draw, f, colour, top=620)
    return image


def _draw_chain(draw, facts: dict[str, Any], colour: tuple[int, int, int], top: int) -> None:
    """model → [DyPE] → [SEGA] → sampler → image: this pack's nodes filled in the recipe's colour."""
    from PIL import ImageFont

    twice = " x2" if facts["models"] > 1 else ""
    steps = [("model" + twice, False)]
    steps += [("DyPE" + twice, True)] if facts["recipe"] != "sega" else []
    steps += [("SEGA" + twice, True)] if facts["recipe"] != "dype" else []
    steps += [("sampler" + twice, False), ("video" if facts["frames"] else "image", False)]
    font = ImageFont.load_default(size=30)
    gap, height, left, right = 30, 96, 40, THUMB - 40
    width = (right - left - gap * (len(steps) - 1)) / len(steps)
    for i, (text, ours) in enumerate(steps):
        x0 = left + i * (width + gap)
        box = [x0, top, x0 + width, top + height]
        draw.rounded_rectangle(box, radius=14, fill=colour if ours else (255, 255, 255),
                               outline=colour if ours else (150, 150, 150), width=3)
        draw.text(((box[0] + box[2]) / 2, top + height / 2), text, anchor="mm", font=_fit_font(draw, text, 30, width - 12)
                  if draw.textlength(text, font=font) > width - 12 else font, fill="white" if ours else (40, 40, 40))
        if i:
            y = top + height / 2
            draw.line([x0 - gap + 4, y, x0 - 6, y], fill=(120, 120, 120), width=3)
            draw.polygon([(x0 - 4, y), (x0 - 14, y - 7), (x0 - 14, y + 7)], fill=(120, 120, 120))


def thumbnail_bytes(workflow: dict[str, Any]) -> bytes:
    """The .jpg written next to the workflow (the test regenerates and compares these)."""
    import io

    buffer = io.BytesIO()
    thumbnail(workflow).save(buffer, format="JPEG", quality=88, optimize=True)
    return buffer.getvalue()


ICON = WORKFLOWS_DIR.parent / "icon.png"  # pyproject [tool.comfy] Icon points at its raw URL


def icon():
    """The registry icon: DyPE's frequency-compression map (Flux.1 at 4096², 28 steps, the height axis) in the
    preview figure's colours, 400×400."""
    import host
    import torch
    from PIL import Image

    preview = host.pack_submodule("nodes.schedule_preview")
    figure = host.pack_submodule("nodes.schedule_preview.figure")
    ratio = preview.schedule_curves(preview.PreviewRequest(sega=False))["axes"]["rows"]["ratio"]
    rgb = figure.colours(torch.log2(ratio).T.contiguous(), figure.compression_key(ratio))
    pairs, steps, _ = rgb.shape
    panel = Image.frombuffer("RGB", (steps, pairs), bytes(rgb.reshape(-1).tolist()), "raw", "RGB", 0, 1)
    return panel.resize((400, 400), Image.NEAREST)


def main() -> None:
    icon().save(ICON, optimize=True)
    WORKFLOWS_DIR.mkdir(exist_ok=True)
    workflows = build_all()
    for old in sorted(WORKFLOWS_DIR.glob("*.json")) + sorted(WORKFLOWS_DIR.glob("*.jpg")):
        if old.with_suffix(".json").name not in workflows:  # renamed or dropped
            old.unlink()
            print(f"removed workflows/{old.name}")
    for name, workflow in workflows.items():
        path = WORKFLOWS_DIR / name
        path.write_text(render(workflow), encoding="utf-8")
        path.with_suffix(".jpg").write_bytes(thumbnail_bytes(workflow))
        print(f"wrote workflows/{name} and its thumbnail")


if __name__ == "__main__":
    main()
