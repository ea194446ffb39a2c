"""What every fault-matrix row is made of: the ``row`` registry (``REGISTERED``), the ``Lab`` (one input model per
family, its stock output, the leak checks run after every row) and the helpers rows share: the nodes as a graph calls
them, tiny models of unsupported classes, stock nodes, sampling with explicit sigmas."""


from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import tiny_models
import torch
from patching import BASE_PX, _pack, expected_table

pytestmark = pytest.mark.usefixtures("comfy_host")

HW = (16, 16)  # 8 x 8 tokens: scale 2 on both axes over the 4-token test base


@dataclass(frozen=True)
class Row:
    case: str  # the input or fault
    behaviour: str  # what the pack does (docs/fault-matrix.md's right column)
    check: Callable[[Lab], None]
    family: str = "flux"

    @property
    def id(self) -> str:
        return self.check.__name__.removeprefix("row_")


REGISTERED: list[Row] = []  # in the order each theme module defines its rows


def row(case: str, behaviour: str, family: str = "flux"):
    def register(check: Callable[[Lab], None]) -> Callable[[Lab], None]:
        REGISTERED.append(Row(case, behaviour, check, family))
        return check

    return register


class Lab:
    """One input model per family, its stock output before any row, and the leak checks."""

    def __init__(self, family: str) -> None:
        self.family = family
        self.fam = tiny_models.FAMILIES[family]
        self.model = self.fam.build(0)
        self.embedder = self.model.model.diffusion_model.pe_embedder
        self.reference = self.sample(self.model)

    def sample(self, model, hw=HW, **kwargs) -> torch.Tensor:
        kwargs.setdefault("steps", 1)
        kwargs.setdefault("cfg", 2.0)
        return tiny_models.sample(model, self.family, hw, **kwargs)

    def assert_nothing_leaked(self) -> None:
        import comfy.model_management

        scopes = _pack("nodes.rope_patch.scopes")
        config = _pack("nodes.rope_patch.config")
        assert scopes.RUN.get() is None and scopes.STEP.get() is None and scopes.CALL.get() is None
        assert not self.model.object_patches and not any(self.model.wrappers.values())
        options = self.model.model_options.get("transformer_options", {})
        assert not any(key.startswith(config.CONFIG_KEY) for key in options)
        comfy.model_management.unload_all_models()
        assert self.model.model.diffusion_model.pe_embedder is self.embedder
        assert torch.equal(self.sample(self.model), self.reference)

def dype(model, base_px: int = BASE_PX, method: str = "yarn", dynamic: bool = True, lambda_t: float = 2.0,
         lambda_s: float = 2.0, yarn_thresholds: str = "multiply"):
    """Through the node itself, as a graph would call it."""
    node = _pack("nodes.dype_node").DyPEPatchModel
    return node.execute(model, method, dynamic, lambda_t, lambda_s, base_px, yarn_thresholds).result[0]


def sega(model, base_px: int = BASE_PX, **settings):
    node = _pack("nodes.sega_node").SEGAAttention
    values = dict(kappa=0.08, alpha=0.15, beta=1.5, spread_min=0.0, spread_max=1.0, spread_alpha=1.5, floor=0.0)
    values.update(settings)
    return node.execute(model, base_resolution=base_px, **values).result[0]


def assert_tables_follow_the_schedule(calls, grid=(8, 8), **schedule) -> None:
    assert calls, "the model was never called"
    for call in calls:
        assert call.tables, "the embedder was never called"
        for ids, pe in call.tables:
            assert torch.equal(pe, expected_table(ids, call.sigma, grid, BASE_PX / 16, **schedule))


def build_other(class_name: str, unet_config: dict):
    """A tiny model of a family the pack does not support, from comfy.supported_models."""
    import comfy.model_patcher
    import comfy.supported_models

    config = getattr(comfy.supported_models, class_name)(dict(unet_config))
    config.set_inference_dtype(torch.float32, None)
    return comfy.model_patcher.ModelPatcher(config.get_model({}), torch.device("cpu"), torch.device("cpu"))


_UNET = dict(use_checkpoint=False, image_size=32, in_channels=4, out_channels=4, model_channels=32, num_res_blocks=1,
             channel_mult=[1], num_head_channels=16, transformer_depth=[1], transformer_depth_output=[1, 1],
             transformer_depth_middle=-2, context_dim=32, use_linear_in_transformer=False, adm_in_channels=None,
             use_temporal_attention=False, use_spatial_transformer=True, legacy=False)
UNSUPPORTED = {  # model_base class -> (supported_models config, tiny unet_config)
    "BaseModel": ("SD15", _UNET),
    "SDXL": ("SDXL", dict(_UNET, use_linear_in_transformer=True, adm_in_channels=2816, num_classes="sequential",
                          context_dim=2048)),
    "SD3": ("SD3", dict(in_channels=16, out_channels=16, patch_size=2, depth=1, num_patches=64, pos_embed_max_size=8,
                        adm_in_channels=32, context_embedder_config={
                            "target": "torch.nn.Linear", "params": {"in_features": 32, "out_features": 64}})),
    "AuraFlow": ("AuraFlow", dict(max_seq=64, cond_seq_dim=32, n_double_layers=1, n_layers=1, dim=64, n_heads=1,
                                  patch_size=2, in_channels=4, out_channels=4)),
    "PixArt": ("PixArtAlpha", dict(image_model="pixart_alpha", input_size=8, patch_size=2, in_channels=4,
                                   hidden_size=64, depth=1, num_heads=1, caption_channels=32, pe_interpolation=1.0,
                                   micro_condition=False)),
    "HunyuanDiT": ("HunyuanDiT", dict(image_model="hydit", input_size=(8, 8), patch_size=2, in_channels=4,
                                      hidden_size=88, depth=2, num_heads=1, text_states_dim=32,
                                      text_states_dim_t5=32, text_len=4, text_len_t5=4)),
}


def comfy_node(module: str, name: str):
    import importlib

    return getattr(importlib.import_module(module), name, None)


def run_node(node, *args, **kwargs):
    """Call a stock node (V3 classmethod ``execute`` or V1 function) and return its first output."""
    if hasattr(node, "define_schema"):
        return node.execute(*args, **kwargs).result[0]
    return getattr(node(), node.FUNCTION)(*args, **kwargs)[0]


def sample_with(model, family: str, hw=HW, *, steps=2, cfg=2.0, sampler="euler", sigmas=None, callback=None,
                noise=None, positive=None, negative=None, batch=1):
    """comfy.sample.sample / sample_custom with a callback and explicit sigmas."""
    import comfy.sample
    import comfy.samplers

    fam = tiny_models.FAMILIES[family]
    latent = fam.latent(batch, *hw)
    noise = noise if noise is not None else torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
    positive = positive if positive is not None else fam.cond(7, 1)
    negative = negative if negative is not None else fam.cond(5 if cfg > 1 else 7, 2)
    if sigmas is None:
        return comfy.sample.sample(model, noise, steps, cfg, sampler, "simple", positive, negative, latent,
                                   callback=callback, disable_pbar=True, seed=0)
    return comfy.sample.sample_custom(model, noise, cfg, comfy.samplers.sampler_object(sampler), sigmas, positive,
                                      negative, latent, callback=callback, disable_pbar=True, seed=0)
