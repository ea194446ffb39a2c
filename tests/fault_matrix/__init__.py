"""The fault and bad-input matrix's rows (tests/test_fault_matrix.py runs them), one module per theme. ``ROWS`` lists
them in the order of docs/fault-matrix.md's table: theme by theme as ``THEMES`` orders them, each theme's rows in the
order its module defines them."""

from . import (
    rows_autograd_and_ids,
    rows_controlnets,
    rows_degenerate,
    rows_executor,
    rows_lifecycle,
    rows_models,
    rows_other_nodes,
    rows_sizes,
)
from .lab import REGISTERED, Lab, Row

THEMES = (rows_models, rows_sizes, rows_other_nodes, rows_degenerate, rows_lifecycle, rows_autograd_and_ids,
          rows_controlnets, rows_executor)
_ORDER = [theme.__name__ for theme in THEMES]
ROWS: list[Row] = sorted(REGISTERED, key=lambda r: _ORDER.index(r.check.__module__))

__all__ = ["ROWS", "Lab", "Row", "THEMES"]
