"""Detection against the host's own classes: every RoPE model class of the running ComfyUI is supported or refused by
name; third-party subclasses (Nunchaku) are detected through their ComfyUI base class; a Nunchaku wrapper whose
transformer has no nunchaku ``pos_embed`` gets a clear error (Nunchaku FLUX itself: test_nunchaku_flux_host.py); the
``variant`` input picks a checkpoint's trained size and refuses another family's.

Nunchaku (nunchaku-tech/ComfyUI-nunchaku) is not on PyPI and needs CUDA kernels, so its classes are reproduced here
as minimal stand-ins with the same names and bases: ``NunchakuQwenImage(comfy.model_base.QwenImage)`` around a
subclass of ComfyUI's Qwen transformer (the real one swaps the blocks and keeps ComfyUI's ``EmbedND`` and ids), and
a ``comfy.model_base.Flux`` whose ``diffusion_model`` is a ``ComfyFluxWrapper`` around a transformer without
nunchaku's ``pos_embed`` (tests/nunchaku_flux_standin.py has the full one). Verified only on these stand-ins.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest
import tiny_models
import torch

pytestmark = pytest.mark.usefixtures("comfy_host")

#: What "uses RoPE" means when reading a diffusion model's module: ComfyUI's embedder or rotary code by name.
ROPE_SOURCE = re.compile(r"rope|rotary|EmbedND|freqs_cis|pe_embedder", re.IGNORECASE)


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def _diffusion_model_class(cls) -> type | None:
    """The diffusion model class a model_base class builds: the first ``unet_model`` named in its MRO's
    ``__init__`` (a ``unet_model=`` argument or default)."""
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        default = inspect.signature(init).parameters.get("unet_model")
        named = re.search(r"unet_model\s*=\s*([\w.]+)", inspect.getsource(init))
        if named and named.group(1) not in ("unet_model", "UNetModel"):
            module = importlib.import_module(init.__module__)
            return eval(named.group(1), vars(module))  # noqa: S307  (a dotted name from ComfyUI's own source)
        if default is not None and default.default is not inspect.Parameter.empty:
            return default.default
    return None


def rope_model_classes() -> dict[str, type]:
    """Every ``comfy.model_base`` class of this host whose diffusion model's module uses RoPE."""
    import comfy.model_base as model_base

    found = {}
    for name, cls in vars(model_base).items():
        if not (inspect.isclass(cls) and issubclass(cls, model_base.BaseModel) and cls.__module__ == model_base.__name__):
            continue
        diffusion = _diffusion_model_class(cls)
        if diffusion is not None and ROPE_SOURCE.search(inspect.getsource(inspect.getmodule(diffusion))):
            found[name] = cls
    return found


def test_the_rope_walker_sees_the_known_families():
    """The walker itself: it finds the classes the pack supports (so an empty walk cannot pass)."""
    found = rope_model_classes()
    assert {"Flux", "QwenImage", "Lumina2", "WAN21", "HunyuanVideo", "HiDream", "Omnigen2"} <= set(found)
    assert not {"SD3", "AuraFlow", "PixArt", "SDXL"} & set(found)  # no RoPE there


def test_every_rope_model_class_is_supported_or_refused_by_name():
    families = _pack("nodes.families")
    supported = {name for adapter in families.ADAPTERS for name in adapter.model_base_classes}
    missing = sorted(set(rope_model_classes()) - supported - set(families.NOT_SUPPORTED))
    assert not missing, f"RoPE model classes of this ComfyUI in neither list: {missing}"


