"""Which source files are the pack's own: the bench and the tests count tensor reads and graph breaks in them."""

from __future__ import annotations

import os
from pathlib import Path

PACK_ROOT = Path(__file__).resolve().parents[2]
PACK_SOURCES = tuple(str(PACK_ROOT / part) + tail for part, tail in
                     (("nodes", os.sep), ("rope", os.sep), ("spectral", os.sep), ("__init__.py", "")))


def is_pack_source(filename: str) -> bool:
    """A frame in the pack's own code: not merely under the checkout, which may hold .venv (with ComfyUI), .hosts
    and tests."""
    return filename.startswith(PACK_SOURCES)
