"""The runner: files in, results out, over a process pool and the result cache; the two-phase
project driver (phase 1, merge, phase 2)."""
