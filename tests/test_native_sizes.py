"""Every family at its documented native sizes: one real model call through the patched model (DyPE + SEGA on
their defaults, ``base_resolution`` 0) builds exactly the stock table, bit for bit. The sizes are the ones the
adapters cite (``base_source``); a negative control one step above the largest proves each check can fail.

The forward is stopped right after the embedder has built the image's table (a hook raises), so a 2048² or
2560² latent costs one table, not one attention over 16k tokens.
"""

from __future__ import annotations

import nunchaku_flux_standin
import pytest
import qwen_image21_standin
import tiny_models
import tiny_video
import torch
from native_sizes import NATIVE

pytestmark = pytest.mark.usefixtures("comfy_host")


class _Stop(Exception):
    """Raised by the hook once the image's table is built: the rest of the forward is not needed."""


#: Models no host here has, on their stand-ins (tests/*_standin.py).
STANDINS = {"nunchaku_flux": nunchaku_flux_standin.FAMILY, "qwen_image21": qwen_image21_standin.FAMILY}


def _pack(name: str):
    import host

    return host.pack_submodule(name)


class Tiny:
    """One tiny family of either kind: its model, a 1-frame latent of w x h px, its conds and embedder."""

    def __init__(self, name: str) -> None:
        self.video = name not in tiny_models.FAMILIES and name not in STANDINS
        if name in STANDINS:
            self.fam, self.key = STANDINS[name], name
        elif self.video:
            key = "wan21" if name == "wan21_1_3b" else name
            self.fam = tiny_video.FAMILIES[key]
            self.extra = dict(dim=1536, num_heads=12) if name == "wan21_1_3b" else {}
            self.key = key
        else:
            self.fam = tiny_models.FAMILIES[name]
            why = tiny_models.missing_on_this_host(name)
            if why:
                pytest.skip(f"{name} is not on this host: {why}")
            self.key = name

    def build(self):
        return tiny_video.build(self.key, 0, **self.extra) if self.video else self.fam.build(0)

    def latent(self, width: int, height: int, px_per_token: int) -> torch.Tensor:
        patch = self.fam.patch
        h, w = -(-height // px_per_token) * patch, -(-width // px_per_token) * patch  # whole tokens, as padded
        if self.video:
            return torch.zeros(1, self.fam.channels, 1, h, w)
        return self.fam.latent(1, h, w)


def _first_image_table(model, tiny: Tiny, width: int, height: int, adapter) -> tuple[tuple, dict, torch.Tensor]:
    """(args, kwargs, table) of the first embedder call that holds the image's tokens, in one real sampler step:
    ids for EmbedND-style embedders, the latent for Anima's Cosmos module (one call, the image's)."""
    import comfy.sample

    latent = tiny.latent(width, height, adapter.px_per_token)
    grid = adapter.token_grid(latent)
    embedder = model.get_model_object(adapter.embedder_attr)
    seen = []

    def hook(module, args, kwargs, output):
        tokens = args[0].shape[-2] if args[0].dim() in (2, 3) else args[0].shape[1:4].numel()  # ids or Cosmos' latent
        if tokens >= grid[0] * grid[1]:
            seen.append((tuple(a.detach().clone() for a in args), dict(kwargs), output.detach().clone()))
            raise _Stop

    handle = embedder.register_forward_hook(hook, with_kwargs=True)
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
    try:
        with pytest.raises(_Stop):
            comfy.sample.sample(model, noise, 1, 1.0, "euler", "simple", tiny.fam.cond(7, 1), tiny.fam.cond(7, 2),
                                latent, seed=0, disable_pbar=True)
    finally:
        handle.remove()
    return seen[0]


def _patched(model, variant: str | None):
    """DyPE and SEGA on their defaults through the nodes themselves, base_resolution 0, the family's variant."""
    nodes = _pack("nodes.dype_node"), _pack("nodes.sega_node")
    extra = {} if variant is None else {"variant": variant}
    model = nodes[0].DyPEPatchModel.execute(model, "yarn", True, 2.0, 2.0, 0, "multiply", **extra).result[0]
    return nodes[1].SEGAAttention.execute(model, 0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0, **extra).result[0]


@pytest.mark.parametrize("case", list(NATIVE))
def test_documented_native_sizes_build_the_stock_table(case):
    name, sizes, variant = NATIVE[case]
    tiny = Tiny(name)
    model = tiny.build()
    adapter = _pack("nodes.families").detect_family(model.model)
    patched = _patched(model, variant)
    stock = patched.get_model_object(adapter.embedder_attr).original
    for width, height in sizes:
        args, kwargs, table = _first_image_table(patched, tiny, width, height, adapter)
        assert torch.equal(table, stock(*args, **kwargs)), f"{case} at its documented {width}x{height} is rescaled"
    # Negative control: a quarter more than the largest documented side on every axis is above the trained size.
    side = max(max(size) for size in sizes) * 5 // 4
    args, kwargs, table = _first_image_table(patched, tiny, side, side, adapter)
    assert not torch.equal(table, stock(*args, **kwargs))


def test_every_adapter_and_variant_has_a_native_size_case():
    families = _pack("nodes.families")
    names = {adapter.name for adapter in families.ADAPTERS}
    covered = {case for case in NATIVE if case in names}
    assert covered == names
    options = {variant.option for adapter in families.ADAPTERS for variant in adapter.variants[1:]}
    assert options == {v for _, _, v in NATIVE.values() if v is not None}


def test_every_base_source_is_a_citation_or_says_what_was_searched():
    for adapter in _pack("nodes.families").ADAPTERS:
        source = adapter.base_source
        assert len(source) > 40, f"{adapter.name}: {source!r} is not a citation"
        if "INFERRED" in source:
            assert "searched" in source, f"{adapter.name}: INFERRED without saying what was searched"
        for variant in adapter.variants:  # its long side selects exactly its size
            assert variant.source and adapter.trained_size(max(variant.size_hw)) == tuple(map(float, variant.size_hw))
        if adapter.variants:  # the first variant is the default, and the largest
            assert max(adapter.variants[0].size_hw) == adapter.default_base_px
            assert all(max(v.size_hw) <= adapter.default_base_px for v in adapter.variants)
