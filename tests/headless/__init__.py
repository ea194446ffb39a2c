"""Headless checks of the shipped example workflows on the real ComfyUI host.

``make_workflows`` writes ``workflows/*.json`` (UI format 0.4); ``registry`` boots ComfyUI in-process and dumps
object_info; ``uicheck`` checks a UI graph against it; ``convert`` turns it into an API prompt; ``runner`` swaps in
the tiny stand-ins of ``tiny_pack`` and executes it. Shared by tests/test_workflows.py and scripts/demo.py.
Import with ``tests/`` on ``sys.path`` (``from headless import runner``).
"""
