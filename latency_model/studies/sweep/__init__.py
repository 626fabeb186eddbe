"""Parameter sweeps: a grid of TcpParams and file sizes -> one tidy table, resumable.

A sweep is a :class:`Grid` (named axes of values, sizes innermost; :func:`grid_from_dict`
takes ``{"p": [0.01, 0.1], "size_packets": range(1, 21)}``) or a :class:`Design` (an
arbitrary list of points, :func:`evaluate_points`) evaluated by the
fluid model, the packet simulator or both. A ``model`` axis (``model=fluid,packet``) names
the analytic models instead (:data:`latency_model.model.registry.MODELS`): each grid point
then gets one row per model, with a ``model`` column, beside its simulation row; without it
the model is ``fluid`` and the table has no ``model`` column. :func:`plan_sweep` validates every grid
point up front (one :class:`ValueError` naming the parameter, before any work) and
groups the points into :class:`Task` objects; :func:`run_sweep` runs the tasks
serially, in local processes or on a ``dask.distributed`` cluster and keeps the table in
memory (its :class:`SweepReport` gives records, a DataFrame or one column as an array
shaped like the grid) or keeps the output file complete and valid after every finished task.

Reproducibility
---------------
Points are numbered in grid order: the product of the axes in the order given, the
size axis innermost. Simulation point ``i`` draws only from child ``i`` of
``SeedSequence(seed)`` (``SeedSequence(seed, spawn_key=(i,))``, the same sequence as
``SeedSequence(seed).spawn(n)[i]``), run ``j`` of it from that child's ``spawn(runs)[j]``.
Model tasks hold all sizes of one parameter set (in chunks of a fixed number of
sizes), and the solver gives a size the same bits whatever other sizes share the call.
So rows depend on neither the executor, the number of workers nor the completion order,
and rows are written in grid order.

Resume
------
Every row carries ``key``: a SHA-256 digest of its source, full parameter set, size,
method settings (time model and loss law, or runs, root seed, point index and simulator
settings). A row in a file ends with ``row_crc32``, a CRC-32 of its cells. Rerunning the same
sweep reads the output file back, keeps the rows whose check matches, skips tasks whose rows
are all kept and recomputes the rest: a row cut short by a crash or a full disk, with fields
added or edited is recomputed and reported (:attr:`SweepReport.damaged`), never kept.

Modules: :mod:`.grid` (grid syntax), :mod:`.plan` (validated points and tasks),
:mod:`.run` (tasks, executors, resume) and :mod:`.table` (the output file).
"""

from .grid import (Axis, Design, Grid, canonical_name, design_from_points, grid_from_dict, grid_from_items,
                   grid_from_toml, parse_param, parse_values)
from .plan import COLUMNS, SOURCES, WHAT, Plan, SweepCost, SweepSpec, Task, columns_for, estimate_sweep, plan_sweep
from .run import SweepInterrupted, SweepReport, evaluate_points, run_sweep, run_task
from .table import read_rows, require_pyarrow

__all__ = [
    "SOURCES",
    "WHAT",
    "Axis",
    "Grid",
    "Design",
    "SweepSpec",
    "Task",
    "Plan",
    "SweepCost",
    "estimate_sweep",
    "SweepReport",
    "SweepInterrupted",
    "canonical_name",
    "parse_values",
    "parse_param",
    "grid_from_items",
    "grid_from_dict",
    "design_from_points",
    "evaluate_points",
    "grid_from_toml",
    "plan_sweep",
    "columns_for",
    "require_pyarrow",
    "run_task",
    "run_sweep",
    "read_rows",
    "COLUMNS",
]
