"""The ComfyUI layer. At this level only what ComfyUI sees: the node classes (one module each) and the extension that
lists them (extension.py).

Below them: ``inputs/`` (inputs several nodes show), ``rope_patch/`` (the patch engine the nodes call),
``families/`` (one adapter per model family), ``schedule_preview/`` (the preview's drawing, no ComfyUI),
``hiflow/`` (the cascade the HiFlow Cascade node runs) and ``bench/`` (the benchmark tool). Importing this package does not import ComfyUI; the node modules do, when ComfyUI
loads the pack. The layout and one sampling step: docs/ARCHITECTURE.md.
"""
