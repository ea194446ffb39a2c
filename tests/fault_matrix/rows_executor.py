"""Fault matrix rows: through ComfyUI's own PromptExecutor: queued prompts on one loaded model, saved workflows' values."""

from __future__ import annotations

from pathlib import Path

from patching import BASE_PX

from .lab import (
    Lab,
    row,
)


def _prompt(method: str, dynamic, seed: int = 0) -> dict:
    return {
        "1": {"class_type": "DyPESEGATest_TinyModelLoader", "inputs": {"family": "flux", "seed": 0}},
        "2": {"class_type": "DyPESEGA_PatchModel", "inputs": {
            "model": ["1", 0], "method": method, "dynamic": dynamic, "lambda_t": 2.0, "lambda_s": 2.0,
            "base_resolution": BASE_PX, "yarn_thresholds": "multiply"}},
        "3": {"class_type": "DyPESEGATest_TinyCLIPLoader", "inputs": {"family": "flux", "seed": 0}},
        "4": {"class_type": "CLIPTextEncode", "inputs": {"clip": ["3", 0], "text": "a lighthouse"}},
        "5": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 128, "height": 128, "batch_size": 1}},
        "6": {"class_type": "KSampler", "inputs": {
            "model": ["2", 0], "seed": seed, "steps": 2, "cfg": 1.0, "sampler_name": "euler", "scheduler": "simple",
            "positive": ["4", 0], "negative": ["4", 0], "latent_image": ["5", 0], "denoise": 1.0}},
        "7": {"class_type": "DyPESEGATest_TinyLatentStats", "inputs": {"samples": ["6", 0]}},
    }


class QueueExecutor:
    """One ``PromptExecutor`` kept across prompts, as ComfyUI's prompt worker keeps it (outputs of unchanged nodes,
    such as the loaded MODEL, are reused by the next prompt)."""

    def __init__(self) -> None:
        from headless import execute, registry, runner

        registry.boot()
        import execution

        self.runner = runner
        self.executor = execution.PromptExecutor(execute._NoServer(), cache_type=False,
                                                 **execute._no_cache_kwargs(execution.PromptExecutor))

    def run(self, prompt: dict) -> tuple[str, set[str]]:
        """The latent digest and the node ids served from the cache."""
        import uuid

        checked = self.runner.validate(prompt)
        assert checked.ok, (checked.error, checked.node_errors)
        self.executor.execute(prompt, str(uuid.uuid4()), {}, checked.outputs)
        assert self.executor.success, self.executor.status_messages
        outputs = self.executor.history_result["outputs"]
        cached = {n for event, data in self.executor.status_messages if event == "execution_cached"
                  for n in data.get("nodes", [])}
        return outputs["7"]["tiny_stats"][0]["sha1"], cached


@row("two queued prompts with different DyPE settings on one loaded model, through ComfyUI's PromptExecutor",
     "no cross-talk: each result equals that prompt run alone on a fresh executor")
def row_executor_two_prompts(lab: Lab) -> None:
    alone = {m: QueueExecutor().run(_prompt(m, True))[0] for m in ("yarn", "ntk")}
    queue = QueueExecutor()
    results = [queue.run(_prompt(m, True)) for m in ("yarn", "ntk", "yarn")]
    assert all("1" in cached for _, cached in results[1:])  # the loaded model was reused, not reloaded
    assert [digest for digest, _ in results] == [alone["yarn"], alone["ntk"], alone["yarn"]]
    assert alone["yarn"] != alone["ntk"]


@row("a saved workflow with a Boolean given as a string (`\"false\"`)",
     "ComfyUI itself converts BOOLEAN inputs with Python `bool()`, so any non-empty string, `\"false\"` included, "
     "runs as True (on every host tested); the shipped workflows store JSON booleans (checked)")
def row_boolean_as_string(lab: Lab) -> None:
    import json

    as_string, as_true, as_false = (QueueExecutor().run(_prompt("yarn", value))[0] for value in ("false", True, False))
    assert as_string == as_true != as_false
    for path in sorted((Path(__file__).resolve().parents[2] / "workflows").glob("*.json")):
        for node in json.loads(path.read_text(encoding="utf-8"))["nodes"]:
            if node["type"].startswith("DyPESEGA_"):
                assert not any(v in ("true", "false", "True", "False") for v in node["widgets_values"])
