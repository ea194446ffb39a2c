"""The "I-Max Cascade" node."""

from __future__ import annotations

from comfy_api.latest import io

from .cascade import ImaxSettings, latent_previews, run_cascade
from .cascade.imax_settings import NODE
from .inputs import cascade as rules
from .inputs.ui_hints import advanced, aliases
from .inputs.widgets import STAGE_MODEL_UNUSED, flag, number, stage_list


class ImaxCascade(io.ComfyNode):
    @classmethod
    def define_schema(cls) -> io.Schema:
        return io.Schema(
            node_id="DyPESEGA_ImaxCascade",
            display_name=NODE,
            category="advanced/model/high resolution",
            **aliases("I-Max", "IMax", "projected flow", "cascade", "hires fix", "high-res fix", "2K",
                      "training-free", "resolution extrapolation"),
            description=(
                "I-Max (arXiv 2410.07536): samples at the latent's size first, then samples the larger size (default "
                "4x) from noise with its own schedule, pulling the low frequencies of each step's velocity toward "
                "the first result, upsampled (the projected flow). Defaults are the official README's (FLUX.1-dev, "
                "1024² -> 4096²): NTK x 10 with its clip, proportional attention, text duplication, swin patchify. "
                "From a prompt: an empty latent at the trained size, denoise 1. From an image: encode it at a low "
                "size and set denoise < 1. Connect a DyPE / SEGA-patched model to 'stage_model' to use it in the "
                "stages instead. docs/imax.md lists where it differs from the official code."
            ),
            inputs=[
                io.Model.Input("model", tooltip="The model of the base pass (and of the stages, patched there with "
                               "I-Max's NTK, proportional attention and text duplication, unless 'stage_model' is "
                               "connected)."),
                io.Conditioning.Input("positive", tooltip="The prompt, for the base pass and every stage (the base "
                                      "pass keeps its own guidance: FluxGuidance 3.5 upstream, official)."),
                io.Conditioning.Input("negative", tooltip="The negative prompt, used when cfg > 1 (FLUX.1-dev: cfg 1, "
                                      "so a zeroed conditioning is enough)."),
                io.Vae.Input("vae", tooltip="The model's own VAE: decodes the base result and encodes it again at "
                             "the stage's size, as the stage's guide (checked against the model before sampling)."),
                io.Latent.Input("latent", tooltip="The base pass's latent: an empty latent at the trained size (from a "
                                "prompt) or an encoded image (from an image, with denoise < 1)."),
                number(io.Int, rules.SEED, "The base pass's noise; stage k samples from the noise of seed + k "
                        "(wrapping at the top of the range).", control_after_generate=True),
                number(io.Int, rules.STEPS, "Steps of the base pass (official 30)."),
                number(io.Float, rules.CFG, "Classifier-free guidance of every pass (1 = none, as FLUX.1-dev)."),
                number(io.Float, rules.DENOISE, "1: from a prompt. Below 1: the base pass runs the last steps x "
                        "denoise of its schedule on the input latent (img2img); the stages still start from noise."),
                stage_list(rules.IMAX_SCALES, "Stage sizes, x the input latent, growing (official 4: 1024² -> "
                            "4096²). Their count is the number of stages every other list follows.", folded=False),
                stage_list(rules.IMAX_STAGE_STEPS, "Steps per stage, each its own schedule from noise (official "
                            "30)."),
                stage_list(rules.IMAX_STAGE_GUIDANCE, "Distilled guidance per stage for models with a guidance "
                            "input (FLUX.1 / Flux.2 dev; official 7); 0 keeps the conditioning's. Ignored by others."),
                number(io.Float, rules.BASE_SHIFT, "Static time shift of the base pass (official 3); 0 uses the "
                        "MODEL's own shift.", **advanced()),
                stage_list(rules.STAGE_SHIFT, "Static time shift per stage (official 6: more steps at high "
                            "noise); 0 uses the MODEL's own shift."),
                stage_list(rules.IMAX_NTK_FACTOR, f"Official stage model: NTK factor on every RoPE axis, clipped "
                            f"to position interpolation on the low-frequency pairs (official 10). {STAGE_MODEL_UNUSED}"),
                flag(rules.PROPORTIONAL_ATTENTION, "Official stage model: softmax scale sqrt(log_T(N)/d), T the "
                      f"trained tokens + 512 (official on). {STAGE_MODEL_UNUSED}", **advanced()),
                flag(rules.TEXT_DUPLICATION, "Official stage model: the prompt repeated once per trained-size "
                      f"tile of the stage, each copy's positions moved to its tile (official on; FLUX.1). "
                      f"{STAGE_MODEL_UNUSED}", **advanced()),
                flag(rules.SWIN, "Swin patchify: pad the latent and the guide by one pixel on even stage steps "
                      "(official on).", **advanced()),
                io.Combo.Input("guidance_schedule", options=list(rules.GUIDANCE_SCHEDULE.options),
                               default=rules.GUIDANCE_SCHEDULE.initial, tooltip="How the projected flow pulls each "
                               "step: cosine_decay (official README: the low frequencies, weight falling from 1 to 0), "
                               "cosine_shift (all frequencies early, the low ones late), constant (the low ones fully), "
                               "disable (none).", **advanced()),
                number(io.Int, rules.WAVELET_LEVEL, "Haar levels of the low-frequency split (official 1: 2 x 2 "
                        "latent pixels); each level halves what counts as low.", **advanced()),
                io.Model.Input("stage_model", optional=True,
                               tooltip="Optional: the model for the stages (DyPE / SEGA / DyPE -> SEGA patched); its "
                               "positions and temperatures replace the official NTK, proportional attention and text "
                               "duplication."),
            ],
            outputs=[
                io.Latent.Output(display_name="latent", tooltip="The last stage's latent (final size)."),
                io.Latent.Output(display_name="base", tooltip="The base pass's latent (input size): the guide."),
            ],
        )

    @classmethod
    def execute(cls, model, positive, negative, vae, latent, seed: int, steps: int, cfg: float, denoise: float,
                scales: str, stage_steps: str, stage_guidance: str, base_shift: float, stage_shift: str,
                ntk_factor: str, proportional_attention: bool, text_duplication: bool, swin: bool,
                guidance_schedule: str, wavelet_level: int, stage_model=None) -> io.NodeOutput:
        settings = ImaxSettings(
            steps=steps, denoise=denoise, cfg=cfg, scales=scales, stage_steps=stage_steps,
            stage_guidance=stage_guidance, base_shift=base_shift, stage_shift=stage_shift, ntk_factor=ntk_factor,
            proportional_attention=proportional_attention, text_duplication=text_duplication, swin=swin,
            guidance_schedule=guidance_schedule, wavelet_level=wavelet_level)
        result = run_cascade(model, positive, negative, vae, latent, seed, settings, stage_model=stage_model,
                             disable_pbar=False, callbacks=latent_previews)
        return io.NodeOutput(result.latent, result.stages[0])
