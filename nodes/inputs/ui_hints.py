"""What newer hosts let a node tell the frontend beyond its inputs: words the node search also matches
(``Schema.search_aliases``) and inputs the node folds away until the user asks for them (``Input.advanced``).

Each is passed only where this host's ``comfy_api`` has it (detected from the classes, never from a version): an
older host's Schema and Input constructors reject the unknown keyword, and its frontend would ignore it anyway.
"""

from __future__ import annotations

import dataclasses
import inspect

from comfy_api.latest import io

#: This host's V3 Schema has ``search_aliases`` (sent to the frontend as the node's ``search_aliases``).
HAS_SEARCH_ALIASES = "search_aliases" in {f.name for f in dataclasses.fields(io.Schema)}
#: This host's V3 inputs take ``advanced`` (the frontend hides those widgets behind "show advanced").
HAS_ADVANCED_INPUTS = "advanced" in inspect.signature(io.Input.__init__).parameters

#: Words a user may type for what the four nodes are for; each node adds its own.
COMMON_ALIASES = ["high resolution", "hi-res", "4K", "8K", "upscale", "large image", "RoPE", "extrapolation",
                  "DyPE", "SEGA", "YaRN", "NTK", "ultra high resolution"]


def aliases(*own: str) -> dict[str, list[str]]:
    """``Schema(**aliases(...))``: the node's search words where the host has ``search_aliases``, else nothing."""
    return {"search_aliases": [*own, *COMMON_ALIASES]} if HAS_SEARCH_ALIASES else {}


def advanced() -> dict[str, bool]:
    """``Input(..., **advanced())``: a knob a first run does not need, folded away where the host can."""
    return {"advanced": True} if HAS_ADVANCED_INPUTS else {}
