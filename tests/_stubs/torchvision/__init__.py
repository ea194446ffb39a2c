"""Test-only import stub: ComfyUI imports torchvision.transforms at start-up but never uses it on our paths."""
from . import transforms  # noqa: F401
