"""The schedule preview: curves are the rope/ schedule, the picture renders, node and CLI both work."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch
from sega_references import port_ntk_factor


@pytest.fixture(scope="module")
def preview():
    import host

    return host.pack_submodule("nodes.schedule_preview")


@pytest.fixture(scope="module")
def curves_module():
    import host

    return host.pack_submodule("nodes.schedule_preview.curves")


@pytest.fixture(scope="module")
def cli():
    import host

    return host.pack_submodule("nodes.schedule_preview.cli")


def test_curves_are_the_schedule_and_relax_towards_the_original(preview):
    import host

    rope = host.pack_submodule("rope")
    request = preview.PreviewRequest(width=4096, height=2048, steps=10, sega=False)
    curves = preview.schedule_curves(request)
    rows, cols = curves["axes"]["rows"], curves["axes"]["columns"]
    assert (rows["tokens"], cols["tokens"]) == (128, 256) and (rows["scale"], cols["scale"]) == (2.0, 4.0)
    sigmas = curves["sigmas"]
    assert sigmas[0] == 1.0 and (sigmas[1:] < sigmas[:-1]).all() and len(sigmas) == 10
    want = rope.plain_frequencies(56, 10000.0) / rope.axis_frequencies(rope.PositionSchedule(), 56, 10000.0, 4.0, 64,
                                                                         sigmas)
    assert torch.equal(cols["ratio"], want)
    assert (cols["ratio"][0] >= cols["ratio"][-1]).all()  # compression relaxes as sigma falls
    assert torch.allclose(cols["temperature"], torch.full_like(cols["temperature"], rope.yarn_temperature(4.0)))


def test_sega_temperatures_average_to_m_ref(preview):
    import host

    spectral = host.pack_submodule("spectral")
    for m_ref, want in (("power", 2.0**0.08), ("yarn", 0.1 * math.log(2.0) + 1)):
        settings = spectral.SegaSettings(floor=0.0, m_ref=m_ref)
        request = preview.PreviewRequest(width=2048, height=2048, steps=4, sega=True, sega_settings=settings)
        temperature = preview.schedule_curves(request)["axes"]["rows"]["temperature"]
        assert torch.allclose(temperature.mean(-1), torch.full((4,), want, dtype=torch.float64), rtol=1e-9)
        assert not torch.allclose(temperature, temperature.mean(-1, keepdim=True))
    default = preview.schedule_curves(preview.PreviewRequest(width=2048, height=2048, steps=4))
    assert (default["axes"]["rows"]["temperature"] >= 1.0).all()  # the port's floor 1.0 by default


@pytest.mark.parametrize("recipe", ["paper", "port"])
def test_preview_draws_sega_alone_and_after_dype(preview, recipe):
    """SEGA alone has its recipe's static NTK positions (paper: the official code's factor with one s; port: the
    port's per axis); after DyPE the positions follow sigma. The preview follows the patched model's plan."""
    import host

    rope, spectral = host.pack_submodule("rope"), host.pack_submodule("spectral")
    settings = spectral.SegaSettings(recipe=recipe)
    alone = preview.schedule_curves(preview.PreviewRequest(width=4096, height=2048, steps=6, sega_alone=True,
                                                           sega_settings=settings))
    after = preview.schedule_curves(preview.PreviewRequest(width=4096, height=2048, steps=6, sega_settings=settings))
    for axis, scale in (("rows", 2.0), ("columns", 4.0)):
        factor = rope.official_ntk_factor(4.0, 56) if recipe == "paper" else port_ntk_factor(scale, 56)
        ntk = rope.ntk_frequencies(56, 10000.0, factor)
        torch.testing.assert_close(alone["axes"][axis]["ratio"],
                                   (rope.plain_frequencies(56, 10000.0) / ntk).expand(6, -1), rtol=1e-12, atol=0)
    assert (alone["axes"]["rows"]["ratio"] == alone["axes"]["rows"]["ratio"][0]).all()  # static
    assert not torch.equal(after["axes"]["rows"]["ratio"][0], after["axes"]["rows"]["ratio"][-1])  # dynamic
    assert not torch.allclose(alone["axes"]["rows"]["temperature"], after["axes"]["rows"]["temperature"])


def test_preview_follows_the_qwen_image_paper_quirks(preview):
    """Qwen-Image under "paper": the height axis shows the width axis's temperatures; under "refined" its own."""
    import host

    spectral = host.pack_submodule("spectral")
    for recipe, same in (("paper", True), ("refined", False)):
        curves = preview.schedule_curves(preview.PreviewRequest(
            family="qwen_image", width=4096, height=2048, steps=4, sega_alone=True,
            sega_settings=spectral.SegaSettings(recipe=recipe)))
        rows, columns = curves["axes"]["rows"]["temperature"], curves["axes"]["columns"]["temperature"]
        assert torch.equal(rows, columns) == same, recipe


