"""Stand-ins of ComfyUI's newest attention plumbing, written from reading upstream code and installed on the host the
tests run on (0.3.75 and 0.30 have none of it). NOT run on the real thing: no host here has it, and comfy-kitchen's
INT8 attention is a CUDA kernel. Each piece is installed only where the host lacks it (found by attribute), and
undone after the test (pytest's monkeypatch).

* ``AttentionTensorContainer``, ``ComfyAttention`` and ``wrap_attn``'s dispatch (Comfy-Org/ComfyUI 05080f6,
  comfy/ldm/modules/attention.py): ``preferred_attention`` popped; with an override, its ``container_function`` on
  the containers where it has one, else the tensors taken out and ``override(func, ...)``; else the preferred
  function where set; else ``func``'s ``container_function`` or ``func`` on the tensors. ComfyUI's attention
  functions are wrapped again with it (the registered ones and ``optimized_attention``).
* FLUX's ``attention()`` (980c56c, comfy/ldm/flux/math.py): q, k, v in containers, with ``preferred_attention``.
  Which module a FLUX block passes as its preference could not be read (the newest comfy/ldm/flux/layers.py is not
  in the stored index): ``prefer`` gives every block of a model one ``comfy_attention`` that its attentions pass.
* ``ModelPatcher.set_model_optimized_attention`` (08d0e51, comfy/model_patcher.py): the override calls the function
  and carries its ``container_function``.
* The Model Attention Backend node's ``execute`` (691e827, comfy_extras/nodes_model_advanced.py, PR #15479).
* comfy-kitchen's INT8 attention (05080f6's ``attention_comfy_kitchen_int8`` and its ``container_function``, over
  comfy-kitchen 0.2.40's ``int8_attention`` / ``prequantize_int8_attention``): PyTorch's SDPA here, each call
  recorded with its path (containers or tensors), block and mask.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field

import torch

OVERRIDE = "optimized_attention_override"
WRAPPED = ("attention_basic", "attention_sub_quad", "attention_split", "attention_pytorch")


class Container:
    """AttentionTensorContainer (05080f6): one owner's tensor, taken once."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor

    def take(self) -> torch.Tensor:
        if self.tensor is None:
            raise RuntimeError("attention tensor container has already been consumed")
        tensor, self.tensor = self.tensor, None
        return tensor


class ComfyAttention(torch.nn.Module):
    """ComfyAttention (05080f6): the attention function a checkpoint's config selects for a module (None: none)."""

    def __init__(self, function=None) -> None:
        super().__init__()
        self.function = function


def wrap_attn(func):
    """wrap_attn's dispatch at 05080f6 (module docstring)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        preferred = kwargs.pop("preferred_attention", None)
        boxed = len(args) >= 3 and isinstance(args[0], Container)
        if boxed and not all(isinstance(a, Container) for a in args[1:3]):
            raise TypeError("q, k, and v must all be attention tensor containers")
        outermost = "_inside_attn_wrapper" not in kwargs
        if outermost:
            kwargs["_inside_attn_wrapper"] = True
            options = kwargs.get("transformer_options")
            if options is not None and OVERRIDE in options:
                override = options[OVERRIDE]
                if boxed and hasattr(override, "container_function"):
                    return override.container_function(*args, **kwargs)
                if boxed:
                    args = tuple(c.take() for c in args[:3]) + args[3:]
                return override(func, *args, **kwargs)
            if preferred is not None and preferred.function is not None:
                return preferred.function(*args, **kwargs)
        if boxed and wrapper.container_function is not None:
            return wrapper.container_function(*args, **kwargs)
        if boxed:
            args = tuple(c.take() for c in args[:3]) + args[3:]
        return func(*args, **kwargs)

    wrapper.container_function = None
    return wrapper


def _sdpa(q, k, v, heads, mask, skip_reshape, skip_output_reshape, scale):
    if not skip_reshape:
        q, k, v = (t.view(t.shape[0], -1, heads, t.shape[-1] // heads).transpose(1, 2) for t in (q, k, v))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    return out if skip_output_reshape else out.transpose(1, 2).reshape(out.shape[0], out.shape[2], -1)


@dataclass
class Newest:
    """The installed stand-ins, INT8's record, and the helpers tests drive them with."""

    monkeypatch: object
    wrap: object = None  # the wrap_attn in force: the host's where it dispatches containers, else the stand-in
    int8: object = None
    calls: list[dict] = field(default_factory=list)
    hooks: list = field(default_factory=list)
    current: threading.local = field(default_factory=threading.local)

    def record(self, path: str, mask, kwargs: dict) -> None:
        options = kwargs.get("transformer_options") or {}
        self.calls.append(dict(path=path, block=(options.get("block_type"), options.get("block_index")),
                               mask=None if mask is None else mask.dtype))

    def backend_node(self, model, attention: str):
        """ModelAttentionBackend.execute (691e827) on ``model``: "comfy kitchen attention" or "pytorch attention"."""
        import comfy.ldm.modules.attention as host

        name = {"comfy kitchen attention": "comfy_kitchen_int8", "pytorch attention": "pytorch"}.get(attention)
        function = host.get_attention_function(name, None) or host.get_attention_function("pytorch")
        clone = model.clone()
        clone.set_model_optimized_attention(function)
        return clone

    def prefer(self, model, function) -> None:
        """A checkpoint whose attention config selects ``function`` in every block of ``model`` (a test's own)."""
        diffusion = model.model.diffusion_model
        for block in [*diffusion.double_blocks, *diffusion.single_blocks]:
            self.monkeypatch.setattr(block, "comfy_attention", ComfyAttention(function), raising=False)
            self.hooks.append(block.register_forward_pre_hook(
                lambda module, args: setattr(self.current, "preferred", module.comfy_attention)))
            self.hooks.append(block.register_forward_hook(
                lambda module, args, out: setattr(self.current, "preferred", None)))

    def close(self) -> None:
        for hook in self.hooks:
            hook.remove()


