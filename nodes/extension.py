"""The V3 extension ComfyUI gets from ``comfy_entrypoint``, and the one server route it adds where a host needs it."""

from __future__ import annotations

import logging
from pathlib import Path

from comfy_api.latest import ComfyExtension, io

from .dype_node import DyPEPatchModel
from .hiflow_node import HiFlowCascade
from .hrdit_node import HrditCascade
from .imax_node import ImaxCascade
from .preview_node import DyPESchedulePreview
from .sega_node import SEGAAttention

logger = logging.getLogger(__name__)
PACK_DIR = Path(__file__).resolve().parents[1]


class DyPESEGAExtension(ComfyExtension):
    async def on_load(self) -> None:
        serve_card_pictures()

    async def get_node_list(self) -> list[type[io.ComfyNode]]:
        return [DyPEPatchModel, SEGAAttention, DyPESchedulePreview, HiFlowCascade, ImaxCascade, HrditCascade]


def card_picture_route(routes, folder: str, workflows: Path) -> None:
    """Add to ``routes`` (an aiohttp RouteTableDef) GET ``/workflow_templates/<folder>/<name>.jpg``: the URL the
    template browser asks for a card's picture, answered with ``workflows/<name>.jpg`` (only a file that is there)."""
    from aiohttp import web

    async def card_picture(request: web.Request) -> web.StreamResponse:
        path = workflows / f"{request.match_info['name']}.jpg"
        if path.parent != workflows or not path.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(path)

    routes.get(f"/workflow_templates/{folder}/{{name}}.jpg")(card_picture)


def serve_card_pictures() -> None:
    """Newer ComfyUI (0.38: ``app.custom_node_manager.collect_workflow_templates``) serves a pack's templates through
    one route that answers only ``.json``, so the cards' pictures beside the workflows never reach the browser. There
    the pack serves them itself: a route added while custom nodes load comes before that one (ComfyUI adds it later,
    in ``PromptServer.add_routes``, and prefixes both with /api). Older hosts serve the folder as static files, and a
    process without a server (tests, scripts) has no ``PromptServer.instance``: nothing to do."""
    try:
        from app import custom_node_manager
    except ImportError:
        return
    if not hasattr(custom_node_manager, "collect_workflow_templates"):
        return
    from server import PromptServer

    if not hasattr(PromptServer, "instance"):
        return
    card_picture_route(PromptServer.instance.routes, PACK_DIR.name, PACK_DIR / "workflows")
    logger.info("serving the template cards' pictures of workflows/ (this host serves only their .json)")
