"""What a user sees with "Nodes 2.0" on (the frontends' Vue node renderer, setting ``Comfy.VueNodes.Enabled``).

There every node is a DOM element (``[data-node-id]``) sized by its content, so the classic checks of
headless/browser.py (which draw from LiteGraph's saved geometry) do not apply: here each node's element is measured
on screen, against the others' and probed at nine points for what covers it, and the note's markdown for a cut-off
last line; ``show_advanced`` unfolds every node as a user does.

Frontend 1.32 rescales a classic workflow's geometry 1.2× when it opens it with Nodes 2.0 on (``Comfy.VueNodes
.AutoScaleLayout``, on by default: ``ensureCorrectLayoutScale``) and then restores the file's saved view over the
compensating zoom (``app.loadGraphData``: the scale first, ``extra.ds`` after), so no view saved for the classic
renderer fits there; the pack's frontend extension (nodes/web/fit_rescaled_view.js) then fits the view. 1.47,
1.53 and 1.58 keep the saved geometry. ``rescaled`` detects the 1.32 behaviour from the graph itself, never from a
version.
"""

from __future__ import annotations

from typing import Any


def enable(page) -> None:
    """The setting on, as the Settings dialog sets it (once per session: later calls find it on)."""
    if not page.evaluate("() => app.extensionManager.setting.get('Comfy.VueNodes.Enabled')"):
        page.evaluate("() => app.extensionManager.setting.set('Comfy.VueNodes.Enabled', true)")


# The note's text in a Vue note: the markdown widget's rendered content. Frontends 1.32 to 1.58 all draw it as
# .comfy-markdown-content inside .widget-markdown (no .ProseMirror: that is the classic renderer's editor).
NOTE_TEXT = ".widget-markdown .comfy-markdown-content"
# Every node element on screen: its box (CSS px), the points inside it where another element is hit first; for the
# note (its id given) its text element's full and shown heights, where its last paragraph ends and its first line;
# for this pack's nodes whose advanced inputs are folded, the empty height below the last thing they show.
ON_SCREEN = """noteId => {
  const CHROME = '.litegraph-minimap, .minimap-main-container, .p-buttongroup.absolute', out = [];
  for (const el of document.querySelectorAll('[data-node-id]')) {
    const id = Number(el.getAttribute('data-node-id')), r = el.getBoundingClientRect();
    const xs = [r.left + 4, (r.left + r.right) / 2, r.right - 4], ys = [r.top + 4, (r.top + r.bottom) / 2, r.bottom - 4];
    const covered = [];
    for (const y of ys) for (const x of xs) {
      const e = document.elementFromPoint(x, y);
      if (!(e && el.contains(e)))
        covered.push([Math.round(x), Math.round(y), e ? String(e.className?.baseVal ?? e.className).slice(0, 60) : 'nothing',
                      Boolean(e?.closest(CHROME))]);
    }
    let note = null;
    if (id === noteId) {
      const text = el.querySelector('__NOTE_TEXT__'), last = text?.lastElementChild?.getBoundingClientRect();
      note = text ? {content: text.scrollHeight, shown: text.clientHeight, last: last ? last.bottom : null,
                     first: text.firstElementChild?.innerText ?? ''} : {missing: true};
    }
    const node = app.graph.getNodeById(id);
    let gap = null;
    if (String(node?.type).startsWith('DyPESEGA_') && !node.showAdvanced && (node.widgets ?? []).some(w => w.options?.advanced)) {
      const shown = Array.from(el.querySelectorAll('*')).filter(e => getComputedStyle(e).position !== 'absolute')
        .map(e => e.getBoundingClientRect()).filter(b => b.height > 0).map(b => b.bottom);
      gap = (r.bottom - Math.max(...shown)) / app.canvas.ds.scale;
    }
    out.push({id, title: el.innerText.split('\\n')[0].slice(0, 40), box: [r.left, r.top, r.right, r.bottom], covered,
              note, gap});
  }
  return {scale: app.canvas.ds.scale, nodes: out};
}""".replace("__NOTE_TEXT__", NOTE_TEXT)
#: Graph units a node that folds advanced inputs may leave empty below them (its frame's padding is ~10).
MAX_GAP = 24


