"""The DyPE Schedule Preview's drawing, without ComfyUI: what DyPE and SEGA will do at a target size, per axis and
step (curves.py), drawn as a figure (figure.py) for the node (nodes/preview_node.py) and the command line
(``python <pack> schedule-preview``, cli.py). The request (request.py) is the node's inputs. The names below are
imported on first use, so that the command's ``--help`` and usage errors come before torch."""

from __future__ import annotations

from typing import Any

__all__ = ["FAMILY_CHOICES", "PreviewRequest", "flow_sigmas", "render", "schedule_curves"]


def __getattr__(name: str) -> Any:
    if name in ("flow_sigmas", "schedule_curves"):
        from . import curves

        return getattr(curves, name)
    if name == "render":
        from .figure import render

        return render
    if name in ("FAMILY_CHOICES", "PreviewRequest"):
        from . import request

        return getattr(request, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
