"""Run a shipped example workflow headless on the embedded ComfyUI host, with tiny random-weight stand-ins.

    .venv/bin/python scripts/demo.py [--workflow 04 | workflows/<name>.json] [--out out] [--side 256] [--steps 4]
    .venv/bin/python scripts/demo.py --list

What runs is the real graph of the example: our nodes, the stock text encoding, FluxGuidance, KSampler,
VAEDecodeTiled and SaveImage, on ComfyUI 0.3.75 in-process. Only the three loaders are swapped for tiny models built
from ComfyUI's own classes (tests/headless/tiny_pack) and the size is scaled down together with our nodes' trained
size, so DyPE/SEGA run at the same ratio as the real 4K workflow. The images show random-weight output, not a
picture: the demo proves the pipeline, not the quality (for that, load the workflow in ComfyUI with the real models).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
WORKFLOWS = ROOT / "workflows"
# The default is checked by tests/test_demo.py and run by .ci/run: a renamed workflow fails CI, not a newcomer.
DEFAULT_WORKFLOW = "04 DyPE + SEGA 4K 4096px FLUX.1-Krea-dev"
log = logging.getLogger("demo")


def write_schedule_preview(out_dir: Path, prompt: dict, family: str) -> Path:
    """Write the DyPE/SEGA schedule preview of the workflow's real (full-size) settings into ``out_dir``."""
    import host

    preview = host.pack_submodule("nodes.schedule_preview")
    rope = host.pack_submodule("rope")
    nodes = {node["class_type"]: node["inputs"] for node in prompt.values()}
    latent = nodes.get("EmptySD3LatentImage", {})
    dype = nodes.get("DyPESEGA_PatchModel", {})
    sampler = nodes.get("KSampler", {})
    schedule = rope.PositionSchedule(
        method=dype.get("method", "ntk" if dype == {} else "yarn"), dynamic=dype.get("dynamic", dype != {}),
        lambda_t=dype.get("lambda_t", 2.0), lambda_s=dype.get("lambda_s", 2.0),
        threshold_rule=dype.get("yarn_thresholds", "multiply"),
    )
    request = preview.PreviewRequest(
        family=family, width=int(latent.get("width", 4096)), height=int(latent.get("height", 4096)),
        steps=int(sampler.get("steps", 28)), schedule=schedule, base_px=float(dype.get("base_resolution", 0)),
        sega="DyPESEGA_SEGAAttention" in nodes,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "schedule_preview.png"
    preview.render(request).save(path)
    return path


def _describe(prompt: dict, tiny: dict, plan) -> list[str]:
    lines = [f"family: {plan.family}; size scaled by {plan.scale:.4f}"]
    for node_id, node in prompt.items():
        kind, real, small = node["class_type"], node["inputs"], tiny[node_id]["inputs"]
        if kind == "EmptySD3LatentImage":
            lines.append(f"latent: {real['width']}x{real['height']} -> {small['width']}x{small['height']} px")
        elif kind.startswith("DyPESEGA_"):
            shown = {k: v for k, v in small.items() if not isinstance(v, list)}
            lines.append(f"{kind}: {shown} (base_resolution {real['base_resolution']} in the workflow)")
        elif kind == "KSampler":
            lines.append(f"KSampler: seed {real['seed']}, {small['steps']} steps (workflow: {real['steps']}), "
                         f"cfg {real['cfg']}, {real['sampler_name']}/{real['scheduler']}")
        elif kind in ("UNETLoader", "DualCLIPLoader", "CLIPLoader", "VAELoader"):
            files = [v for k, v in real.items() if k.endswith("_name") or k.startswith("clip_name")]
            lines.append(f"{kind} {files} -> tiny stand-in {tiny[node_id]['class_type']}")
    return lines


def resolve_workflow(given: str) -> Path:
    """The workflow file ``given`` names: a path, a file name in workflows/ or its number ("04")."""
    path = Path(given)
    if path.is_file():
        return path.resolve()
    shipped = sorted(WORKFLOWS.glob("*.json"))
    matches = [p for p in shipped if p.stem == given or p.name == given or p.stem.split(" ", 1)[0] == given]
    if len(matches) == 1:
        return matches[0]
    raise SystemExit(f"demo: --workflow {given!r} is neither a file nor one shipped workflow "
                     f"(its number, e.g. 04, or its name); see --list")


def list_workflows() -> int:
    """Print every shipped workflow and whether this host can run it (video and image alike)."""
    from headless import registry, runner

    registry.boot()
    for path in sorted(WORKFLOWS.glob("*.json")):
        lacks = runner.host_lacks(runner.load_workflow(path))
        mark = "default" if path.stem == DEFAULT_WORKFLOW else ("needs a newer host: " + lacks if lacks else "")
        print(f"{path.stem}{'   (' + mark + ')' if mark else ''}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflow", default=DEFAULT_WORKFLOW,
                        help="a shipped workflow's number (04) or name, or a path to a UI-format workflow JSON")
    parser.add_argument("--list", action="store_true", help="list the shipped workflows and exit")
    parser.add_argument("--out", type=Path, default=ROOT / "out", help="where the PNGs go (default: out/)")
    parser.add_argument("--side", type=int, default=256, help="long side of the tiny image in px (default 256)")
    parser.add_argument("--steps", type=int, default=4, help="sampler steps for the tiny run (default 4)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.list:
        return list_workflows()
    workflow_path = resolve_workflow(args.workflow)

    from headless import registry, runner

    start = time.perf_counter()
    comfy = registry.boot()
    if comfy.pack_error:
        print(f"the pack did not load into ComfyUI: {comfy.pack_error}", file=sys.stderr)
        return 1
    workflow = runner.load_workflow(workflow_path)
    lacks = runner.host_lacks(workflow)
    if lacks:
        print(f"{workflow_path.name} cannot run on this ComfyUI: {lacks} (set COMFYUI_PATH to a newer one, e.g. "
              f".hosts/comfyui-0.30.0)", file=sys.stderr)
        return 1
    prompt = runner.to_api(workflow)
    checked = runner.validate(prompt)
    if not checked.ok:
        print(f"{workflow_path.name} fails ComfyUI validation: {checked.error} {checked.node_errors}", file=sys.stderr)
        return 1
    tiny, plan = runner.make_tiny(prompt, side=args.side, steps=args.steps)
    out_dir = args.out.resolve()
    result = runner.execute(tiny, out_dir)
    import comfyui_version  # top-level module of the ComfyUI tree, on sys.path after boot

    print(f"\nworkflow: {workflow_path} ({len(prompt)} API nodes, validated by ComfyUI "
          f"{comfyui_version.__version__})")
    for line in _describe(prompt, tiny, plan):
        print(f"  {line}")
    if not result.success:
        print(f"execution failed: {result.error()}", file=sys.stderr)
        return 1
    print(f"  schedule preview: {write_schedule_preview(out_dir, prompt, plan.family)}")
    for stats in result.stats:
        print(f"  decoded image {stats['shape']}, finite {stats['finite']}, mean {stats['mean']:.3f}")
    print(f"ran in {result.seconds:.1f} s (total {time.perf_counter() - start:.1f} s); output:")
    for image in result.images:
        print(f"  {image}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
