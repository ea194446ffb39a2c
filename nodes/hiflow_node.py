"""The "HiFlow Cascade" node."""

from __future__ import annotations

from comfy_api.latest import io

from .hiflow import HiFlowSettings, run_cascade
from .hiflow.schedule import OFFICIAL as OFFICIAL_SCHEDULE
from .hiflow.schedule import SCHEDULES
from .hiflow.settings import OFFICIAL


def _preview_callback(model, steps: int):
    import latent_preview

    return latent_preview.prepare_callback(model, steps)


class HiFlowCascade(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return io.Schema(
            node_id="DyPESEGA_HiFlowCascade",
            display_name="HiFlow Cascade",
            category="advanced/model/high resolution",
            description=(
                "HiFlow (NeurIPS 2025): samples at the latent's size first, then runs short stages at larger sizes "
                "(default 2x and 4x) that follow the first pass's own x0 predictions step by step (low frequencies "
                "and velocity changes). About 0.42x the FLOPs of one pass at the final size (bench). Defaults are the "
                "official code's (FLUX.1-dev, 1024² -> 4096²). From a prompt: an empty latent at the trained size, "
                "denoise 1. From an image: encode it at a low size and set denoise < 1. Connect a DyPE / SEGA-"
                "patched model to 'stage_model' to use it in the stages instead of the official NTK + proportional "
                "attention. docs/hiflow.md lists where it differs from the official code."
            ),
            inputs=[
                io.Model.Input("model", tooltip="The model of the base pass (and of the stages, patched there with "
                               "the official NTK + proportional attention, unless 'stage_model' is connected)."),
                io.Conditioning.Input("positive"),
                io.Conditioning.Input("negative"),
                io.Vae.Input("vae", tooltip="Decodes each stage's result and encodes it again at the next size."),
                io.Latent.Input("latent", tooltip="The base pass's latent: an empty latent at the trained size (from a "
                                "prompt) or an encoded image (from an image, with denoise < 1)."),
                io.Int.Input("seed", default=0, min=0, max=0xFFFFFFFFFFFFFFFF, control_after_generate=True),
                io.Int.Input("steps", default=30, min=2, max=200,
                             tooltip="Steps of the base schedule; every stage runs its last 'stage_steps'."),
                io.Float.Input("cfg", default=1.0, min=0.0, max=30.0, step=0.1,
                               tooltip="Classifier-free guidance of every pass (1 = none, as FLUX.1-dev)."),
                io.Float.Input("denoise", default=1.0, min=0.01, max=1.0, step=0.01,
                               tooltip="1: from a prompt. Below 1: the base pass runs the last steps x denoise of the "
                               "schedule on the input latent (img2img), and the stages follow that trajectory."),
                io.String.Input("scales", default=OFFICIAL["scales"],
                                tooltip="Stage sizes, x the input latent (official: 2, 4 for 1024² -> 2048² -> 4096²)."),
                io.String.Input("stage_steps", default=OFFICIAL["stage_steps"],
                                tooltip="Steps per stage: the last N of the base schedule (official 16, 10)."),
                io.String.Input("stage_guidance", default=OFFICIAL["stage_guidance"],
                                tooltip="Distilled guidance per stage for models with a guidance input (FLUX.1 / "
                                "Flux.2 dev; official 4.5, 6); 0 keeps the conditioning's. Ignored by others."),
                io.String.Input("alphas", default=OFFICIAL["alphas"],
                                tooltip="Structure alignment per stage (low frequencies of x0), decaying to 0."),
                io.String.Input("betas", default=OFFICIAL["betas"],
                                tooltip="Acceleration alignment per stage (velocity change), decaying to 0."),
                io.String.Input("filter_ratio", default=OFFICIAL["filter_ratio"],
                                tooltip="Butterworth low-pass cutoff per stage (official 0.2)."),
                io.String.Input("ntk_factor", default=OFFICIAL["ntk_factor"],
                                tooltip="Official stage model: theta x this on every RoPE axis (official 10). "
                                "Unused when 'stage_model' is connected."),
                io.Boolean.Input("proportional_attention", default=True,
                                 tooltip="Official stage model: softmax scale sqrt(log_T(N)/d), T the trained tokens "
                                 "+ 512. Unused when 'stage_model' is connected."),
                io.Boolean.Input("swin", default=True,
                                 tooltip="Swin patchify: pad the latent by one pixel on even stage steps (official on)."),
                io.Float.Input("sharpen", default=1.0, min=0.0, max=4.0, step=0.05,
                               tooltip="Unsharp-mask amount on each upsampled image (official 1; seeded blur sigma)."),
                io.Model.Input("stage_model", optional=True,
                               tooltip="Optional: the model for the stages (DyPE / SEGA / DyPE -> SEGA patched); its "
                               "positions and temperatures replace the official NTK + proportional attention."),
                # appended last (optional) so graphs saved before it load unchanged
                io.Combo.Input("schedule", options=list(SCHEDULES), default=OFFICIAL_SCHEDULE, optional=True,
                               tooltip="Base sigmas: the official code's (FLUX.1-dev's dynamic shift at the base "
                               "size; the model's own shift for other families), the MODEL's own shift, or a static "
                               "shift 3 (what the official run_hiflow.py meant to switch to). docs/hiflow.md."),
            ],
            outputs=[
                io.Latent.Output(display_name="latent", tooltip="The last stage's latent (final size)."),
                io.Latent.Output(display_name="base", tooltip="The base pass's latent (input size)."),
            ],
        )

    @classmethod
    def execute(cls, model, positive, negative, vae, latent, seed: int, steps: int, cfg: float, denoise: float,
                scales: str, stage_steps: str, stage_guidance: str, alphas: str, betas: str, filter_ratio: str,
                ntk_factor: str, proportional_attention: bool, swin: bool, sharpen: float,
                stage_model=None, schedule: str = OFFICIAL_SCHEDULE) -> io.NodeOutput:
        settings = HiFlowSettings.from_text(
            steps=steps, denoise=denoise, cfg=cfg, scales=scales, stage_steps=stage_steps,
            stage_guidance=stage_guidance, alphas=alphas, betas=betas, filter_ratio=filter_ratio,
            ntk_factor=ntk_factor, proportional_attention=proportional_attention, swin=swin, sharpen=sharpen,
            schedule=schedule)
        result = run_cascade(model, positive, negative, vae, latent, seed, settings, stage_model=stage_model,
                             disable_pbar=False, callbacks=_preview_callback)
        return io.NodeOutput(result.latent, result.stages[0])
