"""The fault and bad-input matrix (issue 9): one row per case, input or fault → expected behaviour.

Every row runs on the real host with tiny random-weight models from ComfyUI's own classes and 1–2 sampling steps.
After each row the same checks run whatever the row did: the input MODEL carries no patch, wrapper or config of
ours, the shared base model holds ComfyUI's own embedder again once unloaded, no per-run/step/call scope is left
open, and the next stock run of the input model is bit-identical to the one before the row ("nothing leaked into
the input model or the next run"). README's "Fault matrix" table is generated from ``ROWS`` and checked here.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import tiny_models
import torch
from capture import capture
from test_dype_host import BASE_PX, _pack, expected_table
from test_sega_host import expected_scales, table_scales

pytestmark = pytest.mark.usefixtures("comfy_host")

HW = (16, 16)  # 8 x 8 tokens: scale 2 on both axes over the 4-token test base
README = Path(__file__).resolve().parents[1] / "README.md"


@dataclass(frozen=True)
class Row:
    case: str  # the input or fault
    behaviour: str  # what the pack does (README's right column)
    check: Callable[[Lab], None]
    family: str = "flux"

    @property
    def id(self) -> str:
        return self.check.__name__.removeprefix("row_")


ROWS: list[Row] = []


def row(case: str, behaviour: str, family: str = "flux"):
    def register(check: Callable[[Lab], None]) -> Callable[[Lab], None]:
        ROWS.append(Row(case, behaviour, check, family))
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
        assert config.CONFIG_KEY not in options and _pack("nodes.rope_patch.ids_check").HISTORY_KEY not in options
        comfy.model_management.unload_all_models()
        assert self.model.model.diffusion_model.pe_embedder is self.embedder
        assert torch.equal(self.sample(self.model), self.reference)


@pytest.fixture(scope="module")
def labs(comfy_host):
    built: dict[str, Lab] = {}

    def get(family: str) -> Lab:
        if family not in built:
            built[family] = Lab(family)
        return built[family]

    return get


# ---------------------------------------------------------------- helpers


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


# ---------------------------------------------------------------- unsupported models and foreign embedders


def _refusal(class_name: str):
    def check(lab: Lab) -> None:
        families = _pack("nodes.families")
        config_name, unet_config = UNSUPPORTED[class_name]
        other = build_other(config_name, unet_config)
        for node in (dype, sega):
            with pytest.raises(families.UnsupportedModelError, match=rf"cannot patch this model: {class_name} "):
                node(other)
        assert not other.object_patches and not any(other.wrappers.values())

    check.__name__ = f"row_refuses_{config_name_of(class_name)}"
    return check


def config_name_of(class_name: str) -> str:
    return UNSUPPORTED[class_name][0].lower()


for _class in UNSUPPORTED:
    row(f"{UNSUPPORTED[_class][0]} model (`{_class}`) into either node",
        "UnsupportedModelError at node run naming the class and the supported families; model untouched")(
        _refusal(_class))


class ThetaRescalingEmbedder(torch.nn.Module):
    """Stands for another node's RoPE patch: an EmbedND-like module of its own class (theta/axes_dim present)."""

    def __init__(self, original: torch.nn.Module) -> None:
        super().__init__()
        self.original, self.theta, self.axes_dim, self.dim = original, original.theta, original.axes_dim, original.dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.original(ids * 0.5)


@row("another node already replaced the RoPE embedder with its own module (EmbedND-like, its own class)",
     "ForeignRopeEmbedderError at node run naming that module's class; never dropped silently")
def row_foreign_embedder_before_ours(lab: Lab) -> None:
    patch = _pack("nodes.rope_patch.clone")
    other = lab.model.clone()
    other.add_object_patch("diffusion_model.pe_embedder", ThetaRescalingEmbedder(lab.embedder))
    with pytest.raises(patch.ForeignRopeEmbedderError, match=r"test_fault_matrix\.ThetaRescalingEmbedder"):
        dype(other)
    with pytest.raises(patch.ForeignRopeEmbedderError, match="ThetaRescalingEmbedder"):
        sega(other)


@row("another node object-patched ComfyUI's own EmbedND with another theta before ours",
     "composes: the schedule is built on that theta (table = DyPE at theta 20000)")
def row_stock_embedder_with_other_theta(lab: Lab) -> None:
    from comfy.ldm.flux.layers import EmbedND

    other = lab.model.clone()
    other.add_object_patch("diffusion_model.pe_embedder", EmbedND(dim=128, theta=20000, axes_dim=[16, 56, 56]))
    with capture(dype(other)) as (clone, calls):
        lab.sample(clone, steps=1)
    rope = _pack("rope")
    for call in calls:
        ids, pe = call.tables[0]
        want = [rope.rotation_table(ids[..., 0], rope.plain_frequencies(16, 20000.0)[None])]
        for column in (1, 2):
            freqs = rope.axis_frequencies(rope.PositionSchedule(), 56, 20000.0, 2.0, 4.0, call.sigma.double())
            m = torch.full((1, 28), rope.yarn_attention_scale(2.0), dtype=torch.float64)
            want.append(rope.rotation_table(ids[..., column], freqs, m))
        batch = max(w.shape[0] for w in want)
        assert torch.equal(pe, torch.cat([w.expand(batch, *w.shape[1:]) for w in want], dim=-3).unsqueeze(1))


@row("a node after ours replaces the embedder again",
     "one warning naming that module; samples with that node's RoPE (its table, not ours)")
def row_foreign_embedder_after_ours(lab: Lab) -> None:
    patched = dype(lab.model).clone()
    foreign = ThetaRescalingEmbedder(lab.embedder)
    patched.add_object_patch("diffusion_model.pe_embedder", foreign)
    logger = logging.getLogger(_pack("nodes.rope_patch.scopes").__name__)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    try:
        with capture(patched) as (clone, calls):
            lab.sample(clone, steps=2)
    finally:
        logger.removeHandler(handler)
    messages = [r.getMessage() for r in records if "ThetaRescalingEmbedder" in r.getMessage()]
    assert len(messages) == 1 and "without DyPE/SEGA" in messages[0]
    ids, pe = calls[0].tables[0]
    assert torch.equal(pe, lab.embedder(ids * 0.5))


# ---------------------------------------------------------------- sizes, sigmas, batches


