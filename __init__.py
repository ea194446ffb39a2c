"""DyPE + SEGA for ComfyUI: ultra-high-resolution sampling for RoPE diffusion transformers (Flux, Qwen-Image, Chroma, Z-Image, Wan and the other families of docs/models.md).

ComfyUI loads this package and calls ``comfy_entrypoint``. Importing the package itself does not import ComfyUI, so
the pure-torch parts (``rope``, ``spectral``) and the command line (``python -m <pack>``) work without it.
"""

#: Served by ComfyUI at /extensions/<pack folder>/; the frontend's node help panel reads docs/<node_id>.md there.
WEB_DIRECTORY = "./nodes/web"


async def comfy_entrypoint():
    from .nodes.extension import DyPESEGAExtension

    return DyPESEGAExtension()
