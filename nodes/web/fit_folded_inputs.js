// Nodes 2.0 on a host with advanced inputs (ComfyUI 0.30 and newer; frontends 1.47 and later): opening a workflow,
// the frontend grows every node to its classic size, which counts the inputs folded under "Show advanced inputs",
// so this pack's nodes (SEGA Attention most: 9 of its 12 inputs are advanced) keep a tall empty area below what
// they show, whatever size the file saves. Once a graph is configured, give each of this pack's nodes whose
// advanced inputs are folded the least height: the renderer grows it to what it shows, and again when the user
// unfolds them. The classic renderer is left alone, and grows the node back when it opens the workflow.
import { app } from "../../scripts/app.js";

const PACK_NODE_PREFIX = "DyPESEGA_";

function foldsInputs(node) {
  return String(node.type).startsWith(PACK_NODE_PREFIX) && !node.showAdvanced
    && (node.widgets ?? []).some((w) => w.options?.advanced);
}

app.registerExtension({
  name: "comfyui-dype-sega.FitFoldedInputs",
  afterConfigureGraph() {
    if (!app.extensionManager?.setting?.get("Comfy.VueNodes.Enabled")) return;
    requestAnimationFrame(() => {
      for (const node of app.graph?.nodes ?? []) {
        if (foldsInputs(node)) node.setSize([node.size[0], 1]);
      }
    });
  },
});