@pytest.fixture(scope="module")
def figure():
    import host

    return host.pack_submodule("nodes.schedule_preview.figure")


def test_each_panel_keys_its_own_range_and_a_constant_is_one_value(preview, figure):
    # Wan 14B at 1920x1088 without SEGA: YaRN's one temperature per axis (1.0412 rows, 1.0405 columns) is a
    # constant in each panel, said as a value, not stretched over the ramp.
    wan = preview.schedule_curves(preview.PreviewRequest(family="wan_14b", width=1920, height=1088, steps=4,
                                                         sega=False))
    for axis in wan["axes"].values():
        key = figure.temperature_key(axis["temperature"])
        assert key.constant is not None and f"{float(axis['temperature'][0, 0]):.3f}" in key.constant
    # A spread of 0.002 is not constant, but its key spans MIN_TEMPERATURE_SPAN: two nearly equal colours.
    near = torch.tensor([[1.000, 1.002]], dtype=torch.float64)
    key = figure.temperature_key(near)
    assert key.constant is None and key.high - key.low == pytest.approx(figure.MIN_TEMPERATURE_SPAN)
    a, b = figure.colours(near, key)[0].tolist()
    assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 25
    # SEGA at 4096²: the key spans exactly the panel's values, labelled at both ends.
    sega = preview.schedule_curves(preview.PreviewRequest(width=4096, height=4096, steps=4))
    t = sega["axes"]["rows"]["temperature"]
    key = figure.temperature_key(t)
    assert (key.low, key.high) == (float(t.min()), float(t.max()))
    assert [label for _, label in key.ticks] == [f"{float(t.min()):.3f}", f"{float(t.max()):.3f}"]
    # Compression on a log2 scale from 1x, at least to 2x; none at the trained size.
    ratio = sega["axes"]["rows"]["ratio"]
    key = figure.compression_key(ratio)
    assert key.low == 0.0 and key.high == pytest.approx(float(torch.log2(ratio).max()))
    assert key.ticks[-1][1] == "4x"
    flat = preview.schedule_curves(preview.PreviewRequest(width=1024, height=1024, steps=3))
    assert figure.compression_key(flat["axes"]["rows"]["ratio"]).constant is not None


def test_figure_says_what_it_shows(preview, figure):
    import host

    request = preview.PreviewRequest(family="qwen_image", width=3840, height=2160, steps=8, sega_alone=True)
    title, recipe, caption = figure.describe(request, preview.schedule_curves(request))
    assert title.startswith("Qwen-Image") and "3840 x 2160" in title and "8 steps" in title
    # SEGA alone with recipe paper on Qwen-Image: the official code's 1024 px trained size (its quirk)
    assert "SEGA alone" in recipe and "trained at 1024 x 1024" in recipe
    assert caption.startswith("Top: how much each RoPE frequency pair is compressed") and "Bottom:" in caption
    assert all(name in preview.FAMILY_CHOICES for name in ("Qwen-Image (incl. Edit)", "Wan 2.2 TI2V 5B"))
    assert set(preview.FAMILY_CHOICES.values()) == {a.name for a in host.pack_submodule("nodes.families").ADAPTERS}


def test_below_base_is_flat(preview):
    curves = preview.schedule_curves(preview.PreviewRequest(width=1024, height=768, steps=3))
    for axis in curves["axes"].values():
        assert torch.equal(axis["ratio"], torch.ones_like(axis["ratio"]))
        assert torch.equal(axis["temperature"], torch.ones_like(axis["temperature"]))


def test_cli_writes_a_png(tmp_path):
    import host

    out = tmp_path / "schedule.png"
    subprocess.run([sys.executable, str(host.PACK_DIR), "schedule-preview", "--family", "qwen_image", "--width",
                    "3840", "--height", "2160", "--steps", "8", "--sega-alone", "--allocation", "frequency",
                    "--m-ref", "yarn", "--floor", "0", "--out", str(out)], check=True, timeout=120)
    from PIL import Image

    with Image.open(out) as image:
        assert image.size[0] > 400 and image.size[1] > 300


