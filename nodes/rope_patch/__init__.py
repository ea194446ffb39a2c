"""The patch engine: turns a MODEL into a clone whose RoPE follows DyPE's and SEGA's schedule above the trained size.

``clone.patch_model`` is what the nodes call; everything else runs inside sampling. One model call, top to bottom
(docs/ARCHITECTURE.md draws it): the keyed wrappers (wrappers.py) open the run, step and call scopes (scopes.py); the
call's schedule is built from the clone's config (config.py), the family and the latent (axis_plan.py, schedule.py,
SEGA's spectrum: spectrum.py, token_maps.py); the replacement embedder (embedder.py, cosmos_embedder.py,
nunchaku_embedder.py) turns it into the table (tables.py, every token's cos/sin in float64), on the spatial columns
only (spatial_only.py), with as many rows as the model takes (batch_table.py); a model that caches text keys across
steps recomputes them in such calls (prefix_cache.py). ControlNets follow the same schedule (controlnet.py); errors.py names what can stop a run.

Importing this package imports nothing: each module imports what it needs, always downwards (tests/test_layout.py).
"""
