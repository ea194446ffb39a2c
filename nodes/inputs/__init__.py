"""Inputs that more than one node shows (one definition, the same widget on each): the ``variant`` combo (DyPE Patch
Model, SEGA Attention) and the SEGA ``recipe`` choices (SEGA Attention, DyPE Schedule Preview)."""
