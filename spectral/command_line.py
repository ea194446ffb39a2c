"""The argument parser every command of the pack uses (``python <pack> bench | schedule-preview | hf-energy``).

It lives at the bottom layer only so that each command, whatever its layer, can import it; it imports no torch.
argparse prints its whole usage block (11-19 lines for these commands) above an error; here a usage error is one
line that names the argument and points to ``--help``, and exits with status 2 as argparse does.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import NoReturn

USAGE_ERROR = 2


class OneLineParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one line: ``<prog>: error: <message> (see --help)``."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see --help)\n")


def bounded(kind: type, low: float, high: float, multiple: int = 1, zero: bool = False) -> Callable[[str], float]:
    """An argparse ``type``: a finite ``kind`` (int or float) in [low, high], a multiple of ``multiple`` (or 0 where
    ``zero``), or an ``ArgumentTypeError`` saying which (a one-line usage error, exit status 2)."""
    shown = str if kind is int else (lambda v: f"{v:g}")

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, "
                                             f"got {text!r}") from None
        if zero and value == 0:
            return value
        if not math.isfinite(value) or not low <= value <= high or value % multiple:
            step = f", a multiple of {multiple}" if multiple > 1 else ""
            raise argparse.ArgumentTypeError(f"must be {'0 or ' if zero else ''}between {shown(low)} and "
                                             f"{shown(high)}{step}, got {text}")
        return value

    return parse
