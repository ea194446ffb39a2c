"""One definition per input of the guided cascades (HiFlow Cascade, I-Max Cascade): the nodes show them, their
settings (nodes/cascade/settings.py, imax_settings.py) apply them once to every value, from the widget, Python or an
API prompt.

The inputs every cascade has (seed, steps, cfg, denoise, the stage sizes and steps) come first; a method's own
inputs follow under its name. A per-stage list is a ``StageList``: text such as "2, 4", one entry per stage; a
method whose official defaults differ keeps the entry's rule under its own default. HiFlow's defaults are its
official code's (Bujiazi/HiFlow run_hiflow.py at da351a8: FLUX.1-dev, 1024² -> 2048² -> 4096²), I-Max's its
README's call (PRIS-CV/I-Max README.md at 3b38c11: FLUX.1-dev, 1024² -> 4096²).
"""

from __future__ import annotations

from ...spectral.imax import GUIDANCE_SCHEDULES
from .rules import Choice, Flag, NumberRange, StageList

# Shared by every cascade.
SEED = NumberRange("seed", 0, 0xFFFFFFFFFFFFFFFF, 1, default=0, integer=True)  # ComfyUI's seed widget's range
STEPS = NumberRange("steps", 2, 200, 1, default=30, integer=True)
CFG = NumberRange("cfg", 0.0, 30.0, 0.1, default=1.0)
DENOISE = NumberRange("denoise", 0.01, 1.0, 0.01, default=1.0)
#: Stage sizes, x the input latent: above 1 (each must also exceed the one before: the settings' rule); 16 takes a
#: 1024² base to 16384².
SCALES = StageList(NumberRange("scales", 1.0, 16.0, 0.5, above=True), "2, 4")
STAGE_STEPS = StageList(NumberRange("stage_steps", 1, 200, 1, integer=True), "16, 10")  # at most the base steps run
#: Distilled guidance per stage (FluxGuidance's range); 0 keeps the conditioning's own.
STAGE_GUIDANCE = StageList(NumberRange("stage_guidance", 0.0, 100.0, 0.1), "4.5, 6")
SHARPEN = NumberRange("sharpen", 0.0, 4.0, 0.05, default=1.0)

# HiFlow's own.
#: The alignment weights interpolate between the stage's own prediction (0) and the reference's (1).
ALPHAS = StageList(NumberRange("alphas", 0.0, 1.0, 0.05), "1.0, 0.25")
BETAS = StageList(NumberRange("betas", 0.0, 1.0, 0.05), "0.5, 0.5")
#: The Butterworth cutoff as a fraction of the Nyquist radius: 0 would remove everything (no alignment), above 1
#: the mask passes every frequency along the axes.
FILTER_RATIO = StageList(NumberRange("filter_ratio", 0.0, 1.0, 0.05, above=True), "0.2, 0.2")
#: theta x this on every RoPE axis: positive; 1000 keeps FLUX's theta (10^4) finite far beyond any use (10^7).
NTK_FACTOR = StageList(NumberRange("ntk_factor", 0.0, 1000.0, 1.0, above=True), "10, 10")
PROPORTIONAL_ATTENTION = Flag("proportional_attention")
SWIN = Flag("swin")

OFFICIAL_SHIFT = "official HiFlow (FLUX.1-dev dynamic shift)"
MODEL_SHIFT = "model's own shift"
STATIC_SHIFT_3 = "static shift 3 (dynamic shift off)"
SCHEDULE = Choice("schedule", (OFFICIAL_SHIFT, MODEL_SHIFT, STATIC_SHIFT_3))

HIFLOW_LISTS = (SCALES, STAGE_STEPS, STAGE_GUIDANCE, ALPHAS, BETAS, FILTER_RATIO, NTK_FACTOR)

# I-Max's own (the README's call: one stage at 4x, 30 + 30 steps, guidance 3.5 then 7, time shifts 3 then 6).
IMAX_SCALES = StageList(SCALES.entry, "4")
IMAX_STAGE_STEPS = StageList(STAGE_STEPS.entry, "30")  # its own schedule: any count
IMAX_STAGE_GUIDANCE = StageList(STAGE_GUIDANCE.entry, "7")
#: The static time shift of the base pass and of each stage (diffusers' shift·t / (1 + (shift - 1)·t)); 0 samples
#: with the MODEL's own shift instead.
BASE_SHIFT = NumberRange("base_shift", 0.0, 100.0, 0.1, default=3.0)
STAGE_SHIFT = StageList(NumberRange("stage_shift", 0.0, 100.0, 0.1), "6")
IMAX_NTK_FACTOR = StageList(NTK_FACTOR.entry, "10")
TEXT_DUPLICATION = Flag("text_duplication")
GUIDANCE_SCHEDULE = Choice("guidance_schedule", GUIDANCE_SCHEDULES)
#: Haar levels of the low-frequency split: each halves the frequencies kept; 10 already averages 1024-pixel blocks.
WAVELET_LEVEL = NumberRange("wavelet_level", 1, 10, 1, default=1, integer=True)

IMAX_LISTS = (IMAX_SCALES, IMAX_STAGE_STEPS, IMAX_STAGE_GUIDANCE, STAGE_SHIFT, IMAX_NTK_FACTOR)
