"""The RoPE model classes of a ComfyUI newer than both test hosts (Comfy-Org/ComfyUI comfy/model_base.py @094c74c1 and
the ldm modules its classes build: SenseNova U1.5, Ming-Image, Wan Animate 2, Kandinsky 6, Prism, Trellis 2, YuE 2,
MiniMax Music 3): refused by name with their reason; Qwen-Image 2.1 (``QwenImage21``) is supported (its sampling is
tested on a stand-in in test_qwen_image21_host.py), and detected as itself, never as its base class Qwen-Image. No host here has these classes, so each is
checked through a stand-in with ComfyUI's class name and base class, defined in ``comfy.model_base`` as ComfyUI
defines it (``families.comfy_class_name`` then treats it as ComfyUI's own); the host's own class where it has one.
The walk over the running host's model_base (every RoPE class supported or named) is test_family_registry.py's.
"""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.usefixtures("comfy_host")


def _pack(name: str):
    import host

    return host.pack_submodule(name)


#: Classes newer than both test hosts (ComfyUI model_base @094c74c1 and its ldm modules) -> their ComfyUI base
#: class: none of them can be built here, so each is checked by name through a stand-in of that name and base.
NEWEST_CLASSES = {"SenseNovaU15": "BaseModel", "MingImage": "Lumina2",
                  "WAN_Animate2": "WAN21", "Kandinsky6": "BaseModel", "Prism": "BaseModel", "Trellis2": "BaseModel",
                  "YuE2": "BaseModel", "MiniMaxMusic3": "BaseModel"}


def _instance(name: str, base: str):
    """The host's own class where it has one; else a stand-in defined as ComfyUI defines it (its name and base class,
    in comfy.model_base), built without weights: detection reads only the class and the model's own attributes."""
    import comfy.model_base as model_base

    cls = getattr(model_base, name, None) or type(name, (getattr(model_base, base),), {"__module__": model_base.__name__})
    instance = cls.__new__(cls)
    torch.nn.Module.__init__(instance)
    return instance


@pytest.mark.parametrize(("name", "base"), sorted(NEWEST_CLASSES.items()))
def test_newest_comfyui_classes_are_refused_by_name(name, base):
    """A newer ComfyUI's class reaches its own reason, never the generic error nor its base class's adapter (Ming-Image
    subclasses Lumina2, Wan Animate 2 WAN21)."""
    families = _pack("nodes.families")
    with pytest.raises(families.UnsupportedModelError) as error:
        families.detect_family(_instance(name, base))
    assert f"{name} (model config" in str(error.value) and families.NOT_SUPPORTED[name] in str(error.value)


def test_qwen_image21_is_supported_as_itself():
    """Qwen-Image 2.1 subclasses QwenImage: it gets its own adapter (positions, cache, batch layout), not Qwen-Image's,
    and no refusal names it any more."""
    families = _pack("nodes.families")
    adapter = families.detect_family(_instance("QwenImage21", "QwenImage"))
    assert adapter is families.QWEN_IMAGE21 and adapter.name == "qwen_image21"
    assert "QwenImage21" not in families.NOT_SUPPORTED
    assert families.detect_family(_instance("QwenImage", "BaseModel")) is families.QWEN_IMAGE


#: Other packs' diffusion models the pack refuses (nodes/families/other_packs.py) -> the ComfyUI class their loader
#: puts them on: ComfyUI-nunchaku @66832ec5 (FLUX.2 Klein on Flux2) and @66d29000 (pi-Flow, its own BaseModel
#: subclass), nunchaku-chroma (Chroma on Flux, FLUX.1-schnell's config).
OTHER_PACKS = {"ComfyFlux2Wrapper": "Flux2", "ComfyChromaWrapper": "Flux", "ComfyFluxPiFlowWrapper": "BaseModel"}


@pytest.mark.parametrize(("wrapper", "base"), sorted(OTHER_PACKS.items()))
def test_other_packs_wrappers_are_refused_by_name_whatever_class_carries_them(wrapper, base):
    """Each wrapper of that class name around a transformer with a ``pos_embed`` (theta, axes_dim), as the loaders
    build them: refused with its own reason, by detection, the patch nodes and the cascades alike. Nunchaku Chroma
    on ComfyUI's Flux would otherwise pass for Nunchaku FLUX.1 (its adapter takes any such wrapper)."""
    import comfy.model_patcher

    families, reasons = _pack("nodes.families"), _pack("nodes.families.other_packs").OTHER_PACKS_REFUSED
    model = _instance(base, "BaseModel")
    transformer = torch.nn.Module()
    transformer.pos_embed = torch.nn.Module()
    transformer.pos_embed.theta, transformer.pos_embed.axes_dim = 2000, [32, 32, 32, 32]
    model.diffusion_model = type(wrapper, (torch.nn.Module,), {})()
    model.diffusion_model.model = transformer
    if base == "Flux":
        assert families.NUNCHAKU_FLUX.matches(model)
    patcher = comfy.model_patcher.ModelPatcher(model, torch.device("cpu"), torch.device("cpu"))
    calls = (lambda: families.detect_family(model),
             lambda: _pack("nodes.dype_node").DyPEPatchModel.execute(patcher, "yarn", True, 2.0, 2.0, 0, "multiply"),
             lambda: _pack("nodes.cascade.families").cascade_family(patcher, "HiFlow Cascade"))
    for call in calls:
        with pytest.raises(families.UnsupportedModelError) as error:
            call()
        assert f"running {wrapper}. {reasons[wrapper]}." in str(error.value)
