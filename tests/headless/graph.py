"""The pieces every example graph is built from: node shapes and download links, ``Graph`` (nodes and links
numbered in creation order, saved as UI format 0.4), the column layout and the saved view (``fit_view``).

The node shapes are written by hand on purpose: tests/test_workflows.py checks every file against the live ComfyUI
registry. make_workflows.py and video_workflows.py build the shipped graphs with these.
"""

from __future__ import annotations

import math
import uuid
from pathlib import Path
from typing import Any

from . import node_heights, note_heights
from .image_families import SPECS

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
    # The HiFlow Cascade examples (tests/headless/hiflow_workflows.py) and the nodes of their image input.
    "DyPESEGA_HiFlowCascade": ([("model", "MODEL"), ("positive", "CONDITIONING"), ("negative", "CONDITIONING"),
                                ("vae", "VAE"), ("latent", "LATENT"), ("stage_model", "MODEL")],
                               [("seed", "INT"), ("steps", "INT"), ("cfg", "FLOAT"), ("denoise", "FLOAT")]
                               + [(n, "STRING") for n in ("scales", "stage_steps", "stage_guidance", "alphas",
                                                          "betas", "filter_ratio", "ntk_factor")]
                               + [("proportional_attention", "BOOLEAN"), ("swin", "BOOLEAN"), ("sharpen", "FLOAT"),
                                  ("schedule", "COMBO")],
                               [("latent", "LATENT"), ("base", "LATENT")], PACK),
    # The upload button is a widget with its own socket (frontend >= 1.16), saved after the file combo.
    "LoadImage": ([], [("image", "COMBO"), ("upload", "IMAGEUPLOAD")], [("IMAGE", "IMAGE"), ("MASK", "MASK")], CORE),
    "ImageScale": ([("image", "IMAGE")], [("upscale_method", "COMBO"), ("width", "INT"), ("height", "INT"),
                                          ("crop", "COMBO")], [("IMAGE", "IMAGE")], CORE),
    "VAEEncode": ([("pixels", "IMAGE"), ("vae", "VAE")], [], [("LATENT", "LATENT")], CORE),
}
# Inputs the node declares optional: the frontend draws (and saves) their socket as a hollow circle, shape 7.
OPTIONAL_INPUTS = {("DualCLIPLoader", "device"), ("CLIPLoader", "device"), ("DyPESEGA_SEGAAttention", "allocation"),
                   ("DyPESEGA_SEGAAttention", "m_ref"), ("DyPESEGA_SEGAAttention", "recipe"),
                   ("DyPESEGA_PatchModel", "variant"), ("DyPESEGA_SEGAAttention", "variant"),
                   ("DyPESEGA_HiFlowCascade", "stage_model"), ("DyPESEGA_HiFlowCascade", "schedule")}
HOLLOW_CIRCLE = 7
# Widget sockets the frontend labels with another name than the input's (LoadImage's upload button).
LOCALIZED_NAMES: dict[tuple[str, str], str] = {("LoadImage", "upload"): "choose file to upload"}
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
LATENT_NODES = ("EmptySD3LatentImage", "EmptyLatentImage", "EmptyFlux2LatentImage", "EmptyChromaRadianceLatentImage",
                "EmptyHunyuanImageLatent")


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
            hollow = {"shape": HOLLOW_CIRCLE}
            node["inputs"] = [{"localized_name": n, "name": n, "type": t, "link": None}
                              | (hollow if (node_type, n) in OPTIONAL_INPUTS else {}) for n, t in sockets] + [
                {"localized_name": LOCALIZED_NAMES.get((node_type, n), n), "name": n, "type": t, "widget": {"name": n},
                 "link": None} | (hollow if (node_type, n) in OPTIONAL_INPUTS else {})
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
        # "order" is the frontend's execution order, as LiteGraph's computeExecutionOrder sorts the links: a queue
        # that starts with the nodes without linked inputs in node order and appends each node once its last input
        # link has been visited, in the order of its sources' output links.
        waiting = {n["id"]: sum(s["link"] is not None for s in n.get("inputs", [])) for n in self.nodes}
        queue = [i for i, count in waiting.items() if count == 0]
        targets = {lk[0]: lk[3] for lk in self.links}
        for node_id in queue:  # the list grows while it is walked
            for out in self.nodes[node_id - 1].get("outputs", []):
                for link_id in out["links"]:
                    waiting[targets[link_id]] -= 1
                    if waiting[targets[link_id]] == 0:
                        queue.append(targets[link_id])
        for order, node_id in enumerate(queue):
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
# Load Image's height: room for its picture in Nodes 2.0 too, where frontend 1.32 draws the node 1.2x wide and the
# square example picture as wide as the node (its body then needs about 380 units; test_browser_ui.py).
LOAD_IMAGE_H = 400
# Where the last column ends: Save Image fills the sampler column down to here, which makes the graph tall enough
# for the margins above (about 1676 × 974 units with the fit's padding).
LAYOUT_BOTTOM = 954


def unfolded_height(node_type: str, width: int) -> float:
    """The body height of this node with Nodes 2.0 on and its advanced inputs shown (node_heights.py: measured in
    every frontend, the tallest)."""
    sockets, widget_inputs, _, _ = SHAPES[node_type]
    return node_heights.room(node_type, width, [name for name, _ in sockets + widget_inputs])


class Column:
    """One column of the layout: ``add`` puts a node under the previous one, below the room the node takes at the
    classic size it saves or, taller, with Nodes 2.0 on and its advanced inputs shown (``unfolded_height``)."""

    def __init__(self, g: Graph, x: int, width: int) -> None:
        self.g, self.x, self.width, self.bottom = g, x, width, None

    def add(self, node_type: str, height: int, widgets: list) -> int:
        y = self.next_y(node_type)
        self.bottom = y + max(height, math.ceil(unfolded_height(node_type, self.width)))
        return self.g.add(node_type, (self.x, y), (self.width, height), widgets)

    def fill(self, node_type: str, widgets: list, at_least: int = 0) -> int:
        """A node reaching down to LAYOUT_BOTTOM, or ``at_least`` high where the column is already longer; never
        shorter than Nodes 2.0 draws it (the column's last node: no room below it)."""
        height = max(at_least, LAYOUT_BOTTOM - self.next_y(node_type),
                     math.ceil(unfolded_height(node_type, self.width)))
        return self.add(node_type, height, widgets)

    def next_y(self, node_type: str) -> int:
        """Where the next node (its body; the title above) goes in this column."""
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


def add_note(g: Graph, text: str) -> None:
    """The recipe note, left of everything, as tall as its text measured in the browser (note_heights.py)."""
    g.add("MarkdownNote", (0, TITLE_H), (NOTE_W, note_heights.height(text, NOTE_W)), [text])
