"""Studies built on both halves: where the model and the simulator meet.

- :mod:`.reproduce`: the paper's Section 4 (tables, figures, validation report).
- :mod:`.tables`: Tables 1-2 as text and CSV, with the simulator's column.
- :mod:`.figures`: Figures 4 and 6-10 as tidy rows, computed in cached pieces.
- :mod:`.validate`: the model-versus-simulator cases and the paper's claims.
- :mod:`.sweep`: grids of parameters -> one tidy table (serial, processes, Dask; resumable).
- :mod:`.cache`: the results cache of the reproduction.
- :mod:`.export`: atomic CSV/JSON writing.
- :mod:`.plots`: matplotlib figures drawn from the exported CSV only.

This package imports nothing on its own; import the modules.
"""
