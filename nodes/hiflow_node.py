"""The "HiFlow Cascade" node."""

from __future__ import annotations

from comfy_api.latest import io

from .cascade import HiFlowSettings, latent_previews, run_cascade
from .cascade.settings import NODE
from .inputs import cascade as rules
from .inputs.ui_hints import advanced, aliases
from .inputs.widgets import STAGE_MODEL_UNUSED, number, stage_list


class HiFlowCascade(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return io.Schema(
            node_id="DyPESEGA_HiFlowCascade",
            display_name=NODE,
            category="advanced/model/high resolution",
            **aliases("HiFlow", "cascade", "hires fix", "high-res fix", "upscale image", "img2img upscale",
                      "flow-aligned guidance", "2K", "training-free"),
            description=(
                "HiFlow (NeurIPS 2025): samples at the latent's size first, then runs short stages at larger sizes "
                "(default 2x and 4x) that follow the first pass's own x0 predictions step by step (low frequencies "
                "and velocity changes). About 0.41x the model FLOPs of one pass at the final size (FLUX.1-dev's "
                "dimensions; BENCHMARKS.md). Defaults are the official code's (FLUX.1-dev, 1024² -> 4096²). From a "
                "prompt: an empty latent at the trained size, denoise 1. From an image: encode it at a low size and "
                "set denoise < 1. Connect a DyPE / SEGA-patched model to 'stage_model' to use it in the stages "
                "instead of the official NTK + proportional attention. docs/hiflow.md lists where it differs from "
                "the official code."
            ),
            inputs=[
                io.Model.Input("model", tooltip="The model of the base pass (and of the stages, patched there with "
                               "the official NTK + proportional attention, unless 'stage_model' is connected)."),
                io.Conditioning.Input("positive", tooltip="The prompt, for the base pass and every stage (each stage "
                                      "sets its own distilled guidance where the model has one)."),
                io.Conditioning.Input("negative", tooltip="The negative prompt, used when cfg > 1 (FLUX.1-dev: cfg 1, "
                                      "so a zeroed conditioning is enough)."),
                io.Vae.Input("vae", tooltip="The model's own VAE: decodes each stage's result and encodes it again "
                             "at the next size (checked against the model before sampling)."),
                io.Latent.Input("latent", tooltip="The base pass's latent: an empty latent at the trained size (from a "
                                "prompt) or an encoded image (from an image, with denoise < 1)."),
                number(io.Int, rules.SEED, "The base pass's noise; stage k uses seed + k (wrapping at the top of "
                        "the range) and a blur width drawn from seed + k - 1.", control_after_generate=True),
                number(io.Int, rules.STEPS, "Steps of the base schedule; every stage runs its last 'stage_steps'."),
                number(io.Float, rules.CFG, "Classifier-free guidance of every pass (1 = none, as FLUX.1-dev)."),
                number(io.Float, rules.DENOISE, "1: from a prompt. Below 1: the base pass runs the last steps x "
                        "denoise of the schedule on the input latent (img2img), and the stages follow that trajectory."),
                stage_list(rules.SCALES, "Stage sizes, x the input latent, growing (official 2, 4: 1024² -> 2048² "
                            "-> 4096²). Their count is the number of stages every other list follows.", folded=False),
                stage_list(rules.STAGE_STEPS, "Steps per stage: the last N of the base schedule (official 16, 10)."),
                stage_list(rules.STAGE_GUIDANCE, "Distilled guidance per stage for models with a guidance input "
                            "(FLUX.1 / Flux.2 dev; official 4.5, 6); 0 keeps the conditioning's. Ignored by others."),
                stage_list(rules.ALPHAS, "Structure alignment per stage: how far the low frequencies of x0 are "
                            "pulled to the previous stage's (official 1.0, 0.25); decays to 0 over the stage."),
                stage_list(rules.BETAS, "Acceleration alignment per stage: how far the velocity change follows "
                            "the previous stage's (official 0.5, 0.5); decays to 0 over the stage."),
                stage_list(rules.FILTER_RATIO, "Butterworth low-pass cutoff per stage, a fraction of the Nyquist "
                            "radius: what counts as structure (official 0.2)."),
                stage_list(rules.NTK_FACTOR, f"Official stage model: theta x this on every RoPE axis (official "
                            f"10). {STAGE_MODEL_UNUSED}"),
                io.Boolean.Input("proportional_attention", default=rules.PROPORTIONAL_ATTENTION.default,
                                 tooltip="Official stage model: softmax scale sqrt(log_T(N)/d), T the trained tokens "
                                 f"+ 512. {STAGE_MODEL_UNUSED}", **advanced()),
                io.Boolean.Input("swin", default=rules.SWIN.default, tooltip="Swin patchify: pad the latent by one "
                                 "pixel on even stage steps (official on).", **advanced()),
                number(io.Float, rules.SHARPEN, "Unsharp-mask amount on each upsampled image (official 1; the blur "
                        "width is seeded).", **advanced()),
                io.Model.Input("stage_model", optional=True,
                               tooltip="Optional: the model for the stages (DyPE / SEGA / DyPE -> SEGA patched); its "
                               "positions and temperatures replace the official NTK + proportional attention."),
                # appended last (optional) so graphs saved before it load unchanged
                io.Combo.Input("schedule", options=list(rules.SCHEDULE.options), default=rules.SCHEDULE.initial,
                               optional=True, tooltip="Base sigmas: the official code's (FLUX.1-dev's dynamic shift "
                               "at the base size; the model's own shift for other families), the MODEL's own shift, "
                               "or a static shift 3 (what the official run_hiflow.py meant to switch to). "
                               "docs/hiflow.md.", **advanced()),
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
                stage_model=None, schedule: str = rules.SCHEDULE.initial) -> io.NodeOutput:
        settings = HiFlowSettings(
            steps=steps, denoise=denoise, cfg=cfg, scales=scales, stage_steps=stage_steps,
            stage_guidance=stage_guidance, alphas=alphas, betas=betas, filter_ratio=filter_ratio,
            ntk_factor=ntk_factor, proportional_attention=proportional_attention, swin=swin, sharpen=sharpen,
            schedule=schedule)
        result = run_cascade(model, positive, negative, vae, latent, seed, settings, stage_model=stage_model,
                             disable_pbar=False, callbacks=latent_previews)
        return io.NodeOutput(result.latent, result.stages[0])
