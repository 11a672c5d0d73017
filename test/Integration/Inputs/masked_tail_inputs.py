"""masked_tail_inputs.py DIR POS BLOCK: sets the attention case's position
in DIR to POS and fills its KV caches with NaN from the first block of BLOCK
positions that a step of 4 tokens at POS must skip on: a program that reads
a skipped block returns NaN (the reference slices the cache to the valid
positions and never sees them). Positions of the last computed block after
pos + 4 keep finite values: they are read, and masked."""
import os
import sys

import numpy as np

out, pos, block = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
steps = 4  # the attention case's tokens per step
skipped = -(-(pos + steps) // block) * block
np.save(os.path.join(out, "pos.npy"), np.array(pos, dtype=np.int64))
for name in ("k_cache", "v_cache"):
    path = os.path.join(out, name + ".npy")
    cache = np.load(path)
    cache[skipped:] = np.nan
    np.save(path, cache)