@row("odd latent size 15×21 (not a multiple of the patch)", "finite; scale from the padded token grid 8×11")
def row_odd_size(lab: Lab) -> None:
    with capture(dype(lab.model)) as (clone, calls):
        out = lab.sample(clone, hw=(15, 21))
    assert torch.isfinite(out).all() and out.shape[-2:] == (15, 21)
    assert_tables_follow_the_schedule(calls, grid=(8, 11))


@row("tiny latent 2×2 (one token)", "below the trained grid: bit-identical to the unpatched model")
def row_tiny_size(lab: Lab) -> None:
    assert torch.equal(lab.sample(dype(lab.model), hw=(2, 2)), lab.sample(lab.model, hw=(2, 2)))


@row("32:1 latent 4×128 (2×64 tokens)", "finite; rows below base keep plain RoPE, columns scale 16")
def row_extreme_aspect(lab: Lab) -> None:
    with capture(dype(lab.model)) as (clone, calls):
        out = lab.sample(clone, hw=(4, 128), steps=1)
    assert torch.isfinite(out).all()
    assert_tables_follow_the_schedule(calls, grid=(2, 64))


@row("sigma > 1 (custom sigmas 1.5 → 0.5 → 0)", "t clamped to 1: the table at sigma 1.5 is the table at sigma 1")
def row_sigma_above_one(lab: Lab) -> None:
    with capture(dype(lab.model)) as (clone, calls):
        out = sample_with(clone, "flux", sigmas=torch.tensor([1.5, 0.5, 0.0]))
    assert torch.isfinite(out).all() and calls[0].sigma[0] == 1.5
    ids, pe = calls[0].tables[0]
    assert torch.equal(pe, expected_table(ids, torch.ones_like(calls[0].sigma), (8, 8), BASE_PX / 16))
    assert_tables_follow_the_schedule(calls)


@row("sigma 0 reaches the model (sigmas 1 → 0.5 → 0 → 0)", "original frequencies (t = 0), YaRN temperature only")
def row_sigma_zero(lab: Lab) -> None:
    with capture(dype(lab.model)) as (clone, calls):
        sample_with(clone, "flux", sigmas=torch.tensor([1.0, 0.0, 0.0]), cfg=1.0)
    zero = [c for c in calls if (c.sigma == 0).all()]
    assert zero
    rope = _pack("rope")
    ids, pe = zero[0].tables[0]
    m = rope.yarn_attention_scale(2.0)
    stock = lab.embedder(ids)
    assert torch.allclose(pe[..., 8:, :, :], stock[..., 8:, :, :] * m, rtol=1e-6, atol=1e-6)


@row("per-sample sigmas in one call (B = 2, sigma 1.0 and 0.3)", "each row gets its own sigma's table")
def row_per_sample_sigmas(lab: Lab) -> None:
    schedule, scopes, families = _pack("nodes.rope_patch.schedule"), _pack("nodes.rope_patch.scopes"), _pack("nodes.families")
    patched = dype(lab.model)
    config = _pack("nodes.rope_patch.config").read_config(patched.model_options["transformer_options"])
    embedder = patched.get_model_object("diffusion_model.pe_embedder")
    sigma = torch.tensor([1.0, 0.3])
    ids = torch.zeros(2, 64, 3)
    ids[..., 1] = torch.arange(8).repeat_interleave(8).float()
    ids[..., 2] = torch.arange(8).repeat(8).float()
    scope = schedule.build_call_scope(config, families.FLUX, embedder, torch.zeros(2, 16, *HW), sigma)
    token = scopes.CALL.set(scope)
    try:
        pe = embedder(ids)
    finally:
        scopes.CALL.reset(token)
    for b in range(2):
        assert torch.equal(pe[b:b + 1], expected_table(ids[b:b + 1], sigma[b:b + 1], (8, 8), BASE_PX / 16))
    assert not torch.equal(pe[0], pe[1])


def _batch_of_four(lab: Lab, recipe: str) -> list:
    noise = torch.randn(4, 16, 16, 24, generator=torch.Generator().manual_seed(3))
    noise = noise * torch.linspace(0.3, 2.0, 4)[:, None, None, None] * torch.linspace(0.5, 2.5, 24)
    with capture(sega(dype(lab.model), recipe=recipe)) as (clone, calls):
        sample_with(clone, "flux", hw=(16, 24), steps=1, noise=noise, batch=4)
    assert len(calls) == 2 and all(c.x.shape[0] == 4 for c in calls)  # 7 vs 5 text tokens: split
    return calls


@row("batch of 4 different latents, cond and uncond in split calls, DyPE + SEGA (recipe refined)",
     "every row's temperatures come from its own sample's spectrum; one spectrum per step")
def row_batch_of_four_split(lab: Lab) -> None:
    for call in _batch_of_four(lab, "refined (ours)"):
        got = table_scales(call.tables[0][1])
        want = expected_scales(call.x, call.sigma, (8, 12), method="yarn")
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w.float(), rtol=2e-6, atol=0)
            assert len({tuple(r.tolist()) for r in g}) == 4


@row("the same batch of 4 with SEGA's recipe paper (default) and diffusers port",
     "paper: one spectrum of the batch-averaged token map, the same temperatures for every row (the official "
     "code); port: one per sample, as the pack promises (the port's code averages the batch)")
def row_batch_of_four_reference_recipes(lab: Lab) -> None:
    for recipe, distinct in (("paper (official SEGA code)", 1), ("diffusers port", 4)):
        for call in _batch_of_four(lab, recipe):
            for scales in table_scales(call.tables[0][1]):
                assert len({tuple(r.tolist()) for r in scales}) == distinct, recipe


@row("area conditioning (ConditioningSetArea on a 8×8-token crop of a 8×12-token latent)",
     "the crop is sampled as a smaller image with its own positions, so its scale comes from the crop")
