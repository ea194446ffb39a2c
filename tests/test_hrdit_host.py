"""SPA and HAP inside ComfyUI's own (tiny) Flux, against the float64 transcription of the official code
(tests/hrdit_reference.py): the tables SPA's embedder leaves, what each block's attention returns, SPA + HAP
together, SPA composed with DyPE and SEGA, bit-identity where SPA and HAP are off, and the host refusal."""

from __future__ import annotations

import hrdit_reference as ref
import pytest
import tiny_models
import torch
from patching import BASE_PX, _pack, dype

pytestmark = pytest.mark.usefixtures("comfy_host")
TEXT = 7  # tiny_models.flux_cond(7): the text tokens of every call here
AXES, THETA = [16, 56, 56], 10000.0


@pytest.fixture(scope="module")
def model(comfy_host):
    return tiny_models.build_flux()


def _plan(spa_group: int | None = None, kernel=None, blocks=(None, None)):
    spa = _pack("nodes.rope_patch.spa")
    settings = None if spa_group is None else spa.SpaSettings(spa_group, blocks[0], blocks[1])
    return spa.AttentionPlan(spa=settings, spa_steps=(0, 99), kernel=kernel)


def _clone(model, plan):
    adapter = _pack("nodes.families").detect_family(model.model)
    return _pack("nodes.rope_patch.attention_clone").attention_clone(model, adapter, plan)


def _record(clone) -> list[dict]:
    """Every attention call of the clone: what our override got (q, k, v), returned, and the call's tables."""
    spa = _pack("nodes.rope_patch.spa")
    options = clone.model_options["transformer_options"]
    ours, records = options["optimized_attention_override"], []

    def recording(func, q, k, v, heads, *args, **kwargs):
        out = ours(func, q, k, v, heads, *args, **kwargs)
        o, call = kwargs["transformer_options"], spa.ATTENTION.get()
        records.append(dict(q=q.clone(), k=k.clone(), v=v.clone(), out=out.clone(), block=(o["block_type"],
                            o["block_index"]), tables=call.tables, grid=call.grid, spa_on=call.spa_on,
                            step=o.get(spa.RUN_STEP_KEY)))
        return out

    recording.dype_sega_attention = True  # ours, recorded: the clone's wrapper keeps it on top as it is
    options["optimized_attention_override"] = recording
    return records


def _sample(m, tokens, seed=0):
    return tiny_models.sample(m, "flux", tokens=tokens, steps=1, seed=seed)


def _ref_tables(grid, group_num, text=TEXT, temperature=None):
    """The official variants' tables (ntk_factor 1.0) as (cos, sin) [S, D], text ids first (zeros)."""
    img = ref.image_ids(*grid)
    tables = []
    for variant in ref.bundle_id_variants(img, group_num):
        ids = torch.cat([torch.zeros(text, 3, dtype=torch.float64), variant])
        tables.append(ref.rope_cos_sin(ids, AXES, THETA))
    return tables


def _as_ref(table: torch.Tensor):
    """ComfyUI's (B, 1, N, pairs, 2, 2) table as diffusers' (cos, sin) [N, D] (pairs repeat-interleaved)."""
    t = table[0, 0].double()
    return t[..., 0, 0].repeat_interleave(2, -1), t[..., 1, 0].repeat_interleave(2, -1)


def _reference_out(record, tables, keep=None):
    q, k, v = record["q"], record["k"], record["v"]
    out = ref.spa_attention(q, k, v, tables, q.shape[-1] ** -0.5, keep)
    return out.transpose(1, 2).reshape(out.shape[0], out.shape[2], -1)


