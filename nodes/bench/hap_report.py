"""What ``bench --only hap`` prints (hap_rows.py measures): a Markdown table, and one summary line per figure."""

from __future__ import annotations

from .hap_rows import CALIBRATION_SIDE, HEADS, TEXT, half_of, tokens_of
from .peak_memory import MIB, Peak


def _mib(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.2f}" if value < 10 else f"{value:.1f}"


def _gauges(record: float, second: float | None, name: str) -> str:
    peak = Peak(record, second, name)
    return f"{_mib(record)} / {'–' if second is None else _mib(second)}" + ("" if peak.agrees() else " (disagree)")


def _case(side: int) -> str:
    return f"FLUX.1 {side}², {tokens_of(side)} tokens"


def hap_lines(masks: dict | None, timing: dict | None, device: str) -> list[str]:
    lines = ["", f"HAP, HRDiT's pruned attention (nodes/hap/), on {device}: its FlexAttention block mask at FLUX.1's "
             f"sizes ({TEXT} text tokens, {HEADS} heads, the shipped plan's half-width of "
             f"{half_of(tokens_of(2048))[0]} blocks, global anchor 32), ours (nodes/hap/block_mask.py) against "
             "create_block_mask with the official per-head mask_mod (H=24); its blockwise attention (off CUDA, and "
             "on CUDA without triton) against SDPA over every key:", "",
             "| measure | case | create_block_mask / SDPA | ours | ours/theirs |", "|---|---|---|---|---|"]
    if masks:
        second = masks.get("second_name", "CUDA allocator's peak")
        for side, f in masks["sides"].items():
            lines.append(f"| BlockMask, MiB (its tensors; ours: also held after the build) | {_case(side)} | "
                         f"{_mib(f['eager_bytes'] / MIB)} (eager, H=24) | {_mib(f['ours_bytes'] / MIB)} (H={f['ours_heads']}; "
                         f"{_mib(f['ours_held'] / MIB)} held) | {f['ours_bytes'] / f['eager_bytes']:.3f} |")
            lines.append(f"| build peak, MiB (ours: allocation record / {second}; eager: traced on the meta "
                         f"device, all its allocations summed in brackets) | {_case(side)} | "
                         f"{_mib(f['eager_peak'])} [{_mib(f['eager_total'])}] | "
                         f"{_gauges(f['ours_peak'], f['ours_second'], second)} | "
                         f"{f['ours_peak'] / f['eager_peak']:.1e} |")
        c = masks["calibration"]
        lines.append(f"| the trace's check: eager build peak, MiB (traced on meta / allocation record / {second}) | "
                     f"{_case(CALIBRATION_SIDE)} | {_mib(c['traced'])} / {_gauges(c['record'], c['second'], second)}"
                     f" | – | – |")
        if "compiled" in masks:
            k = masks["compiled"]
            lines.append(f"| compiled (_compile=True, as the official code) build peak, MiB (allocation record / "
                         f"{second}; warm) | {_case(k['side'])} | {_gauges(k['peak'], k['second'], second)} (first "
                         f"call {k['seconds']:.1f} s with the compile; the same blocks as ours: "
                         f"{'yes' if k['same'] else 'NO'}) | {_mib(k['ours_peak'])} | "
                         f"{k['ours_peak'] / k['peak']:.2f} |")
    if timing:
        lines.append(_timing_row(timing))
    return lines


def _timing_case(t: dict) -> str:
    return (f"FLUX.1 {t['side']}², {t['tokens']} tokens, {t['heads']} head(s) of 128, {t['dtype']}, {t['threads']} thread(s), load "
            f"{t['load']:.1f}")


def _timing_row(t: dict) -> str:
    clock, wall, second = t["clock"], t["wall"], t["second"]
    return (f"| attention time, ms (median of {t['runs']} interleaved rounds: wall / {clock}) | {_timing_case(t)} | "
            f"SDPA {wall['sdpa']:.0f} / {second['sdpa']:.0f} | blockwise {wall['hap']:.0f} / {second['hap']:.0f} | "
            f"{wall['hap'] / wall['sdpa']:.3f} / {second['hap'] / second['sdpa']:.3f} (computes "
            f"{100 * t['work']:.1f} % of the entries; HAP keeps {100 * t['kept']:.1f} %) |")


def hap_summary(masks: dict | None, timing: dict | None) -> list[str]:
    lines = []
    if masks:
        second = masks.get("second_name", "CUDA allocator's peak")
        for side, f in masks["sides"].items():
            lines.append(f"HAP block mask, {_case(side)}, {HEADS} heads: ours BlockMask {f['ours_bytes'] / MIB:.2f} "
                         f"MiB, build peak {_gauges(f['ours_peak'], f['ours_second'], second)} MiB (allocation "
                         f"record / {second}); eager create_block_mask (official per-head mask_mod, H=24) BlockMask "
                         f"{f['eager_bytes'] / MIB:.2f} MiB, build peak {f['eager_peak'] / 1024:.1f} GiB (traced on "
                         f"the meta device)")
        c = masks["calibration"]
        lines.append(f"HAP block mask trace check, eager create_block_mask at {_case(CALIBRATION_SIDE)}: traced "
                     f"{_mib(c['traced'])} MiB, real build {_gauges(c['record'], c['second'], second)} MiB "
                     f"(allocation record / {second})")
        if "compiled" in masks:
            k = masks["compiled"]
            lines.append(f"HAP block mask, compiled create_block_mask (_compile=True) at {_case(k['side'])}: build "
                         f"peak {_gauges(k['peak'], k['second'], second)} MiB (warm; ours {_mib(k['ours_peak'])} "
                         f"MiB), first call {k['seconds']:.1f} s, same blocks as ours: {'yes' if k['same'] else 'NO'}")
    if timing:
        t = timing
        lines.append(f"HAP blockwise attention vs SDPA, {_timing_case(t)}: {t['wall']['hap'] / t['wall']['sdpa']:.3f}"
                     f" ({t['clock']} {t['second']['hap'] / t['second']['sdpa']:.3f}; SDPA {t['wall']['sdpa']:.0f} ms, "
                     f"blockwise {t['wall']['hap']:.0f} ms; computes {100 * t['work']:.1f} % of the entries, HAP "
                     f"keeps {100 * t['kept']:.1f} %; medians of {t['runs']})")
    return lines
