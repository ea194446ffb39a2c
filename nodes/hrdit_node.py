"""The "HRDiT Cascade" node."""

from __future__ import annotations

from comfy_api.latest import io

from .cascade import HrditSettings, latent_previews, run_cascade
from .cascade.hrdit_settings import NODE
from .inputs import cascade as rules
from .inputs import hrdit as own
from .inputs.ui_hints import advanced, aliases
from .inputs.widgets import STAGE_MODEL_UNUSED, flag, number, stage_list


class HrditCascade(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return io.Schema(
            node_id="DyPESEGA_HrditCascade",
            display_name=NODE,
            category="advanced/model/high resolution",
            **aliases("HRDiT", "SPA", "spatial position alignment", "HAP", "attention pruning", "HiFlow", "cascade",
                      "hires fix", "high-res fix", "2K", "training-free"),
            description=(
                "HRDiT (arXiv 2608.07003, ECCV 2026): HiFlow's cascade (a pass at the latent's size, then short "
                "stages at 2x and 4x that follow its predictions) with SPA, bundled positions averaged over sliding "
                "bundle mappings on a stage's first steps (restores structure above 2K), and HAP, attention pruned "
                "to each head's scope from the authors' plan (shortens the run; FlexAttention on CUDA, an exact "
                "masked attention elsewhere). Defaults are the official run's (FLUX.1-dev, 1024² -> 2048² -> "
                "4096²). SPA and HAP need FLUX.1 and ComfyUI's attention override. Connect a DyPE / SEGA-patched "
                "model to 'stage_model' to use it in the stages (SPA and HAP stay on it). docs/hrdit.md lists where "
                "it differs from the official code."
            ),
            inputs=[
                io.Model.Input("model", tooltip="The model of the base pass (and of the stages, patched there with "
                               "the official NTK + proportional attention, unless 'stage_model' is connected; SPA "
                               "and HAP act on the stages only)."),
                io.Conditioning.Input("positive", tooltip="The prompt, for the base pass and every stage. HAP counts "
                                      "the prompt's tokens as text: the official prompts are padded to 512 T5 tokens."),
                io.Conditioning.Input("negative", tooltip="The negative prompt, used when cfg > 1 (FLUX.1-dev: cfg 1, "
                                      "so a zeroed conditioning is enough)."),
                io.Vae.Input("vae", tooltip="The model's own VAE: decodes each stage's result and encodes it again "
                             "at the next size (checked against the model before sampling)."),
                io.Latent.Input("latent", tooltip="The base pass's latent: an empty latent at the trained size (from a "
                                "prompt) or an encoded image (from an image, with denoise < 1)."),
                number(io.Int, rules.SEED, "The base pass's noise; stage k uses seed + k (wrapping at the top of "
                        "the range) and a blur width drawn from seed + k - 1.", control_after_generate=True),
                number(io.Int, rules.STEPS, "Steps of the base schedule (official 30); every stage runs its last "
                        "'stage_steps'."),
                number(io.Float, rules.CFG, "Classifier-free guidance of every pass (1 = none, as FLUX.1-dev)."),
                number(io.Float, rules.DENOISE, "1: from a prompt. Below 1: the base pass runs the last steps x "
                        "denoise of the schedule on the input latent (img2img), and the stages follow that trajectory."),
                stage_list(rules.SCALES, "Stage sizes, x the input latent, growing (official 2, 4: 1024² -> 2048² "
                            "-> 4096²). Their count is the number of stages every other list follows.", folded=False),
                stage_list(own.HRDIT_STAGE_STEPS, "Steps per stage: the last N of the base schedule (official 17, "
                            "10)."),
                flag(own.SPA, "SPA on the stages' leading 'spa_steps' (official on: the first 3 steps at 2048²). "
                      "Needs FLUX.1."),
                flag(own.HAP, "HAP on every stage step (official on): each head attends within its scope from the "
                      "authors' plan; the rest is not computed (on CUDA). Needs FLUX.1."),
                stage_list(own.SPA_STEPS, "SPA's steps per stage: it is on for the stage's first N steps, at most "
                            "the stage's steps (official 3, 0)."),
                number(io.Int, own.GROUP_NUM, "SPA's bundles per axis: tokens are grouped so that each axis has at "
                        "most this many positions (official 80).", **advanced()),
                number(io.Int, own.GLOBAL_ANCHOR, "HAP: every N-th block of 64 image tokens stays visible to every "
                        "query (official 32); 0: none (block 0 still is, as in the official code).", **advanced()),
                stage_list(rules.STAGE_GUIDANCE, "Distilled guidance per stage for models with a guidance input "
                            "(FLUX.1 / Flux.2 dev; official 4.5, 6); 0 keeps the conditioning's. Ignored by others."),
                stage_list(rules.ALPHAS, "Structure alignment per stage: how far the low frequencies of x0 are "
                            "pulled to the previous stage's (official 1.0, 0.25); decays to 0 over the stage."),
                stage_list(rules.BETAS, "Acceleration alignment per stage: how far the velocity change follows "
                            "the previous stage's (official 0.5, 0.5); decays to 0 over the stage."),
                stage_list(rules.FILTER_RATIO, "Butterworth low-pass cutoff per stage, a fraction of the Nyquist "
                            "radius: what counts as structure (official 0.2)."),
                stage_list(own.HRDIT_NTK_FACTOR, f"Official stage model: theta x this on every RoPE axis (official "
                            f"4, 10). {STAGE_MODEL_UNUSED}"),
                flag(rules.PROPORTIONAL_ATTENTION, "Official stage model: softmax scale sqrt(log_T(N)/d), T the "
                      f"trained tokens + 512 (official on). {STAGE_MODEL_UNUSED}", **advanced()),
                flag(own.HRDIT_SWIN, "Swin patchify: pad the latent by one pixel on even stage steps (official off: "
                      "the official HAP refuses it; here HAP follows each call's size).", **advanced()),
                number(io.Float, rules.SHARPEN, "Unsharp-mask amount on each upsampled image (official 1; the blur "
                        "width is seeded).", **advanced()),
                io.Combo.Input("schedule", options=list(rules.SCHEDULE.options), default=rules.SCHEDULE.initial,
                               tooltip="Base sigmas: the official code's (FLUX.1-dev's dynamic shift at the base "
                               "size: the run script's use_dynamic_shifting = False is never read), the MODEL's own "
                               "shift, or a static shift 3. docs/hrdit.md.", **advanced()),
                io.Model.Input("stage_model", optional=True,
                               tooltip="Optional: the model for the stages (DyPE / SEGA / DyPE -> SEGA patched); its "
                               "positions and temperatures replace the official NTK + proportional attention. SPA's "
                               "bundled positions replace its positions on SPA steps; its temperatures stay."),
            ],
            outputs=[
                io.Latent.Output(display_name="latent", tooltip="The last stage's latent (final size)."),
                io.Latent.Output(display_name="base", tooltip="The base pass's latent (input size)."),
            ],
        )

    @classmethod
    def execute(cls, model, positive, negative, vae, latent, seed: int, steps: int, cfg: float, denoise: float,
                scales: str, stage_steps: str, spa: bool, hap: bool, spa_steps: str, group_num: int,
                global_anchor: int, stage_guidance: str, alphas: str, betas: str, filter_ratio: str,
                ntk_factor: str, proportional_attention: bool, swin: bool, sharpen: float, schedule: str,
                stage_model=None) -> io.NodeOutput:
        settings = HrditSettings(
            steps=steps, denoise=denoise, cfg=cfg, scales=scales, stage_steps=stage_steps,
            stage_guidance=stage_guidance, alphas=alphas, betas=betas, filter_ratio=filter_ratio,
            ntk_factor=ntk_factor, proportional_attention=proportional_attention, swin=swin, sharpen=sharpen,
            schedule=schedule, spa=spa, hap=hap, spa_steps=spa_steps, group_num=group_num,
            global_anchor=global_anchor)
        result = run_cascade(model, positive, negative, vae, latent, seed, settings, stage_model=stage_model,
                             disable_pbar=False, callbacks=latent_previews)
        return io.NodeOutput(result.latent, result.stages[0])
