"""The real ComfyUI frontend in Debian's chromium, driven by Playwright (never a downloaded browser).

``session(tmp)`` starts one ComfyUI server (headless/server.py: the test host, this pack under custom_nodes/, the
frontend and template library the host pins) and yields a page at 1920×1080 with the app loaded. The helpers below
are what a user does (close a dialog, Workflow › Open, click a template card) and what we measure on screen (where
every node, title, badge and note line is drawn, and what covers it). Used by tests/test_browser.py and by
headless/note_heights.py, which measures the notes' rendered heights for the generator.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import host

from . import registry, server

logger = logging.getLogger(__name__)

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
VIEWPORT = {"width": 1920, "height": 1080}
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DIALOG = "[role=dialog], .p-dialog"  # frontend 1.32: PrimeVue dialogs; 1.47: its own, role=dialog
SETUP = "scripts/browser-setup.sh"


def missing() -> str | None:
    """Why the browser test cannot run here (what to install), or None."""
    if CHROMIUM is None:
        return ("chromium is not installed (Debian/Ubuntu: apt-get install -y chromium, or bash scripts/browser-setup.sh); "
                "the browser test drives the system chromium and never downloads one")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return f"chromium is installed but Playwright is not: bash {SETUP} (pip install -r .ci/requirements-browser.txt)"
    if server.installed_frontend() is None:
        return f"comfyui-frontend-package is not installed: bash {SETUP}"
    try:
        root = host.comfyui_root()
        server.frontend_root(root)
        server.templates_path(root)
    except (LookupError, RuntimeError) as exc:
        return str(exc)
    return None


class Session:
    """The page and what was started for it."""

    def __init__(self, page, srv: server.ComfyServer, frontend: str) -> None:
        self.page, self.server, self.frontend = page, srv, frontend


def _server(work_dir: Path) -> tuple[server.ComfyServer, str]:
    """The server for a session, not started, and which frontend it serves (e.g. "frontend 1.47.12 (pinned)")."""
    root = host.comfyui_root()
    front_end, which = server.frontend_root(root)
    templates, which_templates = server.templates_path(root)
    logger.info("frontend: %s; templates: %s", which, which_templates)
    return server.ComfyServer(work_dir, registry.MODEL_FILES, front_end, templates=templates), which


@contextmanager
def session(work_dir: Path, artifacts: Path | None = None) -> Iterator[Session]:
    """A ComfyUI server for the current test host and a chromium page on it, app loaded; both stopped on exit."""
    from playwright.sync_api import sync_playwright

    srv, which = _server(work_dir)
    with srv, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(srv.url)
            page.wait_for_function("window.app?.graph && window.app.extensionManager?.command", timeout=90_000)
            page.evaluate("() => document.fonts.ready")
            version = page.evaluate("() => window.__COMFYUI_FRONTEND_VERSION__ || null") or which.split()[1]
            yield Session(page, srv, version)
        finally:
            browser.close()
            if artifacts is not None:
                artifacts.mkdir(parents=True, exist_ok=True)
                (artifacts / "server.log").write_text(srv.log(), encoding="utf-8")


def visible_dialogs(page) -> list[str]:
    return page.evaluate(f"""() => Array.from(document.querySelectorAll('{DIALOG}'))
        .filter(d => d.offsetParent !== null || d.getClientRects().length)
        .map(d => d.innerText.slice(0, 300))""")


def close_dialogs(page) -> None:
    """Close whatever dialog is open with its own close button (1.47: "Close dialog"; 1.32: the top-right button),
    as a user would; Escape does not close the template browser on 1.32."""
    for _ in range(5):
        if not visible_dialogs(page):
            return
        page.evaluate(f"""() => {{
            const d = Array.from(document.querySelectorAll('{DIALOG}')).find(d => d.getClientRects().length);
            const shown = Array.from(d.querySelectorAll('button')).filter(b => b.getBoundingClientRect().width > 0);
            const close = d.querySelector('[aria-label="Close dialog"], [aria-label="Close"]') || shown.sort((a, b) =>
                (a.getBoundingClientRect().top - b.getBoundingClientRect().top) ||
                (b.getBoundingClientRect().right - a.getBoundingClientRect().right))[0];
            close.click();
        }}""")
        page.wait_for_timeout(500)
    raise AssertionError(f"a dialog does not close: {visible_dialogs(page)}")


# The template cards shown: name, title and where.
CARDS = """() => Array.from(document.querySelectorAll('[data-testid^="template-workflow-"]'))
    .filter(c => c.getClientRects().length)
    .map(c => ({name: c.getAttribute('data-testid').slice('template-workflow-'.length),
                title: c.querySelector('h3')?.innerText, top: c.getBoundingClientRect().top,
                left: c.getBoundingClientRect().left}))"""


def open_templates(page):
    """The template browser on our pack's section (a first start with the template library opens it by itself)."""
    if not visible_dialogs(page):
        page.evaluate("app.extensionManager.command.execute('Comfy.BrowseTemplates')")
        page.wait_for_function(f"() => document.querySelector('{DIALOG}')", timeout=30_000)
    dialog = page.locator(DIALOG).first
    dialog.get_by_text("comfyui-dype-sega", exact=True).first.click()
    page.wait_for_function(f"() => ({CARDS})().length > 0", timeout=30_000)
    return dialog


