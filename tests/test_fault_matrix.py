"""The fault and bad-input matrix (issue 9): one row per case, input or fault → expected behaviour.

Every row runs on the real host with tiny random-weight models from ComfyUI's own classes and 1–2 sampling steps. After
each row the same checks run whatever the row did: the input MODEL carries no patch, wrapper or config of ours, the
shared base model holds ComfyUI's own embedder again once unloaded, no per-run/step/call scope is left open, and the
next stock run of the input model is bit-identical to the one before the row ("nothing leaked into the input model or
the next run"). docs/fault-matrix.md's table is generated from ``ROWS`` and checked here. The rows live in
tests/fault_matrix/, one module per theme; their order is the table's."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_matrix import ROWS, Lab, Row

pytestmark = pytest.mark.usefixtures("comfy_host")

MATRIX_DOC = Path(__file__).resolve().parents[1] / "docs" / "fault-matrix.md"


@pytest.fixture(scope="module")
def labs(comfy_host):
    built: dict[str, Lab] = {}

    def get(family: str) -> Lab:
        if family not in built:
            built[family] = Lab(family)
        return built[family]

    return get


@pytest.mark.parametrize("case", ROWS, ids=[r.id for r in ROWS])
def test_fault_matrix(case: Row, labs) -> None:
    lab = labs(case.family)
    try:
        case.check(lab)
    finally:
        import comfy.model_management

        comfy.model_management.interrupt_current_processing(False)
    lab.assert_nothing_leaked()


def readme_table() -> str:
    lines = ["| case | behaviour |", "|---|---|"]
    lines += [f"| {r.case} | {r.behaviour} |" for r in ROWS]
    return "\n".join(lines)


def test_docs_list_the_matrix():
    text = MATRIX_DOC.read_text(encoding="utf-8")
    start, end = "<!-- fault-matrix:start -->", "<!-- fault-matrix:end -->"
    assert start in text and end in text, "docs/fault-matrix.md lacks the fault-matrix block"
    block = text[text.index(start) + len(start):text.index(end)].strip()
    assert block == readme_table(), "docs/fault-matrix.md is stale: paste readme_table() from this file"


def test_rows_are_unique():
    assert len({r.id for r in ROWS}) == len(ROWS)