def view(page, workflow: dict[str, Any]) -> dict[str, Any]:
    """ON_SCREEN for this workflow, with the note's heading for ``problems`` to find in its text."""
    note = next(n for n in workflow["nodes"] if n["type"] == "MarkdownNote")
    shown = page.evaluate(ON_SCREEN, note["id"])
    shown["note_heading"] = note["widgets_values"][0].splitlines()[0].removeprefix("# ")
    return shown


def show_advanced(page) -> int:
    """Press every node's "Show advanced inputs" button, as a user unfolds a node's advanced inputs (frontends 1.47
    and later, on a host with advanced inputs; 1.32 shows every input and has none). Returns how many it pressed."""
    return page.evaluate("""() => {
        const buttons = Array.from(document.querySelectorAll('[data-node-id] button'))
            .filter(b => /^\\s*show advanced/i.test(b.innerText));
        buttons.forEach(b => b.click());
        return buttons.length;
    }""")


def settled(page, count: int) -> None:
    """Wait until ``count`` node elements exist and they and the view stop moving (content sizes them a frame late)."""
    page.wait_for_function("n => document.querySelectorAll('[data-node-id]').length === n", arg=count, timeout=30_000)
    page.wait_for_function("""() => {
        const now = JSON.stringify([app.canvas.ds.scale, ...Array.from(document.querySelectorAll('[data-node-id]'))
            .map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height].map(Math.round); })]);
        const same = now === window.__nodes2Boxes;
        window.__nodes2Boxes = now;
        return same;
    }""", polling=250, timeout=30_000)


def refitted(page, saved_scale: float) -> None:
    """Wait for the pack's fit of a rescaled graph (nodes/web/fit_rescaled_view.js): the view leaves the saved zoom
    (``settled`` then waits for it to stop moving)."""
    page.wait_for_function("s => Math.abs(app.canvas.ds.scale - s) > 1e-3", arg=saved_scale, timeout=15_000)


def grown(page, workflow: dict[str, Any]) -> float:
    """How much the frontend grew the file's node geometry on open (1.32's auto-scale: 1.2; else 1), read from the
    graph: the note's width (content never widens it; other nodes may also grow to fit their widgets)."""
    note = next(n for n in workflow["nodes"] if n["type"] == "MarkdownNote")
    return page.evaluate("id => app.graph.getNodeById(id).size[0]", note["id"]) / note["size"][0]


def rescaled(page, workflow: dict[str, Any]) -> bool:
    """Whether the frontend grew the file's node geometry on open by 1.32's 1.2× (``grown``)."""
    return abs(grown(page, workflow) - 1.2) < 0.01


def problems(view: dict[str, Any], width: int, height: int, chrome_ok: bool = False) -> list[str]:
    """A node partly off screen, overlapping another or covered (by another node or the frontend's chrome), or a note
    whose text is cut. ``chrome_ok``: a node under the frontend's bottom-right chrome (minimap, canvas controls) is
    tolerated: after a fit view, which the frontend computes, not our layout."""
    from .browser import overlaps

    out: list[str] = []
    for n in view["nodes"]:
        where = f"node {n['id']} '{n['title']}' at {[round(v) for v in n['box']]}"
        left, top, right, bottom = n["box"]
        if not (0 <= left and right <= width and 0 <= top and bottom <= height):
            out.append(f"{where}: not entirely on screen")
        out += [f"{where} overlaps node {o['id']} '{o['title']}'" for o in view["nodes"]
                if o["id"] > n["id"] and overlaps(n["box"], o["box"])]
        covered = [c[:3] for c in n["covered"] if not (chrome_ok and c[3])]  # c[3]: the point is on that chrome
        if covered:
            out.append(f"{where}: covered at {covered}")
        text = n["note"]
        if text is not None and text.get("missing"):
            out.append(f"{where}: the note's text ({NOTE_TEXT}) is not in it")
        elif text is not None and text["first"].strip() != view["note_heading"]:
            out.append(f"{where}: the note's text starts {text['first'][:60]!r}, not its heading")
        elif text is not None and (text["content"] > text["shown"] + 1 or (text["last"] or 0) > bottom + 1):
            out.append(f"{where}: the note's text is cut ({text})")
        if n["gap"] is not None and n["gap"] > MAX_GAP:
            out.append(f"{where}: {n['gap']:.0f} units empty below its folded advanced inputs")
    if not any(n["note"] is not None for n in view["nodes"]):
        out.append("the note's node is not on the page")
    return out
