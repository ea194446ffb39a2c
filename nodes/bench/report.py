"""What the bench prints: the Markdown rows of its tables, and one summary line per figure (``--summary``: appended
to a file as each figure is measured, so a run cut short still leaves what it measured)."""

from __future__ import annotations

from pathlib import Path

from .embedder_rows import MEMORY_VARIANTS, Case
from .peak_memory import Peak

STOCK_PATH = "stock code path"  # at or below the trained size the pack runs ComfyUI's own embedder: no ratio


class Summary:
    """One line per figure, appended and flushed at once (or nothing without a file)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def note(self, line: str) -> None:
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")


def _fmt(value: float) -> str:
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def call_row(case: Case, ms: dict[str, float], stock_path: bool) -> str:
    ratios = [STOCK_PATH, STOCK_PATH, "–"] if stock_path else [
        f"{ms['yarn'] / ms['stock']:.3f}", f"{ms['sega'] / ms['stock']:.3f}", f"{ms['yarn'] / ms['floor']:.2f}"]
    cells = [case.label] + [_fmt(ms[k]) for k in ("stock", "yarn", "ntk", "pi", "sega", "embed", "floor")] + ratios
    return "| " + " | ".join(cells) + " |"


def call_summary(case: Case, ms: dict[str, float], stock_path: bool, repeats: int) -> str:
    head = f"per-call time, {case.label}"
    if stock_path:
        return f"{head}: {STOCK_PATH} (at or below the trained size ours is stock; stock {_fmt(ms['stock'])} ms)"
    return (f"{head}: yarn/stock {ms['yarn'] / ms['stock']:.3f}, SEGA step/stock {ms['sega'] / ms['stock']:.3f} "
            f"(stock {_fmt(ms['stock'])} ms, yarn {_fmt(ms['yarn'])} ms, SEGA step {_fmt(ms['sega'])} ms; medians "
            f"of {repeats} interleaved rounds)")


def memory_rows(case: Case, peaks: dict[str, Peak]) -> list[str]:
    """One row per variant of ours: both gauges' MiB for stock and ours, the ratio only when all four agree."""
    stock = peaks["stock"]
    names = {"yarn": "yarn", "sega": "SEGA step"}
    rows = []
    for key in MEMORY_VARIANTS[1:]:
        ours = peaks[key]
        gauges = f"allocation record / {stock.second_name}"
        rows.append(f"| peak extra memory of one call, MiB ({gauges}) | {case.label}, {names[key]} | "
                    f"{_pair(stock)} | {_pair(ours)} | {_memory_ratio(stock, ours)} |")
    return rows


def _pair(peak: Peak) -> str:
    return f"{peak.record:.0f} / {'–' if peak.second is None else f'{peak.second:.0f}'}"


def _memory_ratio(stock: Peak, ours: Peak) -> str:
    if stock.second is None:
        return f"– (no second gauge: {stock.second_name})"
    if not (stock.agrees() and ours.agrees()):
        return "– (the gauges disagree)"
    return f"{ours.record / stock.record:.2f}"


def memory_summary(case: Case, peaks: dict[str, Peak]) -> list[str]:
    stock = peaks["stock"]
    lines = []
    for key, name in (("yarn", "yarn"), ("sega", "SEGA step")):
        ours = peaks[key]
        lines.append(f"peak memory of one call, {case.label}, {name}/stock: {_memory_ratio(stock, ours)} (stock "
                     f"{_pair(stock)} MiB, {name} {_pair(ours)} MiB; allocation record / {stock.second_name})")
    return lines


CASCADES = ("HiFlow", "I-Max", "HRDiT")
CPU_HAP = ("on the CPU HAP runs blockwise over its kept keys, but at the tiny model's sizes its band (31 blocks of "
           "64 tokens either side) keeps (nearly) every entry: HRDiT's times here include no saving from HAP")


def _hrdit_kinds(route: dict) -> str:
    """HRDiT's calls at FLUX.1-dev's size by kind: tokens, SPA variants, HAP's kept share."""
    parts = []
    for (rows, cols, variants, kept), calls in sorted(route["real_calls"].items()):
        what = "dense" if kept == 1.0 else f"HAP keeps {100 * kept:.1f} %"
        spa = f", SPA {variants} attentions a block" if variants > 1 else ""
        parts.append(f"{calls} at {rows * 16}x{cols * 16} ({what}{spa})")
    return "; ".join(parts)