def row_area_conditioning(lab: Lab) -> None:
    area = lab.fam.cond(7, 1)
    area[0][1].update(area=(8, 8, 0, 8), strength=1.0, set_area_to_bounds=False)  # latent px: h, w, y, x
    full = lab.fam.cond(7, 3)
    with capture(dype(lab.model)) as (clone, calls):
        sample_with(clone, "flux", hw=(16, 24), steps=1, cfg=1.0, positive=full + area)
    grids = sorted({tuple(c.x.shape[-2:]) for c in calls})
    assert grids == [(8, 8), (16, 24)]
    for call in calls:
        grid = tuple(n // 2 for n in call.x.shape[-2:])
        assert_tables_follow_the_schedule([call], grid=grid)


# ---------------------------------------------------------------- other nodes on the same model


def _model_sampling_flux(model):
    node = comfy_node("comfy_extras.nodes_model_advanced", "ModelSamplingFlux")
    return run_node(node, model, 1.5, 0.5, 256, 256)


@row("ModelSamplingFlux before or after DyPE", "same result either order; the schedule follows the shifted sigmas")
def row_model_sampling_order(lab: Lab) -> None:
    before = dype(_model_sampling_flux(lab.model))
    after = _model_sampling_flux(dype(lab.model))
    with capture(before) as (clone, calls):
        out_before = lab.sample(clone)
    assert torch.equal(out_before, lab.sample(after))
    assert_tables_follow_the_schedule(calls)


@row("ModelSamplingSD3 (timestep multiplier 1000) on the model",
     "the schedule reads sigma, not the ×1000 timestep the transformer gets")
def row_timestep_multiplier(lab: Lab) -> None:
    node = comfy_node("comfy_extras.nodes_model_advanced", "ModelSamplingSD3")
    model = run_node(node, dype(lab.model), 3.0)
    assert model.get_model_object("model_sampling").multiplier == 1000
    with capture(model) as (clone, calls):
        lab.sample(clone)
    assert all((c.sigma <= 1).all() for c in calls)
    assert_tables_follow_the_schedule(calls)


@row("LoRA-style weight patch before or after DyPE", "same result either order; differs from DyPE alone")
def row_lora(lab: Lab) -> None:
    key = "diffusion_model.img_in.weight"
    delta = torch.randn(lab.model.model.state_dict()[key].shape, generator=torch.Generator().manual_seed(9)) * 0.1

    def lora(model):
        clone = model.clone()
        clone.add_patches({key: (delta,)}, 1.0)
        return clone

    a, b = lab.sample(dype(lora(lab.model)), cfg=1.0), lab.sample(lora(dype(lab.model)), cfg=1.0)
    assert torch.equal(a, b) and not torch.equal(a, lab.sample(dype(lab.model), cfg=1.0))


@row("custom guider (CFGGuider.sample, as SamplerCustomAdvanced drives it) at cfg 1 and 2",
     "each model call gets the schedule")
def row_guiders(lab: Lab) -> None:
    import comfy.samplers

    model = dype(lab.model)
    sigmas = comfy.samplers.calculate_sigmas(model.get_model_object("model_sampling"), "simple", 2)
    noise = torch.randn(1, 16, *HW, generator=torch.Generator().manual_seed(0))
    for cfg in (1.0, 2.0):
        with capture(model) as (clone, calls):
            guider = comfy.samplers.CFGGuider(clone)
            guider.set_conds(lab.fam.cond(7, 1), lab.fam.cond(7, 2))
            guider.set_cfg(cfg)
            out = guider.sample(noise, torch.zeros_like(noise), comfy.samplers.sampler_object("euler"), sigmas,
                                disable_pbar=True, seed=0)
        assert torch.isfinite(out).all()
        assert_tables_follow_the_schedule(calls)


def _cache_row(node_name: str):
    def check(lab: Lab) -> None:
        node = comfy_node("comfy_extras.nodes_easycache", f"{node_name}Node")
        if node is None:
            pytest.skip(f"{node_name} is not in this ComfyUI")
        both = [run_node(node, dype(lab.model), 3.0, 0.0, 1.0, False),
                dype(run_node(node, lab.model, 3.0, 0.0, 1.0, False))]
        outs = [lab.sample(model, steps=3, cfg=1.0) for model in both]
        assert all(torch.isfinite(o).all() for o in outs) and torch.equal(outs[0], outs[1])

    check.__name__ = f"row_{node_name.lower()}"
    return check


row("EasyCache before or after DyPE", "finite, same result either order (skipped where the host lacks it)")(
    _cache_row("EasyCache"))
row("LazyCache before or after DyPE", "finite, same result either order (skipped where the host lacks it)")(
    _cache_row("LazyCache"))


@row("TorchCompileModel after DyPE", "its wrapper and our object patch and wrappers coexist (compiling itself is "
     "not run: minutes on CI CPUs)")
def row_torch_compile(lab: Lab) -> None:
    node = comfy_node("comfy_extras.nodes_torch_compile", "TorchCompileModel")
    if node is None:
        pytest.skip("TorchCompileModel is not in this ComfyUI")
    config = _pack("nodes.rope_patch.config")
    compiled = run_node(node, dype(lab.model), "inductor")
    embedder_cls = _pack("nodes.rope_patch.embedder").ExtrapolatingRopeEmbedder
    assert isinstance(compiled.get_model_object("diffusion_model.pe_embedder"), embedder_cls)
    assert compiled.get_wrappers("apply_model", config.WRAPPER_KEY)
    assert len(compiled.get_all_wrappers("apply_model")) >= 2


@row("ScaleROPE (scale 2, shift 1 on x) before DyPE", "DyPE builds its table on ScaleROPE's positions")
def row_scale_rope(lab: Lab) -> None:
    node = comfy_node("comfy_extras.nodes_rope", "ScaleROPE")
    if node is None:
        pytest.skip("ScaleROPE is not in this ComfyUI")
    scaled = run_node(node, lab.model, 2.0, 1.0, 1.0, 0.0, 1.0, 0.0)
    with capture(dype(scaled)) as (clone, calls):
        lab.sample(clone, steps=1)
    ids = calls[0].tables[0][0]
    assert ids[..., 2].max() > 7  # ScaleROPE really moved the positions...
    assert_tables_follow_the_schedule(calls)  # ...and our schedule (from the latent's grid) applies to them


@row("Kontext reference latents (Flux)",
     "references join the sequence but never inflate the scale (it comes from the generated latent)")
def row_reference_latents(lab: Lab) -> None:
    positive = lab.fam.cond(7, 1, reference_latents=[torch.randn(1, 16, 40, 40)])
    with capture(dype(lab.model)) as (clone, calls):
        lab.sample(clone, steps=1, positive=positive)
    assert calls[0].tables[0][0].shape[1] > 7 + 64
    assert_tables_follow_the_schedule(calls)


@row("Qwen-Edit reference latents", "as Kontext: the scale comes from the generated latent", family="qwen_image")
def row_qwen_edit_reference(lab: Lab) -> None:
    positive = lab.fam.cond(7, 1, reference_latents=[torch.randn(1, 16, 1, 40, 40)])
    with capture(dype(lab.model)) as (clone, calls):
        out = lab.sample(clone, steps=1, positive=positive)
    assert torch.isfinite(out).all() and calls[0].tables[0][0].shape[1] > 7 + 64


# ---------------------------------------------------------------- degenerate latents


@row("NaN / inf in the latent, SEGA on", "tables stay finite (SEGA falls back to m_ref); the model output is the "
     "model's own business")
def row_nonfinite_latent(lab: Lab) -> None:
    noise = torch.randn(1, 16, *HW, generator=torch.Generator().manual_seed(0))
    noise[0, 0, 0, 0] = float("nan")
    noise[0, 1, 1, 1] = float("inf")
    with capture(sega(dype(lab.model))) as (clone, calls):
        sample_with(clone, "flux", steps=1, noise=noise)
    assert all(torch.isfinite(pe).all() for c in calls for _, pe in c.tables)


@row("constant (all-zero) latent, SEGA on", "finite output; that step uses m_ref for every pair, one warning")
def row_constant_latent(lab: Lab) -> None:
    with capture(sega(dype(lab.model))) as (clone, calls):
        out = sample_with(clone, "flux", steps=1, noise=torch.zeros(1, 16, *HW))
    assert torch.isfinite(out).all()
    spectral = _pack("spectral")
    for scales in table_scales(calls[0].tables[0][1]):
        assert torch.equal(scales, torch.full_like(scales, spectral.reference_temperature(2.0, 0.08)))


@row("8192² target: grid-sized ids (512×512 tokens) straight into the embedder, DyPE + SEGA",
     "finite table of exactly the stock layout; float64 only for per-pair vectors")
def row_grid_8192(lab: Lab) -> None:
    _huge_grid(lab, 512, with_sega=True)


@row("16384² target: 1024×1024 tokens, DyPE", "finite; rows at both ends of the grid as rope/ prescribes")
def row_grid_16384(lab: Lab) -> None:
    _huge_grid(lab, 1024, with_sega=False)


def _huge_grid(lab: Lab, tokens: int, with_sega: bool) -> None:
    schedule, scopes, families = _pack("nodes.rope_patch.schedule"), _pack("nodes.rope_patch.scopes"), _pack("nodes.families")
    patched = dype(lab.model, base_px=0)
    if with_sega:
        patched = sega(patched, base_px=0)
    config = _pack("nodes.rope_patch.config").read_config(patched.model_options["transformer_options"])
    embedder = patched.get_model_object("diffusion_model.pe_embedder")
    if with_sega:
        x = torch.randn(1, 16, 2 * tokens, 2 * tokens, generator=torch.Generator().manual_seed(0))
    else:
        x = torch.zeros(1, 16, 1, 1).expand(1, 16, 2 * tokens, 2 * tokens)  # only its shape is read
    scope = schedule.build_call_scope(config, families.FLUX, embedder, x, torch.tensor([0.7]), base_model=patched.model)
    assert all(a.freqs.dtype == torch.float64 and a.freqs.shape[-1] == 28 for a in scope.axes)
    rows = torch.tensor([0, tokens - 1])  # the first and the last row of the grid, every column
    ids = torch.zeros(1, 2 * tokens, 3)
    ids[0, :, 1] = rows.repeat_interleave(tokens).float()
    ids[0, :, 2] = torch.arange(tokens).repeat(2).float()
    token = scopes.CALL.set(scope)
    try:
        pe = embedder(ids)
    finally:
        scopes.CALL.reset(token)
    assert pe.shape == (1, 1, 2 * tokens, 64, 2, 2) and pe.dtype == torch.float32 and torch.isfinite(pe).all()
    if not with_sega:
        assert torch.equal(pe, expected_table(ids, torch.tensor([0.7]), (tokens, tokens), 64.0))


# ---------------------------------------------------------------- samplers, dtypes, lifecycle


@row("multistep / second-order samplers evaluating sigmas off the schedule (dpm_2, dpmpp_2s_ancestral)",
     "every model call uses its own sigma, including the midpoints")
def row_off_schedule_sigmas(lab: Lab) -> None:
    import comfy.samplers

    sigmas = comfy.samplers.calculate_sigmas(lab.model.get_model_object("model_sampling"), "simple", 2)
    for sampler in ("dpm_2", "dpmpp_2s_ancestral"):
        with capture(dype(lab.model)) as (clone, calls):
            sample_with(clone, "flux", steps=2, cfg=1.0, sampler=sampler)
        seen = {float(c.sigma[0]) for c in calls}
        assert seen - set(sigmas.tolist()), f"{sampler} evaluated only on-schedule sigmas"
        assert_tables_follow_the_schedule(calls)


@row("bf16 and fp16 models", "finite; the table stays float32 (the model casts it, as stock)")
def row_half_precision(lab: Lab) -> None:
    for dtype in (torch.bfloat16, torch.float16):
        import comfy.model_patcher
        import comfy.supported_models

        config = comfy.supported_models.Flux(tiny_models.host_unet_config(tiny_models.FLUX_CONFIG))
        config.set_inference_dtype(dtype, None)
        base = config.get_model({})
        with torch.no_grad():
            for p in base.parameters():
                p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(1)).to(p.dtype) * 0.05)
        model = comfy.model_patcher.ModelPatcher(base, torch.device("cpu"), torch.device("cpu"))
        with capture(dype(model)) as (clone, calls):
            out = lab.sample(clone, steps=1)
        assert torch.isfinite(out).all()
        assert all(pe.dtype == torch.float32 for c in calls for _, pe in c.tables)


