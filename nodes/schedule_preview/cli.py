"""``python <pack> schedule-preview``: the preview figure of a target size as an image file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ...spectral import ALLOCATIONS, RECIPES, REFERENCE_RULES, SegaSettings
from ...spectral.command_line import OneLineParser
from ..families import LISTED
from ..inputs.ranges import BASE_RESOLUTION, FLOOR, HEIGHT, LAMBDA_S, LAMBDA_T, PREVIEW_STEPS, SHIFT, WIDTH


def _image_path(text: str) -> Path:
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a file name such as {path / 'schedule.png'}")
    if path.suffix.lower() in (".jpg", ".jpeg", ".webp", ".png", ".gif", ".bmp", ".tif", ".tiff"):
        return path  # common ones without Pillow (imported after the arguments, as torch) or its plugins
    from PIL import Image  # a Python without it: the pack's __main__ says which Python to use

    formats = Image.registered_extensions()  # extension -> format, readable or writable
    if formats.get(path.suffix.lower()) not in Image.SAVE:
        raise argparse.ArgumentTypeError(f"Pillow cannot write {path.suffix or 'a file without extension'!r}; "
                                         "use .png (or another format it writes, such as .jpg or .webp)")
    return path


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """``schedule-preview``: write the preview PNG. Usage errors exit with status 2, write errors with 1."""
    parser = OneLineParser(prog=prog, description="Draw the DyPE/SEGA schedule for a target size.")
    parser.add_argument("--family", default="flux", choices=[a.name for a in LISTED])
    # the node's limits (nodes/inputs/ranges.py): the same rule for the widget, a Python call and this command
    parser.add_argument("--width", type=WIDTH.argument(), default=WIDTH.default, help="pixels")
    parser.add_argument("--height", type=HEIGHT.argument(), default=HEIGHT.default, help="pixels")
    parser.add_argument("--steps", type=PREVIEW_STEPS.argument(), default=PREVIEW_STEPS.default)
    parser.add_argument("--shift", type=SHIFT.argument(), default=SHIFT.default,
                        help="0 (default): the family's (Flux mu 1.15, Qwen 3.1)")
    parser.add_argument("--method", default="yarn", choices=["yarn", "ntk", "pi", "off"])
    parser.add_argument("--static", action="store_true", help="static extrapolation instead of DyPE")
    parser.add_argument("--lambda-t", type=LAMBDA_T.argument(), default=2.0)
    parser.add_argument("--lambda-s", type=LAMBDA_S.argument(), default=2.0)
    parser.add_argument("--base-resolution", type=BASE_RESOLUTION.argument(), default=0,
                        help="trained resolution in pixels, a multiple of 16; 0 = the family default")
    parser.add_argument("--no-sega", action="store_true", help="show YaRN's scalar temperature instead of SEGA's")
    parser.add_argument("--sega-alone", action="store_true",
                        help="SEGA Attention without DyPE: its recipe's static NTK positions")
    parser.add_argument("--allocation", default="rank", choices=list(ALLOCATIONS), help="SEGA allocation")
    parser.add_argument("--m-ref", default="power", choices=list(REFERENCE_RULES), help="SEGA m_ref rule")
    parser.add_argument("--floor", type=FLOOR.argument(), default=1.0, help="SEGA floor (0 = off)")
    parser.add_argument("--recipe", default="paper", choices=list(RECIPES),
                        help="SEGA recipe: paper (the official SEGA code), port (the diffusers port), refined (ours)")
    parser.add_argument("--out", type=_image_path, default=Path("dype_schedule.png"),
                        help="image file to write (.png; any extension Pillow writes)")
    args = parser.parse_args(argv)
    from ...rope import PositionSchedule  # torch: after the arguments are read
    from .figure import render
    from .request import PreviewRequest

    request = PreviewRequest(
        family=args.family, width=args.width, height=args.height, steps=args.steps, shift=args.shift or None,
        schedule=PositionSchedule(method=args.method, dynamic=not args.static, lambda_t=args.lambda_t,
                                  lambda_s=args.lambda_s),
        base_px=args.base_resolution, sega=not args.no_sega, sega_alone=args.sega_alone,
        sega_settings=SegaSettings(allocation=args.allocation, m_ref=args.m_ref, floor=args.floor,
                                   recipe=args.recipe),
    )
    image = render(request)
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        image.save(args.out)
    except (OSError, ValueError) as error:
        print(f"{parser.prog}: error: cannot write {args.out}: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0
