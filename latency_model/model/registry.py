"""The analytic models by name: the paper's fluid recursion and the others beside it.

One entry per model, each a module with two functions::

    check_supported(params: TcpParams) -> None      # ValueError naming what is supported
    predict(params: TcpParams, sizes_bytes: ndarray, **options) -> Prediction

(a model with numba kernels has a third, ``warm() -> None``, that loads them: :func:`warm`),
so that ``latency --model NAME``, the sweep's ``model`` axis and the accuracy map treat
every model alike. Modules are imported when first used (this one imports nothing heavy).
"""

from __future__ import annotations

from ..checks import checked_call

import importlib
from dataclasses import dataclass

__all__ = ["MODELS", "Prediction", "available_models", "check_fluid_reads", "check_given", "check_model",
           "check_supported", "model_options", "predict", "warm"]

MODELS = {
    "fluid": "latency_model.model.recursion",
    "packet": "latency_model.model.packet",
    "csa": "latency_model.model.csa",
    "pftk": "latency_model.model.pftk",
}
"""Model name -> the module implementing it:

- ``fluid``: Ayesta & Avrachenkov's recursion (the paper; :mod:`.recursion`);
- ``packet``: the packet-level sender as the simulator runs it (:mod:`.packet`);
- ``csa``: Cardwell, Savage & Anderson, "Modeling TCP Latency", INFOCOM 2000 (:mod:`.csa`);
- ``pftk``: Padhye, Firoiu, Towsley & Kurose, SIGCOMM 1998, as a transfer time (:mod:`.pftk`).
"""


@dataclass(frozen=True)
class Prediction:
    """One model's answer, one entry per file size.

    Attributes
    ----------
    model : str
        Name in :data:`MODELS`.
    sizes_bytes : ndarray
        File sizes, bytes.
    expected_latency_s : ndarray
        Expected latency, seconds.
    conditional_latency_s : ndarray or None
        Shape ``(n_sizes, K)``: L_k, the expected latency given exactly k losses, k = 0 ..
        K-1, seconds (None if the model has no such decomposition).
    p90_latency_s : ndarray or None
        90th percentile of the latency, seconds (None if the model does not give it).
    """

    model: str
    sizes_bytes: np.ndarray  # noqa: F821 (annotations are not evaluated)
    expected_latency_s: np.ndarray  # noqa: F821
    conditional_latency_s: np.ndarray | None = None  # noqa: F821
    p90_latency_s: np.ndarray | None = None  # noqa: F821

    def records(self) -> list[dict]:
        """Rows of :meth:`to_frame`, one per size: ``model``, ``size_bytes``,
        ``expected_latency_s``, ``p90_latency_s`` when given and ``L0_s``, ``L1_s``, ... when
        the model decomposes by loss count."""
        import numpy as np

        rows = []
        for i, (y, e) in enumerate(zip(np.ravel(self.sizes_bytes), np.ravel(self.expected_latency_s))):
            row = {"model": self.model, "size_bytes": float(y), "expected_latency_s": float(e)}
            if self.p90_latency_s is not None:
                row["p90_latency_s"] = float(np.ravel(self.p90_latency_s)[i])
            if self.conditional_latency_s is not None:
                row.update({f"L{k}_s": float(v) for k, v in enumerate(np.asarray(self.conditional_latency_s)[i])})
            rows.append(row)
        return rows

    def to_dict(self) -> dict:
        """JSON-ready dict of the fields (arrays as lists, None kept)."""
        from ..results import to_dict

        return to_dict(self)

    def to_frame(self):
        """A pandas DataFrame of :meth:`records` (pandas is optional: ``latency_model[pandas]``)."""
        from ..results import to_frame

        return to_frame(self.records())


def available_models() -> tuple:
    """Names of :data:`MODELS` whose module is installed, in :data:`MODELS` order."""
    from importlib.util import find_spec

    return tuple(name for name, module in MODELS.items() if find_spec(module) is not None)


def check_model(name: str) -> str:
    """``name`` if it is an available model (:func:`available_models`), else a ValueError
    listing them."""
    models = available_models()
    if name not in models:
        raise ValueError(f"model must be one of {', '.join(models)}, got {name!r}")
    return name


def _module(name: str):
    return importlib.import_module(MODELS[check_model(name)])


