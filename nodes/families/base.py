"""What the patch needs to know about one model family. One small module per family fills it in.

Every family follows one rule, the spatial-only rule (nodes/rope_patch/spatial_only.py, docs/models.md, "The text rule"): only the
id columns in ``spatial_axes`` are rescaled, every token on them included (text and references too); time, text and
index columns keep the model's own frequencies. A family module says where its text and extra streams sit; which
columns that leaves alone follows from the rule, never from code of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from ...spectral import NO_QUIRKS, PaperQuirks

if TYPE_CHECKING:  # facts only: importing the families needs no torch (the commands' --help lists them)
    import torch

#: EmbedND's ``(B, 1, N, pairs, 2, 2)``: the size-1 head dim is inserted at dim 1 ...
HEADS_FIRST = 1
#: ... and HiDream's own EmbedND copy returns ``(B, N, 1, pairs, 2, 2)``.
TOKENS_FIRST = 2
#: What ``embedder_attr`` holds: an EmbedND-style module called with ids (every family but one) ...
EMBEDND = "embednd"
#: ... or Cosmos' VideoRopePosition3DEmb, called with the latent's shape (Anima; nodes/rope_patch/cosmos_embedder.py),
COSMOS_ROPE = "cosmos"
#: ... or nunchaku's own EmbedND, [sin, cos] pairs for its fused kernels (nodes/rope_patch/nunchaku_embedder.py).
NUNCHAKU_ROPE = "nunchaku"
#: How many rows a table has for a call of B samples: one per sample (the family builds batched ids) ...
PER_SAMPLE = "per_sample"
#: ... one for the whole batch (the embedder gets batch-1 ids and the attention takes a single table: SEGA's
#: per-image temperatures cannot be given) ...
ONE_TABLE = "one"
#: ... or one when the call's schedule is one row, one per sample where SEGA's temperatures differ by image (the
#: embedder gets batch-1 ids; the attention takes either).
ONE_OR_PER_SAMPLE = "one_or_per_sample"
#: The module that defines ComfyUI's model classes.
COMFY_MODEL_BASE = "comfy.model_base"


@dataclass(frozen=True)
class Variant:
    """A checkpoint of a family that neither ComfyUI's model config nor the weights tell apart from the family's
    others, with its own trained size. The user picks it by name on the nodes (``variant``)."""

    label: str  # what the node lists, the family's name included ("Krea 2 Turbo")
    size_hw: tuple[int, int]  # trained (rows, cols) px, landscape; its long side selects it in trained_size()
    source: str  # where the size comes from

    @property
    def option(self) -> str:
        """The node's combo entry: the label and the trained size, so the choice explains itself."""
        rows, cols = self.size_hw
        return f"{self.label} ({cols}x{rows})"


@dataclass(frozen=True)
class TokenEmbedding:
    """The family's patch embedding, whose output tokens the official SEGA code takes its spectrum of.

    ``attr``: the layer's path on the BaseModel. ``layout``: how the model feeds it: a Linear on each latent patch
    flattened as ``"c ph pw"`` (Flux, Qwen-Image: channel-major) or ``"ph pw c"`` (Lumina, OmniGen2, HiDream:
    channel-minor), or ``"conv"``, a convolution with stride = kernel = patch on the latent itself (Wan,
    HunyuanVideo, Chroma Radiance).
    """

    attr: str
    layout: Literal["c ph pw", "ph pw c", "conv"]


