"""The ``variant`` input both nodes append last: which checkpoint of a family the model is, where its class has
checkpoints trained at different sizes that nothing in the file tells apart (nodes/families/base.py, ``Variant``)."""

from __future__ import annotations

from comfy_api.latest import io

from ..families import AUTO_VARIANT, variant_options

VARIANT_TOOLTIP = (
    "Which checkpoint this is, where one model class has checkpoints trained at different sizes that nothing in "
    "the file tells apart (Krea 2 Raw / Turbo, Chroma1-Base / HD, Wan 14B 480P / 720P, HunyuanVideo 1.5 480p / "
    "720p). auto: the family default, the larger trained size. A variant of another family is an error. A non-zero "
    "base_resolution wins over it."
)


def variant_input() -> io.Combo.Input:
    """The ``variant`` combo both nodes append last (optional: saved workflows and API prompts without it load)."""
    return io.Combo.Input("variant", options=variant_options(), default=AUTO_VARIANT, optional=True,
                          tooltip=VARIANT_TOOLTIP)