def check_supported(name: str, params) -> None:
    """Raise ValueError (naming what ``name`` supports) if it cannot predict ``params``."""
    _module(name).check_supported(params)


NO_INITIAL_SSTHRESH = ("csa", "pftk")
"""Models that have no initial ssthresh: CSA's slow start ends at the first loss or at
W_max = rwnd, PFTK is the steady state (docs/baselines.md)."""

NO_INITIAL_WINDOW = ("pftk",)
"""Models that never read W0: PFTK is a steady-state throughput (its transfer time is the
size over that rate, :mod:`.pftk`), so an initial window, ``w0`` or an ``iw`` preset, has
nothing to change."""

FLUID_UNREAD_RULE_PARAMS = {
    "standard": {"abc_l": "its slow start grows by the factor 1 + 1/b a round with or without RFC 3465 "
                          "byte counting"},
    "ass": {"decrease": "after a loss the recursion halves the window (W_f/2) whatever the rule"},
    "smooth-start": {"per_ack": "its per-round law follows Eq. 8 exactly"},
    "smoothtcp": {"per_ack": "its per-round law follows Eq. 8 exactly",
                  **{f"{c}_{m}": "it has no RTT variation, loss or router signals to drive D (Eq. 4-6)"
                     for m in "jxfeq" for c in "abcm"},
                  "alpha": "it has no signal rates to smooth",
                  "ss_signal": "it has no router signals to restart the smooth start"},
}
"""Growth-rule parameters the fluid recursion never reads (rule name -> parameter -> why):
the recursion uses a rule's per-round law (``next_round_window``) or continuous law only;
these parameters act on the per-ACK growth, the decrease after a loss or the reaction to
signals, which only the simulator (and, for the standard rule, CSA and PFTK) runs."""


def check_fluid_reads(params) -> None:
    """Raise ValueError if ``params`` holds a setting the fluid recursion does not read, so
    that it cannot pass silently (:func:`latency_model.model.recursion.check_supported`):
    Early Retransmit (``early_retransmit``, variant ``er``: the recursion's regions know
    dup_t, dup_lt and the tail rule only) and a rule parameter of
    :data:`FLUID_UNREAD_RULE_PARAMS` other than its default. Imports nothing heavy (the
    ``thresholds`` command asks it)."""
    import dataclasses

    if params.early_retransmit:
        raise ValueError("the fluid model does not read early_retransmit (variant er, RFC 5827 Early "
                         "Retransmit): its recursion knows dup_t, dup_lt and the tail rule only; use variant "
                         "newreno, lt, proposal or size-based (the simulator and the packet model run er)")
    rule = params.rule
    unread = FLUID_UNREAD_RULE_PARAMS.get(rule.name, {})
    for f in dataclasses.fields(rule) if dataclasses.is_dataclass(rule) else ():
        if f.name not in unread:
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        value = getattr(rule, f.name)
        if value != default:
            raise ValueError(_fluid_rule_message(rule.name, f.name, value))


def _fluid_rule_message(rule: str, param: str, value=None) -> str:
    got = "" if value is None else f" (got {value!r})"
    return (f"the fluid model does not read rule_param.{param} of rule {rule!r}{got}: "
            f"{FLUID_UNREAD_RULE_PARAMS[rule][param]}; leave it unset (the simulator runs it)")


