"""Every node and cascade on a device without float64: the host's own check says so (``supports_fp64`` on newer
hosts, 0.3.75's DirectML check), and tests/no_float64.py's ``RuleSide`` fails any op of the pack that makes float64
on the model's side or mixes the two sides (a real Mac, Intel XPU or DirectML machine raises on both). DyPE, SEGA
with each recipe, DyPE -> SEGA, the Schedule Preview, HiFlow, I-Max and HRDiT with SPA and HAP.

Each run must also have been watched: the rule answered (the CPU), and the pack made float64 on the rule's side.
Moving the float64 to the CPU changes no number (no float32 fallback): bit for bit the float64 path's. The
mutations put back each bypass the pack once had (I-Max's stage table, SPA's bundle ids and SEGA's spectrum on the
model's device) and the same run must then fail, naming the site.
"""

from __future__ import annotations

import hiflow_models
import pytest
import tiny_models
import torch
from no_float64 import host_says_no_float64, no_float64
from patching import BASE_PX, _pack, dype
from test_sega_host import sega

pytestmark = pytest.mark.usefixtures("comfy_host")
TOKENS = (8, 12)  # above the tests' trained grid of 4 tokens a side
LATENT = (8, 8)  # the cascades' base latent: 4 x 4 tokens, stages at 8 x 8 and 16 x 16 tokens
CASCADE = dict(steps=4, scales=(2.0, 4.0), stage_steps=(2, 2), swin=False)


@pytest.fixture(scope="module")
def parts(comfy_host):
    return tiny_models.build_flux(), hiflow_models.flux_vae(), tiny_models.flux_cond(7, 1), tiny_models.flux_cond(5, 2)


@pytest.fixture
def tiny_hap_plan(monkeypatch):
    """A HAP scope plan whose band prunes at these sizes (the authors' keeps every entry below 4096 tokens)."""
    scope = _pack("nodes.hap.scope_plan").ScopePlan(((64.0,) * 2,) * 2, ((0.0,) * 2,) * 2, "tests")
    monkeypatch.setattr(_pack("nodes.cascade.hrdit"), "official_plan", lambda: scope)


def _sample(model, family: str = "flux") -> torch.Tensor:
    fam = tiny_models.FAMILIES[family]
    return tiny_models.sample(model, family, tokens=TOKENS, steps=2, cfg=2.0, negative=fam.cond(5, 2))


def _cascade(parts, settings) -> torch.Tensor:
    model, vae, pos, neg = parts
    result = _pack("nodes.cascade").run_cascade(model, pos, neg, vae, {"samples": torch.zeros(1, 16, *LATENT)}, 3,
                                                settings)
    return result.latent["samples"]


def _preview(recipe: str) -> torch.Tensor:
    preview = _pack("nodes.schedule_preview")
    request = preview.PreviewRequest(width=2048, height=1024, steps=6,
                                     sega_settings=_pack("spectral").SegaSettings(recipe=recipe))
    preview.render(request)  # the figure too: it draws with torch
    return preview.schedule_curves(request)["axes"]["rows"]["temperature"]


RUNS = {
    "dype": lambda parts: _sample(dype(parts[0])),
    "sega-paper": lambda parts: _sample(sega(parts[0], recipe="paper")),
    "sega-port": lambda parts: _sample(sega(parts[0], recipe="port")),
    "sega-refined": lambda parts: _sample(sega(parts[0], recipe="refined")),
    "sega-paper-qwen-image": lambda parts: _sample(sega(tiny_models.FAMILIES["qwen_image"].build(0), recipe="paper"),
                                                   "qwen_image"),
    "dype-then-sega": lambda parts: _sample(sega(dype(parts[0]))),
    "schedule-preview-refined": lambda parts: _preview("refined"),
    "schedule-preview-paper": lambda parts: _preview("paper"),
    "hiflow": lambda parts: _cascade(parts, _pack("nodes.cascade").HiFlowSettings(**CASCADE)),
    "imax": lambda parts: _cascade(parts, _pack("nodes.cascade").ImaxSettings(
        steps=4, scales=(4.0,), stage_steps=(2,), swin=False)),
    "hrdit-spa-hap": lambda parts: _cascade(parts, _pack("nodes.cascade").HrditSettings(
        **CASCADE, spa=True, hap=True, spa_steps=(2, 1), group_num=3, global_anchor=2)),
    "hrdit-on-dype-sega": lambda parts: _pack("nodes.cascade").run_cascade(
        parts[0], parts[2], parts[3], parts[1], {"samples": torch.zeros(1, 16, *LATENT)}, 3,
        _pack("nodes.cascade").HrditSettings(**CASCADE, spa=True, hap=True, spa_steps=(2, 1), group_num=3),
        stage_model=sega(dype(parts[0], BASE_PX))).latent["samples"],
}
#: Runs that never ask the pack's rule, and why: it has no float64 to place there.
RULE_NOT_ASKED = {
    "schedule-preview-refined": "CPU-only drawing: no model, no model device",
    "schedule-preview-paper": "CPU-only drawing: no model, no model device",
    "hiflow": "its stage table is the host's own EmbedND (theta x factor), whose rope() reads the same host check",
}


