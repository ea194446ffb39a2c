"""rope/ against the official DyPE FluxPosEmbed.

Reference data: tests/data/dype_flux_official.{json,safetensors}, copied from the project's shared reference set
(`shared/reference/`), produced by running github.com/guyyariv/DyPE flux/transformer_flux.py unmodified (commit
436fe612 = HEAD, and 5dd4fab for `legacy_v1/`; MIT License, Copyright (c) 2025 Guy Yariv). See that README for the
exact semantics of every array.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

DATA = Path(__file__).parent / "data"
MANIFEST = json.loads((DATA / "dype_flux_official.json").read_text())
TENSORS = load_file(DATA / "dype_flux_official.safetensors")
AXES, THETA, BASE = MANIFEST["constants"]["axes_dim"], 10000.0, MANIFEST["constants"]["base_tokens_per_axis"]


def _schedule(rope, config):
    method = "off" if config["method"] == "base" else config["method"]
    legacy = config["name"].startswith("legacy_v1/")
    return rope.PositionSchedule(method=method, dynamic=config["dype"], threshold_rule="power" if legacy else "multiply")


@pytest.mark.parametrize("config", MANIFEST["configs"], ids=lambda c: c["name"])
def test_matches_official_frequencies_and_tables(config):
    import host

    rope = host.pack_submodule("rope")
    keys = config["keys"]
    ids = TENSORS[keys["ids"]]
    t = torch.tensor(config["t"], dtype=torch.float64)
    schedule = _schedule(rope, config)
    cos_cols, sin_cols = [], []
    for axis, (dim, tokens) in enumerate(zip(AXES, (1, config["h_tokens"], config["w_tokens"]), strict=True)):
        scale = tokens / BASE if axis else 1.0
        freqs = rope.axis_frequencies(schedule, dim, THETA, scale, BASE, t)
        reference = TENSORS[keys[f"freqs_axis{axis}"]]
        assert freqs.dtype == torch.float64
        torch.testing.assert_close(freqs, reference, rtol=1e-12, atol=0)
        temperature = None
        if axis:
            mscale = rope.yarn_temperature(scale) if config["method"] == "yarn" else 1.0
            assert mscale == pytest.approx(TENSORS[keys[f"mscale_axis{axis}"]].item(), abs=1e-15)
            if mscale != 1.0:
                temperature = torch.full((1, dim // 2), mscale, dtype=torch.float64)
        table = rope.rotation_table(ids[:, axis][None], freqs[None], temperature)[0]
        cos_cols.append(table[..., 0, 0])
        sin_cols.append(table[..., 1, 0])
        assert torch.equal(table[..., 0, 0], table[..., 1, 1]) and torch.equal(table[..., 0, 1], -table[..., 1, 0])
    torch.testing.assert_close(torch.cat(cos_cols, -1), TENSORS[keys["cos_pairs"]], rtol=0, atol=1e-6)
    torch.testing.assert_close(torch.cat(sin_cols, -1), TENSORS[keys["sin_pairs"]], rtol=0, atol=1e-6)


def test_every_reference_config_is_covered():
    assert len(MANIFEST["configs"]) == MANIFEST["n_configs"] == 70
