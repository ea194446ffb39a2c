"""Inputs that more than one node shows (one definition, the same widget on each): the ``variant`` combo (DyPE Patch
Model, SEGA Attention), the SEGA ``recipe`` choices (SEGA Attention, DyPE Schedule Preview) and the numeric inputs'
rules (ranges.py), which the widgets show and the nodes apply to values from Python."""
