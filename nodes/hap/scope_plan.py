"""HAP's scope plan: per layer and head, the attention scope (alpha tokens, beta a fraction of the sequence).

The official plan ships with the HRDiT code (github zylwithxy/HRDiT at e4aa8c6, configs/scope_plan_flux.json,
MIT: data/LICENSE): 57 layers (FLUX.1's 19 double-stream blocks, then its 38 single-stream blocks) x 24 heads.
Every one of its 1368 scopes is the same, alpha 2048 and beta 0, so it gives every layer and head of any model the
same scope. ``hrdit/hap.py`` turns a scope into a band of 64-token blocks (``band_blocks``): width
max(2·int(alpha // 64 + beta·nbx) − 1, 1) blocks, nbx = sequence tokens // 64 (text included), half of it
(width − 1) // 2 on either side of the query's block.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

BLOCK = 64  # tokens per HAP block (hrdit/hap.py BLOCK)
OFFICIAL_FILE = Path(__file__).resolve().parent / "data" / "scope_plan_flux.json"
OFFICIAL_SOURCE = "zylwithxy/HRDiT e4aa8c6 configs/scope_plan_flux.json (MIT)"


@dataclass(frozen=True)
class ScopePlan:
    """alphas[layer][head] and betas[layer][head], layers numbered double-stream blocks first."""

    alphas: tuple[tuple[float, ...], ...]
    betas: tuple[tuple[float, ...], ...]
    source: str = "given"

    def __post_init__(self) -> None:
        shape = [len(row) for row in self.alphas]
        if not self.alphas or shape != [len(row) for row in self.betas] or len(set(shape)) != 1 or not shape[0]:
            raise ValueError(f"HAP: a scope plan needs alphas and betas of the same layers x heads shape; got "
                             f"{len(self.alphas)} and {len(self.betas)} layers ({self.source}).")
        for name, rows in (("alphas", self.alphas), ("betas", self.betas)):
            bad = [v for row in rows for v in row if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0]
            if bad:
                raise ValueError(f"HAP: the scope plan's {name} must be finite numbers >= 0; found {bad[0]!r} "
                                 f"({self.source}).")

    @property
    def layers(self) -> int:
        return len(self.alphas)

    @property
    def heads(self) -> int:
        return len(self.alphas[0])

    @property
    def uniform(self) -> bool:
        """One scope for every layer and head (the official plan): it fits a model of any shape."""
        return len({(a, b) for ra, rb in zip(self.alphas, self.betas, strict=True) for a, b in zip(ra, rb, strict=True)}) == 1

    def fits(self, layers: int, heads: int) -> str:
        """'' when the plan can scope a model of ``layers`` x ``heads``, else why not."""
        if self.uniform or (layers, heads) == (self.layers, self.heads):
            return ""
        return (f"the scope plan ({self.source}) has {self.layers} layers x {self.heads} heads, this model "
                f"{layers} layers x {heads} heads")

    def half_widths(self, layer: int, heads: int, tokens: int) -> tuple[int, ...]:
        """Per head of ``layer``, the band's half-width in blocks for a sequence of ``tokens`` (text included)."""
        row = 0 if self.uniform else layer
        alphas, betas = self.alphas[row], self.betas[row]
        if self.uniform:
            alphas, betas = alphas[:1] * heads, betas[:1] * heads
        blocks = tokens // BLOCK
        widths = [max(2 * int(a // BLOCK + b * blocks) - 1, 1) for a, b in zip(alphas, betas, strict=True)]
        return tuple((w - 1) // 2 for w in widths)


def load_plan(path: Path | str = OFFICIAL_FILE, source: str = OFFICIAL_SOURCE) -> ScopePlan:
    """A plan from a JSON file of the official format ({"alphas": [[...]], "betas": [[...]]})."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        alphas, betas = data["alphas"], data["betas"]
        plan = ScopePlan(tuple(tuple(float(v) for v in row) for row in alphas),
                         tuple(tuple(float(v) for v in row) for row in betas), source)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"HAP: cannot read the scope plan {path}: {error}") from None
    return plan
