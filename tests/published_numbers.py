"""The published Aesthetic-4K grid (tests/data/aesthetic4k_table1.json, with its source) as the pack's tables: the
whole grid per model (docs/published-numbers.md, between ``<!-- published-grid:start -->`` and its end), and which
of the pack's two nodes the grid favours at each shape (README, ``<!-- node-choice:start -->``). Those blocks are
these functions' output (tests/test_published_numbers.py); run this file to print them."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "aesthetic4k_table1.json"
#: the grid's methods this pack implements, as the README's footnote names them
OURS = ("DyPE", "SEGA")
#: shape -> aspect, as the node-choice table names it
ASPECTS = {"4096×4096": "square", "5120×5120": "square", "2048×4096": "2:1", "6144×2048": "3:1"}
NODE = {"DyPE": "DyPE Patch Model", "SEGA": "SEGA Attention alone (recipe paper)"}


def load() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def _cell(value: float, dp: int) -> str:
    return f"{value:.{dp}f}"


def _best(rows: list[list[float]], column: int, direction: int) -> float:
    return max(row[column] * direction for row in rows) * direction


def grid_table(table: dict, model: str) -> str:
    """Every method and metric of one model: one row per shape and method, the best value of a shape in bold."""
    metrics = table["metrics"]
    arrows = {1: "↑", -1: "↓"}
    head = "| shape | method | " + " | ".join(f"{m['label']} {arrows[m['dir']]}" for m in metrics) + " |"
    lines = [head, "|" + "---|" * (len(metrics) + 2)]
    for shape, rows in table["data"][model].items():
        best = [_best(rows, i, m["dir"]) for i, m in enumerate(metrics)]
        for method, row in zip(table["methods"], rows, strict=True):
            cells = [f"**{_cell(v, m['dp'])}**" if v == best[i] else _cell(v, m["dp"])
                     for i, (v, m) in enumerate(zip(row, metrics, strict=True))]
            name = f"{method} †" if method in OURS else method
            lines.append(f"| {shape} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def quality_wins(table: dict, model: str, shape: str) -> dict[str, int]:
    """Of the quality metrics (all but latency), how many each of the pack's two methods wins against the other."""
    rows = dict(zip(table["methods"], table["data"][model][shape], strict=True))
    wins = dict.fromkeys(OURS, 0)
    for i, metric in enumerate(table["metrics"]):
        if metric["key"] == "lat":
            continue
        dype, sega = (rows[name][i] * metric["dir"] for name in OURS)
        if dype != sega:
            wins["DyPE" if dype > sega else "SEGA"] += 1
    return wins


def choice(table: dict, model: str, shape: str) -> str:
    """The method that wins more quality metrics; a tie goes to ImageReward."""
    wins = quality_wins(table, model, shape)
    if wins["DyPE"] != wins["SEGA"]:
        return max(wins, key=wins.get)
    reward = table["metrics"].index(next(m for m in table["metrics"] if m["key"] == "ir"))
    rows = dict(zip(table["methods"], table["data"][model][shape], strict=True))
    return "DyPE" if rows["DyPE"][reward] > rows["SEGA"][reward] else "SEGA"


def choice_table(table: dict) -> str:
    """Per model and shape: ImageReward of the two, quality metrics won, and the node the grid favours."""
    reward = [m["key"] for m in table["metrics"]].index("ir")
    quality = sum(1 for m in table["metrics"] if m["key"] != "lat")
    lines = ["| model | shape | ImageReward DyPE / SEGA | metrics won DyPE / SEGA (of "
             f"{quality}) | use |", "|---|---|---|---|---|"]
    order = ("square", "2:1", "3:1")
    for model, shapes in table["data"].items():
        for shape in sorted(shapes, key=lambda s: (order.index(ASPECTS[s]), s)):
            rows = dict(zip(table["methods"], shapes[shape], strict=True))
            wins = quality_wins(table, model, shape)
            pick = choice(table, model, shape)
            lines.append(f"| {model} | {ASPECTS[shape]} {shape} | {rows['DyPE'][reward]:.3f} / "
                         f"{rows['SEGA'][reward]:.3f} | {wins['DyPE']} / {wins['SEGA']} | **{NODE[pick]}** |")
    return "\n".join(lines)


if __name__ == "__main__":
    grid = load()
    for name in grid["data"]:
        print(f"{name}:\n\n{grid_table(grid, name)}\n")
    print(choice_table(grid))