def test_refused_classes_get_their_reason():
    """No refused RoPE class reaches the generic error: the error carries its reason (instances built without
    weights: detection reads only the class and the model's own attributes)."""
    import comfy.model_base as model_base

    families = _pack("nodes.families")
    checked = 0
    for name in sorted(set(rope_model_classes()) & set(families.NOT_SUPPORTED)):
        instance = getattr(model_base, name).__new__(getattr(model_base, name))
        torch.nn.Module.__init__(instance)
        with pytest.raises(families.UnsupportedModelError) as error:
            families.detect_family(instance)
        assert name in str(error.value) and families.NOT_SUPPORTED[name] in str(error.value)
        checked += 1
    assert checked or not hasattr(model_base, "Kandinsky5")  # the newer host has refused RoPE classes to check


# --- third-party subclasses: Nunchaku stand-ins ------------------------------------------------------------------


def _nunchaku_qwen(seed: int = 0):
    """A tiny Qwen-Image whose model_base class is a stand-in ``NunchakuQwenImage(QwenImage)`` (this module, not
    ComfyUI's) and whose transformer is a stand-in subclass of ComfyUI's, as Nunchaku's are."""
    import comfy.ldm.qwen_image.model as qwen
    import comfy.model_base

    class NunchakuQwenImageTransformer2DModel(qwen.QwenImageTransformer2DModel):
        pass

    class NunchakuQwenImage(comfy.model_base.QwenImage):
        def __init__(self, model_config, model_type=comfy.model_base.ModelType.FLUX, device=None):
            super(comfy.model_base.QwenImage, self).__init__(model_config, model_type, device=device,
                                                             unet_model=NunchakuQwenImageTransformer2DModel)

    patcher = tiny_models.build_qwen(seed)
    config = patcher.model.model_config
    model = NunchakuQwenImage(config)
    model.diffusion_model.load_state_dict(patcher.model.diffusion_model.state_dict())
    model.eval()
    import comfy.model_patcher

    return comfy.model_patcher.ModelPatcher(model, load_device=torch.device("cpu"), offload_device=torch.device("cpu"))


def test_nunchaku_qwen_image_is_qwen_image_and_samples_like_it():
    """Detected through its ComfyUI base class; with the same weights it samples exactly as ComfyUI's own Qwen-Image,
    patched or not (its embedder is ComfyUI's EmbedND)."""
    families = _pack("nodes.families")
    nunchaku = _nunchaku_qwen(0)
    assert type(nunchaku.model).__name__ == "NunchakuQwenImage"
    assert families.detect_family(nunchaku.model).name == "qwen_image"
    stock = tiny_models.build_qwen(0)
    dype = lambda m: _pack("nodes.rope_patch.clone").patch_model(  # noqa: E731
        m, lambda c: c.with_positions(_pack("rope").PositionSchedule(), 64))
    ours = tiny_models.sample(dype(nunchaku), "qwen_image", tokens=(8, 12), steps=2)
    assert torch.equal(ours, tiny_models.sample(dype(stock), "qwen_image", tokens=(8, 12), steps=2))
    assert not torch.equal(ours, tiny_models.sample(nunchaku, "qwen_image", tokens=(8, 12), steps=2))


def test_nunchaku_z_image_subclass_is_z_image():
    """A Nunchaku-style ``NunchakuZImage(comfy.model_base.Lumina2)`` stand-in around ComfyUI's NextDiT is Z-Image
    (theta 256) and patches like it. (nunchaku-tech's own loader returns ComfyUI's ``Lumina2`` itself, with its
    attention swapped: that is Z-Image by the exact class.)"""
    import comfy.model_base
    import comfy.model_patcher

    class NunchakuZImage(comfy.model_base.Lumina2):
        pass

    stock = tiny_models.FAMILIES["z_image"].build(0)
    model = NunchakuZImage(stock.model.model_config)
    model.diffusion_model.load_state_dict(stock.model.diffusion_model.state_dict())
    patcher = comfy.model_patcher.ModelPatcher(model, load_device=torch.device("cpu"),
                                               offload_device=torch.device("cpu"))
    assert _pack("nodes.families").detect_family(model).name == "z_image"
    dype = lambda m: _pack("nodes.rope_patch.clone").patch_model(  # noqa: E731
        m, lambda c: c.with_positions(_pack("rope").PositionSchedule(), 64))
    ours = tiny_models.sample(dype(patcher), "z_image", tokens=(8, 12), steps=2)
    assert torch.equal(ours, tiny_models.sample(dype(stock), "z_image", tokens=(8, 12), steps=2))


