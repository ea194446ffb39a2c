"""A second node of the same kind on one model (DyPE → DyPE, SEGA → SEGA, DyPE → SEGA → DyPE): the last one's settings
win, and one log line says which node was applied twice and what it replaced. Different kinds compose silently."""

from __future__ import annotations

import logging

import pytest
import tiny_models

pytestmark = pytest.mark.usefixtures("comfy_host")

DYPE = dict(method="yarn", dynamic=True, lambda_t=2.0, lambda_s=2.0, base_resolution=0, yarn_thresholds="multiply")
SEGA = dict(kappa=0.08, alpha=0.15, beta=1.5, spread_min=0.0, spread_max=1.0, spread_alpha=1.5, floor=1.0,
            base_resolution=0)


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def _dype(model, **values):
    return _pack("nodes.dype_node").DyPEPatchModel.execute(model, **{**DYPE, **values}).result[0]


def _sega(model, **values):
    return _pack("nodes.sega_node").SEGAAttention.execute(model, **{**SEGA, **values}).result[0]


def _config(model):
    return _pack("nodes.rope_patch.config").read_config(model.model_options["transformer_options"])


def _replaced(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "is applied twice" in r.getMessage()]


@pytest.fixture
def model(comfy_host):
    return tiny_models.build_flux(0)


def test_dype_then_dype_the_last_wins_with_one_line(model, caplog):
    with caplog.at_level(logging.WARNING):
        patched = _dype(_dype(model, lambda_t=1.0, base_resolution=512), method="ntk", lambda_t=3.0)
    config = _config(patched)
    assert config.positions.method == "ntk" and config.positions.lambda_t == 3.0 and config.positions_base_px == 0
    (line,) = _replaced(caplog)
    assert line.startswith("DyPE Patch Model is applied twice to this model: the later node's settings replace")
    assert "method='yarn'" in line and "lambda_t=1.0" in line and "base_resolution 512" in line


def test_sega_then_sega_the_last_wins_with_one_line(model, caplog):
    with caplog.at_level(logging.WARNING):
        patched = _sega(_sega(model, kappa=0.2), kappa=0.05, recipe="diffusers port")
    config = _config(patched)
    assert config.sega.kappa == 0.05 and config.sega.recipe == "port"
    (line,) = _replaced(caplog)
    assert line.startswith("SEGA Attention is applied twice") and "kappa=0.2" in line


def test_dype_sega_dype_replaces_dype_only(model, caplog):
    with caplog.at_level(logging.WARNING):
        patched = _dype(_sega(_dype(model, lambda_t=1.0), kappa=0.2), lambda_t=4.0)
    config = _config(patched)
    assert config.positions.lambda_t == 4.0 and config.sega.kappa == 0.2
    (line,) = _replaced(caplog)
    assert line.startswith("DyPE Patch Model is applied twice") and "lambda_t=1.0" in line


def test_different_kinds_compose_without_a_word(model, caplog):
    with caplog.at_level(logging.WARNING):
        _dype(_sega(model))
        _sega(_dype(model))
    assert _replaced(caplog) == []
