"""Write the example workflows in ``workflows/`` (UI format 0.4, as the ComfyUI frontend 1.32 saves them).

Run ``python tests/headless/make_workflows.py`` after editing; the JSON files and their same-name ``.jpg``
thumbnails (what ComfyUI's template browser shows) are committed. Node ids, link ids, slot indices and widget orders
all come from one place here, so they cannot drift apart. The node shapes below are written by hand on purpose:
tests/test_workflows.py checks every file against the live ComfyUI registry.

This module builds the graphs (graph.py: shapes, layout, saved view; cards.py: the card pictures). File names are
what a user reads in the template browser (it shows the file stem as the card title), so they are
written for people. Model file names and download links are those of ComfyUI's official templates (PyPI
``comfyui-workflow-templates``: flux_dev_full_text_to_image, flux1_krea_dev, image_qwen_image), so a user who ran
one of those already has the files. The other image families (Chroma, Flux.2, Z-Image, ...) are one
``FamilyWorkflow`` each in image_families.py, built by ``family_workflow`` below.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

try:
    from .card_names import card_name
    from .cards import ICON, icon, thumbnail_bytes, write_help_pictures
    from .family_spec import FamilyWorkflow
    from .graph import WORKFLOWS_DIR, Column, Graph, Layout, add_note
    from .image_families import SPECS
    from .notes import NOTES, NUNCHAKU_FLUX, family_note
except ImportError:  # run as a script: python tests/headless/make_workflows.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from headless.card_names import card_name
    from headless.cards import ICON, icon, thumbnail_bytes, write_help_pictures
    from headless.family_spec import FamilyWorkflow
    from headless.graph import WORKFLOWS_DIR, Column, Graph, Layout, add_note
    from headless.image_families import SPECS
    from headless.notes import NOTES, NUNCHAKU_FLUX, family_note

# Our nodes' widget values in the examples: the nodes' defaults, in widget order (the variant, last, set per family).
DYPE_DEFAULTS = ["yarn", True, 2.0, 2.0, 0, "multiply", "auto"]
SEGA_DEFAULTS = [0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, "rank", "power", "paper (official SEGA code)", "auto"]


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


def qwen(name: str, *, width: int, height: int, prompt: str, seed: int, slug: str, dype: bool = True,
         note: str | None = None) -> dict[str, Any]:
    g = Graph()
    at = Layout(g)
    unet_id = at.loaders.add("UNETLoader", 82, ["qwen_image_fp8_e4m3fn.safetensors", "default"])
    clip = at.loaders.add("CLIPLoader", 110, ["qwen_2.5_vl_7b_fp8_scaled.safetensors", "qwen_image", "default"])
    vae = at.loaders.add("VAELoader", 60, ["qwen_image_vae.safetensors"])
    shift = at.loaders.add("ModelSamplingAuraFlow", 60, [3.1])
    g.link(unet_id, 0, shift, "model")
    model = _patches(g, at.ours, shift, sega=True, dype=dype)
    _tail(g, at, model, clip, vae, prompt=prompt, negative=" ", width=width, height=height, seed=seed, steps=20,
          cfg=2.5, guidance=None, prefix=f"dype/{slug}")
    add_note(g, note_text(name) if note is None else note)
    return g.to_json(name)


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

# The card names. The template browser shows the file stem as the card's title (and, for a custom node's templates,
# as its description too), and that stem is all its search reads. Frontends 1.32 and 1.47 search it with Fuse.js
# (threshold 0.4 and 0.33, distance 100): a word is found only if it starts within about 32 characters of the
# name's start. 1.53 (MiniSearch) finds any word, or the start of one. So every name starts with what people search
# for and what the card picture shows, shortest first: the number (the order A → Z and a by-name listing show: 0.38
# lists each pack's templates sorted by file name), the recipe, "video" for a video, the size ("4K" and the pixels),
# then the model, the same words as the card picture's model line (test_workflow_cards.py checks both), and "or
# Nunchaku" where the note says how to run it on Nunchaku (``shipped``).
def _keys() -> list[str]:
    """All workflows in card order: the published SEGA recipe and plain DyPE on Flux.1-dev first, the other Flux.1
    and Qwen-Image ones, every other image family A→Z, then video, then the HiFlow cascades."""
    families = sorted((spec.file for spec in SPECS), key=str.lower)
    return [FLUX_KREA_SEGA, FLUX_DEV_4096, FLUX_DEV_UHD, FLUX_KREA_4096, QWEN_4096, *families,
            *_sibling("video_workflows").NAMES, *_sibling("hiflow_workflows").NAMES]


def _numbers() -> dict[str, int]:
    """Each key's card number: the workflows above in order from 1, then the paper settings' and the newest models'
    fixed numbers (their modules' FIRST_NUMBER on), each group after the one before."""
    numbers = {k: number for number, k in enumerate(_keys(), start=1)}
    for group in (_sibling("paper_workflows"), _sibling("newest_workflows"), _sibling("imax_workflows"),
                  _sibling("hrdit_workflows")):
        if len(numbers) >= group.FIRST_NUMBER:
            raise ValueError(f"{len(numbers)} workflows come before {group.__name__}.FIRST_NUMBER {group.FIRST_NUMBER}")
        numbers |= {k: number for number, k in enumerate(group.NAMES, start=group.FIRST_NUMBER)}
    return numbers


def shipped(key: str) -> str:
    """The file name in workflows/ of the workflow with this key ("or Nunchaku" where its note says how)."""
    return card_name(key, _numbers()[key], nunchaku=NUNCHAKU_FLUX in _written_notes().get(key, ""))


def _written_notes() -> dict[str, str]:
    """Key → note of every note written out in a module (the other families' are built from their spec, and none of
    them is a FLUX.1 model)."""
    newest = _sibling("newest_workflows")
    written = [_sibling(name).NOTES for name in ("paper_workflows", "hiflow_workflows", "imax_workflows",
                                                 "hrdit_workflows")]
    return {**NOTES, **{k: v for notes in written for k, v in notes.items()}, newest.QWEN21_4096: newest.NOTE}


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
    } | _sibling("video_workflows").build_video() | _sibling("paper_workflows").build_paper() \
        | _sibling("hiflow_workflows").build() | _sibling("newest_workflows").build_newest() \
        | _sibling("imax_workflows").build_imax() | _sibling("hrdit_workflows").build_hrdit()
    return {shipped(key): built[key] for key in _numbers()}


def _sibling(name: str):
    """A module of this package that builds on this one (video_workflows, paper_workflows, hiflow_workflows,
    newest_workflows, imax_workflows, hrdit_workflows), imported when first needed: it imports this module."""
    import importlib

    return importlib.import_module(f"{__package__ or 'headless'}.{name}")


def render(workflow: dict[str, Any]) -> str:
    """The exact text written to disk (the test compares the committed files against it)."""
    return json.dumps(workflow, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    icon().save(ICON, optimize=True)
    write_help_pictures()
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