CARD_TRIES = 5


def click_card(page, stem: str) -> None:
    """Scroll to the template card of workflow ``stem`` and click it. The grid renders anew after a search's debounce
    or a reset, which can detach the card found first (seen on a loaded machine): a detached card is looked up again,
    a bounded number of times; any other error is raised."""
    from playwright.sync_api import Error as PlaywrightError

    card = page.locator(f'[data-testid="template-workflow-{stem}"]')
    for attempt in range(1, CARD_TRIES + 1):
        try:
            card.scroll_into_view_if_needed(timeout=15_000)
            page.wait_for_timeout(300)  # the grid settles: a click mid-render is lost
            card.click(no_wait_after=True, timeout=15_000)  # no_wait_after: 1.53 routes the page to the workflow
            return
        except PlaywrightError as error:
            if "not attached" not in str(error) or attempt == CARD_TRIES:
                raise
            logger.info("card %s re-rendered while being scrolled to (try %d): looking it up again", stem, attempt)
            page.wait_for_timeout(500)


def drawn(page) -> None:
    """Two animation frames: the canvas and the DOM widgets are drawn for the current graph."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def wait_for_graph(page, workflow: dict[str, Any]) -> None:
    ids = sorted(n["id"] for n in workflow["nodes"])
    page.wait_for_function("ids => JSON.stringify(app.graph.nodes.map(n => Number(n.id)).sort((a, b) => a - b)) === ids",
                           arg=json.dumps(ids, separators=(",", ":")), timeout=30_000)
    page.evaluate("() => document.fonts.ready")
    drawn(page)


def open_file(page, path: Path) -> None:
    """Workflow › Open: the command opens the file chooser; the user picks the file."""
    with page.expect_file_chooser() as chooser:
        page.evaluate("app.extensionManager.command.execute('Comfy.OpenWorkflow')")
    chooser.value.set_files(str(path))
    wait_for_graph(page, json.loads(path.read_text(encoding="utf-8")))


def load_graph(page, workflow: dict[str, Any], name: str) -> None:
    """Load a workflow that is not a file (the note measurement), as the frontend loads any graph."""
    page.evaluate("([wf, name]) => app.loadGraphData(wf, true, true, name)", [workflow, name])
    wait_for_graph(page, workflow)


# The note's markdown as the frontend renders it: the DOM widget's ProseMirror element (both frontends).
NOTE_TEXT = """() => {
  const n = app.graph.nodes.find(n => n.type === 'MarkdownNote');
  const box = n.widgets[0].element, text = box.querySelector('.ProseMirror') || box;
  return {content: text.scrollHeight, shown: text.clientHeight, node: n.size[1], width: n.size[0]};
}"""


def note_metrics(page) -> dict[str, float]:
    """content: the note text's full height; shown: the height it has; node: the node's; all in graph units
    (scroll and client heights are not affected by the canvas zoom, which is a CSS transform)."""
    return page.evaluate(NOTE_TEXT)


# Everything a user reads, where it is drawn on screen (CSS px), and what the browser has at points inside it: the
# canvas itself, or the note's own element. Anything else there (sidebar, tab bar, minimap, a toast) covers it.
# Badges: litegraph's LGraphNode.drawBadges draws them right-aligned above the title bar, 2 units apart.
ON_SCREEN = """() => {
  const canvas = app.canvas.canvas, ds = app.canvas.ds, th = LiteGraph.NODE_TITLE_HEIGHT, ctx = app.canvas.ctx;
  const rect = canvas.getBoundingClientRect();
  const screen = (x, y) => { const [sx, sy] = ds.convertOffsetToCanvas([x, y]); return [sx + rect.left, sy + rect.top]; };
  const out = {scale: ds.scale, offset: [ds.offset[0], ds.offset[1]], nodes: []};
  for (const n of app.graph.nodes) {
    const note = n.type === 'MarkdownNote';
    const [x0, y0] = screen(n.pos[0], n.pos[1] - th), [x1, y1] = screen(n.pos[0] + n.size[0], n.pos[1] + n.size[1]);
    const badges = [];
    const shown = (n.badges || []).map(b => typeof b === 'function' ? b() : b).filter(b => b && b.text);
    ctx.save();
    const widths = shown.map(b => b.getWidth(ctx));
    ctx.restore();
    let bx = n.size[0] - widths.reduce((a, w) => a + w + 2, 0);
    shown.forEach((b, i) => {
      const [l, t] = screen(n.pos[0] + bx, n.pos[1] - th - 2 - b.height);
      const [r, btm] = screen(n.pos[0] + bx + widths[i], n.pos[1] - th - 2);
      badges.push({text: b.text, box: [l, t, r, btm]});
      bx += widths[i] + 2;
    });
    const xs = [x0 + 4, (x0 + x1) / 2, x1 - 4], ys = [y0 + 4, y0 + th * ds.scale / 2, (y0 + y1) / 2, y1 - 4];
    const own = (n.widgets || []).map(w => w.element).filter(Boolean);  // DOM widgets: the note, text boxes
    const covered = [];
    for (const y of ys) for (const x of xs) {
      const e = document.elementFromPoint(x, y);
      if (!(e === canvas || own.some(o => o.contains(e))))
        covered.push([Math.round(x), Math.round(y), e ? (e.className?.baseVal ?? e.className ?? e.tagName).toString().slice(0, 60) : 'nothing']);
    }
    let note_text = null;
    if (note) {
      const box = own[0].querySelector('.ProseMirror') || own[0], r = box.getBoundingClientRect();
      const last = box.lastElementChild?.getBoundingClientRect();
      note_text = {content: box.scrollHeight, shown: box.clientHeight, box: [r.left, r.top, r.right, r.bottom],
                   last: last ? [last.left, last.top, last.right, last.bottom] : null};
    }
    out.nodes.push({id: Number(n.id), type: n.type, title: n.title, box: [x0, y0, x1, y1], badges, covered,
                    note: note_text,  // the values the node saves: 1.47's LoadImage preview widget is never saved
                    widgets: (n.widgets || []).filter(w => w.serialize !== false).map(w => w.value)});
  }
  return out;
}"""


def on_screen(page) -> dict[str, Any]:
    return page.evaluate(ON_SCREEN)


def overlaps(a: list[float], b: list[float], slack: float = 0.5) -> bool:
    """Whether two screen boxes [left, top, right, bottom] share more than ``slack`` px both ways."""
    return min(a[2], b[2]) - max(a[0], b[0]) > slack and min(a[3], b[3]) - max(a[1], b[1]) > slack


def layout_problems(view: dict[str, Any], viewport: dict[str, int] = VIEWPORT) -> list[str]:
    """What a user would see wrong in the opened graph: a node partly off screen or covered by the frontend's own
    chrome, two nodes (title bars included) overlapping, a badge drawn on another node, a note whose text does not
    fit (its last line cut off)."""
    problems: list[str] = []
    nodes = view["nodes"]
    for n in nodes:
        where = f"{n['type']} '{n['title']}' at {[round(v) for v in n['box']]}"
        left, top, right, bottom = n["box"]
        if not (0 <= left and right <= viewport["width"] and 0 <= top and bottom <= viewport["height"]):
            problems.append(f"{where}: not entirely on screen")
        if n["covered"]:
            problems.append(f"{where}: covered at {n['covered']}")
        for other in nodes:
            if other["id"] > n["id"] and overlaps(n["box"], other["box"]):
                problems.append(f"{where} overlaps {other['type']} '{other['title']}'")
            for badge in other["badges"] if other is not n else []:
                if overlaps(badge["box"], n["box"]):
                    problems.append(f"the badge '{badge['text']}' of {other['type']} sits on {where}")
        text = n["note"]
        if text is not None:
            if text["content"] > text["shown"] + 1:
                problems.append(f"{where}: note text needs {text['content']} units, shows {text['shown']}: "
                                f"its last {text['content'] - text['shown']} are cut off")
            if text["last"] is not None and text["last"][3] > min(text["box"][3], bottom) + 1:
                problems.append(f"{where}: the note's last paragraph ends at y {text['last'][3]:.0f}, below the note")
    return problems


def json_differences(got, want, where: str = "") -> list[str]:
    """Paths where two JSON values differ (1 == 1.0, as JSON has one number type)."""
    if isinstance(got, dict) and isinstance(want, dict):
        return [d for k in sorted(set(got) | set(want), key=str)
                for d in (json_differences(got[k], want[k], f"{where}.{k}") if k in got and k in want
                          else [f"{where}.{k}: {'only saved ' + json.dumps(got[k]) if k in got else 'only in file'}"])]
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want, strict=True)) for d in json_differences(g, w, f"{where}[{i}]")]
    return [] if got == want else [f"{where}: saved {json.dumps(got)[:120]}, file {json.dumps(want)[:120]}"]
