"""The schedule preview: curves are the rope/ schedule, the picture renders, node and CLI both work."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch


@pytest.fixture(scope="module")
def preview():
    import host

    return host.pack_submodule("nodes.schedule_preview")


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
    assert torch.allclose(cols["temperature"], torch.full_like(cols["temperature"], rope.yarn_attention_scale(4.0)))


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
        factor = rope.official_ntk_factor(4.0, 56) if recipe == "paper" else rope.port_ntk_factor(scale, 56)
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


def test_temperatures_the_key_cannot_tell_apart_get_one_colour(preview):
    # Wan 14B at 1920x1088: s = 1.51 and 1.50, YaRN temperatures 1.0412 and 1.0405, both labelled 1.041.
    request = preview.PreviewRequest(family="wan_14b", width=1920, height=1088, steps=4, sega=False)
    temps = torch.cat([a["temperature"].reshape(-1) for a in preview.schedule_curves(request)["axes"].values()])
    assert temps.min() < temps.max()
    low, high = preview.key_range(temps)
    assert low == high == float(temps.max())
    uhd = preview.PreviewRequest(width=3840, height=2160, steps=4, sega=False)  # Flux: 1.075 and 1.132
    temps = torch.cat([a["temperature"].reshape(-1) for a in preview.schedule_curves(uhd)["axes"].values()])
    assert preview.key_range(temps) == (float(temps.min()), float(temps.max()))


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
    result = node.execute(family="flux", width=3072, height=1536, steps=6, shift=0.0, method="ntk", dynamic=True,
                          lambda_t=2.0, lambda_s=2.0, base_resolution=0, sega=False)
    (image,) = result.result
    assert image.dtype == torch.float32 and image.shape[0] == 1 and image.shape[-1] == 3
    assert 0.0 <= image.min() and image.max() <= 1.0 and image.std() > 0.05
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
    (["--base-resolution", "-5"], "--base-resolution: must be between 0"),
    (["--base-resolution", "5"], "--base-resolution must be 0 (family default) or at least 16"),
    (["--out", "{tmp}"], "is a directory"),
    (["--out", "{tmp}/x.xyz"], "Pillow cannot write '.xyz'"),
    (["--out", "{tmp}/noext"], "Pillow cannot write 'a file without extension'"),
])
def test_cli_usage_errors_exit_2_with_a_message(preview, tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path) for a in args]
    with pytest.raises(SystemExit) as exit_info:
        preview.main(args, prog="schedule-preview")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())  # nothing written


def test_cli_write_error_exits_1(preview, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert preview.main(["--steps", "2", "--no-sega", "--out", str(blocker / "x.png")], prog="p") == 1
    assert "cannot write" in capsys.readouterr().err


def test_preview_memory_does_not_grow_with_steps(preview, monkeypatch):
    """The synthetic SEGA latents are built a chunk of steps at a time (``--steps 100000`` once asked for 419 GB)."""
    sizes = []
    real = preview._synthetic_latents

    def recording(*args, **kwargs):
        out = real(*args, **kwargs)
        sizes.append(out.shape[0])
        return out

    monkeypatch.setattr(preview, "_synthetic_latents", recording)
    curves = preview.schedule_curves(preview.PreviewRequest(width=2048, height=2048, steps=40, sega=True))
    assert max(sizes) <= preview.STEPS_PER_CHUNK and sum(sizes) == 40
    monkeypatch.setattr(preview, "STEPS_PER_CHUNK", 1000)
    whole = preview.schedule_curves(preview.PreviewRequest(width=2048, height=2048, steps=40, sega=True))
    assert sizes[-1] == 40  # one chunk this time, same temperatures
    for axis in ("rows", "columns"):
        torch.testing.assert_close(curves["axes"][axis]["temperature"], whole["axes"][axis]["temperature"],
                                   rtol=1e-12, atol=0)
