"""ComfyUI's built-in extra nodes (comfy_extras/), loaded as ``registry.boot`` needs them, its expected failures told
in one line.

The test hosts install ComfyUI's requirements without its "non essential dependencies" (kornia, spandrel, and on
0.30 comfy-angle: .ci/requirements-host*.txt), and nothing here runs a server. So a few comfy_extras files cannot
import (0.3.75: nodes_upscale_model.py, nodes_canny.py, nodes_morphology.py; 0.30 adds nodes_latent.py,
nodes_post_processing.py, nodes_glsl.py and nodes_replacements.py, which wants a running server) and ComfyUI logs a
traceback for each, then its "IMPORT FAILED ... pip install -r requirements.txt" banner, which a newcomer would
follow to the wrong file. No shipped workflow uses those nodes (ComfyUI's own validation of every workflow checks
it). When every failure is one of those causes, its log is replaced by one line; any other failure is logged as
ComfyUI wrote it, whole. The pack and the tiny stand-ins load after this, with their own log untouched.
"""

from __future__ import annotations

import asyncio
import logging
import re

log = logging.getLogger("dype_sega.demo")
#: What a built-in node file may fail on here: an optional package the test hosts leave out, or no server.
EXPECTED = re.compile(r"No module named '(kornia|spandrel|comfy_angle)[.']|'PromptServer' has no attribute 'instance'")
FAILURE = re.compile(r"^(?:Cannot import (?P<path>.+) module for custom nodes|Error while calling comfy_entrypoint in "
                     r"(?P<entry>.+?)): (?P<error>.*)$", re.DOTALL)
BANNER = ("WARNING: some comfy_extras/ nodes did not import correctly", "IMPORT FAILED: ",
          "This issue might be caused by new missing dependencies", "Please do a: pip install",
          "Please run the update script")


class _Hold(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return False


def _expected(record: logging.LogRecord) -> bool:
    """Whether ``record`` is part of ComfyUI's report of an expected failure (traceback, line, banner)."""
    text = record.getMessage().strip()
    if not text or text.startswith(BANNER) or FAILURE.match(text):
        return True
    return text.startswith("Traceback (most recent call last)") and bool(EXPECTED.search(text.splitlines()[-1]))


def summarise(records: list[logging.LogRecord], failed: list[str]) -> tuple[list[logging.LogRecord], str]:
    """What to log of ComfyUI's records while it loaded its extra nodes, ``failed`` the files that did not import:
    every record, or, when each failure has an EXPECTED cause, the others and one line naming the failures."""
    errors = [m.group("error") for r in records if (m := FAILURE.match(r.getMessage().strip()))]
    if not failed or len(errors) != len(failed) or not all(EXPECTED.search(e) for e in errors):
        return records, ""
    missing = sorted({m.group(1) for e in errors if (m := EXPECTED.search(e)) and m.group(1)})
    server = ", or a running server" if any("PromptServer" in e for e in errors) else ""
    line = (f"ComfyUI skipped {len(failed)} of its built-in node files, as expected here: {', '.join(failed)} (they "
            f"need {', '.join(missing)}, which the test hosts leave out on purpose{server}; no shipped workflow uses "
            "them)")
    return [r for r in records if not _expected(r)], line


def load() -> list[str]:
    """``nodes.init_extra_nodes`` without custom nodes or API nodes; returns the files that did not import."""
    import nodes

    root = logging.getLogger()
    hold = _Hold()
    root.addFilter(hold)
    try:
        failed = list(asyncio.run(nodes.init_extra_nodes(init_custom_nodes=False, init_api_nodes=False)) or [])
    finally:
        root.removeFilter(hold)
    records, line = summarise(hold.records, failed)
    for record in records:
        (root if record.name == "root" else logging.getLogger(record.name)).handle(record)
    if line:
        log.info(line)
    return failed
