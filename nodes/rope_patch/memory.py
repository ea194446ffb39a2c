"""The pack's caches follow ComfyUI's memory: when ComfyUI frees memory (unloading models, "Free model and node
cache", its periodic cleanup) it calls ``comfy.model_management.soft_empty_cache``, and from then on that call also
drops the spectral tables (spectral/shape_cache.py, bounded in bytes) so nothing of ours stays on the GPU after the
models go.

The host has no callback list for this, so the function found by attribute is wrapped once, chained: whatever was
there (ComfyUI's own, or another node's wrapper) still runs first, with its own arguments and result.
"""

from __future__ import annotations

import functools
import logging

from ...spectral import shape_cache

logger = logging.getLogger(__name__)

_MARK = "dype_sega_releases_caches"  # on our wrapper: the release it calls (never wrapped twice for one release)


def follow_host_memory() -> bool:
    """Make ComfyUI's ``soft_empty_cache`` release the pack's caches too; False where the host has no such function."""
    import comfy.model_management as mm

    current = getattr(mm, "soft_empty_cache", None)
    if current is None:
        return False
    if getattr(current, _MARK, None) is shape_cache.release:
        return True

    @functools.wraps(current)
    def soft_empty_cache(*args, **kwargs):
        try:
            return current(*args, **kwargs)
        finally:
            shape_cache.release()

    setattr(soft_empty_cache, _MARK, shape_cache.release)
    mm.soft_empty_cache = soft_empty_cache
    logger.debug("DyPE/SEGA: its spectral tables are released with comfy.model_management.soft_empty_cache")
    return True
