"""The README's published numbers and docs/published-numbers.md's whole grid are the copied grid
(tests/data/aesthetic4k_table1.json, with its source), and the sentences around them say what the grid says."""

from __future__ import annotations

from pathlib import Path

import published_numbers as pn

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GRID_PAGE = ROOT / "docs" / "published-numbers.md"  # the whole grid: too long for the README's word budget


def _block(name: str, page: Path = README) -> str:
    text = page.read_text(encoding="utf-8")
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    assert start in text and end in text, f"{page.name} lacks the {name} block"
    return text[text.index(start) + len(start):text.index(end)].strip()


def test_the_copied_grid_is_whole():
    table = pn.load()
    assert table["source"]["commit"] and table["source"]["path"].startswith("area/static/data/results.js")
    assert table["methods"] == ["Base", "UltraImage", "DyPE", "SigMa", "SEGA", "AReA"]
    assert [m["key"] for m in table["metrics"]] == ["lat", "ir", "aes", "clip", "pick", "fid", "fidp"]
    for model in ("FLUX.1", "Qwen-Image"):
        assert set(table["data"][model]) == set(pn.ASPECTS)
        for rows in table["data"][model].values():
            assert len(rows) == len(table["methods"]) and all(len(r) == len(table["metrics"]) for r in rows)


def test_readme_grid_is_the_copied_grid():
    table = pn.load()
    expected = "\n\n".join(f"**{model}**\n\n{pn.grid_table(table, model)}" for model in table["data"])
    assert _block("published-grid", GRID_PAGE) == expected, \
        "docs/published-numbers.md's grid is stale: paste `python tests/published_numbers.py`"


def test_readme_node_choice_is_derived_from_the_grid():
    assert _block("node-choice") == pn.choice_table(pn.load())


def test_the_sentences_say_what_the_grid_says():
    table = pn.load()
    reward = [m["key"] for m in table["metrics"]].index("ir")
    cells = [(model, shape) for model, shapes in table["data"].items() for shape in shapes]
    by = {cell: dict(zip(table["methods"], table["data"][cell[0]][cell[1]], strict=True)) for cell in cells}
    sega_wins = [cell for cell in cells if by[cell]["SEGA"][reward] > by[cell]["DyPE"][reward]]
    assert len(sega_wins) == 7 and set(cells) - set(sega_wins) == {("FLUX.1", "6144×2048")}
    flux_3_1 = by["FLUX.1", "6144×2048"]
    assert (round(flux_3_1["DyPE"][reward], 3), round(flux_3_1["SEGA"][reward], 3)) == (0.806, 0.536)
    assert pn.quality_wins(table, "FLUX.1", "6144×2048") == {"DyPE": 4, "SEGA": 2}
    qwen_3_1 = by["Qwen-Image", "6144×2048"]
    assert qwen_3_1["DyPE"][reward] < qwen_3_1["Base"][reward]
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "SEGA wins 7 of the 8 cells on ImageReward" in text
    assert "DyPE wins ImageReward (0.806 vs 0.536) and three more metrics, SEGA only the two FIDs" in text
    assert "DyPE at 3:1 scores below the unpatched model on ImageReward (0.144 vs 0.189)" in text
