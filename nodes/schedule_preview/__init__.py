"""The DyPE Schedule Preview's drawing, without ComfyUI: what DyPE and SEGA will do at a target size, per axis and
step (curves.py), drawn as a figure (figure.py) for the node (nodes/preview_node.py) and the command line
(``python <pack> schedule-preview``, cli.py). The request (request.py) is the node's inputs."""

from .curves import flow_sigmas, schedule_curves
from .figure import render
from .request import FAMILY_CHOICES, PreviewRequest

__all__ = ["FAMILY_CHOICES", "PreviewRequest", "flow_sigmas", "render", "schedule_curves"]