@row("the same patched model sampled twice, and again after unloading all models", "bit-identical each time")
def row_repeat_and_unload(lab: Lab) -> None:
    import comfy.model_management

    patched = dype(lab.model)
    first = lab.sample(patched)
    assert torch.equal(first, lab.sample(patched))
    comfy.model_management.unload_all_models()
    assert torch.equal(first, lab.sample(patched))


@row("sampling interrupted (Cancel) after the first step", "the interrupt propagates; the next run is unaffected")
def row_interrupt(lab: Lab) -> None:
    import comfy.model_management

    patched = dype(lab.model)
    clean = lab.sample(patched)

    def cancel(step, *_):
        comfy.model_management.interrupt_current_processing(True)
        comfy.model_management.throw_exception_if_processing_interrupted()

    with pytest.raises(comfy.model_management.InterruptProcessingException):
        sample_with(patched, "flux", callback=cancel)
    comfy.model_management.interrupt_current_processing(False)
    assert torch.equal(lab.sample(patched), clean)


@row("lowvram / offload: the patched model is partially unloaded (weights to the offload device, cast per layer) "
     "during sampling, then fully loaded again",
     "object patch and schedule survive; result equal to an undisturbed run")
def row_lowvram_offload(lab: Lab) -> None:
    patched = dype(lab.model)
    clean = sample_with(patched, "flux")
    moves = []

    def offload(step, *_):
        if step == 0:
            moves.append(patched.partially_unload(patched.offload_device, memory_to_free=1 << 40))
            assert isinstance(patched.model.diffusion_model.pe_embedder, _pack("nodes.rope_patch.embedder").ExtrapolatingRopeEmbedder)

    out = sample_with(patched, "flux", callback=offload)
    assert moves and moves[0] > 0, "nothing was offloaded"
    torch.testing.assert_close(out, clean, rtol=1e-5, atol=1e-5)
    patched.partially_load(patched.load_device, extra_memory=1 << 40)
    assert torch.equal(sample_with(patched, "flux"), clean)


