"""The HF-energy metric (variance of the Laplacian) and the pack's ``hf-energy`` command line."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from PIL import Image

from spectral.hf_energy import laplacian_variance, to_luma

PACK = Path(__file__).resolve().parents[1]


def checkerboard(size: int = 34) -> torch.Tensor:
    index = torch.arange(size)
    return ((index[:, None] + index[None, :]) % 2).to(torch.float64)


def test_flat_image_is_zero() -> None:
    assert laplacian_variance(torch.full((20, 30), 0.6)).item() == 0.0
    assert laplacian_variance(torch.full((20, 30, 3), 200, dtype=torch.uint8)).item() == 0.0


def test_linear_ramp_is_zero() -> None:
    ramp = (
        0.5 * torch.linspace(0, 1, 40, dtype=torch.float64)[None, :]
        + 0.01 * torch.arange(25, dtype=torch.float64)[:, None]
    )
    assert laplacian_variance(ramp).item() == pytest.approx(0.0, abs=1e-20)


def test_checkerboard_is_16() -> None:
    board = checkerboard()  # Laplacian is +-4 everywhere, balanced on the 32x32 interior
    assert laplacian_variance(board).item() == pytest.approx(16.0, abs=1e-12)
    rgb = board[..., None].expand(34, 34, 3)
    assert laplacian_variance(rgb).item() == pytest.approx(16.0, abs=1e-12)  # luma weights sum to 1
    assert laplacian_variance((board * 255).to(torch.uint8)).item() == pytest.approx(16.0, abs=1e-12)
    rgba = torch.cat([rgb, torch.rand(34, 34, 1, dtype=torch.float64)], dim=-1)
    assert laplacian_variance(rgba).item() == pytest.approx(16.0, abs=1e-12)  # alpha ignored


def test_white_noise_is_20_times_its_variance() -> None:
    noise = torch.rand(600, 600, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert laplacian_variance(noise).item() == pytest.approx(20 / 12, rel=0.03)


def test_luma_weights() -> None:
    pixel = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
    torch.testing.assert_close(to_luma(pixel), torch.tensor([[0.299, 0.587, 0.114]], dtype=torch.float64))


def test_box_crops() -> None:
    image = torch.full((40, 60), 0.5, dtype=torch.float64)
    image[:, 30:] = torch.rand(40, 30, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert laplacian_variance(image, (0, 0, 30, 40)).item() == 0.0  # flat half only
    assert laplacian_variance(image, (30, 0, 60, 40)).item() > 0.5
    box = (5, 7, 45, 33)
    expected = laplacian_variance(image[7:33, 5:45])
    assert laplacian_variance(image, box).item() == expected.item()
    # pixels just outside the box never leak in: a spike next to a flat box changes nothing
    spiky = image.clone()
    spiky[10, 2] = 1.0
    assert laplacian_variance(spiky, (3, 0, 30, 40)).item() == 0.0


@pytest.mark.parametrize("box", [(0, 0, 61, 40), (-1, 0, 10, 10), (10, 10, 10, 20), (0, 0, 10, 41), (5, 5, 7, 20)])
def test_bad_boxes(box: tuple[int, int, int, int]) -> None:
    with pytest.raises(ValueError, match="Box|box"):
        laplacian_variance(torch.zeros(40, 60), box)


def test_bad_images() -> None:
    with pytest.raises(ValueError):
        laplacian_variance(torch.zeros(40, 60, 5))
    with pytest.raises(ValueError):
        laplacian_variance(torch.zeros(40, 60, dtype=torch.int32))


# --- command line -----------------------------------------------------------------------------------------------


def _png(path: Path, array: torch.Tensor) -> Path:
    data = (array.clamp(0, 1) * 255).round().to(torch.uint8)
    mode = "L" if data.dim() == 2 else "RGB"
    Image.frombytes(mode, (data.shape[1], data.shape[0]), bytes(data.flatten().tolist())).save(path)
    return path


def _cli(*args: str, cwd: Path | None = None, module: str | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", module] if module else [sys.executable, str(PACK)]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False)


def _cli_here(capsys, *args: str) -> subprocess.CompletedProcess:
    """The same command line as ``_cli`` run in this process (no interpreter start, ~1.5 s each): the pack's
    ``__main__.main`` with its exit status, stdout and stderr. The entry points themselves: test_cli_as_a_directory
    and test_cli_as_a_module."""
    spec = importlib.util.spec_from_file_location("dype_sega_cli", PACK / "__main__.py")
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    try:
        code = cli.main(list(args))
    except SystemExit as stop:  # argparse's errors exit with status 2, as from the shell
        code = stop.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out, err)


def test_cli_as_a_directory(tmp_path: Path) -> None:
    board = _png(tmp_path / "board.png", checkerboard())
    flat = _png(tmp_path / "flat.png", torch.full((20, 20, 3), 0.4))
    result = _cli("hf-energy", str(board), str(flat))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    value, path = lines[0].split("\t")
    assert float(value) == pytest.approx(16.0) and path == str(board)
    assert float(lines[1].split("\t")[0]) == 0.0


def test_cli_box(tmp_path: Path, capsys) -> None:
    image = torch.full((40, 60), 0.5)
    image[:, 30:] = checkerboard(60)[:40, 30:]
    path = _png(tmp_path / "half.png", image)
    left = _cli_here(capsys, "hf-energy", str(path), "--box", "0", "0", "30", "40")
    right = _cli_here(capsys, "hf-energy", str(path), "--box", "30", "0", "60", "40")
    assert left.returncode == right.returncode == 0, left.stderr + right.stderr
    assert float(left.stdout.split("\t")[0]) == 0.0
    assert float(right.stdout.split("\t")[0]) == pytest.approx(16.0)


def test_cli_as_a_module(tmp_path: Path) -> None:
    (tmp_path / "dype_sega").symlink_to(PACK, target_is_directory=True)
    board = _png(tmp_path / "board.png", checkerboard())
    result = _cli("hf-energy", str(board), cwd=tmp_path, module="dype_sega")
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.split("\t")[0]) == pytest.approx(16.0)


def test_cli_errors(tmp_path: Path, capsys) -> None:
    missing = _cli_here(capsys, "hf-energy", str(tmp_path / "nope.png"))
    assert missing.returncode == 2 and "no such image file" in missing.stderr and "nope.png" in missing.stderr
    path = _png(tmp_path / "small.png", checkerboard(16))
    outside = _cli_here(capsys, "hf-energy", str(path), "--box", "0", "0", "17", "10")
    assert outside.returncode == 2 and "outside the 16x16 image" in outside.stderr
    not_image = tmp_path / "text.png"
    not_image.write_text("not an image")
    broken = _cli_here(capsys, "hf-energy", str(not_image), str(path))
    assert broken.returncode == 2 and "text.png" in broken.stderr
    assert float(broken.stdout.split("\t")[0]) == pytest.approx(16.0, abs=0.5)  # the good image is still measured
    unknown = _cli_here(capsys, "no-such-command")
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr
    for result in (missing, outside, unknown):  # one line each, not argparse's usage block above it
        assert result.stderr.count("\n") == 1, result.stderr


def test_cli_rejects_a_malformed_box_before_reading(tmp_path: Path, capsys) -> None:
    path = _png(tmp_path / "small.png", checkerboard(16))
    for box in (["-1", "0", "5", "5"], ["5", "0", "4", "5"], ["0", "0", "2", "9"]):
        result = _cli_here(capsys, "hf-energy", str(path), "--box", *box)
        assert result.returncode == 2 and "need 0 <= x0" in result.stderr and "Traceback" not in result.stderr


def test_cli_reports_an_image_over_pillows_pixel_limit(tmp_path: Path, monkeypatch, capsys) -> None:
    from spectral import hf_energy_cli

    path = _png(tmp_path / "board.png", checkerboard(64))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 64 * 64 // 3)  # more than twice the limit: Pillow refuses
    assert hf_energy_cli.main([str(path)], prog="hf-energy") == 2
    err = capsys.readouterr().err
    assert "board.png" in err and "exceeds limit" in err


def test_box_is_cropped_before_conversion(tmp_path: Path) -> None:
    from spectral import hf_energy

    path = _png(tmp_path / "board.png", checkerboard(64))
    region = hf_energy.load_image(path, (8, 4, 20, 30))
    assert region.shape[:2] == (26, 12)
    assert float(laplacian_variance(region)) == pytest.approx(16.0, abs=0.5)
