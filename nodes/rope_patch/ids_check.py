"""When a model call may gather its RoPE table from the window, and what happens when ids move after that.

The embedder (embedder.py; its tables: tables.py) builds the first table of each *ids signature* of a run
(ids_signature: everything the ids can depend on besides tensor values) with the stock formula and leaves a device flag:
was every id an integer inside the window? That verdict reaches the host without a wait (a CPU flag is already there; a
CUDA flag comes by a non-blocking copy whose event later calls poll), and only later calls of the signature gather.

A gathered table flags a miss as well: ids that moved after the check, i.e. a node that moves positions
differently from one call to the next under one signature (no ComfyUI node does). Such a result never passes as a
normal one:

* where the flag can be read for free before the gather (a CPU flag, eager), the call takes the stock formula
  instead, and so do the signature's later calls in the run: exact, bit for bit;
* elsewhere (CUDA, or any flag inside torch.compile) the table is gathered and its flag read once it reaches the
  host without a wait: right after the call for a CPU flag, at the next model calls for a CUDA flag (event
  polled), at the end of the run otherwise. A miss stops the run with WindowMissError, and the clone's
  ``IdsHistory`` then sends every later run of it to the stock formula, so queueing again gives the exact result.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from .config import WRAPPER_KEY
from .errors import describe_suspects, window_miss_error

logger = logging.getLogger(__name__)

#: transformer_options key of the clone's IdsHistory (clone.patch_model puts one on every patched clone).
HISTORY_KEY = "dype_sega_ids_history"


class IdsHistory:
    """What a patched clone has learnt about its ids across runs: whether a gathered table ever missed.

    Lives in the clone's ``model_options`` (never on the shared base model). Shared by reference with the clones
    made from it (``copy.deepcopy`` returns it), so the sampler's copy and the node's output see one history.
    """

    def __init__(self) -> None:
        self.moved = False

    def __deepcopy__(self, memo: dict) -> IdsHistory:
        return self

    def __repr__(self) -> str:
        return f"IdsHistory(moved={self.moved})"


class WindowFlag(NamedTuple):
    """What one embedder call did: ``missed`` is its 0-d bool device flag (some id not an integer in the window)."""

    missed: torch.Tensor
    gathered: bool  # the table was gathered from the window (exact only if ``missed`` is false)
    moved: bool  # the flag was read before gathering and said missed: the stock formula was used instead
    verified: bool = False  # the flag was read before gathering and said clean: nothing left to check


@dataclass
class HostFlag:
    """A device flag on its way to the host: ``host`` (pinned) is readable once the CUDA event ``done`` is set.
    Without an event (devices other than CUDA) it is read at the end of the run, with the run's other flags."""

    device_flag: torch.Tensor
    host: torch.Tensor | None = None
    done: object | None = None

    def value(self) -> bool | None:
        """The flag, or None while it is not on the host yet. Never waits."""
        if self.done is None or not self.done.query():
            return None
        return bool(self.host)


def reads_free(flag: torch.Tensor) -> bool:
    """Reading ``flag`` now waits for no device and breaks no compiled graph."""
    return flag.device.type == "cpu" and not torch.compiler.is_compiling()


def send_to_host(flag: torch.Tensor) -> bool | HostFlag:
    """``flag``'s value where reading it waits for nothing (CPU), else the flag on its way to the host."""
    if flag.device.type == "cpu":
        return bool(flag)
    if flag.device.type == "cuda":
        host = flag.to("cpu", non_blocking=True)  # into pinned memory: no host sync
        done = torch.cuda.Event()
        done.record(torch.cuda.current_stream(flag.device))
        return HostFlag(flag, host, done)
    return HostFlag(flag)


def _start_check(missed: torch.Tensor) -> HostFlag | bool:
    """The verdict of a signature's first table (True: its ids fit the window), or the flag on its way."""
    sent = send_to_host(missed)
    if isinstance(sent, bool):
        return not sent
    if sent.done is None:
        return not bool(missed)  # other backends: one blocking read per run and signature
    return sent