@dataclass(frozen=True)
class FamilyAdapter:
    """Facts about a RoPE DiT family as ComfyUI implements it (docs/ARCHITECTURE.md, "Adding a model family")."""

    name: str  # short id, also used in node options and logs
    display_name: str
    model_base_classes: frozenset[str]  # ComfyUI model_base class names, matched exactly (see comfy_class_name)
    embedder_attr: str  # path for add_object_patch / get_model_object
    spatial_axes: tuple[int, int]  # id columns holding (row, col); every other keeps its frequencies (spatial_only.py)
    patch_size: int  # latent pixels per token along each spatial axis
    px_per_token: int  # image pixels per token (VAE factor * patch size)
    default_base_px: int  # trained long side, px: the largest documented, on both axes unless default_base_hw is set
    base_source: str  # where default_base_px comes from (docs/models.md's table quotes it)
    theta: float  # the family's RoPE base (the live embedder's value is what the patch uses)
    axes_dim: tuple[int, ...]  # per id column, channels (2 per pair), as the family ships it
    pe_unsqueeze_dim: int = HEADS_FIRST  # where the embedder inserts its size-1 dim (the pe layout)
    accepts: Callable[[object], bool] | None = None  # extra test on the BaseModel (its params), when class is shared
    preview_shift: tuple[str, float] = ("exponential", 1.15)  # default sigma shift rule, for the schedule preview
    default_base_hw: tuple[int, int] | None = None  # non-square trained size (rows, cols px, landscape); None: square
    video: bool = False  # generates frames: one id column is time, never scaled (spatial_only.py)
    pixel_space: bool = False  # no VAE: the patch (read from the model, detection reads it from the weights) is
    #                            the image pixels per token
    #: Other sizes the family was trained at, (rows, cols px) landscape: a ``base_resolution`` equal to one's long
    #: side selects it exactly (Wan 14B: 832 -> 832x480); any other value keeps the default's aspect.
    trained_sizes: tuple[tuple[int, int], ...] = ()
    #: SEGA "paper": the layer whose output tokens give the spectrum (None: the packed latent tokens, as the port)
    token_embedding: TokenEmbedding | None = None
    #: SEGA "paper": where the family's official SEGA code departs from the general rule (Qwen-Image)
    paper_quirks: PaperQuirks = NO_QUIRKS
    #: Checkpoints with other trained sizes that nothing in the model tells apart; the first is the default (its
    #: size is ``default_base_hw`` / ``default_base_px``: the largest, so no variant's native size is rescaled).
    variants: tuple[Variant, ...] = ()
    embedder_kind: str = EMBEDND  # EMBEDND, COSMOS_ROPE or NUNCHAKU_ROPE: which replacement patches embedder_attr
    table_batch: str = PER_SAMPLE  # PER_SAMPLE, ONE_TABLE or ONE_OR_PER_SAMPLE: the rows the model's table has
    #: The transformer_options key of a text/reference K/V cache the model keeps across steps (Qwen-Image 2.1), set
    #: to "off" for the calls whose table the pack changes (nodes/rope_patch/prefix_cache.py); None: no such cache.
    prefix_cache_option: str | None = None

    def bound(self, base_model) -> FamilyAdapter:
        """This adapter with what only the loaded model knows (a pixel-space model's patch size)."""
        if not self.pixel_space:
            return self
        patch = int(base_model.diffusion_model.patch_size)
        return replace(self, patch_size=patch, px_per_token=patch)

    def matches(self, base_model) -> bool:
        if comfy_class_name(base_model) not in self.model_base_classes:
            return False
        return self.accepts is None or bool(self.accepts(base_model))

    def token_grid(self, latent: torch.Tensor) -> tuple[int, int]:
        """Token rows and columns of the generated latent, from its shape (the model pads up to the patch size)."""
        height, width = latent.shape[-2], latent.shape[-1]
        p = self.patch_size
        return -(-height // p), -(-width // p)

    def base_tokens(self, base_px: float) -> float:
        return base_px / self.px_per_token

    def trained_size(self, base_px: float) -> tuple[float, float]:
        """The trained (short, long) side in pixels. ``base_px`` > 0 is the user's long side (the node's
        ``base_resolution``); the short side is then a listed trained size's or follows the default's aspect."""
        short, long = sorted(self.default_base_hw or (self.default_base_px, self.default_base_px))
        if base_px <= 0:
            return float(short), float(long)
        for size in self.trained_sizes:
            if max(size) == base_px:
                return float(min(size)), float(base_px)
        return short * base_px / long, float(base_px)

    def base_grid(self, base_px: float, grid: tuple[int, int] | None = None) -> tuple[float, float]:
        """Trained tokens per spatial axis (rows, cols), oriented like the generated ``grid``: non-square families
        were trained in both orientations (Wan: 832x480 and 480x832), so a portrait latent is compared with the
        portrait trained size. Square families (every image family) are unaffected."""
        short, long = self.trained_size(base_px)
        rows, cols = (long, short) if grid is not None and grid[0] > grid[1] else (short, long)
        return self.base_tokens(rows), self.base_tokens(cols)

    def spatial_axis_dim(self) -> int:
        return self.axes_dim[self.spatial_axes[0]]


def comfy_class_name(base_model) -> str:
    """The ComfyUI ``model_base`` class ``base_model`` is: its own class when ComfyUI defines it, else its nearest
    ComfyUI base class. ComfyUI's own classes are matched exactly (``Chroma`` subclasses ``Flux`` and ``MageFlow``
    ``QwenImage``, each with its own positions; a new ComfyUI subclass must be verified before it is accepted),
    while another pack's subclass of one (Nunchaku's ``NunchakuQwenImage(QwenImage)``) is that class: such packs
    swap the blocks, not the positions. Whether its embedder is ComfyUI's own is checked when patching."""
    for cls in type(base_model).__mro__:
        if cls.__module__ == COMFY_MODEL_BASE:
            return cls.__name__
    return type(base_model).__name__


def params_attr(base_model, name: str, default=None):
    """``base_model.diffusion_model.params.<name>`` (Flux-style params), or ``default`` where there is none."""
    params = getattr(getattr(base_model, "diffusion_model", None), "params", None)
    return getattr(params, name, default)


def distilled_guidance(base_model) -> bool:
    """Whether the diffusion model takes FLUX.1-dev's distilled guidance: ComfyUI's ``params.guidance_embed``, or,
    for a wrapper without params, the ``config["guidance_embed"]`` it passes guidance by (ComfyUI-nunchaku @dbfd194,
    ``wrappers/flux.py``: ``guidance=guidance if self.config["guidance_embed"] else None``)."""
    diffusion_model = getattr(base_model, "diffusion_model", None)
    if getattr(diffusion_model, "params", None) is not None:
        return bool(params_attr(base_model, "guidance_embed", False))
    config = getattr(diffusion_model, "config", None)
    return isinstance(config, dict) and bool(config.get("guidance_embed", False))
