"""What the bench prints: the Markdown rows of its tables, and one summary line per figure (``--summary``: appended
to a file as each figure is measured, so a run cut short still leaves what it measured)."""

from __future__ import annotations

from pathlib import Path

from .embedder_rows import MEMORY_VARIANTS, Case
from .model_flops import H100_SXM_BF16_DENSE, RTX_4090_BF16_DENSE
from .peak_memory import Peak

STOCK_PATH = "stock code path"  # at or below the trained size the pack runs ComfyUI's own embedder: no ratio
#: The per-call variants of ours, as the tables name them: DyPE alone, and SEGA by recipe (never "SEGA" alone: the
#: recipes cost differently).
NAMES = {"yarn": "yarn", "sega": "DyPE + SEGA refined", "paper": "SEGA paper", "dype_paper": "DyPE + SEGA paper"}
TIMED = ("stock", "yarn", "ntk", "pi", "sega", "paper", "dype_paper", "floor")
RATIOS = ("yarn", "sega", "paper", "dype_paper")  # each over stock


def call_header() -> list[str]:
    names = [NAMES.get(k, k) for k in TIMED]
    cells = ["case", *names, *(f"{NAMES[k]}/stock" for k in RATIOS), "yarn/floor"]
    return ["| " + " | ".join(cells) + " |", "|" + "---|" * len(cells)]


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
    ratios = [STOCK_PATH] * len(RATIOS) + ["–"] if stock_path else [
        *(f"{ms[k] / ms['stock']:.3f}" for k in RATIOS), f"{ms['yarn'] / ms['floor']:.2f}"]
    cells = [case.label] + [_fmt(ms[k]) for k in TIMED] + ratios
    return "| " + " | ".join(cells) + " |"


def call_summary(case: Case, ms: dict[str, float], stock_path: bool, repeats: int) -> str:
    head = f"per-call time, {case.label}"
    if stock_path:
        return f"{head}: {STOCK_PATH} (at or below the trained size ours is stock; stock {_fmt(ms['stock'])} ms)"
    ratios = ", ".join(f"{NAMES[k]}/stock {ms[k] / ms['stock']:.3f}" for k in RATIOS)
    times = ", ".join(f"{NAMES.get(k, k)} {_fmt(ms[k])} ms" for k in ("stock", *RATIOS))
    return f"{head}: {ratios} ({times}; medians of {repeats} interleaved rounds)"


def paper_line(case: Case, flops: tuple[float, float, float]) -> str:
    """Recipe paper's per-step work beside one FLUX.1-dev model call (Flux cases; the FLOPs of embedder_rows)."""
    counted, formula, model_call = flops
    head = f"SEGA recipe paper's spectrum, {case.label}: {counted / 1e9:.1f} GFLOP per step counted ({formula / 1e9:.1f} "
    if case.family != "flux":
        return head + "by the formula)"
    return head + (f"by the formula), {counted / model_call:.1e} of one FLUX.1-dev model call at this size "
                   f"({model_call / 1e12:.0f} TFLOP)")


