"""ControlNets with their own RoPE (Flux.1, Qwen-Image): they get the main model's per-call schedule for one run.

A Flux/Qwen-Image ControlNet is a cut-down copy of the transformer with its own ``pe_embedder``. ComfyUI calls it in
``calc_cond_batch`` just before the main model, on the same latent rows and sigma. Left alone, above the trained
resolution it would compute its residuals with stock positions while the main model runs DyPE/SEGA positions.

The control model is shared by every prompt and clone that uses the loaded ControlNet, so nothing may stay on it:
for the duration of one sampling run its embedder is swapped for a replacement and its ``forward`` is wrapped to
open the call scope; both are undone when the run ends, whether it finished, failed or was interrupted.
"""

from __future__ import annotations

import logging
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

from ..families import FamilyAdapter
from .config import PatchConfig
from .embedder import ExtrapolatingRopeEmbedder, describe_module, is_stock_rope_embedder
from .schedule import build_call_scope
from .scopes import CALL, STEP, RunScope

logger = logging.getLogger(__name__)


def control_models(conds: dict | None) -> list[torch.nn.Module]:
    """Every distinct control model attached to the run's conds (ControlNets chain via ``previous_controlnet``)."""
    found: dict[int, torch.nn.Module] = {}
    for cond_list in (conds or {}).values():
        for cond in cond_list or ():
            control = cond.get("control") if isinstance(cond, dict) else None
            seen = set()
            while control is not None and id(control) not in seen:
                seen.add(id(control))
                model = getattr(control, "control_model", None)
                if isinstance(model, torch.nn.Module) and hasattr(model, "pe_embedder"):
                    found.setdefault(id(model), model)
                control = getattr(control, "previous_controlnet", None)
    return list(found.values())


def _scheduled_forward(model: torch.nn.Module, previous: Callable | None, run: RunScope, config: PatchConfig,
                       adapter: FamilyAdapter) -> Callable:
    """``model.forward`` for one run: the call scope from the ControlNet's own latent rows and the step's sigma.

    Bound with ``MethodType`` so that a deep copy ComfyUI makes during the run (multi-GPU clones) runs its own
    weights, and it only schedules inside a step of ``run``, so such a copy that outlives the run behaves as stock.
    """

    def forward(self, *args, **kwargs):
        step = STEP.get()
        embedder = self.pe_embedder
        scope = None
        if step is not None and step.run is run and isinstance(embedder, ExtrapolatingRopeEmbedder):
            x = kwargs["x"] if "x" in kwargs else args[0]
            # The ControlNet gets sigma as a model timestep (sigma x multiplier); the step scope has the sigma
            # itself. Its rows are whole copies of the step's batch, in order, as calc_cond_batch concatenates them.
            if x.shape[0] % step.sigma.shape[0] == 0:
                sigma = step.sigma.repeat(x.shape[0] // step.sigma.shape[0])
                scope = build_call_scope(config, adapter, embedder, x, sigma, step)
        with CALL.holding(scope):
            if previous is not None:
                return previous(*args, **kwargs)
            return type(self).forward(self, *args, **kwargs)

    return types.MethodType(forward, model)


@contextmanager
def scheduled_controlnets(conds: dict | None, config: PatchConfig | None, adapter: FamilyAdapter | None,
                          run: RunScope) -> Iterator[list[torch.nn.Module]]:
    """For the ``with`` block: ControlNets in ``conds`` compute their RoPE with the same schedule as the model."""
    patched: list[tuple[torch.nn.Module, torch.nn.Module, object]] = []
    try:
        if config is not None and adapter is not None:
            for model in control_models(conds):
                original = model.pe_embedder
                if isinstance(original, ExtrapolatingRopeEmbedder):
                    continue  # an enclosing run (a sampler inside a sampler) already did it
                if not is_stock_rope_embedder(original, adapter.spatial_axes):
                    run.warn_once(f"DyPE/SEGA: the ControlNet {type(model).__name__} has pe_embedder "
                         f"{describe_module(original)}, not ComfyUI's EmbedND; it keeps its own positions.")
                    continue
                previous_forward = model.__dict__.get("forward")  # someone else's instance-level wrapper, if any
                replacement = ExtrapolatingRopeEmbedder(original)
                patched.append((model, original, previous_forward))
                model.pe_embedder = replacement
                model.forward = _scheduled_forward(model, previous_forward, run, config, adapter)
                logger.debug("ControlNet %s follows the DyPE/SEGA schedule for this run", type(model).__name__)
        yield [model for model, _, _ in patched]
    finally:
        for model, original, previous_forward in reversed(patched):
            model.pe_embedder = original
            if previous_forward is None:
                del model.forward
            else:
                model.forward = previous_forward