def _second_sampler_thread(lab: Lab, b_model, match: str) -> None:
    """Sample DyPE (yarn) on this thread; at its first step another thread starts sampling ``b_model`` (a clone of
    the same loaded model) and holds its first model call until this run has failed with ``match``."""
    import comfy.patcher_extension as ext

    errors_module = _pack("nodes.rope_patch.errors")
    a_model = dype(lab.model)
    b_model = b_model.clone()
    b_inside, a_failed = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def hold_b_inside(executor, *args, **kwargs):  # B's first model call waits until A has hit the swap
        b_inside.set()
        a_failed.wait(60)
        return executor(*args, **kwargs)

    b_model.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "tests_hold", hold_b_inside)

    def run_b() -> None:
        try:
            lab.sample(b_model, steps=1, cfg=1.0)
        except BaseException as error:  # noqa: BLE001  (reported by the assertion below)
            errors.append(error)

    def start_b(step, *_):
        if step == 0:
            threading.Thread(target=run_b, name="second sampler").start()
            assert b_inside.wait(60)

    thread_count = threading.active_count()
    try:
        with pytest.raises(errors_module.ConcurrentSamplingError, match=match):
            sample_with(a_model, "flux", steps=2, callback=start_b)
    finally:
        a_failed.set()
    for thread in threading.enumerate():
        if thread.name == "second sampler":
            thread.join(60)
    assert threading.active_count() <= thread_count and not errors, errors


@row("a second sampler thread samples another clone of the same loaded model (DyPE/SEGA too) while this one runs",
     "ConcurrentSamplingError naming the true cause (ComfyUI cannot sample one loaded model from two threads)")
def row_concurrent_threads(lab: Lab) -> None:
    _second_sampler_thread(lab, dype(lab.model, method="ntk"),
                           "switched to another clone's DyPE/SEGA embedder.*two samplers run one loaded model")


@row("a second sampler thread samples a clone of the same loaded model *without* DyPE/SEGA while this one runs",
     "ConcurrentSamplingError: another clone without DyPE/SEGA replaced this one on the model (two threads)")
def row_concurrent_stock_clone(lab: Lab) -> None:
    _second_sampler_thread(lab, lab.model, "another clone of this model without DyPE/SEGA.*two samplers run one")


@row("the model is fully unloaded between two steps (unload_all_models from a sampler callback)",
     "ModelUnloadedError saying it was unloaded (not another thread) and never silently stock RoPE; the next run is "
     "unaffected")
def row_unloaded_mid_run(lab: Lab) -> None:
    import comfy.model_management

    errors = _pack("nodes.rope_patch.errors")
    patched = dype(lab.model)
    clean = sample_with(patched, "flux")

    def unload(step, *_):
        if step == 0:
            comfy.model_management.unload_all_models()

    with pytest.raises(errors.ModelUnloadedError, match="it was unloaded") as raised:
        sample_with(patched, "flux", callback=unload)
    assert "thread" not in str(raised.value).split("Something freed")[0]
    assert not isinstance(raised.value, errors.ConcurrentSamplingError)
    assert torch.equal(sample_with(patched, "flux"), clean)


@row("the shared model is re-patched for another clone in the middle of a model call",
     "ConcurrentSamplingError from the embedder itself (never silently stock RoPE)")
def row_swap_inside_a_call(lab: Lab) -> None:
    import comfy.patcher_extension as ext

    errors = _pack("nodes.rope_patch.errors")
    a_model, b_model = dype(lab.model), dype(lab.model, method="ntk")
    a_embedder = a_model.object_patches["diffusion_model.pe_embedder"]
    b_embedder = b_model.object_patches["diffusion_model.pe_embedder"]

    def swap_then_call(executor, *args, **kwargs):  # runs inside our apply_model wrapper's call scope
        lab.model.model.diffusion_model.pe_embedder = b_embedder
        try:
            return executor(*args, **kwargs)
        finally:
            lab.model.model.diffusion_model.pe_embedder = a_embedder

    clone = a_model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.DIFFUSION_MODEL, "tests_swap", swap_then_call)
    with pytest.raises(errors.ConcurrentSamplingError, match="another clone's DyPE/SEGA embedder"):
        lab.sample(clone, steps=1)


# ---------------------------------------------------------------- the fast path under autograd and moving ids

FAST_HW = (64, 48)  # 32 x 24 tokens: the window pays off, so the calls after each signature's first one gather


