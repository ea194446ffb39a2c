// Nodes 2.0 on frontend 1.32 (ComfyUI 0.3.75): opening a workflow saved by the classic renderer, the frontend
// scales its geometry 1.2x ("Auto-scale layout") and then restores the view saved in the file over its own
// compensating zoom, so the graph runs off screen. For a graph with this pack's nodes that the frontend has just
// rescaled, fit the view once the nodes have their drawn sizes. Newer frontends keep the geometry: nothing happens.
import { app } from "../../scripts/app.js";

const PACK_NODE_PREFIX = "DyPESEGA_";
const SETTLE_FRAMES = 5; // frames without a size change before fitting (the DOM sizes nodes a frame or two late)
const MAX_FRAMES = 180; // about 3 s at 60 fps: fit anyway

let openedClassic = false;

function sizes() {
  return JSON.stringify((app.graph?.nodes ?? []).map((n) => [n.pos[0], n.pos[1], n.size[0], n.size[1]]));
}

function fitWhenSettled() {
  let last = sizes();
  let still = 0;
  let frames = 0;
  const step = () => {
    const now = sizes();
    still = now === last ? still + 1 : 0;
    last = now;
    frames += 1;
    if (still >= SETTLE_FRAMES || frames >= MAX_FRAMES) {
      app.extensionManager.command.execute("Comfy.Canvas.FitView");
    } else {
      requestAnimationFrame(step);
    }
  };
  requestAnimationFrame(step);
}

app.registerExtension({
  name: "comfyui-dype-sega.FitRescaledView",
  beforeConfigureGraph(data) {
    openedClassic = (data?.extra?.workflowRendererVersion ?? "LG") === "LG"
      && (data?.nodes ?? []).some((n) => String(n.type).startsWith(PACK_NODE_PREFIX));
  },
  afterConfigureGraph() {
    // The frontend marks a graph it has rescaled for Nodes 2.0 as "Vue".
    const rescaled = openedClassic && app.graph?.extra?.workflowRendererVersion === "Vue";
    openedClassic = false;
    if (rescaled) fitWhenSettled();
  },
});
