"""The weight dtypes users run, built as ComfyUI builds them, and what a run in one of them is compared with.

ComfyUI loads a diffusion model's weights in the dtype it picks and computes in the same dtype, or, where the device
cannot compute in it, casts each weight at use to a "manual cast" dtype (``comfy.sd.load_diffusion_model_state_dict``:
``unet_manual_cast(unet_dtype, load_device, ...)`` then ``model_config.set_inference_dtype(unet_dtype,
manual_cast_dtype)``; ``comfy.model_management.unet_manual_cast``: bf16 / fp16 weights on a device that computes in
them need no cast (None), fp8 weights are cast to bf16 or fp16; ``comfy.ops.pick_operations``: a compute dtype other
than the weights' gives the ``manual_cast`` layers, which cast weight and bias to the input's dtype in each forward;
``BaseModel.apply_model`` casts the latent and the conditioning to the manual cast dtype). Read in 0.3.75 and 0.30.0
alike. The tiny models here go through the same calls (``tiny_models.build(..., dtype, compute)``): an fp8 model holds
float8_e4m3fn parameters and its layers are comfy's ``manual_cast`` ones.

What a run is compared with: the float32 run of the *same stored weights* (each parameter's stored value upcast), so
the comparison sees the compute dtype's rounding, not the checkpoint's quantization, which users choose with the
checkpoint and which moves fp8 runs by 3-7 % relative on the tiny models, stock and patched alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import tiny_models
import torch

#: ``_randomize`` draws every parameter ~N(0, 0.05), the q / k RMSNorm scales too, so q·k/sqrt(d) spreads ~3e-3 and
#: the attention is uniform: the tiny models' output then hardly depends on the rotary table (a float32 FLUX run at
#: 16 x 16 tokens with a table built from bf16 angles moved by 3e-7 relative). With the scales at 3 the logits
#: spread ~9 (unit-RMS q and k), DyPE moves the FLUX output by 20 % relative and the bf16-angle table by 8e-4
#: (12 x 12 tokens): the comparison sees the table.
QK_NORM_SCALE = 3.0
_QK_NORMS = ("query_norm", "key_norm", "norm_q", "norm_k", "norm_added_q", "norm_added_k")


@dataclass(frozen=True)
class WeightDtype:
    """Weights stored in ``stored``, computed in ``compute`` (ComfyUI's manual cast dtype; None: the stored one)."""

    name: str
    stored: torch.dtype
    compute: torch.dtype | None

    @property
    def compute_dtype(self) -> torch.dtype:
        return self.compute or self.stored


CASES = (
    WeightDtype("bf16", torch.bfloat16, None),
    WeightDtype("fp16", torch.float16, None),
    WeightDtype("fp8-bf16", torch.float8_e4m3fn, torch.bfloat16),
    WeightDtype("fp8-fp16", torch.float8_e4m3fn, torch.float16),
)
BY_NAME = {case.name: case for case in CASES}

#: The relative (Frobenius) error allowed to the float32 run of the same weights, per family and compute dtype:
#: about 1.7x the largest measured over the matrix (12 x 12 tokens, 2 steps, cfg 2; CPU, torch 2.13, both hosts):
#: FLUX bf16 1.24e-2, fp16 1.41e-3; Qwen-Image bf16 4.2e-3, fp16 5.2e-4 (fp8 weights within those of their
#: compute dtype); the cascades' own in tests/test_weight_dtypes_cascades.py. The mutants in
#: tests/test_weight_dtypes.py (a table of lower precision) exceed them.
TOLERANCES = {
    ("flux", torch.bfloat16): 2e-2,
    ("flux", torch.float16): 2.5e-3,
    ("qwen_image", torch.bfloat16): 7e-3,
    ("qwen_image", torch.float16): 9e-4,
}


def tolerance(family: str, case: WeightDtype) -> float:
    return TOLERANCES[family, case.compute_dtype]


def sharpen(model):
    """The model with its q / k norm scales at QK_NORM_SCALE (in place; returns it)."""
    with torch.no_grad():
        for name, parameter in model.model.diffusion_model.named_parameters():
            if any(part in name for part in _QK_NORMS):
                parameter.fill_(QK_NORM_SCALE)
    return model


def build(family: str, case: WeightDtype, seed: int = 0):
    """The tiny ``family`` model with weights stored and computed as ``case`` says."""
    return sharpen(tiny_models.build(family, seed, dtype=case.stored, compute=case.compute))


def reference(family: str, case: WeightDtype, seed: int = 0):
    """The float32 model holding the same stored weights as ``build(family, case, seed)``."""
    model = tiny_models.build(family, seed)
    stored = build(family, case, seed).model.state_dict()
    with torch.no_grad():
        for name, parameter in model.model.state_dict().items():
            parameter.copy_(stored[name].to(torch.float32))
    return sharpen(model)


def relative_error(out: torch.Tensor, want: torch.Tensor) -> float:
    """||out - want|| / ||want|| (Frobenius, float32)."""
    out, want = out.to(torch.float32), want.to(torch.float32)
    return float((out - want).norm() / want.norm())


class BlockTables:
    """The rotary tables the model's first transformer block receives (after any cast the host makes), per call:
    FLUX's ``pe``, Qwen-Image's ``image_rotary_emb``. A forward pre-hook, removed on exit."""

    def __init__(self, model) -> None:
        diffusion_model = model.model.diffusion_model
        blocks = getattr(diffusion_model, "double_blocks", None) or diffusion_model.transformer_blocks
        self.block = blocks[0]
        self.dtypes: list[torch.dtype] = []

    def __enter__(self) -> BlockTables:
        def record(module, args, kwargs):
            table = kwargs.get("pe", kwargs.get("image_rotary_emb"))
            self.dtypes.append(table.dtype)

        self.handle = self.block.register_forward_pre_hook(record, with_kwargs=True)
        return self

    def __exit__(self, *exc) -> None:
        self.handle.remove()


def _scaled_fp8_state_dict(model) -> dict[str, torch.Tensor]:
    """``model``'s diffusion-model weights as an fp8_scaled checkpoint stores them (Comfy-Org's ``*_fp8_scaled``
    files, e.g. flux1-krea-dev_fp8_scaled): every matrix in float8_e4m3fn with one float32 ``scale_weight`` beside
    it (its absolute maximum over fp8's 448), the rest as it is."""
    stored = {}
    for name, value in model.model.diffusion_model.state_dict().items():
        if name.endswith(".weight") and value.dim() == 2:
            scale = (value.abs().amax() / torch.finfo(torch.float8_e4m3fn).max).to(torch.float32)
            stored[name] = (value / scale).to(torch.float8_e4m3fn)
            stored[name.removesuffix("weight") + "scale_weight"] = scale
        else:
            stored[name] = value.clone()
    return stored


def build_scaled_fp8(family: str, seed: int = 0):
    """(the tiny ``family`` model loaded from an fp8_scaled state dict as the host loads one, computing in bf16; the
    float32 model holding its dequantized weights). Hosts with ``comfy.utils.convert_old_quants`` (0.30.0 and newer)
    turn the file into quantized tensors and mixed-precision layers (``comfy/sd.py``
    ``load_diffusion_model_state_dict``: convert_old_quants, detect_layer_quantization, quant_config); older ones
    (0.3.75) mark the config ``scaled_fp8`` and build ``comfy.ops.scaled_fp8_ops`` layers."""
    import comfy.model_patcher
    import comfy.supported_models
    import comfy.utils

    source = tiny_models.build(family, seed)
    raw = _scaled_fp8_state_dict(source)
    dequantized = {name: value.to(torch.float32) * raw.get(name.removesuffix("weight") + "scale_weight", 1.0)
                   for name, value in raw.items() if not name.endswith("scale_weight")}
    stored = dict(raw)
    class_name, unet_config = tiny_models.host_config(family)
    config = getattr(comfy.supported_models, class_name)(tiny_models.host_unet_config(unet_config))
    if hasattr(comfy.utils, "convert_old_quants"):
        marker = {"scaled_fp8": torch.empty(0, dtype=torch.float8_e4m3fn)}  # what the loader looks for
        stored, _ = comfy.utils.convert_old_quants({**stored, **marker}, "", metadata={})
        config.quant_config = comfy.utils.detect_layer_quantization(stored, "")
    else:
        config.scaled_fp8 = torch.float8_e4m3fn
    config.set_inference_dtype(torch.float8_e4m3fn, torch.bfloat16)
    model = config.get_model(stored, "")
    model.load_model_weights(stored, "")
    model.eval()
    cpu = torch.device("cpu")
    loaded = sharpen(comfy.model_patcher.ModelPatcher(model, load_device=cpu, offload_device=cpu))
    with torch.no_grad():
        for name, parameter in source.model.diffusion_model.state_dict().items():
            parameter.copy_(dequantized[name])
    return loaded, sharpen(source)
