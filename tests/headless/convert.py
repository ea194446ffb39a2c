"""UI workflow (format 0.4) → API prompt, as the frontend's graphToPrompt does it (workflows.md §2).

Only what example workflows need: plain widgets with control slots, links, virtual nodes (notes dropped; Reroute
followed; a legacy PrimitiveNode writes its value into the target), muted (mode 2) and bypassed (mode 4) nodes.
Subgraphs and group nodes are refused rather than guessed.
"""

from __future__ import annotations

from typing import Any

from .uicheck import widget_slots

MUTED, BYPASSED = 2, 4
NOTE_NODES = frozenset({"MarkdownNote", "Note"})


class ConversionError(ValueError):
    """The workflow uses something this converter does not model."""


class _Graph:
    def __init__(self, wf: dict[str, Any]) -> None:
        if wf.get("definitions", {}).get("subgraphs") or wf.get("extra", {}).get("groupNodes"):
            raise ConversionError("subgraphs / group nodes are not supported")
        self.nodes = {n["id"]: n for n in wf["nodes"]}
        self.links = {lk[0]: lk for lk in wf.get("links", [])}

    def resolve(self, link_id: int) -> tuple[str, Any] | None:
        """Follow a link to its real source: ("link", [id, slot]), ("value", literal) or None (source dropped)."""
        seen: set[int] = set()
        while link_id is not None and link_id not in seen:
            seen.add(link_id)
            _, origin, slot, _, _, link_type = self.links[link_id]
            node = self.nodes[origin]
            if node["type"] == "Reroute":
                link_id = node["inputs"][0].get("link")
            elif node["type"] == "PrimitiveNode":
                return "value", node["widgets_values"][0]
            elif node.get("mode") == MUTED:
                return None
            elif node.get("mode") == BYPASSED:
                link_id = self._bypass_input(node, slot, link_type)
            else:
                return "link", [str(origin), slot]
        return None

    @staticmethod
    def _bypass_input(node: dict[str, Any], slot: int, link_type: str) -> int | None:
        # A bypassed node passes through the input with the same index if its type fits, else the first of that type.
        linked = [s for s in node.get("inputs", []) if s.get("link") is not None]
        inputs = node.get("inputs", [])
        if slot < len(inputs) and inputs[slot].get("link") is not None and inputs[slot]["type"] in (link_type, "*"):
            return inputs[slot]["link"]
        return next((s["link"] for s in linked if s["type"] == link_type), None)


def _title(node: dict[str, Any], info: dict[str, Any]) -> str:
    return node.get("title") or info.get("display_name") or node["type"]


def ui_to_api(wf: dict[str, Any], object_info: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The API prompt for ``wf``; raises ``ConversionError`` for unknown node types."""
    graph = _Graph(wf)
    prompt: dict[str, dict[str, Any]] = {}
    for node in sorted(wf["nodes"], key=lambda n: n.get("order", 0)):
        node_type = node["type"]
        if node_type in NOTE_NODES or node_type in ("Reroute", "PrimitiveNode") or node.get("mode") in (
                MUTED, BYPASSED):
            continue
        info = object_info.get(node_type)
        if info is None:
            raise ConversionError(f"node {node['id']}: unknown node type {node_type!r}")
        inputs: dict[str, Any] = {}
        saved = node.get("widgets_values", [])
        for index, slot in enumerate(widget_slots(info)):
            if slot.control:  # control widgets have serialize=false: never sent
                continue
            if index < len(saved):
                value = saved[index]
            elif "default" in slot.options:  # saved before this widget existed: the frontend keeps its default
                value = slot.options["default"]
            else:
                continue
            inputs[slot.name] = {"__value__": value} if isinstance(value, list) else value
        for sock in node.get("inputs", []):
            if sock.get("link") is None:
                continue
            source = graph.resolve(sock["link"])
            if source is None:  # the frontend deletes inputs that point at dropped nodes
                inputs.pop(sock["name"], None)
            else:
                inputs[sock["name"]] = source[1]
        prompt[str(node["id"])] = {"class_type": node_type, "inputs": inputs,
                                   "_meta": {"title": _title(node, info)}}
    return prompt
