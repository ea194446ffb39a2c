"""``python <pack> hf-energy``: the HF-energy metric (hf_energy.py) of image files, one line per image.

Its arguments are read before torch is imported: ``--help`` and usage errors need only Python. The metric itself
runs in torch, in float64 (hf_energy.py, the code the tests check against hand-computed values), so a Python with
Pillow alone cannot run it; the pack's ``__main__`` then says which Python to use.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from .command_line import OneLineParser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """``hf-energy IMAGE [IMAGE ...] [--box X0 Y0 X1 Y1]``: print one ``<value>\\t<path>`` line per image."""
    parser = OneLineParser(
        prog=prog,
        description="HF energy: variance of the 4-neighbour Laplacian of the luma (intensities in [0, 1]) over a "
        "box, typically a region that should be flat (sky, wall). One '<value>\\t<path>' line per image.",
    )
    parser.add_argument("images", nargs="+", type=Path, metavar="IMAGE", help="image files (anything Pillow reads)")
    parser.add_argument(
        "--box",
        nargs=4,
        type=int,
        metavar=("X0", "Y0", "X1", "Y1"),
        help="pixel box, end exclusive (default: the whole image)",
    )
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.images if not path.is_file()]
    if missing:
        parser.error(f"no such image file: {', '.join(missing)}")

    if args.box is not None:  # the bounds depend on each image; order and size do not
        x0, y0, x1, y1 = args.box
        if min(args.box) < 0 or x1 - x0 < 3 or y1 - y0 < 3:
            parser.error(f"--box {x0} {y0} {x1} {y1}: need 0 <= x0, 0 <= y0, x1 >= x0 + 3 and y1 >= y0 + 3 "
                         "(pixels, end exclusive; the Laplacian needs at least 3x3)")
    from PIL import Image

    from .hf_energy import laplacian_variance, load_image  # torch: after the arguments are read

    failed = False
    for path in args.images:
        try:
            value = laplacian_variance(load_image(path, args.box))
        except (OSError, ValueError, Image.DecompressionBombError) as error:  # unreadable, too large, box outside
            print(f"{parser.prog}: error: {path}: {error}", file=sys.stderr)
            failed = True
            continue
        print(f"{float(value):.8g}\t{path}")
    return 2 if failed else 0
