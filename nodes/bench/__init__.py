"""``python <pack> bench``: the replacement embedder and the patched model timed against ComfyUI's stock (what it
prints and how to read it: cli.py). A tool, not part of the nodes; it imports ComfyUI only once run.

The parts: the tiny ComfyUI Flux it samples (model.py), the per-call table of the embedder (embedder_rows.py), what
one run does per step and under torch.compile (run_facts.py), whole sampling timed (whole_sampling.py), the clocks
(timing.py), peak memory of one call by two gauges (peak_memory.py), what it prints (report.py) and which frames
are the pack's own (sources.py).
"""
