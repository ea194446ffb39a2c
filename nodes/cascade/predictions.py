"""The one store of x0 predictions a guided cascade keeps for its whole run (HiFlow's ``pred_x0_dict``): by index in
the base schedule, each pass overwriting the indices it runs, so a stage reads, at each of its steps, the latest
prediction made at that timestep: the previous stage's where it ran that step, else an earlier stage's or the base
pass's (resized to the stage's grid by the rule that reads it).

The predictions live on the CPU as float32, one at a time on the device for its step. Indices no stage still to
come reads are dropped (``keep_from``), so a run holds what it will use and nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class Predictions:
    x0: dict[int, torch.Tensor] = field(default_factory=dict)
    peak_bytes: int = 0  # the most the store held at once (docs/hiflow.md, "Memory")

    def keep(self, index: int, denoised: torch.Tensor) -> None:
        self.x0[index] = denoised.detach().to("cpu", torch.float32, copy=True)
        self.peak_bytes = max(self.peak_bytes, self.nbytes())

    def latest(self, index: int, device: torch.device) -> torch.Tensor:
        """The latest prediction at ``index``, on ``device``; a missing index is a bug of the room, named."""
        if index not in self.x0:
            raise RuntimeError(f"The cascade kept no prediction at base step {index} (it holds {sorted(self.x0)}); "
                               "a stage reads only steps some pass ran, so this is a bug: please report it.")
        return self.x0[index].to(device)

    def keep_from(self, first: int) -> None:
        """Drop every index below ``first``: no stage still to come reads them."""
        for index in [i for i in self.x0 if i < first]:
            del self.x0[index]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.x0.values())
