"""Check a UI-format workflow against ``/object_info``: node types, widget slots and values, links.

``validate_prompt`` cannot see shifted ``widgets_values`` whose values happen to fit, nor link bookkeeping in the UI
file, so these checks come first. Slot rules: workflows.md §2 (frontend ``useIntWidget`` / ``useComboWidget``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WIDGET_TYPES = frozenset({"INT", "FLOAT", "STRING", "BOOLEAN", "COMBO"})
UPLOAD_SOCKET = "IMAGEUPLOAD"  # LoadImage's upload button (an ``image_upload`` combo) as the frontend saves it
CONTROL_VALUES = frozenset({"fixed", "increment", "decrement", "randomize"})


@dataclass(frozen=True)
class Slot:
    """One entry of ``widgets_values``: a real widget (``control`` False) or a frontend-only control widget."""

    name: str
    kind: str  # INT FLOAT STRING BOOLEAN COMBO
    options: dict[str, Any]
    combo: tuple | None = None
    control: bool = False


def ordered_inputs(info: dict[str, Any]) -> list[tuple[str, list]]:
    """(name, spec) for required then optional inputs, in the order the frontend creates them."""
    inputs = info["input"]
    order = info.get("input_order") or {k: list(inputs.get(k, {})) for k in ("required", "optional")}
    return [(name, inputs[group][name]) for group in ("required", "optional") for name in order.get(group, [])]


def input_kind(spec: list) -> tuple[str, tuple | None]:
    """(type, combo options or None) of one input spec (V1 ``[[...]]`` or V3 ``["COMBO", {"options": ...}]``)."""
    head = spec[0]
    opts = spec[1] if len(spec) > 1 and isinstance(spec[1], dict) else {}
    if isinstance(head, list):
        return "COMBO", tuple(head)
    if head == "COMBO":
        return "COMBO", tuple(opts.get("options", ()))
    return str(head), None


def widget_slots(info: dict[str, Any]) -> list[Slot]:
    """The ``widgets_values`` layout a node of this schema saves, control widgets included."""
    slots: list[Slot] = []
    for name, spec in ordered_inputs(info):
        kind, combo = input_kind(spec)
        opts = spec[1] if len(spec) > 1 and isinstance(spec[1], dict) else {}
        if kind not in WIDGET_TYPES or opts.get("forceInput"):
            continue
        slots.append(Slot(name, kind, opts, combo))
        flag = opts.get("control_after_generate")
        if kind == "INT" and (flag if flag is not None else name in ("seed", "noise_seed")):
            slots.append(Slot(name, "CONTROL", {}, control=True))
        elif kind == "FLOAT" and flag:
            slots.append(Slot(name, "CONTROL", {}, control=True))
        elif kind == "COMBO" and opts.get("image_upload"):  # LoadImage: the frontend's upload button saves "image"
            slots.append(Slot(name, "UPLOAD", {}, control=True))
        elif kind == "COMBO" and flag:  # canvas mode: control + filter (workflows.md §1: avoid in our pack)
            slots += [Slot(name, "CONTROL", {}, control=True), Slot(name, "FILTER", {}, control=True)]
    return slots


def check_value(slot: Slot, value: Any) -> str | None:
    """Why ``value`` does not fit ``slot``, or None."""
    if slot.kind == "CONTROL":
        return None if value in CONTROL_VALUES else f"{value!r} is not a control mode"
    if slot.kind == "UPLOAD":
        return None if value == "image" else f"{value!r} is not the upload widget's value 'image'"
    if slot.kind == "FILTER":
        return None if isinstance(value, str) else f"{value!r} is not a filter string"
    if slot.kind == "COMBO":
        return None if value in (slot.combo or ()) else f"{value!r} not in {list(slot.combo or ())[:8]}"
    if slot.kind == "BOOLEAN":
        return None if isinstance(value, bool) else f"{value!r} is not a boolean"
    if slot.kind == "STRING":
        return None if isinstance(value, str) else f"{value!r} is not a string"
    numeric = int if slot.kind == "INT" else (int, float)
    if isinstance(value, bool) or not isinstance(value, numeric):
        return f"{value!r} is not {slot.kind}"
    lo, hi = slot.options.get("min"), slot.options.get("max")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        return f"{value!r} outside [{lo}, {hi}]"
    step = slot.options.get("step")
    if slot.kind == "INT" and step and (value - (lo or 0)) % step:
        return f"{value!r} is off the step {step} grid (the frontend would round it)"
    return None


def _registry_input_type(info: dict[str, Any], name: str) -> str | None:
    for input_name, spec in ordered_inputs(info):
        if input_name == name:
            return input_kind(spec)[0]
    return None


def check_workflow(wf: dict[str, Any], object_info: dict[str, Any], virtual: frozenset[str]) -> list[str]:
    """Every problem found in a UI workflow, as readable lines (empty = fine)."""
    errors: list[str] = []
    nodes = {n["id"]: n for n in wf["nodes"]}
    if len(nodes) != len(wf["nodes"]):
        errors.append("duplicate node ids")
    links = {lk[0]: lk for lk in wf.get("links", [])}
    if len(links) != len(wf.get("links", [])):
        errors.append("duplicate link ids")
    if nodes and wf.get("last_node_id", 0) < max(nodes):
        errors.append("last_node_id is below the largest node id")
    if links and wf.get("last_link_id", 0) < max(links):
        errors.append("last_link_id is below the largest link id")
    for node in wf["nodes"]:
        where = f"node {node['id']} {node['type']}"
        if node["type"] in virtual:
            continue
        info = object_info.get(node["type"])
        if info is None:
            errors.append(f"{where}: unknown node type")
            continue
        slots, values = widget_slots(info), node.get("widgets_values", [])
        if len(values) != len(slots):
            errors.append(f"{where}: {len(values)} widgets_values, schema has {len(slots)} slots "
                          f"{[s.name + ('*' if s.control else '') for s in slots]}")
        errors += [f"{where}.{s.name}: {why}" for s, v in zip(slots, values, strict=False)
                   if (why := check_value(s, v)) is not None]
        for slot_index, sock in enumerate(node.get("inputs", [])):
            expected = _registry_input_type(info, sock["name"])
            if expected is None and sock["type"] == UPLOAD_SOCKET and any(s.kind == "UPLOAD" for s in slots):
                expected = UPLOAD_SOCKET  # the upload button's socket: the frontend's, not in the schema
            if expected is None:
                errors.append(f"{where}: input {sock['name']!r} not in the schema")
            elif expected not in (sock["type"], "*"):
                errors.append(f"{where}: input {sock['name']!r} is {sock['type']}, schema says {expected}")
            if sock.get("link") is not None:
                lk = links.get(sock["link"])
                if lk is None or lk[3] != node["id"] or lk[4] != slot_index:
                    errors.append(f"{where}: input {sock['name']!r} names link {sock['link']} that does not end here")
        widget_names = {s.name for s in slots}
        linked = {s["name"] for s in node.get("inputs", []) if s.get("link") is not None}
        for name, spec in ordered_inputs(info):
            if name in info["input"].get("required", {}) and name not in widget_names and name not in linked:
                errors.append(f"{where}: required input {name!r} ({input_kind(spec)[0]}) is not linked")
        # A newer host may append outputs (SaveImage gained IMAGE after 0.3.75): a file saved by an older frontend
        # lists a prefix of them. Output sockets are matched by index, so a prefix still links correctly.
        outputs = [o["type"] for o in node.get("outputs", [])]
        schema_outputs = [str(t) if not isinstance(t, list) else "COMBO" for t in info["output"]]
        if outputs != schema_outputs[: len(outputs)]:
            errors.append(f"{where}: outputs {outputs} differ from the schema {info['output']}")
    errors += _check_links(links, nodes)
    return errors


def _check_links(links: dict[int, list], nodes: dict[int, dict]) -> list[str]:
    errors: list[str] = []
    for link_id, origin, origin_slot, target, target_slot, link_type in links.values():
        src, dst = nodes.get(origin), nodes.get(target)
        if src is None or dst is None:
            errors.append(f"link {link_id}: node {origin if src is None else target} does not exist")
            continue
        outs, ins = src.get("outputs", []), dst.get("inputs", [])
        if origin_slot >= len(outs) or link_id not in (outs[origin_slot].get("links") or []):
            errors.append(f"link {link_id}: origin {origin}[{origin_slot}] does not list it")
        elif outs[origin_slot]["type"] not in (link_type, "*"):
            errors.append(f"link {link_id}: type {link_type} but origin output is {outs[origin_slot]['type']}")
        if target_slot >= len(ins) or ins[target_slot].get("link") != link_id:
            errors.append(f"link {link_id}: target {target}[{target_slot}] does not point back at it")
        elif ins[target_slot]["type"] not in (link_type, "*"):
            errors.append(f"link {link_id}: type {link_type} but target input is {ins[target_slot]['type']}")
    for node in nodes.values():
        for out in node.get("outputs", []):
            errors += [f"node {node['id']}: output lists missing link {lid}" for lid in out.get("links") or []
                       if lid not in links]
    return errors
