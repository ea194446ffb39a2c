"""The "HF energy" metric of the SEGA seeds: variance of the Laplacian over a flat image region (its command line:
hf_energy_cli.py).

High-resolution extrapolation failures show up as high-frequency texture (grain, repeated micro-patterns) on
regions that should be smooth, such as sky or walls. The variance of the discrete Laplacian over such a region
measures that energy: 0 for a perfectly flat patch, larger for more fine detail.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

# ITU-R BT.601 luma, the weights Pillow uses for mode "L": the metric on an RGB array equals the metric on the
# grayscale image Pillow would produce (up to its 8-bit rounding).
LUMA_WEIGHTS = (0.299, 0.587, 0.114)

Box = tuple[int, int, int, int]


def to_luma(image: torch.Tensor) -> torch.Tensor:
    """(H, W), (H, W, 1), (H, W, 2: gray+alpha), (H, W, 3) or (H, W, 4: RGBA) -> float64 (H, W) luma in [0, 1].

    uint8 is divided by 255; floating images are taken as already in [0, 1]. Alpha is ignored.
    """
    if image.dtype == torch.uint8:
        values = image.to(torch.float64) / 255.0
    elif image.is_floating_point():
        values = image.to(torch.float64)
    else:
        raise ValueError(f"Expected a float image in [0, 1] or uint8, got dtype {image.dtype}.")
    if values.dim() == 2:
        return values
    if values.dim() == 3 and values.shape[-1] in (1, 2):
        return values[..., 0]
    if values.dim() == 3 and values.shape[-1] in (3, 4):
        weights = torch.tensor(LUMA_WEIGHTS, dtype=torch.float64, device=values.device)
        return values[..., :3] @ weights
    raise ValueError(f"Expected an image of shape (H, W) or (H, W, C) with C in 1..4, got {tuple(image.shape)}.")


def check_box(box: Sequence[int], height: int, width: int) -> Box:
    """Validate a pixel box ``(x0, y0, x1, y1)``, end exclusive, inside a ``height x width`` image, >= 3x3."""
    if len(box) != 4:
        raise ValueError(f"A box is four integers x0 y0 x1 y1, got {list(box)}.")
    x0, y0, x1, y1 = (int(v) for v in box)
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise ValueError(
            f"Box x0={x0} y0={y0} x1={x1} y1={y1} lies outside the {width}x{height} image "
            f"(need 0 <= x0 < x1 <= {width} and 0 <= y0 < y1 <= {height}; the end is exclusive)."
        )
    if x1 - x0 < 3 or y1 - y0 < 3:
        raise ValueError(f"Box x0={x0} y0={y0} x1={x1} y1={y1} is {x1 - x0}x{y1 - y0}; the Laplacian needs >= 3x3.")
    return x0, y0, x1, y1


def laplacian_variance(image: torch.Tensor, box: tuple[int, int, int, int] | None = None) -> torch.Tensor:
    """Population variance of the 4-neighbour Laplacian of the luma, over ``box`` (x0, y0, x1, y1; end exclusive).

    Kernel ``[[0, 1, 0], [1, -4, 1], [0, 1, 0]]`` (OpenCV's ``Laplacian`` with ksize 1), applied only where it
    fits inside the box (no padding, so pixels outside the box and image borders never contribute). Intensities
    are in [0, 1]; multiply by 255**2 to compare with values computed on 8-bit images. Returns a float64 scalar.
    White noise of variance v gives 20 v; a one-pixel 0/1 checkerboard gives 16.
    """
    luma = to_luma(image)
    height, width = luma.shape
    x0, y0, x1, y1 = check_box(box if box is not None else (0, 0, width, height), height, width)
    region = luma[y0:y1, x0:x1]
    centre = region[1:-1, 1:-1]
    laplacian = region[:-2, 1:-1] + region[2:, 1:-1] + region[1:-1, :-2] + region[1:-1, 2:] - 4.0 * centre
    return laplacian.var(correction=0)


def load_image(path: Path, box: Sequence[int] | None = None) -> torch.Tensor:
    """Read an image with Pillow as a float64 (H, W) or (H, W, C) tensor in [0, 1] (16-bit gray kept exact).

    With ``box`` (checked against the image size) only that region is decoded into float64, so memory follows the
    box, not the image. Pillow's decompression-bomb limit applies (``PIL.Image.MAX_IMAGE_PIXELS``).
    """
    from PIL import Image  # only the CLI needs Pillow

    with Image.open(path) as img:
        if box is not None:
            x0, y0, x1, y1 = check_box(box, img.height, img.width)
            img = img.crop((x0, y0, x1, y1))
        if img.mode.startswith("I;16") or img.mode == "I":
            gray = img.convert("F")
            data = torch.frombuffer(bytearray(gray.tobytes()), dtype=torch.float32)
            return data.reshape(gray.height, gray.width).to(torch.float64) / 65535.0
        if img.mode == "F":
            data = torch.frombuffer(bytearray(img.tobytes()), dtype=torch.float32)
            return data.reshape(img.height, img.width).to(torch.float64)
        converted = img.convert("L" if img.mode in ("1", "L", "LA") else "RGB")  # palette/CMYK/... -> RGB
        channels = len(converted.getbands())
        data = torch.frombuffer(bytearray(converted.tobytes()), dtype=torch.uint8)
        return data.reshape(converted.height, converted.width, channels).to(torch.float64) / 255.0