@dataclass
class WindowChecks:
    """One sampling run's window verdicts per ids signature and the miss flags of its gathered tables."""

    history: IdsHistory | None = None
    model_name: str = "the model"
    options: dict = field(default_factory=dict)  # the sampled clone's transformer_options (for the error)
    signatures: dict = field(default_factory=dict)  # signature -> {(ordinal, ids shape, dtype): bool | HostFlag}
    pending: list[HostFlag] = field(default_factory=list)  # gathered tables' flags not read yet
    lock: threading.Lock = field(default_factory=threading.Lock)  # calls of one step may run on worker threads
    noted_move: bool = False

    def verdicts(self, signature: tuple) -> dict | None:
        """The signature's verdicts (checks whose flag has landed turned into bools; never waits), or None when this
        clone's ids moved in an earlier run: then every table is the stock formula, unchecked."""
        if self.history is not None and self.history.moved:
            return None
        verdicts = self.signatures.setdefault(signature, {})
        for key, state in list(verdicts.items()):
            if isinstance(state, HostFlag):
                missed = state.value()
                if missed is not None:
                    verdicts[key] = not missed
        return verdicts

    def file(self, flags: list[tuple[tuple, WindowFlag]], verdicts: dict) -> None:
        """After a model call: start the check of each unchecked table, keep each gathered table's flag, and stop
        the run if a gathered table's flag already says it missed."""
        for key, flag in flags:
            if flag.moved:
                verdicts[key] = False  # the rest of the run builds this table with the stock formula
                if not self.noted_move:
                    self.noted_move = True
                    logger.info("DyPE/SEGA: the RoPE ids of %s moved between model calls with the same inputs; "
                                "those calls use the stock formula (exact, without the fast path). %s",
                                self.model_name, describe_suspects(self.options, WRAPPER_KEY))
            elif flag.gathered and not flag.verified:
                sent = send_to_host(flag.missed)
                if sent is True:  # a CPU flag read after the call (inside torch.compile it could not be before)
                    self.fail(1)
                elif isinstance(sent, HostFlag):
                    with self.lock:
                        self.pending.append(sent)
            elif verdicts.get(key) is None:
                verdicts[key] = _start_check(flag.missed)
        self.poll()

    def poll(self) -> None:
        """Drop gathered tables' flags that have reached the host clean; stop the run at the first that missed.
        Never waits: a CUDA flag whose event has not completed stays for a later poll (or the end of the run)."""
        with self.lock:
            missed = 0
            keep = []
            for flag in self.pending:
                value = flag.value()
                if value is None:
                    keep.append(flag)
                else:
                    missed += value
            self.pending = keep
        if missed:
            self.fail(missed)

    def fail(self, calls: int) -> None:
        """Remember the miss on the clone (its next runs use the stock formula) and stop this run."""
        if self.history is not None:
            self.history.moved = True
        raise window_miss_error(self.model_name, calls, describe_suspects(self.options, WRAPPER_KEY))


def _input_key(value: object) -> object:
    """What of one model input can shape RoPE ids without reading tensor values: shapes, plain values, types."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.dtype, str(value.device))
    if isinstance(value, (list, tuple)):
        return tuple(_input_key(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _input_key(v)) for k, v in value.items()))
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return type(value).__qualname__, id(value)  # an object: by identity (new object, new check)


def ids_signature(x: torch.Tensor, c_concat, c_crossattn, transformer_options: dict, kwargs: dict) -> tuple:
    """Everything a model's RoPE ids can depend on besides tensor values: the shapes of its inputs, the options
    that move positions (``rope_options``) and the patches (``post_input`` may rewrite ids), by identity. The
    window is checked once per run and signature; a later call of the signature still flags a miss."""
    patches = transformer_options.get("patches") or {}
    replaced = transformer_options.get("patches_replace") or {}
    return (
        _input_key(x), _input_key(c_concat), _input_key(c_crossattn),
        tuple(sorted((name, _input_key(value)) for name, value in kwargs.items())),
        _input_key(transformer_options.get("rope_options")),
        tuple(sorted((name, tuple(id(p) for p in fns)) for name, fns in patches.items())),
        tuple(sorted((name, tuple(sorted(map(str, table)))) for name, table in replaced.items())),
    )