@contextlib.contextmanager
def stock_formula_only() -> Iterator[None]:
    """Every table by the stock formula (each token's own cos/sin): the embedder's window path switched off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_pack("nodes.rope_patch.embedder"), "MIN_TOKENS_PER_WINDOW_POSITION", 10**9)
        yield


@contextlib.contextmanager
def counted_gathers() -> Iterator[list]:
    """Count the embedder's window gathers (the fast path) while still running them."""
    tables = _pack("nodes.rope_patch.tables")
    real, counted = tables.gather_tables, []

    def gather(parts):
        counted.append(len(parts))
        return real(parts)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tables, "gather_tables", gather)
        yield counted


@row("SEGA with uni_pc / uni_pc_bh2 under grad mode (a script calling comfy.sample; 0.3.75 runs uni_pc outside "
     "no_grad, so the latent requires grad after the first step)",
     "the stock formula's result bit for bit: a table that carries a gradient is built per token, never gathered")
def row_uni_pc_with_grad(lab: Lab) -> None:
    model = sega(dype(lab.model))
    for sampler in ("uni_pc", "uni_pc_bh2"):
        with torch.enable_grad():
            fast = sample_with(model, "flux", FAST_HW, steps=3, cfg=1.0, sampler=sampler)
            with stock_formula_only():
                stock = sample_with(model, "flux", FAST_HW, steps=3, cfg=1.0, sampler=sampler)
        assert torch.equal(fast, stock) and fast.requires_grad == stock.requires_grad


def sample_gradient_guided(model, x, sigmas, extra_args=None, callback=None, disable=None):
    """A gradient-guidance sampler as guidance nodes write one: under grad mode, with the latent requiring grad on
    purpose, the model's forward is recorded for autograd and each denoised estimate is moved down the gradient of a
    guidance loss with respect to the latent. The loss here is of the latent alone: ComfyUI's Flux itself cannot be
    differentiated (in-place adds on 0.3.75; comfy-kitchen's apply_rope has no autograd formula on 0.30), stock or
    patched; the gradient through our tables is checked in tests/test_embedder_fast_path.py."""
    extra_args = extra_args or {}
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        with torch.enable_grad():
            x_in = x.detach().requires_grad_(True)
            denoised = model(x_in, sigmas[i] * s_in, **extra_args)
            assert denoised.requires_grad  # the forward was recorded: every table of it saw grad mode
            (grad,) = torch.autograd.grad((x_in - denoised.detach()).square().mean(), x_in)
        denoised = denoised.detach() - 0.5 * grad
        x = x + (x - denoised) / sigmas[i] * (sigmas[i + 1] - sigmas[i])
    return x


@row("a gradient-guidance sampler (grad mode, the latent requires grad on purpose), DyPE and DyPE + SEGA",
     "the stock formula's result bit for bit: DyPE's tables (no gradient) are gathered; so are SEGA's under the "
     "reference recipes paper and port, whose spectrum carries no gradient (both codes compute it under no_grad); "
     "under refined (a gradient through the temperatures, from that latent's spectrum) they are built per token, so "
     "their gradient is the stock formula's")
def row_gradient_guidance(lab: Lab) -> None:
    import comfy.sample
    import comfy.samplers

    sampler = comfy.samplers.KSAMPLER(sample_gradient_guided)
    latent = lab.fam.latent(1, *FAST_HW)
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
    sigmas = comfy.samplers.calculate_sigmas(lab.model.get_model_object("model_sampling"), "simple", 3)

    def run(model):
        return comfy.sample.sample_custom(model, noise, 1.0, sampler, sigmas, lab.fam.cond(7, 1), lab.fam.cond(7, 2),
                                          latent, disable_pbar=True, seed=0)

    for model, gathers_expected in ((dype(lab.model), True), (sega(dype(lab.model), recipe="refined (ours)"), False),
                                    (sega(dype(lab.model), recipe="paper (official SEGA code)"), True),
                                    (sega(dype(lab.model), recipe="diffusers port"), True)):
        with counted_gathers() as gathers:
            fast = run(model)
        with stock_formula_only():
            stock = run(model)
        assert torch.equal(fast, stock) and torch.isfinite(fast).all()
        assert bool(gathers) == gathers_expected, gathers


class ShiftFromSecondCall:
    """A DIFFUSION_MODEL wrapper standing for a node that moves positions differently from call to call: Flux's
    ``rope_options`` shift_y = 500 from its second call on (``calls`` = 0 starts over)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, executor, x, timestep, context, y, guidance, ref_latents, control, transformer_options,
                 **kwargs):
        self.calls += 1
        if self.calls > 1:
            transformer_options = {**transformer_options, "rope_options": {"shift_y": 500.0}}
        return executor(x, timestep, context, y, guidance, ref_latents, control, transformer_options, **kwargs)


def moving_ids(model) -> tuple:
    import comfy.patcher_extension as ext

    mover = ShiftFromSecondCall()
    clone = model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.DIFFUSION_MODEL, "tests_move", mover)
    return clone, mover


def _moved_reference(lab: Lab, steps: int) -> torch.Tensor:
    with stock_formula_only():
        model, _ = moving_ids(dype(lab.model))
        return sample_with(model, "flux", FAST_HW, steps=steps, cfg=1.0)


@row("a node moving RoPE positions differently from call to call (a DIFFUSION_MODEL wrapper: rope_options shift_y "
     "500 from its second call on), the flag readable before the gather (CPU)",
     "detected before gathering: those calls use the stock formula, the result is the stock formula's bit for bit")
def row_moving_ids_in_time(lab: Lab) -> None:
    model, _ = moving_ids(dype(lab.model))
    with counted_gathers() as gathers:
        out = sample_with(model, "flux", FAST_HW, steps=4, cfg=1.0)
    assert torch.equal(out, _moved_reference(lab, 4)) and gathers == []
    assert not model.model_options["transformer_options"][_pack("nodes.rope_patch.ids_check").HISTORY_KEY].moved


class FakeCudaEvent:
    """The part of torch.cuda.Event the pack uses (``query``), on the CPU: true from query number ``polls`` + 1 on
    (never when None), as a flag copied from the GPU lands some calls later or after the run."""

    def __init__(self, polls: int | None) -> None:
        self.polls = polls

    def query(self) -> bool:
        if self.polls is None:
            return False
        self.polls -= 1
        return self.polls < 0


@contextlib.contextmanager
def flags_on_a_device(polls: Callable[[int], int | None] | None) -> Iterator[None]:
    """Run the CUDA path on the CPU: no flag is read before a gather; with ``polls``, flag number n reaches the host
    at its (polls(n) + 1)-th poll (None: never), as CUDA's non-blocking copy and event do."""
    tables, ids_check = _pack("nodes.rope_patch.tables"), _pack("nodes.rope_patch.ids_check")
    sent: list = []

    def send(flag):
        polls_left = polls(len(sent))
        sent.append(flag)
        return ids_check.HostFlag(flag, flag.clone(), FakeCudaEvent(polls_left))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tables, "reads_free", lambda flag: False)
        if polls is not None:
            patch.setattr(ids_check, "send_to_host", send)
        yield


