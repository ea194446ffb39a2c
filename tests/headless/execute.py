"""Validate and execute an API prompt in-process with ComfyUI's own ``execution`` module (no server, no cache),
collecting what the output nodes returned. runner.py re-exports these for the tests and scripts/demo.py."""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import registry


@dataclass
class Validation:
    ok: bool
    error: Any
    outputs: list[str]
    node_errors: dict[str, Any]


def validate(prompt: dict[str, dict[str, Any]]) -> Validation:
    """ComfyUI's own ``execution.validate_prompt`` (0.3.75: async)."""
    registry.boot()
    import execution

    ok, error, outputs, node_errors = asyncio.run(execution.validate_prompt(str(uuid.uuid4()), prompt, None))
    return Validation(bool(ok), error, list(outputs), node_errors)


class _NoServer:
    """The part of PromptServer that PromptExecutor touches."""

    client_id = None
    last_node_id = None

    def send_sync(self, event: str, data: Any, sid: Any = None) -> None:
        return None  # no client to notify


@dataclass
class RunResult:
    success: bool
    seconds: float
    outputs: dict[str, Any]  # history "outputs": node id -> ui dict
    messages: list
    images: list[Path]  # files SaveImage wrote
    stats: list[dict[str, Any]]  # from the tiny image-stats nodes

    def error(self) -> str:
        failed = [d for e, d in self.messages if e == "execution_error"]
        if not failed:
            return ""
        d = failed[-1]
        return f"{d.get('node_type')} (node {d.get('node_id')}): {d.get('exception_type')}: " \
               f"{d.get('exception_message')}\n{''.join(d.get('traceback', []))}"


def _no_cache_kwargs(executor_class: type) -> dict[str, Any]:
    """Cache arguments that keep nothing, in the form this host's ``PromptExecutor`` takes.

    0.3.64 takes ``cache_size=``; 0.3.75 reads ``cache_args["lru"]``/``["ram"]``; 0.3.76+ also ``["ram_inactive"]``.
    Keys a host does not read are ignored, so one dict serves every ``cache_args`` host.
    """
    parameters = inspect.signature(executor_class.__init__).parameters
    if "cache_args" in parameters:
        return {"cache_args": {"lru": 0, "ram": 0, "ram_inactive": 0}}
    if "cache_size" in parameters:
        return {"cache_size": 0}
    return {}


def execute(prompt: dict[str, dict[str, Any]], out_dir: Path) -> RunResult:
    """Validate, then run with ``PromptExecutor`` in-process; files land in ``out_dir``."""
    registry.boot()
    import comfy.model_management
    import execution
    import folder_paths

    checked = validate(prompt)
    if not checked.ok:
        raise ValueError(f"prompt failed validation: {checked.error} {checked.node_errors}")
    out_dir.mkdir(parents=True, exist_ok=True)
    folder_paths.set_output_directory(str(out_dir))
    folder_paths.set_temp_directory(str(out_dir / "temp"))
    executor = execution.PromptExecutor(_NoServer(), cache_type=False, **_no_cache_kwargs(execution.PromptExecutor))
    start = time.perf_counter()
    try:
        executor.execute(prompt, str(uuid.uuid4()), {}, checked.outputs)
    finally:  # no executor cache holds them, but model_management does: leave the host as we found it
        comfy.model_management.unload_all_models()
    seconds = time.perf_counter() - start
    outputs = executor.history_result.get("outputs", {}) if executor.success else {}
    images = [out_dir / im.get("subfolder", "") / im["filename"]
              for ui in outputs.values() for im in ui.get("images", [])]
    stats = [s for ui in outputs.values() for s in ui.get("tiny_stats", [])]
    return RunResult(executor.success, seconds, outputs, executor.status_messages, images, stats)