def check_given(name: str, params, given) -> None:
    """Raise ValueError if ``given`` (the TcpParams fields a user set explicitly, plus
    ``"iw"`` for an initial-window preset and ``"rule_param.X"`` for a growth-rule
    parameter X) holds one that model ``name`` would not read, so that it cannot pass
    silently:

    - ``w_ss`` other than ``rwnd`` for the models without an initial ssthresh
      (:data:`NO_INITIAL_SSTHRESH`);
    - ``w0`` or ``iw``, whatever its value, for the models without an initial window
      (:data:`NO_INITIAL_WINDOW`: PFTK);
    - for ``fluid``, a rule parameter of :data:`FLUID_UNREAD_RULE_PARAMS`, whatever its
      value (:func:`check_fluid_reads` refuses the values other than the default).

    The API's models take such a field and ignore it; the CLI and ``sweep`` ask this."""
    given = set(given)
    if name in NO_INITIAL_SSTHRESH and "w_ss" in given and params.w_ss != params.rwnd:
        raise ValueError(f"w_ss must equal rwnd: the model has no initial ssthresh (its slow start ends at "
                         f"the first loss or at rwnd), got w_ss = {params.w_ss:g}")
    if name in NO_INITIAL_WINDOW:
        for key in ("w0", "iw"):
            if key in given:
                raise ValueError(f"{key} is not read by model {name}: it has no initial window (a steady-state "
                                 f"throughput; the transfer time is the size over that rate); leave {key} unset")
    if name == "fluid":
        unread = FLUID_UNREAD_RULE_PARAMS.get(params.rule.name, {})
        for key in sorted(given):
            if key.startswith("rule_param.") and key[len("rule_param."):] in unread:
                param = key[len("rule_param."):]
                raise ValueError(_fluid_rule_message(params.rule.name, param, getattr(params.rule, param, None)))


@checked_call
def predict(name: str, params, sizes_bytes, **options) -> Prediction:
    """Model ``name``'s prediction for ``params`` at file sizes ``sizes_bytes`` (bytes, > 0).

    Parameters
    ----------
    name : str
        A model of :data:`MODELS`.
    params : TcpParams
        Path, TCP, recovery variant and rule.
    sizes_bytes : array_like
        File sizes, bytes (> 0).
    **options
        Passed to the model's ``predict`` (e.g. ``options=SolverOptions(...)`` for ``fluid``);
        only those of :func:`model_options`.

    Returns
    -------
    Prediction

    Raises
    ------
    ValueError
        For an unknown model, an option the model does not take (naming it and listing
        those it takes), set-ups the model does not cover, or a request over the work
        limits (:class:`~latency_model.checks.BudgetError`).
    """
    from ..checks import check_array, check_file_bytes

    module = _module(name)
    known = model_options(name)
    for key in options:
        if key not in known:
            raise ValueError(f"model {name} has no option {key!r} (its options: {', '.join(known) or 'none'})")
    module.check_supported(params)
    sizes = check_file_bytes("sizes_bytes", check_array("sizes_bytes", sizes_bytes, low=0.0, low_open=True).ravel())
    return module.predict(params, sizes, **options)


_SIZE_ARGUMENTS = ("params", "sizes_bytes", "size_bytes", "size_packets")


def _keywords(func) -> tuple:
    """The names ``func`` takes by keyword, and whether it takes ``**options`` too."""
    import inspect

    params = inspect.signature(func).parameters.values()
    return ({p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)},
            any(p.kind == p.VAR_KEYWORD for p in params))


def model_options(name: str) -> tuple:
    """The options (keywords) model ``name``'s ``predict`` takes, sorted.

    Read from the signatures, so that they cannot drift from the code: the keyword
    parameters of the module's ``predict``, and where that passes ``**options`` on to the
    module's ``expected_latency`` (the packet model), that function's keywords and, where it
    passes its own ``**options`` on to a ``PathConfig``, that class's fields. A module whose
    ``predict`` takes ``**options`` without passing them on (CSA, PFTK: they refuse any) has
    only its named keywords.
    """
    import dataclasses

    module = _module(name)
    names, passes_on = _keywords(module.predict)
    if passes_on and hasattr(module, "expected_latency"):
        more, passes_on = _keywords(module.expected_latency)
        names |= more
        if passes_on and dataclasses.is_dataclass(getattr(module, "PathConfig", None)):
            names |= {f.name for f in dataclasses.fields(module.PathConfig)}
    names -= set(_SIZE_ARGUMENTS)
    return tuple(sorted(names))


def warm(name: str) -> None:
    """Load model ``name``'s compiled kernels into this process (its module's ``warm``; a
    model without one has nothing to load).

    numba keeps the kernels' machine code on disk, but every new process loads it again
    at its first call: 0.6 s of CPU for the packet model, about 1.3 s for the fluid one.
    Processes forked afterwards inherit what is loaded, so a caller that runs each model
    call in a child of its own (the accuracy map's time-limited calls,
    :func:`latency_model.studies.accuracy.run_accuracy`) warms the models once first.
    """
    fn = getattr(_module(name), "warm", None)
    if fn is not None:
        fn()
