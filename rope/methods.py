"""The names of the position rules, without torch: the commands' parsers and the nodes' input definitions read them
before torch is imported (``python <pack> COMMAND --help``)."""

from __future__ import annotations

METHODS: tuple[str, ...] = ("yarn", "ntk", "pi", "off")
#: How κ(t) modulates the YaRN ramp thresholds: multiply (official DyPE, current) or power (its first release).
THRESHOLD_RULES: tuple[str, ...] = ("multiply", "power")
