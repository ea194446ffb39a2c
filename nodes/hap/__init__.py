"""HAP (HRDiT's Head-adaptive Attention Pruning): the scope plan, the mask and the attention kernel. Pure torch;
the engine runs the kernel through an attention plan (nodes/rope_patch/spa.py, spa_attention.py)."""