def test_comfyui_own_subclasses_keep_their_own_adapters():
    """Subclass-aware matching applies to other packs' classes only: ComfyUI's Chroma (a Flux subclass) is Chroma,
    and a ComfyUI class the pack does not know is refused, not taken for its parent."""
    families = _pack("nodes.families")
    chroma = tiny_models.FAMILIES["chroma"].build(0)
    assert families.detect_family(chroma.model).name == "chroma"
    import comfy.model_base

    for name in ("HunyuanVideo15_SR_Distilled", "HunyuanImage21Refiner", "WAN21_CausalAR", "MageFlow"):
        cls = getattr(comfy.model_base, name, None)
        if cls is None:
            continue
        assert families.base.comfy_class_name(cls.__new__(cls)) == name  # never its parent's name


def _nunchaku_flux():
    """ComfyUI's ``model_base.Flux`` with ``diffusion_model`` replaced by a ``ComfyFluxWrapper``, as ComfyUI-nunchaku's
    loader builds it, around a transformer that has no ``pos_embed`` (an unknown nunchaku version or another pack)."""

    class NunchakuFluxTransformer2dModel(torch.nn.Module):
        pass

    class ComfyFluxWrapper(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

    patcher = tiny_models.build_flux(0)
    patcher.model.diffusion_model = ComfyFluxWrapper(NunchakuFluxTransformer2dModel())
    return patcher


def test_a_nunchaku_wrapper_without_pos_embed_gets_a_clear_error_naming_nunchaku():
    families = _pack("nodes.families")
    model = _nunchaku_flux()
    with pytest.raises(families.UnsupportedModelError) as error:
        _pack("nodes.dype_node").DyPEPatchModel.execute(model, "yarn", True, 2.0, 2.0, 0, "multiply")
    message = str(error.value)
    assert "Nunchaku" in message and "ComfyFluxWrapper" in message and "NunchakuFluxTransformer2dModel" in message
    assert "pos_embed" in message and "ComfyUI's own loader" in message
    with pytest.raises(families.UnsupportedModelError, match="Nunchaku"):
        _pack("nodes.sega_node").SEGAAttention.execute(model, 0.08, 0.15, 1.5, 0.0, 1.0, 1.5, 1.0, 0)


def test_another_packs_diffusion_model_without_the_embedder_is_named():
    model = tiny_models.build_qwen(0)
    model.model.diffusion_model = torch.nn.Linear(2, 2)
    with pytest.raises(_pack("nodes.families").UnsupportedModelError, match="torch.nn.modules.linear.Linear"):
        _pack("nodes.rope_patch.clone").patch_model(model, lambda c: c)


# --- variants ----------------------------------------------------------------------------------------------------


def test_variant_options_name_their_family_and_size():
    families = _pack("nodes.families")
    options = families.variant_options()
    assert options[0] == "auto" and len(options) == len(set(options))
    assert {"Krea 2 Raw (1024x1024)", "Chroma1-Base (512x512)", "Wan 14B 480P (832x480)",
            "HunyuanVideo 1.5 480p (848x480)"} <= set(options)


def test_a_variant_sets_the_trained_size_and_base_resolution_wins():
    families = _pack("nodes.families")
    chroma = families.find_adapter("chroma")
    assert families.variant_base_px("auto", chroma) == 0.0
    assert families.variant_base_px("Chroma1-Base (512x512)", chroma) == 512.0
    config = _pack("nodes.rope_patch.config").PatchConfig()
    positions = _pack("rope").PositionSchedule()
    assert config.with_positions(positions, 0, 512).base_px(1024) == 512  # the variant
    assert config.with_positions(positions, 768, 512).base_px(1024) == 768  # base_resolution wins
    assert config.with_sega(None, 0, 512).base_px(1024) == 512  # SEGA's variant alone


def test_another_familys_variant_is_a_clear_error():
    model = tiny_models.FAMILIES["chroma"].build(0)
    with pytest.raises(ValueError, match=r"'Wan 14B 480P \(832x480\)' is for Wan .* this model is Chroma.*"
                                         r"'Chroma1-Base \(512x512\)'"):
        _pack("nodes.dype_node").DyPEPatchModel.execute(model, "yarn", True, 2.0, 2.0, 0, "multiply",
                                                        variant="Wan 14B 480P (832x480)")


def test_the_variant_changes_the_scale_of_a_real_run():
    """Chroma at 768²: auto (HD, 1024) leaves it stock; Chroma1-Base (512) extrapolates it."""
    fam = tiny_models.FAMILIES["chroma"]
    model = fam.build(0)
    node = _pack("nodes.dype_node").DyPEPatchModel
    stock = tiny_models.sample(model, "chroma", tokens=(48, 48), steps=1)
    auto = node.execute(model, "yarn", True, 2.0, 2.0, 0, "multiply").result[0]
    base = node.execute(model, "yarn", True, 2.0, 2.0, 0, "multiply", variant="Chroma1-Base (512x512)").result[0]
    assert torch.equal(tiny_models.sample(auto, "chroma", tokens=(48, 48), steps=1), stock)
    assert not torch.equal(tiny_models.sample(base, "chroma", tokens=(48, 48), steps=1), stock)


def test_saved_workflows_without_the_variant_input_still_load():
    """The input is optional and last: a UI widget list or API prompt saved before it existed validates and runs
    (``variant`` then is "auto"). Widgets are located by name, whatever inputs come before it."""
    for module, node in (("nodes.dype_node", "DyPEPatchModel"), ("nodes.sega_node", "SEGAAttention")):
        cls = getattr(_pack(module), node)
        schema = cls.define_schema()
        names = [i.id for i in schema.inputs]
        assert names[-1] == "variant" and schema.inputs[-1].optional
        assert schema.inputs[-1].default == "auto"
        assert inspect.signature(cls.execute).parameters["variant"].default == "auto"


def test_a_workflow_saved_before_the_variant_input_loads_and_runs(tmp_path):
    """A UI workflow saved before ``variant`` existed (its widget value and socket absent from both nodes, found by
    name) converts with ``variant`` at "auto", validates, validates again as an API prompt without the key, and
    runs on the tiny stand-ins."""
    import copy

    from headless import make_workflows, registry, runner
    from headless.convert import ui_to_api

    object_info = registry.boot().object_info()
    wf = copy.deepcopy(runner.load_workflow(runner.WORKFLOWS_DIR / make_workflows.shipped(make_workflows.FLUX_KREA_4096)))
    ours = [n for n in wf["nodes"] if n["type"] in runner.OUR_NODES]
    assert len(ours) == 2
    for node in ours:
        names = [s["name"] for s in node["inputs"] if s.get("widget")]
        del node["widgets_values"][names.index("variant")]
        node["inputs"] = [s for s in node["inputs"] if s["name"] != "variant"]
    prompt = ui_to_api(wf, object_info)
    for node in (n for n in prompt.values() if n["class_type"] in runner.OUR_NODES):
        assert node["inputs"]["variant"] == "auto"  # the frontend's default for a missing trailing widget
        del node["inputs"]["variant"]  # and an API prompt saved before it has no key at all
    result = runner.validate(prompt)
    assert result.ok, (result.error, result.node_errors)
    tiny, _ = runner.make_tiny(prompt)
    run = runner.execute(tiny, tmp_path)
    assert run.success, run.error()
