"""HRDiT Cascade's own inputs (one definition each; the inputs it shares with HiFlow are nodes/inputs/cascade.py's).
Defaults are the official run's (zylwithxy/HRDiT e4aa8c6: inference.py and configs/pipeline.json; FLUX.1-dev,
1024² -> 2048² -> 4096²); docs/hrdit.md cites each line.
"""

from __future__ import annotations

from .cascade import ALPHAS, BETAS, FILTER_RATIO, NTK_FACTOR, SCALES, STAGE_GUIDANCE, STAGE_STEPS
from .rules import Flag, NumberRange, StageList

HRDIT_STAGE_STEPS = StageList(STAGE_STEPS.entry, "17, 10")  # configs/pipeline.json num_inference_steps_highres
HRDIT_NTK_FACTOR = StageList(NTK_FACTOR.entry, "4, 10")  # configs/pipeline.json ntk_factor
#: The stage's leading steps with SPA (inference.py --spa_steps 3 0: spa_step_ranges [0, s]); at most its steps.
SPA_STEPS = StageList(NumberRange("spa_steps", 0, 200, 1, integer=True), "3, 0")
SPA = Flag("spa")
HAP = Flag("hap")
HRDIT_SWIN = Flag("swin", default=False)  # inference.py swin_pachify=False (HAP asserts it off)
#: Bundles per axis (inference.py --group_num 80); 2 is the fewest that slide, 1024 bundles 16384 px by 16 px tokens.
GROUP_NUM = NumberRange("group_num", 2, 1024, 1, default=80, integer=True)
#: Every n-th 64-token block stays visible to every query (inference.py --global_anchor 32); 0: no anchor.
GLOBAL_ANCHOR = NumberRange("global_anchor", 0, 4096, 1, default=32, integer=True)

HRDIT_NUMBERS = (GROUP_NUM, GLOBAL_ANCHOR)
HRDIT_FLAGS = (SPA, HAP)
HRDIT_LISTS = (SCALES, HRDIT_STAGE_STEPS, SPA_STEPS, STAGE_GUIDANCE, ALPHAS, BETAS, FILTER_RATIO, HRDIT_NTK_FACTOR)