@row("the same moving node, the flag on the device (CUDA: never read before the gather; run on the CPU by the "
     "same code with the copy's arrival simulated): it arrives after the call, at a later call, after the run",
     "WindowMissError (what moved, the likely node named, how to get the exact result), raised when the flag "
     "arrives; no result is returned; queued again, the same model gives the stock formula's result bit for bit")
def row_moving_ids_on_a_device(lab: Lab) -> None:
    errors, ids_check = _pack("nodes.rope_patch.errors"), _pack("nodes.rope_patch.ids_check")
    steps = 5
    reference = _moved_reference(lab, steps)
    arrivals = {"after the call": None, "at a later call": lambda n: 1, "after the run": lambda n: 0 if n == 0 else None}
    for when, polls in arrivals.items():
        model, mover = moving_ids(dype(lab.model))
        calls_at_error = []

        def count_calls(step, *_, mover=mover, calls_at_error=calls_at_error):
            calls_at_error.append(mover.calls)

        with flags_on_a_device(polls), pytest.raises(errors.WindowMissError) as raised:
            sample_with(model, "flux", FAST_HW, steps=steps, cfg=1.0, callback=count_calls)
        message = str(raised.value)
        for part in ("would not be exact", "'tests_move'", "queue the prompt again", "stock formula"):
            assert part in message, (when, message)
        finished_steps = len(calls_at_error)
        assert finished_steps == {"after the call": 1, "at a later call": 3, "after the run": steps}[when], when
        assert model.model_options["transformer_options"][ids_check.HISTORY_KEY].moved
        mover.calls = 0
        with counted_gathers() as gathers:
            again = sample_with(model, "flux", FAST_HW, steps=steps, cfg=1.0)
        assert torch.equal(again, reference) and gathers == [], when


# ---------------------------------------------------------------- ControlNets


def tiny_flux_controlnet():
    import comfy.controlnet
    import comfy.ops
    from comfy.ldm.flux.controlnet import ControlNetFlux

    config = {k: v for k, v in tiny_models.host_unet_config(tiny_models.FLUX_CONFIG).items() if k != "image_model"}
    model = ControlNetFlux(operations=comfy.ops.disable_weight_init, dtype=torch.float32, **config)
    tiny_models._randomize(model, 7)
    return comfy.controlnet.ControlNet(model, load_device=torch.device("cpu"), extra_conds=["y", "guidance"])


def tiny_qwen_controlnet():
    import comfy.controlnet
    import comfy.latent_formats
    import comfy.ops

    module = comfy_node("comfy.ldm.qwen_image.controlnet", "QwenImageControlNetModel")
    if module is None:
        pytest.skip("this ComfyUI has no Qwen-Image ControlNet")
    config = {k: v for k, v in tiny_models.host_unet_config(tiny_models.QWEN_CONFIG).items() if k != "image_model"}
    model = module(operations=comfy.ops.disable_weight_init, dtype=torch.float32, **config)
    tiny_models._randomize(model, 7)
    return comfy.controlnet.ControlNet(model, compression_ratio=1, latent_format=comfy.latent_formats.Wan21(),
                                       load_device=torch.device("cpu"), extra_conds=[])


def apply_controlnet(positive, negative, control_net, hw, family="flux"):
    """As the ControlNetApplyAdvanced node does (its own class, its own code path)."""
    import nodes

    vae = None
    if family == "qwen_image":  # Qwen-Image ControlNets take a VAE-encoded hint
        from headless import tiny_pack

        vae = tiny_pack.build_vae("qwen_image")
    image = torch.rand(1, hw[0] * 8, hw[1] * 8, 3, generator=torch.Generator().manual_seed(4))
    return nodes.ControlNetApplyAdvanced().apply_controlnet(positive, negative, control_net, image, 1.0, 0.0, 1.0,
                                                            vae=vae)


@row("Flux ControlNet (ControlNetFlux via ControlNetApplyAdvanced) above the trained size",
     "the ControlNet gets the same per-call schedule as the model; its embedder is restored after the run")
def row_flux_controlnet(lab: Lab) -> None:
    _controlnet_follows_the_schedule(lab, tiny_flux_controlnet(), HW)


