"""Tiny random-weight models built from ComfyUI's own classes (their configs: tiny_configs.py, families.md §5).

``supported_models.<Family>(unet_config)`` → ``get_model`` → random weights → ``ModelPatcher`` on the CPU. The real
axes split (head dim 128) is kept so the RoPE layout is the production one; only width and depth are tiny.
Call ``host.boot()`` first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from tiny_configs import _NEWER_PARAMS, _NEWER_PARAMS_BY_FAMILY, _PARAMS_CLASSES, CONFIGS, TEXT_WIDTH


@dataclass
class TinyFamily:
    """How to build and drive one tiny family, and the facts a test checks the pack against (families.md §2)."""

    name: str
    build: Callable[[int], Any]
    latent: Callable[[int, int, int], torch.Tensor]  # (batch, latent_h, latent_w) -> empty latent
    cond: Callable[[int, int], list]  # (n_text_tokens, seed) -> ComfyUI conditioning list
    patch: int = 2  # latent pixels per token
    axes_dim: tuple[int, ...] = (16, 56, 56)
    theta: float = 10000.0
    spatial: tuple[int, int] = (1, 2)  # id columns of (row, col)
    embedder_attr: str = "diffusion_model.pe_embedder"
    tokens_first: bool = False  # HiDream's (B, N, 1, pairs, 2, 2)
    px_per_token: int = 16
    text_on_spatial: bool = False  # text ids on the spatial columns (the text rule applies)
    text_last: bool = False  # token order [image, text] (HiDream, HunyuanImage, Lens)
    ids_embedder: bool = True  # the embedder takes ids (EmbedND); False: Cosmos' takes the latent (test_anima_host)
    extra: dict = field(default_factory=dict)

    def latent_hw(self, rows: int, cols: int) -> tuple[int, int]:
        return rows * self.patch, cols * self.patch


#: (seed, the parameters' shapes and dtypes) -> their random values, drawn once per session: the draw depends on
#: nothing else, so a cached copy is the same weights (Anima's 136M parameters take 0.9 s to draw, 0.15 s to copy).
_DRAWN: dict[tuple, list[torch.Tensor]] = {}


def _randomize(model: torch.nn.Module, seed: int) -> None:
    params = list(model.parameters())
    key = (seed, tuple((tuple(p.shape), p.dtype) for p in params))
    if key not in _DRAWN:
        gen = torch.Generator().manual_seed(seed)
        # drawn in float32 and rounded once to the stored dtype (fp8 has no multiply: the value is scaled first)
        _DRAWN[key] = [(torch.randn(p.shape, generator=gen, dtype=torch.float32) * 0.05).to(p.dtype) for p in params]
    with torch.no_grad():
        for p, value in zip(params, _DRAWN[key], strict=True):
            p.copy_(value)


# image_model -> (module, dataclass) holding that family's constructor parameters
_PARAMS_CLASS = {
    "flux": ("comfy.ldm.flux.model", "FluxParams"),
    "flux2": ("comfy.ldm.flux.model", "FluxParams"),
    "chroma": ("comfy.ldm.chroma.model", "ChromaParams"),
    "chroma_radiance": ("comfy.ldm.chroma_radiance.model", "ChromaRadianceParams"),
}


def host_unet_config(unet_config: dict) -> dict:
    """``unet_config`` plus the fields this host's model classes require that older hosts lack.

    Newer hosts (the Ovis commit, after 0.3.75) made ``txt_ids_dims`` a required Flux/Chroma parameter: which id
    columns carry text positions. ``[]`` (``[3]`` for Flux.2) is the layout 0.3.75 hard-codes, so it changes nothing.
    """
    import dataclasses
    import importlib

    config = dict(unet_config)
    where = _PARAMS_CLASS.get(config.get("image_model", ""))
    if where is not None and "txt_ids_dims" not in config:
        params = getattr(importlib.import_module(where[0]), where[1])
        if "txt_ids_dims" in {f.name for f in dataclasses.fields(params)}:
            config["txt_ids_dims"] = [3] if config["image_model"] == "flux2" else []
    return config


def host_config(family: str) -> tuple[str, dict]:
    """The (supported_models class, unet_config) of a tiny family, completed for the running host."""
    import dataclasses
    import importlib

    class_name, config = CONFIGS[family]
    config = dict(config)
    params_path = _PARAMS_CLASSES.get(family if family != "ovis_image" else "flux")
    if params_path:
        module, _, cls = params_path.rpartition(".")
        names = {f.name for f in dataclasses.fields(getattr(importlib.import_module(module), cls))}
        newer = dict(_NEWER_PARAMS, **_NEWER_PARAMS_BY_FAMILY.get(family, {}))
        config.update({k: v for k, v in newer.items() if k in names and k not in config})
    return class_name, config


def _build(class_name: str, unet_config: dict, seed: int, device: str = "cpu", dtype: torch.dtype = torch.float32,
           compute: torch.dtype | None = None):
    import comfy.model_patcher
    import comfy.supported_models

    model_config = getattr(comfy.supported_models, class_name)(host_unet_config(unet_config))
    model_config.set_inference_dtype(dtype, compute)
    model = model_config.get_model({})
    _randomize(model, seed)
    model.eval()
    return comfy.model_patcher.ModelPatcher(model, load_device=torch.device(device), offload_device=torch.device("cpu"))


def build(family: str, seed: int = 0, device: str = "cpu", dtype: torch.dtype = torch.float32,
          compute: torch.dtype | None = None):
    """The tiny model of ``family``, sampled on ``device`` (the CUDA tests: "cuda") with weights stored in ``dtype``;
    ``compute``: ComfyUI's manual cast dtype (the weights cast to it at use, as fp8 checkpoints run: see
    tests/weight_dtypes.py), None to compute in ``dtype`` itself."""
    return _build(*host_config(family), seed, device, dtype, compute)


def build_flux(seed: int = 0, device: str = "cpu", dtype: torch.dtype = torch.float32):
    return build("flux", seed, device, dtype)


def build_qwen(seed: int = 0):
    return build("qwen_image", seed)


def _text(n_tokens: int, seed: int, batch: int = 1, width: int = TEXT_WIDTH) -> torch.Tensor:
    return torch.randn(batch, n_tokens, width, generator=torch.Generator().manual_seed(seed))


def _pooled(seed: int) -> torch.Tensor:
    return torch.randn(1, TEXT_WIDTH, generator=torch.Generator().manual_seed(seed + 1000))


def flux_cond(n_tokens: int = 7, seed: int = 0, guidance: float = 3.5, **extra) -> list:
    return [[_text(n_tokens, seed), {"pooled_output": _pooled(seed), "guidance": guidance, **extra}]]


def qwen_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    return [[_text(n_tokens, seed), dict(extra)]]


def flux2_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    return [[_text(n_tokens, seed), {"pooled_output": None, "guidance": 4.0, **extra}]]


def chroma_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    return [[_text(n_tokens, seed), {"pooled_output": None, **extra}]]


def hidream_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    llama = torch.randn(1, 1, 5, TEXT_WIDTH, generator=torch.Generator().manual_seed(seed + 2000))
    return [[_text(n_tokens, seed), {"pooled_output": _pooled(seed), "conditioning_llama3": llama, **extra}]]


def masked_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    """OmniGen2 needs the attention mask (its num_tokens comes from it)."""
    return [[_text(n_tokens, seed), {"attention_mask": torch.ones(1, n_tokens, dtype=torch.long), **extra}]]


def longcat_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    """LongCat-Image is recognised by its 3584-wide text input, so the tiny model keeps that width."""
    return [[_text(n_tokens, seed, width=3584), dict(extra)]]


def mage_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    """Mage-Flow is recognised by its 2560-wide text norm."""
    return [[_text(n_tokens, seed, width=2560), dict(extra)]]


def kandinsky5_cond(n_tokens: int = 7, seed: int = 0, **extra) -> list:
    """Kandinsky 5 adds its pooled text vector (encode_adm reads ``pooled_output``) to the time embedding."""
    return [[_text(n_tokens, seed), {"pooled_output": _pooled(seed), **extra}]]


def _latent4(channels: int) -> Callable[[int, int, int], torch.Tensor]:
    return lambda b, h, w: torch.zeros(b, channels, h, w)


FAMILIES: dict[str, TinyFamily] = {
    "flux": TinyFamily("flux", build_flux, _latent4(16), flux_cond),
    "qwen_image": TinyFamily("qwen_image", build_qwen, lambda b, h, w: torch.zeros(b, 16, 1, h, w), qwen_cond,
                             text_on_spatial=True),
    "chroma": TinyFamily("chroma", lambda seed=0: build("chroma", seed), _latent4(16), chroma_cond),
    "chroma_radiance": TinyFamily("chroma_radiance", lambda seed=0: build("chroma_radiance", seed), _latent4(3),
                                  chroma_cond, patch=16),
    "flux2": TinyFamily("flux2", lambda seed=0: build("flux2", seed), _latent4(128), flux2_cond, patch=1,
                        axes_dim=(32, 32, 32, 32), theta=2000.0),
    "z_image": TinyFamily("z_image", lambda seed=0: build("z_image", seed), _latent4(16), qwen_cond,
                          axes_dim=(32, 48, 48), theta=256.0, embedder_attr="diffusion_model.rope_embedder"),
    "lumina2": TinyFamily("lumina2", lambda seed=0: build("lumina2", seed), _latent4(16), qwen_cond,
                          axes_dim=(32, 32, 32), embedder_attr="diffusion_model.rope_embedder"),
    "hidream": TinyFamily("hidream", lambda seed=0: build("hidream", seed), _latent4(16), hidream_cond,
                          axes_dim=(64, 32, 32), tokens_first=True),
    "hunyuan_image21": TinyFamily("hunyuan_image21", lambda seed=0: build("hunyuan_image21", seed), _latent4(64),
                                  qwen_cond, patch=1, axes_dim=(64, 64), theta=256.0, spatial=(0, 1),
                                  px_per_token=32),
    "omnigen2": TinyFamily("omnigen2", lambda seed=0: build("omnigen2", seed), _latent4(16), masked_cond,
                           axes_dim=(40, 40, 40), embedder_attr="diffusion_model.rope_embedder.rope_embedder",
                           text_on_spatial=True),
    "ovis_image": TinyFamily("ovis_image", lambda seed=0: build("ovis_image", seed), _latent4(16), flux_cond,
                             text_on_spatial=True),
    "longcat_image": TinyFamily("longcat_image", lambda seed=0: build("longcat_image", seed), _latent4(16),
                                longcat_cond, text_on_spatial=True),
    "krea2": TinyFamily("krea2", lambda seed=0: build("krea2", seed), lambda b, h, w: torch.zeros(b, 16, 1, h, w),
                        qwen_cond, axes_dim=(32, 48, 48), theta=1000.0),
    "mage_flow": TinyFamily("mage_flow", lambda seed=0: build("mage_flow", seed), _latent4(128), mage_cond, patch=1),
    "lens": TinyFamily("lens", lambda seed=0: build("lens", seed), _latent4(128), qwen_cond, patch=1,
                       axes_dim=(8, 28, 28), embedder_attr="diffusion_model.pos_embed", text_on_spatial=True,
                       text_last=True),
    "boogu": TinyFamily("boogu", lambda seed=0: build("boogu", seed), _latent4(16), masked_cond,
                        axes_dim=(40, 40, 40), embedder_attr="diffusion_model.rope_embedder.rope_embedder",
                        text_on_spatial=True),
    "z_image_pixel": TinyFamily("z_image_pixel", lambda seed=0: build("z_image_pixel", seed), _latent4(3), qwen_cond,
                                patch=16, axes_dim=(32, 48, 48), theta=256.0,
                                embedder_attr="diffusion_model.rope_embedder"),
    "kandinsky5_image": TinyFamily("kandinsky5_image", lambda seed=0: build("kandinsky5_image", seed), _latent4(16),
                                   kandinsky5_cond, axes_dim=(32, 48, 48),
                                   embedder_attr="diffusion_model.rope_embedder_3d"),
    "anima": TinyFamily("anima", lambda seed=0: build("anima", seed), lambda b, h, w: torch.zeros(b, 16, 1, h, w),
                        qwen_cond, axes_dim=(44, 42, 42), theta=10000.0 * 4.0 ** (42 / 40),
                        embedder_attr="diffusion_model.pos_embedder", ids_embedder=False),
}


def missing_on_this_host(family: str) -> str:
    """Why ``family`` cannot be built on the running host (it is a newer host's), or "" when it can: its needs
    (headless/host_needs.py, the rule the demo's --list reads from the host's source) checked on the imported host."""
    from headless import host_needs

    missing = [need.what for need in host_needs.family_needs(family) if not need.imported()]
    return f"this ComfyUI has no {missing[0]}" if missing else ""


def sample(model, family: str, latent_hw: tuple[int, int] | None = None, *, tokens: tuple[int, int] | None = None,
           steps: int = 2, cfg: float = 1.0, sampler: str = "euler", scheduler: str = "simple", seed: int = 0,
           batch: int = 1, positive=None, negative=None, noise: torch.Tensor | None = None,
           callback=None) -> torch.Tensor:
    """Run ``comfy.sample.sample`` on a tiny model with a seeded noise latent of ``latent_hw`` latent pixels (or
    ``tokens`` = (rows, cols) of the family's tokens)."""
    import comfy.sample

    fam = FAMILIES[family]
    if tokens is not None:
        latent_hw = fam.latent_hw(*tokens)
    latent = fam.latent(batch, *latent_hw)
    if noise is None:
        noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(seed))
    positive = positive if positive is not None else fam.cond(7, 1)
    negative = negative if negative is not None else fam.cond(5, 2)
    return comfy.sample.sample(model, noise, steps, cfg, sampler, scheduler, positive, negative, latent,
                               seed=seed, disable_pbar=True, callback=callback)
