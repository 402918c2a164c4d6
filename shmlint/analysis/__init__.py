"""The per-file engine: prefilter, parse, the dataflow, the rules, suppression. Handed the
project's facts (and, in phase 1, a recorder); knows nothing of the runner or the cache."""
