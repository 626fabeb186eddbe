"""The analytic half: the Ayesta-Avrachenkov fluid model of a short TCP transfer.

- :mod:`.fluid`: the rate evolution without loss, y_f, L_0 and W_f (fluid and per-round).
- :mod:`.losses`: p(k | y), the loss-count law, and the first-loss density.
- :mod:`.thresholds`: y_to, FileSize_min and Tables 1-2.
- :mod:`.recursion`: L_k (the paper's recursion) and the expected latency (Eq. 1); its
  tabulated solver is :mod:`._tables` (with :mod:`._regions`, :mod:`._interp`, and the
  numba twins :mod:`._levels` and :mod:`._nodes`).

Nothing here imports the simulator (:mod:`latency_model.sim`), and the simulator imports
nothing from here: the two halves meet only in :mod:`latency_model.studies`, the tests
and the CLI. This package imports nothing on its own; import the modules.
"""