@pytest.mark.parametrize("name", RUNS)
def test_every_node_and_cascade_runs_where_the_host_has_no_float64(parts, name, monkeypatch, tiny_hap_plan):
    with no_float64(monkeypatch) as mode:
        out = RUNS[name](parts)
    assert torch.isfinite(out).all()
    assert not mode.violations, "\n".join(str(v) for v in mode.violations[:20])
    assert mode.checked, "no float64 of the pack's ran under watch: the run did not reach the patched path"
    if name not in RULE_NOT_ASKED:
        assert mode.asked and all(device.type == "cpu" for device in mode.asked)


@pytest.mark.parametrize("name", ["sega-refined", "sega-port", "dype-then-sega", "imax", "hrdit-spa-hap"])
def test_the_cpu_gives_the_float64_paths_numbers(parts, name, monkeypatch, tiny_hap_plan):
    """Where the rule moves the float64 to the CPU nothing else changes (no float32 fallback): bit for bit."""
    want = RUNS[name](parts)
    host_says_no_float64(monkeypatch)
    assert torch.equal(RUNS[name](parts), want)


#: (run, pack module whose rule answer is replaced by the model's device, the site the failure must name)
BYPASSES = [
    ("imax", "nodes.cascade.imax_model", "rope/imax_stage.py"),
    ("hrdit-spa-hap", "nodes.rope_patch.spa", "rope/spa.py"),
    ("sega-refined", "nodes.rope_patch.spectrum", "spectral/profiles.py"),
    ("sega-port", "nodes.rope_patch.spectrum", "spectral/token_grid.py"),
]


@pytest.mark.parametrize(("name", "module", "site"), BYPASSES, ids=[b[0] for b in BYPASSES])
def test_the_run_fails_where_a_site_makes_float64_on_the_models_device(parts, name, module, site, monkeypatch,
                                                                       tiny_hap_plan):
    """The bypasses the pack had before the rule reached them, put back one at a time: the run must fail there."""
    with no_float64(monkeypatch) as mode:
        monkeypatch.setattr(_pack(module), "math_device", lambda device: device)
        RUNS[name](parts)
    assert any(v.where.startswith(site) for v in mode.violations), [str(v) for v in mode.violations[:5]]


def test_each_of_the_hosts_checks_moves_the_math_to_the_cpu(monkeypatch):
    """0.3.75's rope() reads three checks (MPS, Intel XPU, DirectML); newer hosts one (supports_fp64). The rule
    follows each; a device the host keeps float64 on stays where it is."""
    import comfy.model_management as mm

    devices = _pack("nodes.rope_patch.devices")
    meta = torch.device("meta")
    assert devices.math_device(meta) == meta
    if hasattr(mm, "supports_fp64"):
        checks = {"supports_fp64": lambda device=None: torch.device(device).type != "meta"}
    else:
        checks = {"is_device_mps": lambda device: torch.device(device).type == "meta",
                  "is_intel_xpu": lambda: True, "is_directml_enabled": lambda: True}
    for check, says in checks.items():
        with monkeypatch.context() as patch:
            patch.setattr(mm, check, says)
            assert devices.math_device(meta) == torch.device("cpu"), check
