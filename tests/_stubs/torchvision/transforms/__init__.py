"""Test-only import stub (see the package docstring)."""
