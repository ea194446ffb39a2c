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