def hiflow_lines(side: int, runs: int, row: dict, cpu: bool) -> list[str]:
    """The cascades' table: one pass, HiFlow, I-Max and HRDiT side by side, each cascade's ratio to the one pass."""
    one, cascades = row["one pass"], [(name, row[name]) for name in CASCADES]
    hrdit = row["HRDiT"]
    case = (f"tiny FLUX {side}² -> {side * 4}² (4x), official defaults: one pass 30 steps at {side * 4}², HiFlow "
            f"30 + 16 + 10, I-Max 30 + 30 from noise, HRDiT 30 + 17 (SPA on 3) + 10 (HAP on every stage step)")

    def line(label: str, key: str, scale: float = 1.0, digits: int = 1) -> str:
        a = one[key] / scale
        cells = [f"{a:.{digits}f}"]
        for _, cascade in cascades:
            if key not in cascade:
                cells += ["–", "–"]
                continue
            b = cascade[key] / scale
            cells += [f"{b:.{digits}f}", f"{b / a:.3f}" if a else "–"]
        return f"| {label} | " + " | ".join(cells) + " |"

    def total(route: dict) -> float:
        return route["flops"] + route["vae_flops"]

    counts = " | ".join(f"{c['calls']} / {c['vae_passes']} | –" for _, c in cascades)
    totals = " | ".join(f"{total(c) / 1e15:.1f} | {total(c) / total(one):.3f}" for _, c in cascades)
    dense = dict(one, flops_dense_hap=one["flops"])
    return ["", f"HiFlow, I-Max and HRDiT cascades vs one pass ({case}; FLOPs for FLUX.1-dev, 57 blocks, width "
            "3072, 512 text tokens (I-Max: 512 per prompt copy), and its VAE, at 1024² -> 4096²):", "",
            "| measure | one pass | HiFlow | HiFlow/one pass | I-Max | I-Max/one pass | HRDiT | HRDiT/one pass |",
            "|---|---|---|---|---|---|---|---|",
            line(f"time end to end, s (median of {runs}, tiny model and tiny VAE; HRDiT: HAP's band keeps "
                 "(nearly) every tiny token, no time saved)", "seconds"),
            line("of it inside the model calls, s", "model_seconds"),
            *([line("the same calls, CPU time of this process, s (a second clock)", "model_cpu_seconds")] if cpu else []),
            line("FLOPs of those model calls on the tiny model, GFLOP (counted; each grid's call replayed once, "
                 "dense, without SPA's extra attentions)", "tiny_flops", 1e9),
            line("of it in the VAE passes, s", "vae_seconds"),
            line("end to end without the VAE passes, s", "no_vae_seconds"),
            f"| model calls / VAE passes | {one['calls']} / {one['vae_passes']} | {counts} |",
            line("FLOPs of the model calls at FLUX.1-dev size, PFLOP (HRDiT: HAP's kept entries, SPA's attentions)",
                 "flops", 1e15),
            f"| the same, HRDiT's HAP counted dense, PFLOP | {one['flops'] / 1e15:.1f} | – | – | – | – | "
            f"{hrdit['flops_dense_hap'] / 1e15:.1f} | {hrdit['flops_dense_hap'] / dense['flops_dense_hap']:.3f} |",
            line("FLOPs of the VAE passes at the FLUX VAE's size, PFLOP", "vae_flops", 1e15, 2),
            f"| FLOPs in all, PFLOP | {total(one) / 1e15:.1f} | {totals} |", "",
            f"HRDiT's model calls at FLUX.1-dev size: {_hrdit_kinds(hrdit)}. The tiny run: SPA with group_num "
            f"{hrdit['tiny_group_num']} (the real run's variants per stage on the tiny grids), {hrdit['spa_calls']} "
            f"SPA calls, {hrdit['hap_calls']} HAP calls; {CPU_HAP}."]


def hiflow_summary(side: int, runs: int, row: dict, cpu: bool) -> list[str]:
    """One line per cascade (HiFlow, I-Max, HRDiT) against the one pass."""
    one = row["one pass"]
    lines = []
    for name in CASCADES:
        cascade = row[name]

        def ratio(key: str, cascade=cascade) -> float:
            return cascade[key] / one[key]

        second = f" (CPU time {ratio('model_cpu_seconds'):.3f})" if cpu else ""
        hap = (f", HAP counted dense {cascade['flops_dense_hap'] / one['flops']:.3f}; {CPU_HAP}"
               if "flops_dense_hap" in cascade else "")
        lines.append(f"{name} vs one pass, tiny FLUX {side}² -> {side * 4}²: model-call time "
                     f"{ratio('model_seconds'):.3f}{second} beside the tiny model's FLOPs {ratio('tiny_flops'):.3f}; end "
                     f"to end {ratio('seconds'):.3f} (VAE {100 * cascade['vae_seconds'] / cascade['seconds']:.0f} % of "
                     f"the cascade); FLUX.1-dev model FLOPs {ratio('flops'):.3f}{hap} (medians of {runs})")
    return lines
