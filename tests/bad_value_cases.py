"""The table of bad values (issues 34, 35): every input of the five nodes given something no widget would let through,
each with a piece of the rule its one error must name. tests/test_bad_values*.py run every row from Python, and
through ComfyUI's own ``validate_prompt`` and executor where ComfyUI passes the value on as it is.

A connected input's bad value (a latent another model's VAE encoded, a VAE of another spatial compression) is a
``Wired`` source: tests/wired_values.py builds it in Python and as the nodes that make it in a prompt.

``prompt`` False marks a value ComfyUI itself converts before any node sees it, for every node alike
(execution.validate_inputs: ``int(val)`` for INT, ``float(val)`` for FLOAT, ``bool(val)`` for BOOLEAN): the node then
receives a valid value (4.7 -> 4, "2" -> 2.0, "False" -> True), so only the Python row can show the node's own
refusal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NAN, INF = math.nan, math.inf
NODES = {"dype": "DyPE Patch Model", "sega": "SEGA Attention", "preview": "DyPE Schedule Preview",
         "hiflow": "HiFlow Cascade", "imax": "I-Max Cascade", "hrdit": "HRDiT Cascade"}


@dataclass(frozen=True)
class Bad:
    node: str  # a key of NODES
    input: str
    value: object
    rule: str  # a piece of the rule the message states
    prompt: bool = True  # False: ComfyUI converts it to a valid value first (see the module docstring)

    @property
    def id(self) -> str:
        return f"{self.node}-{self.input}-{self.value!r}"


@dataclass(frozen=True)
class Wired:
    """A connected input made by other nodes (tests/wired_values.py): ``source`` names it, ``shown`` is what the
    message must say of it (a link has no value to quote)."""

    source: str
    shown: str

    def __repr__(self) -> str:
        return f"<{self.source}>"


_RANGE = "a number from"
_BASE = "0 (the family default) or a multiple of 16"
_FLAG = "True or False"
_ONE_OF = "one of"
_LIST = "numbers separated by ','"
#: A latent another model's VAE encoded (4 channels, not empty), and VAEs of FLUX.1's 16 channels and another
#: family's spatial compression: each passes a decode -> encode round trip, so only the checks by the MODEL see them.
_SD_LATENT = Wired("sd_latent", "'latent' has 4 channels")
_VAE_16X, _VAE_4X = Wired("vae_16x", "it decodes 16 px"), Wired("vae_4x", "it decodes 4 px")


def _connected(node: str) -> list[Bad]:
    return [Bad(node, "latent", _SD_LATENT, "takes 16-channel latents"),
            Bad(node, "vae", _VAE_16X, "8 px per latent pixel"),
            Bad(node, "stage_model", "abc", "must be a ComfyUI MODEL")]


DYPE = [
    Bad("dype", "method", "YaRN", _ONE_OF), Bad("dype", "method", "", _ONE_OF), Bad("dype", "method", None, _ONE_OF),
    Bad("dype", "dynamic", "False", _FLAG, prompt=False), Bad("dype", "dynamic", "True", _FLAG, prompt=False),
    Bad("dype", "dynamic", 0, _FLAG, prompt=False), Bad("dype", "dynamic", None, _FLAG, prompt=False),
    Bad("dype", "lambda_t", -0.5, "from 0 to 8"), Bad("dype", "lambda_t", 9.0, "from 0 to 8"),
    Bad("dype", "lambda_t", NAN, "from 0 to 8"), Bad("dype", "lambda_t", INF, "from 0 to 8"),
    Bad("dype", "lambda_t", "2", "from 0 to 8", prompt=False), Bad("dype", "lambda_s", 100.0, "from 0 to 8"),
    Bad("dype", "lambda_s", -INF, "from 0 to 8"), Bad("dype", "lambda_s", True, "from 0 to 8", prompt=False),
    Bad("dype", "base_resolution", -1, _BASE), Bad("dype", "base_resolution", NAN, _BASE),
    Bad("dype", "base_resolution", INF, _BASE), Bad("dype", "base_resolution", 1, _BASE),
    Bad("dype", "base_resolution", 15, _BASE), Bad("dype", "base_resolution", 1000, _BASE),
    Bad("dype", "base_resolution", 16400, _BASE), Bad("dype", "base_resolution", "1024", _BASE, prompt=False),
    Bad("dype", "base_resolution", True, _BASE),
    Bad("dype", "yarn_thresholds", "powr", _ONE_OF), Bad("dype", "yarn_thresholds", 1, _ONE_OF),
]
SEGA = [
    Bad("sega", "kappa", 1.5, "from 0 to 1"), Bad("sega", "kappa", -0.1, "from 0 to 1"),
    Bad("sega", "kappa", NAN, "from 0 to 1"), Bad("sega", "alpha", 0.9, _RANGE), Bad("sega", "alpha", -0.01, _RANGE),
    Bad("sega", "alpha", INF, _RANGE), Bad("sega", "beta", 11.0, "from 0 to 10"),
    Bad("sega", "beta", INF, "from 0 to 10"), Bad("sega", "beta", "1.5", "from 0 to 10", prompt=False),
    Bad("sega", "spread_min", -0.1, "from 0 to 1"), Bad("sega", "spread_min", 1.5, "from 0 to 1"),
    Bad("sega", "spread_max", NAN, "from 0 to 1"), Bad("sega", "spread_max", 2, "from 0 to 1"),
    Bad("sega", "spread_alpha", 0.0, "from 0.1 to 8"), Bad("sega", "spread_alpha", 9, "from 0.1 to 8"),
    Bad("sega", "floor", 4.5, "from 0 to 4"), Bad("sega", "floor", -1.0, "from 0 to 4"),
    Bad("sega", "floor", NAN, "from 0 to 4"), Bad("sega", "base_resolution", 3, _BASE),
    Bad("sega", "base_resolution", -16, _BASE), Bad("sega", "allocation", "ranked", _ONE_OF),
    Bad("sega", "allocation", None, _ONE_OF), Bad("sega", "m_ref", "Power", _ONE_OF),
    Bad("sega", "recipe", "paper", _ONE_OF), Bad("sega", "recipe", 0, _ONE_OF),
]
PREVIEW = [
    Bad("preview", "family", "sdxl", _ONE_OF), Bad("preview", "family", None, _ONE_OF),
    Bad("preview", "width", 0, "from 16 to 16384"), Bad("preview", "width", 16400, "from 16 to 16384"),
    Bad("preview", "width", 1000.5, "a whole number", prompt=False), Bad("preview", "width", NAN, "a whole number"),
    Bad("preview", "width", "4096", "a whole number", prompt=False), Bad("preview", "height", -5, "from 16 to 16384"),
    Bad("preview", "height", 100000, "from 16 to 16384"), Bad("preview", "steps", 0, "from 1 to 200"),
    Bad("preview", "steps", 100000, "from 1 to 200"), Bad("preview", "steps", 4.7, "a whole number", prompt=False),
    Bad("preview", "steps", NAN, "a whole number"), Bad("preview", "shift", -1, "from 0 to 20"),
    Bad("preview", "shift", 50, "from 0 to 20"), Bad("preview", "shift", NAN, "from 0 to 20"),
    Bad("preview", "method", "dype", _ONE_OF), Bad("preview", "dynamic", "False", _FLAG, prompt=False),
    Bad("preview", "lambda_t", NAN, "from 0 to 8"), Bad("preview", "lambda_s", 9, "from 0 to 8"),
    Bad("preview", "base_resolution", 7, _BASE), Bad("preview", "sega", "False", _FLAG, prompt=False),
    Bad("preview", "sega_alone", "yes", _FLAG, prompt=False), Bad("preview", "allocation", "x", _ONE_OF),
    Bad("preview", "m_ref", None, _ONE_OF), Bad("preview", "floor", 9.0, "from 0 to 4"),
    Bad("preview", "recipe", "refined", _ONE_OF),
]
HIFLOW = [
    Bad("hiflow", "seed", -1, "from 0 to 18446744073709551615"),
    Bad("hiflow", "seed", 2**64, "from 0 to 18446744073709551615"),
    Bad("hiflow", "seed", 1.5, "a whole number", prompt=False), Bad("hiflow", "seed", "7", "a whole number",
                                                                    prompt=False),
    Bad("hiflow", "steps", 1, "from 2 to 200"), Bad("hiflow", "steps", 10**7, "from 2 to 200"),
    Bad("hiflow", "steps", 4.7, "a whole number", prompt=False), Bad("hiflow", "steps", NAN, "a whole number"),
    Bad("hiflow", "cfg", NAN, "from 0 to 30"), Bad("hiflow", "cfg", INF, "from 0 to 30"),
    Bad("hiflow", "cfg", -1, "from 0 to 30"), Bad("hiflow", "cfg", 31, "from 0 to 30"),
    Bad("hiflow", "denoise", 0, "from 0.01 to 1"), Bad("hiflow", "denoise", 1.5, "from 0.01 to 1"),
    Bad("hiflow", "denoise", NAN, "from 0.01 to 1"),
    Bad("hiflow", "scales", "1.0001, 4", "not larger than the 4 x 4 before it"),
    Bad("hiflow", "scales", "1e6", "> 1 and at most 16"), Bad("hiflow", "scales", "nan", "> 1 and at most 16"),
    Bad("hiflow", "scales", "inf", "> 1 and at most 16"), Bad("hiflow", "scales", "-2, 4", "> 1 and at most 16"),
    Bad("hiflow", "scales", "4, 2", "must grow"), Bad("hiflow", "scales", "2, 2", "must grow"),
    Bad("hiflow", "scales", "", _LIST), Bad("hiflow", "scales", "2; 4", _LIST), Bad("hiflow", "scales", None, _LIST),
    Bad("hiflow", "stage_steps", "16.5, 10", "whole numbers from 1 to 200"),
    Bad("hiflow", "stage_steps", "0, 10", "whole numbers from 1 to 200"),
    Bad("hiflow", "stage_steps", "40, 10", "stage 1 has 40 steps"),
    Bad("hiflow", "stage_steps", "16, 10, 4", "has 3 values for 2 stages"),
    Bad("hiflow", "stage_guidance", "nan, 6", "from 0 to 100"), Bad("hiflow", "stage_guidance", "-1, 6", "from 0"),
    Bad("hiflow", "stage_guidance", "inf", "from 0 to 100"), Bad("hiflow", "alphas", "nan, 0.25", "from 0 to 1"),
    Bad("hiflow", "alphas", "-1, 0.25", "from 0 to 1"), Bad("hiflow", "alphas", "1e9, 0.25", "from 0 to 1"),
    Bad("hiflow", "alphas", "1, 0.5, 0.25", "has 3 values for 2 stages"),
    Bad("hiflow", "betas", "-5, 0.5", "from 0 to 1"), Bad("hiflow", "betas", "inf, 0.5", "from 0 to 1"),
    Bad("hiflow", "filter_ratio", "0, 0.2", "> 0 and at most 1"),
    Bad("hiflow", "filter_ratio", "50, 0.2", "> 0 and at most 1"),
    Bad("hiflow", "filter_ratio", "inf, 0.2", "> 0 and at most 1"),
    Bad("hiflow", "ntk_factor", "1e300, 10", "> 0 and at most 1000"),
    Bad("hiflow", "ntk_factor", "0, 10", "> 0 and at most 1000"),
    Bad("hiflow", "ntk_factor", "nan, 10", "> 0 and at most 1000"),
    Bad("hiflow", "proportional_attention", "False", _FLAG, prompt=False),
    Bad("hiflow", "swin", "False", _FLAG, prompt=False), Bad("hiflow", "swin", 0, _FLAG, prompt=False),
    Bad("hiflow", "sharpen", -1, "from 0 to 4"), Bad("hiflow", "sharpen", NAN, "from 0 to 4"),
    Bad("hiflow", "sharpen", INF, "from 0 to 4"), Bad("hiflow", "schedule", "shift 3", _ONE_OF),
    *_connected("hiflow"), Bad("hiflow", "vae", _VAE_4X, "8 px per latent pixel"),
]
IMAX = [
    Bad("imax", "seed", -1, "from 0 to 18446744073709551615"), Bad("imax", "steps", 1, "from 2 to 200"),
    Bad("imax", "cfg", NAN, "from 0 to 30"), Bad("imax", "denoise", 0, "from 0.01 to 1"),
    Bad("imax", "scales", "4, 2", "must grow"), Bad("imax", "scales", "1", "> 1 and at most 16"),
    Bad("imax", "scales", "1.0001", "not larger than the 4 x 4 before it"), Bad("imax", "scales", "x", _LIST),
    Bad("imax", "stage_steps", "0", "whole numbers from 1 to 200"),
    Bad("imax", "stage_steps", "30, 30", "has 2 values for 1 stages"),
    Bad("imax", "stage_guidance", "nan", "from 0 to 100"),
    Bad("imax", "base_shift", -1.0, "from 0 to 100"), Bad("imax", "base_shift", INF, "from 0 to 100"),
    Bad("imax", "base_shift", "3", "from 0 to 100", prompt=False),
    Bad("imax", "stage_shift", "-6", "from 0 to 100"), Bad("imax", "stage_shift", "nan", "from 0 to 100"),
    Bad("imax", "ntk_factor", "0", "> 0 and at most 1000"), Bad("imax", "ntk_factor", "inf", "> 0 and at most 1000"),
    Bad("imax", "proportional_attention", "False", _FLAG, prompt=False),
    Bad("imax", "text_duplication", "False", _FLAG, prompt=False), Bad("imax", "swin", 1, _FLAG, prompt=False),
    Bad("imax", "guidance_schedule", "cosine", _ONE_OF), Bad("imax", "guidance_schedule", None, _ONE_OF),
    Bad("imax", "wavelet_level", 0, "from 1 to 10"), Bad("imax", "wavelet_level", 11, "from 1 to 10"),
    Bad("imax", "wavelet_level", 1.5, "a whole number", prompt=False), *_connected("imax"),
]
HRDIT = [
    Bad("hrdit", "seed", -1, "from 0 to 18446744073709551615"), Bad("hrdit", "steps", 1, "from 2 to 200"),
    Bad("hrdit", "cfg", NAN, "from 0 to 30"), Bad("hrdit", "denoise", 0, "from 0.01 to 1"),
    Bad("hrdit", "scales", "4, 2", "must grow"), Bad("hrdit", "scales", "x", _LIST),
    Bad("hrdit", "stage_steps", "0, 1", "whole numbers from 1 to 200"),
    Bad("hrdit", "stage_steps", "40, 1", "stage 1 has 40 steps"), Bad("hrdit", "stage_steps", "x", "e.g. '17, 10'"),
    Bad("hrdit", "spa_steps", "-1, 0", "whole numbers from 0 to 200"),
    Bad("hrdit", "spa_steps", "1.5, 0", "whole numbers from 0 to 200"),
    Bad("hrdit", "spa_steps", "1, 0, 0", "has 3 values for 2 stages"),
    Bad("hrdit", "spa_steps", "3, 0", "SPA can be on for at most 2"), Bad("hrdit", "spa_steps", None, _LIST),
    Bad("hrdit", "group_num", 1, "from 2 to 1024"), Bad("hrdit", "group_num", 1025, "from 2 to 1024"),
    Bad("hrdit", "group_num", NAN, "a whole number"), Bad("hrdit", "group_num", 2.5, "a whole number", prompt=False),
    Bad("hrdit", "global_anchor", -1, "from 0 to 4096"), Bad("hrdit", "global_anchor", INF, "from 0 to 4096"),
    Bad("hrdit", "spa", "False", _FLAG, prompt=False), Bad("hrdit", "hap", 0, _FLAG, prompt=False),
    Bad("hrdit", "stage_guidance", "nan, 6", "from 0 to 100"), Bad("hrdit", "alphas", "-1, 0.25", "from 0 to 1"),
    Bad("hrdit", "betas", "inf, 0.5", "from 0 to 1"), Bad("hrdit", "filter_ratio", "0, 0.2", "> 0 and at most 1"),
    Bad("hrdit", "ntk_factor", "0, 10", "> 0 and at most 1000"),
    Bad("hrdit", "proportional_attention", "False", _FLAG, prompt=False),
    Bad("hrdit", "swin", 1, _FLAG, prompt=False), Bad("hrdit", "sharpen", NAN, "from 0 to 4"),
    Bad("hrdit", "schedule", "shift 3", _ONE_OF), *_connected("hrdit"),
]
CASES = DYPE + SEGA + PREVIEW + HIFLOW + IMAX + HRDIT
