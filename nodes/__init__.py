"""The ComfyUI layer: V3 nodes, one adapter per model family, and the patch/wrapper plumbing.

Importing this package does not import ComfyUI; the node modules do, when ComfyUI loads the pack.
"""