def _int8(newest: Newest, wrap):
    def plain(q, k, v, heads, mask=None, attn_precision=None, skip_reshape=False, skip_output_reshape=False,
              **kwargs):
        newest.record("tensors", mask, kwargs)
        return _sdpa(q, k, v, heads, mask, skip_reshape, skip_output_reshape, kwargs.get("scale"))

    def containers(q, k, v, heads, mask=None, attn_precision=None, skip_reshape=False, skip_output_reshape=False,
                   **kwargs):
        newest.record("containers", mask, kwargs)
        q, k, v = q.take(), k.take(), v.take()  # released before attending: what the container path is for
        return _sdpa(q, k, v, heads, mask, skip_reshape, skip_output_reshape, kwargs.get("scale"))

    plain.__name__ = plain.__qualname__ = "attention_comfy_kitchen_int8"
    wrapped = wrap(plain)
    wrapped.container_function = containers
    return wrapped


def _set_model_optimized_attention(self, optimized_attention):
    """ModelPatcher.set_model_optimized_attention (08d0e51)."""

    def optimized_attention_override(_, *args, **kwargs):
        return optimized_attention(*args, **kwargs)

    if getattr(optimized_attention, "container_function", None) is not None:
        optimized_attention_override.container_function = optimized_attention.container_function
    self.model_options["transformer_options"][OVERRIDE] = optimized_attention_override


def install(monkeypatch) -> Newest:
    """The stand-ins on the running host (module docstring), undone with ``monkeypatch``."""
    import comfy.ldm.flux.layers as flux_layers
    import comfy.ldm.flux.math as flux_math
    import comfy.ldm.modules.attention as host
    import comfy.model_patcher

    newest = Newest(monkeypatch, wrap=host.wrap_attn if hasattr(host, "AttentionTensorContainer") else wrap_attn)
    if not hasattr(comfy.model_patcher.ModelPatcher, "set_model_optimized_attention"):
        monkeypatch.setattr(comfy.model_patcher.ModelPatcher, "set_model_optimized_attention",
                            _set_model_optimized_attention, raising=False)
    newest.int8 = _int8(newest, newest.wrap)
    monkeypatch.setattr(host, "attention_comfy_kitchen_int8", newest.int8, raising=False)
    monkeypatch.setitem(host.REGISTERED_ATTENTION_FUNCTIONS, "comfy_kitchen_int8", newest.int8)
    if hasattr(host, "AttentionTensorContainer"):
        return newest  # the host dispatches containers itself
    monkeypatch.setattr(host, "AttentionTensorContainer", Container, raising=False)
    monkeypatch.setattr(host, "ComfyAttention", ComfyAttention, raising=False)
    rewrapped = {}
    for name in WRAPPED:
        old = getattr(host, name)
        rewrapped[old] = wrap_attn(old.__wrapped__)
        monkeypatch.setattr(host, name, rewrapped[old])
    for name, function in list(host.REGISTERED_ATTENTION_FUNCTIONS.items()):
        if function in rewrapped:
            monkeypatch.setitem(host.REGISTERED_ATTENTION_FUNCTIONS, name, rewrapped[function])
    optimized = rewrapped[flux_math.optimized_attention]
    monkeypatch.setattr(host, "optimized_attention", optimized)
    monkeypatch.setattr(flux_math, "optimized_attention", optimized)

    def attention(q, k, v, pe, mask=None, transformer_options={}, preferred_attention=None):  # noqa: B006 (980c56c)
        if preferred_attention is None:  # what the block passes (module docstring)
            preferred_attention = getattr(newest.current, "preferred", None)
        if isinstance(q, Container):
            q, k, v = q.take(), k.take(), v.take()
        if pe is not None:
            q, k = flux_math.apply_rope(q, k, pe)
        return optimized(Container(q), Container(k), Container(v), q.shape[1], skip_reshape=True, mask=mask,
                         transformer_options=transformer_options, preferred_attention=preferred_attention)

    monkeypatch.setattr(flux_math, "attention", attention)
    monkeypatch.setattr(flux_layers, "attention", attention)
    return newest
