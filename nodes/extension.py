"""The V3 extension ComfyUI gets from ``comfy_entrypoint``."""

from __future__ import annotations

from comfy_api.latest import ComfyExtension, io

from .dype_node import DyPEPatchModel
from .hiflow_node import HiFlowCascade
from .preview_node import DyPESchedulePreview
from .sega_node import SEGAAttention


class DyPESEGAExtension(ComfyExtension):
    async def get_node_list(self) -> list[type[io.ComfyNode]]:
        return [DyPEPatchModel, SEGAAttention, DyPESchedulePreview, HiFlowCascade]
