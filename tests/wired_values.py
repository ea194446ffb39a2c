"""The connected inputs of the bad-value table (tests/bad_value_cases.py's ``Wired`` values), built twice: as the
Python object a node receives, and as the nodes that make it in a prompt (the tiny pack's loaders, ComfyUI's
VAEEncode), so the same row runs from Python and through ComfyUI's validate_prompt and executor."""

from __future__ import annotations

import torch
from bad_value_cases import Wired

#: The first id of the nodes a prompt gains for a wired value (the prompts of test_bad_values_prompt.py use 1-8).
FIRST_ID = 20


def _other_vae(channels: int, compression: int) -> dict:
    return {"class_type": "DyPESEGATest_TinyOtherVAELoader",
            "inputs": {"channels": channels, "compression": compression}}


def python_value(value):
    """The object a node receives for ``value`` (anything not ``Wired`` as it is)."""
    if not isinstance(value, Wired):
        return value
    import hiflow_models

    if value.source == "sd_latent":  # what an SD-style VAE (4 channels, 8x) encodes of a 32 px image
        image = torch.rand(1, 32, 32, 3, generator=torch.Generator().manual_seed(0))
        return {"samples": hiflow_models.flux_vae(0, channels=4).encode(image)}
    return {"vae_16x": lambda: hiflow_models.flux_vae(0, compression=16),
            "vae_4x": lambda: hiflow_models.flux_vae(0, compression=4)}[value.source]()


def prompt_nodes(value: Wired) -> tuple[dict, list]:
    """The nodes that make ``value`` in a prompt, and the link to its output."""
    first, second = str(FIRST_ID), str(FIRST_ID + 1)
    if value.source == "sd_latent":
        third = str(FIRST_ID + 2)
        return {first: {"class_type": "DyPESEGATest_TinyImage", "inputs": {"width": 32, "height": 32, "seed": 0}},
                second: _other_vae(4, 8),
                third: {"class_type": "VAEEncode", "inputs": {"pixels": [first, 0], "vae": [second, 0]}}}, [third, 0]
    compression = {"vae_16x": 16, "vae_4x": 4}[value.source]
    return {first: _other_vae(16, compression)}, [first, 0]