def memory_rows(case: Case, peaks: dict[str, Peak]) -> list[str]:
    """One row per variant of ours: both gauges' MiB for stock and ours, the ratio only when all four agree."""
    stock = peaks["stock"]
    rows = []
    for key in MEMORY_VARIANTS[1:]:
        ours = peaks[key]
        gauges = f"allocation record / {stock.second_name}"
        rows.append(f"| peak extra memory of one call, MiB ({gauges}) | {case.label}, {NAMES[key]} | "
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
    for key in MEMORY_VARIANTS[1:]:
        ours, name = peaks[key], NAMES[key]
        lines.append(f"peak memory of one call, {case.label}, {name}/stock: {_memory_ratio(stock, ours)} (stock "
                     f"{_pair(stock)} MiB, {name} {_pair(ours)} MiB; allocation record / {stock.second_name})")
    return lines


CASCADES = ("HiFlow", "I-Max", "HRDiT")
#: HRDiT's FLOPs rows beyond the kept entries: HAP as a GPU runs it, and with no pruning at all.
HAP_ROWS = (("as FlexAttention computes it on a GPU: whole 128x128 tiles", "flops_tiles_hap"),
            ("counted dense (every entry, as if HAP pruned nothing)", "flops_dense_hap"))
CPU_HAP = ("on the CPU HAP runs blockwise over its kept keys, but at the tiny model's sizes its band (31 blocks of "
           "64 tokens either side) keeps (nearly) every entry: HRDiT's times here include no saving from HAP")


def _hrdit_kinds(route: dict) -> str:
    """HRDiT's calls at FLUX.1-dev's size by kind: tokens, SPA variants, HAP's share of the entries and tiles."""
    parts = []
    for (rows, cols, variants, kept, tiles), calls in sorted(route["real_calls"].items()):
        what = "dense" if kept == 1.0 else f"HAP keeps {100 * kept:.1f} % of the entries, {100 * tiles:.1f} % of the tiles"
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
            *(f"| the same, HRDiT's HAP {label}, PFLOP | {one['flops'] / 1e15:.1f} | – | – | – | – | "
              f"{hrdit[key] / 1e15:.1f} | {hrdit[key] / one['flops']:.3f} |" for label, key in HAP_ROWS),
            line("FLOPs of the VAE passes at the FLUX VAE's size, PFLOP", "vae_flops", 1e15, 2),
            f"| FLOPs in all, PFLOP | {total(one) / 1e15:.1f} | {totals} |", "",
            f"HRDiT's model calls at FLUX.1-dev size: {_hrdit_kinds(hrdit)}. The tiny run: SPA with group_num "
            f"{hrdit['tiny_group_num']} (the real run's variants per stage on the tiny grids), {hrdit['spa_calls']} "
            f"SPA calls, {hrdit['hap_calls']} HAP calls; {CPU_HAP}.", "", floor_line(one)]


def floor_line(one: dict) -> str:
    """One FLUX.1-dev call counted twice, and the least time the one pass takes on an H100 (its bf16 dense peak)."""
    side, calls = one["call_px"], one["calls"]
    return (f"One pass at FLUX.1-dev size: {calls} calls at {side}x{side}, each {one['call_flops_counted'] / 1e15:.3f} "
            f"PFLOP counted by PyTorch's FLOP counter on ComfyUI's Flux at FLUX.1-dev's config (meta device), "
            f"{one['call_flops'] / 1e15:.3f} by the formula of the rows above; at an H100 SXM's bf16 dense peak "
            f"({H100_SXM_BF16_DENSE / 1e12:.1f} TFLOPS) its {calls} calls take at least "
            f"{calls * one['call_flops_counted'] / H100_SXM_BF16_DENSE:.0f} s, 28 of them "
            f"{28 * one['call_flops_counted'] / H100_SXM_BF16_DENSE:.0f} s (an RTX 4090's, "
            f"{RTX_4090_BF16_DENSE / 1e12:.1f} TFLOPS: {28 * one['call_flops_counted'] / RTX_4090_BF16_DENSE / 60:.0f} "
            "min).")


def hiflow_summary(side: int, runs: int, row: dict, cpu: bool) -> list[str]:
    """One line per cascade (HiFlow, I-Max, HRDiT) against the one pass."""
    one = row["one pass"]
    lines = []
    for name in CASCADES:
        cascade = row[name]

        def ratio(key: str, cascade=cascade) -> float:
            return cascade[key] / one[key]

        second = f" (CPU time {ratio('model_cpu_seconds'):.3f})" if cpu else ""
        hap = (f" (HAP's kept entries), {cascade['flops_tiles_hap'] / one['flops']:.3f} with HAP's whole 128x128 "
               f"tiles (what FlexAttention computes on a GPU), HAP counted dense "
               f"{cascade['flops_dense_hap'] / one['flops']:.3f}; {CPU_HAP}" if "flops_dense_hap" in cascade else "")
        lines.append(f"{name} vs one pass, tiny FLUX {side}² -> {side * 4}²: model-call time "
                     f"{ratio('model_seconds'):.3f}{second} beside the tiny model's FLOPs {ratio('tiny_flops'):.3f}; end "
                     f"to end {ratio('seconds'):.3f} (VAE {100 * cascade['vae_seconds'] / cascade['seconds']:.0f} % of "
                     f"the cascade); FLUX.1-dev model FLOPs {ratio('flops'):.3f}{hap} (medians of {runs})")
    return [*lines, floor_line(one)]
