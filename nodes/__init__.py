"""The ComfyUI layer. At this level only what ComfyUI sees: the three node classes and the extension that lists them.

Below them: ``inputs/`` (inputs several nodes show), ``rope_patch/`` (the patch engine the nodes call),
``families/`` (one adapter per model family), ``schedule_preview/`` (the preview's drawing, no ComfyUI) and
``bench/`` (the benchmark tool). Importing this package does not import ComfyUI; the node modules do, when ComfyUI
loads the pack. The layout and one sampling step: docs/ARCHITECTURE.md.
"""
