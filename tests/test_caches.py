"""The pack's only caches, the spectral tables that depend on shapes (spectral/shape_cache.py): bounded in bytes,
least recently used out first, and released when ComfyUI frees memory (its soft_empty_cache, which unloading models
calls), so no table stays on a GPU after the models go."""

from __future__ import annotations

import pytest
import tiny_models
import torch
from patching import dype


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def test_the_cache_is_bounded_in_bytes_and_least_recently_used_goes_first(comfy_host):
    cache = _pack("spectral.shape_cache").ShapeCache(max_bytes=3 * 1024 * 8)  # three tables of 1024 int64
    built = []

    def table(key):
        def build():
            built.append(key)
            return torch.zeros(1024, dtype=torch.int64)
        return cache.get(key, build)

    for key in ("a", "b", "c"):
        table(key)
    table("a")  # a is now the most recently used
    table("d")  # over the budget: b, the least recently used, goes
    assert cache.bytes == 3 * 1024 * 8
    table("a"), table("c"), table("d")
    assert built == ["a", "b", "c", "d"]  # none of those three was rebuilt
    table("b")
    assert built[-1] == "b" and cache.bytes <= cache.max_bytes
    huge = cache.get("huge", lambda: torch.zeros(4 * 1024, dtype=torch.int64))  # larger than the budget: not kept
    assert huge.numel() == 4 * 1024 and cache.bytes <= cache.max_bytes
    cache.release()
    assert cache.bytes == 0


@pytest.mark.parametrize("free", ["soft_empty_cache", "unload_all_models"])
def test_tables_are_released_when_comfyui_frees_memory(comfy_host, free):
    import comfy.model_management as mm
    from test_sega_host import sega

    tables = _pack("spectral.shape_cache").TABLES
    model = sega(dype(tiny_models.build_flux(0)), recipe="refined")  # the latent-grid spectrum: the band tables
    tiny_models.sample(model, "flux", tokens=(16, 12), steps=1)
    assert tables.bytes > 0  # the premise: sampling filled the cache
    getattr(mm, free)() if free == "soft_empty_cache" else mm.unload_all_models()
    assert tables.bytes == 0
    tiny_models.sample(model, "flux", tokens=(16, 12), steps=1)  # and it fills again when needed
    assert tables.bytes > 0


def test_the_host_function_is_wrapped_once_and_chained(comfy_host, monkeypatch):
    import comfy.model_management as mm

    memory = _pack("nodes.rope_patch.memory")
    calls = []

    def another_nodes_wrapper(*args, **kwargs):  # another node's override of the host function
        calls.append(args)

    monkeypatch.setattr(mm, "soft_empty_cache", another_nodes_wrapper)
    assert memory.follow_host_memory() and memory.follow_host_memory()
    tables = _pack("spectral.shape_cache").TABLES
    tables.get(("tests", 1), lambda: torch.zeros(8))
    mm.soft_empty_cache(True)
    assert calls == [(True,)] and tables.bytes == 0  # theirs ran, with its argument; ours released
    assert mm.soft_empty_cache.__wrapped__ is another_nodes_wrapper  # one wrapper of ours, not two
