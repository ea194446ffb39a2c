"""Fault matrix rows: unsupported models and RoPE embedders other nodes put in, before or after ours."""

from __future__ import annotations

import logging

import pytest
import torch
from capture import capture
from patching import _pack

from .lab import (
    UNSUPPORTED,
    Lab,
    build_other,
    dype,
    row,
    sega,
)


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
    with pytest.raises(patch.ForeignRopeEmbedderError, match=r"fault_matrix\.rows_models\.ThetaRescalingEmbedder"):
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
            m = torch.full((1, 28), rope.yarn_temperature(2.0), dtype=torch.float64)
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