def test_node_returns_an_image(comfy_host):
    import host

    node = host.pack_submodule("nodes.preview_node").DyPESchedulePreview
    result = node.execute(family="Flux.1 (dev / schnell / Krea / Kontext / Fill)", width=3072, height=1536, steps=6, shift=0.0, method="ntk", dynamic=True,
                          lambda_t=2.0, lambda_s=2.0, base_resolution=0, sega=False)
    (image,) = result.result
    assert image.dtype == torch.float32 and image.shape[0] == 1 and image.shape[-1] == 3
    assert 0.0 <= image.min() and image.max() <= 1.0 and image.std() > 0.05
    preview = host.pack_submodule("nodes.schedule_preview")
    rope = host.pack_submodule("rope")
    want = preview.render(preview.PreviewRequest(width=3072, height=1536, steps=6, sega=False,
                                                 schedule=rope.PositionSchedule(method="ntk")))
    got = (image[0] * 255).round().to(torch.uint8)
    assert got.shape == (want.height, want.width, 3)  # every input reached the figure (a lost one changes it)
    assert torch.equal(got, torch.frombuffer(bytearray(want.tobytes()), dtype=torch.uint8).reshape(got.shape))
    alone = node.execute(family="flux", width=3072, height=1536, steps=6, shift=0.0, method="yarn", dynamic=True,
                         lambda_t=2.0, lambda_s=2.0, base_resolution=0, sega=True, sega_alone=True,
                         allocation="frequency", m_ref="yarn", floor=0.0)
    assert alone.result[0].shape[-1] == 3


@pytest.mark.parametrize(("args", "message"), [
    (["--steps", "0"], "--steps: must be between 1 and 200"),
    (["--steps", "100000"], "--steps: must be between 1 and 200"),
    (["--lambda-t", "-1"], "--lambda-t: must be between 0"),
    (["--lambda-s", "inf"], "--lambda-s: must be between 0"),
    (["--shift", "nan"], "--shift: must be between"),
    (["--width", "0"], "--width: must be between 16"),
    (["--width", "-5"], "--width: must be between 16"),
    (["--height", "abc"], "--height: expected an integer"),
    (["--base-resolution", "-5"], "--base-resolution: must be 0 or between 16 and 16384, a multiple of 16"),
    (["--base-resolution", "5"], "--base-resolution: must be 0 or between 16 and 16384, a multiple of 16"),
    (["--width", "16400"], "--width: must be between 16 and 16384"),  # the node's limit (nodes/inputs/ranges.py)
    (["--shift", "50"], "--shift: must be between 0 and 20"),
    (["--out", "{tmp}"], "is a directory"),
    (["--out", "{tmp}/x.xyz"], "Pillow cannot write '.xyz'"),
    (["--out", "{tmp}/noext"], "Pillow cannot write 'a file without extension'"),
])
def test_cli_usage_errors_exit_2_with_a_message(cli, tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path) for a in args]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(args, prog="schedule-preview")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.count("\n") == 1, err  # one line, not argparse's usage block
    assert not list(tmp_path.iterdir())  # nothing written


def test_cli_write_error_exits_1(cli, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["--steps", "2", "--no-sega", "--out", str(blocker / "x.png")], prog="p") == 1
    assert "cannot write" in capsys.readouterr().err


def test_preview_memory_does_not_grow_with_steps(preview, curves_module, monkeypatch):
    """The synthetic SEGA latents are built a chunk of steps at a time (``--steps 100000`` once asked for 419 GB)."""
    sizes = []
    real = curves_module._synthetic_latents

    def recording(*args, **kwargs):
        out = real(*args, **kwargs)
        sizes.append(out.shape[0])
        return out

    monkeypatch.setattr(curves_module, "_synthetic_latents", recording)
    curves = preview.schedule_curves(preview.PreviewRequest(width=2048, height=2048, steps=40, sega=True))
    assert max(sizes) <= curves_module.STEPS_PER_CHUNK and sum(sizes) == 40
    monkeypatch.setattr(curves_module, "STEPS_PER_CHUNK", 1000)
    whole = preview.schedule_curves(preview.PreviewRequest(width=2048, height=2048, steps=40, sega=True))
    assert sizes[-1] == 40  # one chunk this time, same temperatures
    for axis in ("rows", "columns"):
        torch.testing.assert_close(curves["axes"][axis]["temperature"], whole["axes"][axis]["temperature"],
                                   rtol=1e-12, atol=0)
