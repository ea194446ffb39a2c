"""The cascade nodes' widgets, made from their input definitions (cascade.py, hrdit.py): one way for a rule to become
a widget, its limits and default taken from the rule."""

from __future__ import annotations

from comfy_api.latest import io

from .ui_hints import advanced

#: Said by each input the official stage model reads and a connected 'stage_model' replaces.
STAGE_MODEL_UNUSED = "Unused when 'stage_model' is connected."


def stage_list(rule, meaning: str, *, folded: bool = True) -> io.String.Input:
    """A per-stage list: a text widget whose tooltip says its form (one entry per stage, the separator). ``folded``:
    among the advanced inputs the frontend folds away; the stage sizes never are (the last one is the image's size)."""
    return io.String.Input(rule.name, default=rule.default, tooltip=rule.tooltip(meaning),
                           **(advanced() if folded else {}))


def number(kind, rule, tooltip: str, **extra) -> io.Input:
    """An Int or Float widget (``kind``) with the rule's default and limits."""
    return kind.Input(rule.name, default=rule.default, **rule.widget, tooltip=tooltip, **extra)


def flag(rule, tooltip: str, **extra) -> io.Boolean.Input:
    """A boolean widget with the rule's default."""
    return io.Boolean.Input(rule.name, default=rule.default, tooltip=tooltip, **extra)
