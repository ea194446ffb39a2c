"""The pack as ComfyUI loads it: ``nodes.load_custom_node`` on the pack folder, then nodes run from their schema."""

from __future__ import annotations

import pytest
import tiny_models
import torch

pytestmark = pytest.mark.usefixtures("comfy_host")

NODE_IDS = {"DyPESEGA_PatchModel": "DyPE Patch Model", "DyPESEGA_SEGAAttention": "SEGA Attention"}


@pytest.fixture(scope="module")
def registry():
    import host

    import nodes

    host.load_pack_via_comfyui()
    return nodes


def _defaults(node_cls) -> dict:
    """Every widget at its schema default, as a user dropping the node on the canvas gets it."""
    info = node_cls.GET_NODE_INFO_V1()
    values = {}
    for group in ("required", "optional"):
        for name, spec in info["input"].get(group, {}).items():
            if len(spec) > 1 and "default" in spec[1]:
                values[name] = spec[1]["default"]
    return values


def test_nodes_register_with_display_names_and_tooltips(registry):
    for node_id, display in NODE_IDS.items():
        assert node_id in registry.NODE_CLASS_MAPPINGS
        assert registry.NODE_DISPLAY_NAME_MAPPINGS[node_id] == display
        info = registry.NODE_CLASS_MAPPINGS[node_id].GET_NODE_INFO_V1()
        assert info["output"] == ["MODEL"]
        for name, spec in info["input"]["required"].items():
            assert spec[1].get("tooltip"), f"{node_id}.{name} has no tooltip"
    dype_inputs = registry.NODE_CLASS_MAPPINGS["DyPESEGA_PatchModel"].GET_NODE_INFO_V1()["input"]["required"]
    assert not {"width", "height", "target_width", "target_height"} & set(dype_inputs)


@pytest.mark.parametrize("family", ["flux", "qwen_image"])
def test_nodes_run_from_their_schema(registry, family):
    fam = tiny_models.FAMILIES[family]
    model = fam.build(0)
    patched = model
    for node_id in NODE_IDS:
        node_cls = registry.NODE_CLASS_MAPPINGS[node_id]
        values = {**_defaults(node_cls), "base_resolution": 64}
        result = node_cls.execute(model=patched, **values)
        (patched,) = result.result if hasattr(result, "result") else result
    assert patched is not model
    out = tiny_models.sample(patched, family, (16, 24), steps=2, cfg=2.0)
    assert torch.isfinite(out).all()
    assert not torch.equal(out, tiny_models.sample(model, family, (16, 24), steps=2, cfg=2.0))


def test_unsupported_model_error_reaches_the_user(registry):
    import comfy.model_patcher
    import comfy.supported_models

    config = comfy.supported_models.AuraFlow(dict(max_seq=64, cond_seq_dim=32, n_double_layers=1, n_layers=1, dim=64,
                                                  n_heads=1, patch_size=2, in_channels=4, out_channels=4))
    config.set_inference_dtype(torch.float32, None)
    aura = comfy.model_patcher.ModelPatcher(config.get_model({}), torch.device("cpu"), torch.device("cpu"))
    node_cls = registry.NODE_CLASS_MAPPINGS["DyPESEGA_SEGAAttention"]
    with pytest.raises(ValueError, match="AuraFlow.*Supported families"):
        node_cls.execute(model=aura, **_defaults(node_cls))