def _controlnet_follows_the_schedule(lab: Lab, control_net, hw) -> None:
    embedder_cls = _pack("nodes.rope_patch.embedder").ExtrapolatingRopeEmbedder
    control_model = control_net.control_model
    original = control_model.pe_embedder
    positive, negative = apply_controlnet(lab.fam.cond(7, 1), lab.fam.cond(7, 2), control_net, hw, lab.family)
    control_tables, stock_tables = [], []

    def record(module, inputs, output):
        if isinstance(module, embedder_cls) and module.original is original:
            control_tables.append((inputs[0].clone(), output.clone()))

    global_hook = torch.nn.modules.module.register_module_forward_hook(record)
    stock_hook = original.register_forward_hook(lambda m, i, o: stock_tables.append(o))
    try:
        with capture(dype(lab.model)) as (clone, calls):
            out = sample_with(clone, lab.family, hw, steps=1, positive=positive, negative=negative)
    finally:
        global_hook.remove()
        stock_hook.remove()
    assert torch.isfinite(out).all() and len(calls) == 1
    assert len(control_tables) == len(calls) and not stock_tables  # the ControlNet never used stock RoPE
    grid = tuple(n // 2 for n in hw)
    for (ids, pe), call in zip(control_tables, calls, strict=True):
        assert torch.equal(pe, expected_table(ids, call.sigma, grid, BASE_PX / 16))
    assert control_model.pe_embedder is original and "forward" not in control_model.__dict__
    # The same ControlNet on the unpatched model right after: stock RoPE, nothing of ours on it.
    stock_hook = original.register_forward_hook(lambda m, i, o: stock_tables.append(o))
    try:
        lab.sample(lab.model, hw, steps=1, positive=positive, negative=negative)
    finally:
        stock_hook.remove()
    assert stock_tables and control_model.pe_embedder is original


@row("Qwen-Image ControlNet (QwenImageControlNetModel via ControlNetApplyAdvanced, VAE-encoded hint) above the "
     "trained size", "as for Flux: the same per-call schedule as the model, restored after the run",
     family="qwen_image")
def row_qwen_controlnet(lab: Lab) -> None:
    _controlnet_follows_the_schedule(lab, tiny_qwen_controlnet(), HW)


@row("Flux ControlNet at or below the trained size", "bit-identical to the unpatched model with the same ControlNet")
def row_flux_controlnet_at_base(lab: Lab) -> None:
    control_net = tiny_flux_controlnet()
    positive, negative = apply_controlnet(lab.fam.cond(7, 1), lab.fam.cond(7, 2), control_net, HW)
    plain = sample_with(lab.model, "flux", steps=1, positive=positive, negative=negative)
    patched = sample_with(dype(lab.model, base_px=0), "flux", steps=1, positive=positive, negative=negative)
    assert torch.equal(plain, patched)


# ---------------------------------------------------------------- the real executor and saved workflows


def _prompt(method: str, dynamic, seed: int = 0) -> dict:
    return {
        "1": {"class_type": "DyPESEGATest_TinyModelLoader", "inputs": {"family": "flux", "seed": 0}},
        "2": {"class_type": "DyPESEGA_PatchModel", "inputs": {
            "model": ["1", 0], "method": method, "dynamic": dynamic, "lambda_t": 2.0, "lambda_s": 2.0,
            "base_resolution": BASE_PX, "yarn_thresholds": "multiply"}},
        "3": {"class_type": "DyPESEGATest_TinyCLIPLoader", "inputs": {"family": "flux", "seed": 0}},
        "4": {"class_type": "CLIPTextEncode", "inputs": {"clip": ["3", 0], "text": "a lighthouse"}},
        "5": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 128, "height": 128, "batch_size": 1}},
        "6": {"class_type": "KSampler", "inputs": {
            "model": ["2", 0], "seed": seed, "steps": 2, "cfg": 1.0, "sampler_name": "euler", "scheduler": "simple",
            "positive": ["4", 0], "negative": ["4", 0], "latent_image": ["5", 0], "denoise": 1.0}},
        "7": {"class_type": "DyPESEGATest_TinyLatentStats", "inputs": {"samples": ["6", 0]}},
    }


class QueueExecutor:
    """One ``PromptExecutor`` kept across prompts, as ComfyUI's prompt worker keeps it (outputs of unchanged nodes,
    such as the loaded MODEL, are reused by the next prompt)."""

    def __init__(self) -> None:
        from headless import registry, runner

        registry.boot()
        import execution

        self.runner = runner
        self.executor = execution.PromptExecutor(runner._NoServer(), cache_type=False,
                                                 **runner._no_cache_kwargs(execution.PromptExecutor))

    def run(self, prompt: dict) -> tuple[str, set[str]]:
        """The latent digest and the node ids served from the cache."""
        import uuid

        checked = self.runner.validate(prompt)
        assert checked.ok, (checked.error, checked.node_errors)
        self.executor.execute(prompt, str(uuid.uuid4()), {}, checked.outputs)
        assert self.executor.success, self.executor.status_messages
        outputs = self.executor.history_result["outputs"]
        cached = {n for event, data in self.executor.status_messages if event == "execution_cached"
                  for n in data.get("nodes", [])}
        return outputs["7"]["tiny_stats"][0]["sha1"], cached


@row("two queued prompts with different DyPE settings on one loaded model, through ComfyUI's PromptExecutor",
     "no cross-talk: each result equals that prompt run alone on a fresh executor")
def row_executor_two_prompts(lab: Lab) -> None:
    alone = {m: QueueExecutor().run(_prompt(m, True))[0] for m in ("yarn", "ntk")}
    queue = QueueExecutor()
    results = [queue.run(_prompt(m, True)) for m in ("yarn", "ntk", "yarn")]
    assert all("1" in cached for _, cached in results[1:])  # the loaded model was reused, not reloaded
    assert [digest for digest, _ in results] == [alone["yarn"], alone["ntk"], alone["yarn"]]
    assert alone["yarn"] != alone["ntk"]


@row("a saved workflow with a Boolean given as a string (`\"false\"`)",
     "ComfyUI itself converts BOOLEAN inputs with Python `bool()`, so any non-empty string, `\"false\"` included, "
     "runs as True (on every host tested); the shipped workflows store JSON booleans (checked)")
def row_boolean_as_string(lab: Lab) -> None:
    import json

    as_string, as_true, as_false = (QueueExecutor().run(_prompt("yarn", value))[0] for value in ("false", True, False))
    assert as_string == as_true != as_false
    for path in sorted((Path(__file__).resolve().parents[1] / "workflows").glob("*.json")):
        for node in json.loads(path.read_text(encoding="utf-8"))["nodes"]:
            if node["type"].startswith("DyPESEGA_"):
                assert not any(v in ("true", "false", "True", "False") for v in node["widgets_values"])


# ---------------------------------------------------------------- the suite


@pytest.mark.parametrize("case", ROWS, ids=[r.id for r in ROWS])
def test_fault_matrix(case: Row, labs) -> None:
    lab = labs(case.family)
    try:
        case.check(lab)
    finally:
        import comfy.model_management

        comfy.model_management.interrupt_current_processing(False)
    lab.assert_nothing_leaked()


def readme_table() -> str:
    lines = ["| case | behaviour |", "|---|---|"]
    lines += [f"| {r.case} | {r.behaviour} |" for r in ROWS]
    return "\n".join(lines)


def test_readme_lists_the_matrix():
    text = README.read_text(encoding="utf-8")
    start, end = "<!-- fault-matrix:start -->", "<!-- fault-matrix:end -->"
    assert start in text and end in text, "README lacks the fault-matrix block"
    block = text[text.index(start) + len(start):text.index(end)].strip()
    assert block == readme_table(), "README's fault matrix is stale: paste readme_table() from this file"


def test_rows_are_unique():
    assert len({r.id for r in ROWS}) == len(ROWS)