@pytest.mark.parametrize("grid,group_num", [((9, 5), 3), ((12, 4), 4), ((7, 7), 80)])
def test_spa_tables_and_attention_match_the_official_code(model, grid, group_num):
    records = _record(clone := _clone(model, _plan(group_num)))
    _sample(clone, grid)
    expected = _ref_tables(grid, group_num)
    assert records and len(records[0]["tables"][1]) == len(expected)
    for mine, theirs in zip(records[0]["tables"][1], expected, strict=True):
        for a, b in zip(_as_ref(mine), theirs, strict=True):
            assert (a - b).abs().max() < 1e-6
    for record in records:  # every block: the mean over the variants of the official attention
        torch.testing.assert_close(record["out"].double(), _reference_out(record, expected), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cfg", [1.0, 2.5])
def test_spa_is_on_at_its_steps_only(model, cfg):
    """Steps are counted per sampling run (one model evaluation per step, every cond of it the same step): SPA on
    for steps [1, 3) of four, in a second run of the same clone too."""
    spa = _pack("nodes.rope_patch.spa")
    plan = spa.AttentionPlan(spa=spa.SpaSettings(3), spa_steps=(1, 3))
    records = _record(clone := _clone(model, plan))
    for _ in range(2):
        records.clear()
        tiny_models.sample(clone, "flux", tokens=(9, 5), steps=4, cfg=cfg)
        seen = {}
        for record in records:
            seen.setdefault(record["step"], set()).add(record["spa_on"])
        assert seen == {0: {False}, 1: {True}, 2: {True}, 3: {False}}


def test_spa_hands_the_model_unrotated_q_and_k(model):
    """The first block's q and k under SPA, rotated by the call's ordinary table, are what the model sends to
    attention without SPA, bit for bit: the identity table only defers the rotation."""
    rope = pytest.importorskip("comfy.ldm.flux.math")
    spa_records = _record(spa_clone := _clone(model, _plan(3)))
    off_records = _record(off_clone := _clone(model, _plan()))
    _sample(spa_clone, (9, 5))
    _sample(off_clone, (9, 5))
    first, plain = spa_records[0], off_records[0]
    q, k = rope.apply_rope(first["q"], first["k"], first["tables"][0])
    assert torch.equal(q, plain["q"]) and torch.equal(k, plain["k"])
    assert not torch.equal(first["q"], plain["q"])


def test_spa_block_filter_uses_the_ordinary_table(model):
    records = _record(clone := _clone(model, _plan(3, blocks=((), None))))  # SPA in single blocks only
    _sample(clone, (9, 5))
    double = next(r for r in records if r["block"][0] == "double")
    ordinary = [_as_ref(double["tables"][0])]
    torch.testing.assert_close(double["out"].double(), _reference_out(double, ordinary), rtol=1e-5, atol=1e-6)
    single = next(r for r in records if r["block"][0] == "single")
    torch.testing.assert_close(single["out"].double(), _reference_out(single, _ref_tables((9, 5), 3)), rtol=1e-5,
                               atol=1e-6)


def _tiny_plan(alpha: float, beta: float = 0.0, layers: int = 2, heads: int = 2):
    scope = _pack("nodes.hap.scope_plan")
    return scope.ScopePlan(((alpha,) * heads,) * layers, ((beta,) * heads,) * layers)


@pytest.mark.parametrize("spa_group", [None, 3])
@pytest.mark.parametrize("anchor", [0, 2])
def test_hap_and_spa_with_hap_match_the_official_masks(model, spa_group, anchor):
    """A band of one block either side (alpha 64: width 3) on a 16 x 20 grid (5 blocks of 64 image tokens)."""
    kernel = _pack("nodes.hap.kernel").hap_kernel(_tiny_plan(64.0), anchor)
    records = _record(clone := _clone(model, _plan(spa_group, kernel)))
    _sample(clone, (16, 20))
    tokens = TEXT + 16 * 20
    keep = ref.hap_keep(tokens, ref.band_blocks([64.0] * 2, [0.0] * 2, tokens), anchor, text_len=TEXT)
    assert not keep.all()
    for record in records:
        tables = _ref_tables((16, 20), spa_group) if spa_group else None
        if tables is None:  # q and k came rotated: plain attention on them
            out = ref.attention(record["q"], record["k"], record["v"], record["q"].shape[-1] ** -0.5, keep)
            expected = out.transpose(1, 2).reshape(out.shape[0], out.shape[2], -1)
        else:
            expected = _reference_out(record, tables, keep)
        torch.testing.assert_close(record["out"].double(), expected, rtol=1e-5, atol=1e-6)


def test_off_is_bit_identical_and_one_variant_is_stock(model):
    """No SPA and no kernel: the clone samples as the model. SPA with one variant (the grid within group_num
    bundles: bundles of one token, the identity) is the stock model too, to the bit."""
    stock = _sample(model, (6, 6))
    assert torch.equal(_sample(_clone(model, _plan()), (6, 6)), stock)
    assert torch.equal(_sample(_clone(model, _plan(80)), (6, 6)), stock)


@pytest.mark.parametrize("patch", ["dype", "sega", "dype+sega"])
def test_spa_on_dype_and_sega_keeps_their_temperatures_and_drops_their_positions(model, patch):
    """The order: SPA's bundled positions at the model's own frequencies replace DyPE's (or SEGA-alone's NTK)
    positions; the temperatures of the call (SEGA's per pair, YaRN's) stay on the spatial pairs."""
    sega = lambda m: _pack("nodes.rope_patch.clone").patch_model(  # noqa: E731
        m, lambda c: c.with_sega(_pack("spectral").SegaSettings(), BASE_PX))
    patched = {"dype": lambda m: dype(m), "sega": sega, "dype+sega": lambda m: sega(dype(m))}[patch](model)
    records = _record(clone := _clone(patched, _plan(3)))
    _sample(clone, (9, 5))
    ordinary, variants = records[0]["tables"]
    expected = _ref_tables((9, 5), 3)
    spatial = slice(AXES[0] // 2, None)
    temps = ordinary[..., spatial, :, 0].norm(dim=-1)  # |(cos, sin)| of each pair: its temperature
    assert (temps - 1).abs().max() > 1e-3  # above the trained grid: a temperature to keep
    for mine, (cos, sin) in zip(variants, expected, strict=True):
        torch.testing.assert_close(mine[..., spatial, :, 0].norm(dim=-1), temps)
        angle = torch.atan2(mine[0, 0, :, :, 1, 0].double(), mine[0, 0, :, :, 0, 0].double())
        want = torch.atan2(sin[:, ::2], cos[:, ::2])
        assert (torch.remainder(angle - want + torch.pi, 2 * torch.pi) - torch.pi).abs().max() < 1e-5


def test_another_nodes_override_is_chained_per_variant(model):
    """SPA without HAP calls the model's own override (another node's) once per variant in every SPA block."""
    seen = []

    def other(func, q, k, v, heads, *args, **kwargs):
        seen.append(kwargs["transformer_options"]["block_type"])
        return func(q, k, v, heads, *args, **kwargs)

    base = model.clone()
    base.model_options.setdefault("transformer_options", {})["optimized_attention_override"] = other
    _sample(_clone(base, _plan(3, blocks=((), None))), (9, 5))
    variants = _pack("rope.spa").variant_count(9, 5, 3)
    assert seen == ["double"] + ["single"] * variants  # the double block (SPA off there) once, the single per variant


def test_a_host_without_an_attention_override_is_refused_by_name(model, monkeypatch):
    import comfy.ldm.modules.attention as attention

    monkeypatch.delattr(attention, "wrap_attn")
    with pytest.raises(_pack("nodes.families").UnsupportedModelError, match="optimized_attention_override"):
        _clone(model, _plan(3))
