"""The loss law of the model: p(k | y), and the first-loss density f(y, k, y_bar).

Ayesta & Avrachenkov, Section 2. Losses are independent with probability p per
packet; the fluid model approximates the geometric number of bytes between losses
by an exponential of rate ``lambda = p / MSS`` per byte, and counts the ``k MSS``
retransmitted bytes in the exposure::

    p(k | y) = exp(-lambda (y + k MSS)) (lambda (y + (k - 1) MSS))^k / k!

As printed this does not sum to exactly one (e.g. about 1.005 for 8 packets at
p = 0.1): :func:`loss_count_pmf` exposes the raw mass and normalises by default.
The exact discrete law is the negative binomial over packets: a file of
``N = ceil(y / MSS)`` packets, each transmission lost with probability p, suffers
k losses with probability ``C(N + k - 1, k) p^k (1 - p)^N``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from ..checks import check_array, check_choice, check_flag, check_int, check_real, check_work, checked_call

__all__ = ["LOSS_LAWS", "LossCounts", "loss_count_pmf", "first_loss_density"]

LOSS_LAWS = ("paper", "exact")


@dataclass(frozen=True)
class LossCounts:
    """Probabilities of k = 0 .. K-1 losses for each file size.

    Attributes
    ----------
    pmf : ndarray, shape (n_sizes, K)
        ``pmf[i, k]``: probability of exactly k losses for size i (normalised
        unless asked otherwise).
    raw_mass : ndarray, shape (n_sizes,)
        Sum of the law as printed over all k (1 for the exact law, about
        1 + O(p) for the paper's).
    truncated_mass : ndarray, shape (n_sizes,)
        Probability of K or more losses left out (after normalisation).
    """

    pmf: np.ndarray
    raw_mass: np.ndarray
    truncated_mass: np.ndarray

    @property
    def k_max(self) -> int:
        """Number of terms K kept (k = 0 .. K-1)."""
        return self.pmf.shape[1]

    def expectation(self, conditional: np.ndarray) -> np.ndarray:
        """``sum_k p(k | y) L_k(y)`` over the kept k (the paper's Eq. 1), per size.

        ``conditional``: shape (n_sizes, >= K), L_k in seconds. Summed term by term in k
        order, so a size's sum does not depend on how many (zero) terms other sizes in the
        same call need, bit for bit.
        """
        expected = np.zeros(self.pmf.shape[0])
        for k in range(self.k_max):
            expected += self.pmf[:, k] * conditional[:, k]
        return expected


def _paper_log_pmf(k: np.ndarray, lam_y: np.ndarray, lam_mss: float) -> np.ndarray:
    # log of exp(-lam (y + k MSS)) (lam (y + (k-1) MSS))^k / k!, with 0^0 = 1 at k = 0.
    base = lam_y + (k - 1) * lam_mss
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pow = np.where(k == 0, 0.0, k * np.log(np.where(base > 0, base, 1.0)))
        log_pow = np.where((k > 0) & (base <= 0), -np.inf, log_pow)
    return -(lam_y + k * lam_mss) + log_pow - special.gammaln(k + 1.0)


@checked_call
def loss_count_pmf(
    sizes_bytes,
    p: float,
    mss_bytes: int,
    *,
    law: str = "paper",
    normalize: bool = True,
    tail: float = 1e-9,
    k_max: int | None = None,
) -> LossCounts:
    """Distribution of the number of losses k for each file size.

    Parameters
    ----------
    sizes_bytes : array_like
        File sizes, bytes (> 0).
    p : float
        Loss probability per packet, in [0, 1).
    mss_bytes : int
        Segment size, bytes.
    law : {"paper", "exact"}
        The paper's Poisson-type law with retransmitted bytes, or the negative
        binomial over packets.
    normalize : bool
        Divide the paper's law by its total mass (default). Ignored for ``"exact"``.
    tail : float
        Keep, for each size, k up to the point where the left-out probability is
        below ``tail`` (default 1e-9); the columns past a size's own point are 0.
    k_max : int, optional
        Keep exactly k = 0 .. k_max - 1 instead.

    Returns
    -------
    LossCounts

    Raises
    ------
    ValueError
        For a parameter out of range; :class:`~latency_model.checks.BudgetError` (a
        ValueError) when the table of sizes x loss counts would not fit in memory.
    """
    sizes = check_array("sizes_bytes", sizes_bytes, low=0.0, low_open=True).ravel()
    p = check_real("p", p, low=0.0, high=1.0, high_open=True)
    mss = check_int("mss_bytes", mss_bytes, low=1)
    check_choice("law", law, LOSS_LAWS)
    tail = check_real("tail", tail, low=0.0, high=1.0, low_open=True, high_open=True)
    check_flag("normalize", normalize)
    own_truncation = k_max is None
    if k_max is not None:
        k_max = check_int("k_max", k_max, low=1)

    lam = p / mss
    if law == "exact":
        n_packets = np.ceil(sizes / mss * (1 - 1e-12))[:, None]
        if k_max is None:
            k_max = 1 if p == 0.0 else int(np.max(stats.nbinom.isf(tail, n_packets, 1.0 - p))) + 2
        check_work(f"the loss-count law of {sizes.size} size(s) up to {k_max:.3g} losses",
                   *_law_cost(sizes.size, k_max))
        if p == 0.0:
            pmf = np.zeros((sizes.size, k_max))
            pmf[:, 0] = 1.0
        else:
            pmf = stats.nbinom.pmf(np.arange(k_max)[None, :], n_packets, 1.0 - p)
        if own_truncation:
            pmf = _truncate_each(pmf, np.ones(sizes.size), tail)
        left = np.maximum(1.0 - pmf.sum(axis=1), 0.0)
        return LossCounts(pmf=pmf, raw_mass=np.ones(sizes.size), truncated_mass=left)

    # Paper's law: the mass is summed far enough to know the total (mean ~ lam y / (1 - p)).
    lam_y = lam * sizes
    mean = lam_y / max(1.0 - p, 1e-12)
    k_full = int(np.ceil(np.max(mean + 12.0 * np.sqrt(mean + 1.0) + 12.0)))
    k_cols = max(k_full + 1, k_max or 0)
    check_work(f"the loss-count law of {sizes.size} size(s) up to {k_cols:.3g} losses",
               *_law_cost(sizes.size, k_cols))
    k_all = np.arange(k_full + 1)
    log_pmf = _paper_log_pmf(k_all[None, :], lam_y[:, None], lam * mss)
    full = np.exp(log_pmf)
    # Sequential sum (cumsum), so the mass of one size does not depend on how many terms the
    # largest size of the call needs: the extra terms are far below one ulp.
    raw = np.cumsum(full, axis=1)[:, -1]
    if normalize:
        full = full / raw[:, None]
    if k_max is None:
        cdf_left = full[:, ::-1].cumsum(axis=1)[:, ::-1]  # P(K >= k)
        needed = np.argmax(cdf_left < tail, axis=1)
        needed = np.where(np.all(cdf_left >= tail, axis=1), k_full + 1, needed)
        k_max = max(int(np.max(needed)), 1)
    pmf = full[:, :k_max] if k_max <= full.shape[1] else np.pad(full, ((0, 0), (0, k_max - full.shape[1])))
    total = np.cumsum(full, axis=1)[:, -1] if normalize else raw
    if own_truncation:
        pmf = _truncate_each(pmf, total, tail)
    left = np.maximum(total - pmf.sum(axis=1), 0.0)
    return LossCounts(pmf=pmf, raw_mass=raw, truncated_mass=left)


_PMF_COPIES = 6
"""Arrays of the pmf's shape alive at once while it is built (log pmf, pmf, the cumulative
sums and the truncation's masks), for the memory estimate of :func:`loss_count_pmf`."""

_PMF_SECONDS = 1e-7
"""CPU seconds per entry of the pmf's table (its log, exponential, sums and truncation;
measured 2026-11-28: 20 sizes x 2.05e5 losses, 4.1e6 entries, in 0.35 s)."""


def _law_cost(n_sizes: int, k_cols: float) -> tuple[float, float]:
    """Estimated peak memory (bytes) and seconds of the loss law's table of ``n_sizes`` x
    ``k_cols`` entries: about ``k_cols = p N / (1 - p)`` columns for N packets, so it runs
    away as p nears 1 (p = 0.999999, 20 packets: 2e7 columns, 19 GB)."""
    entries = float(n_sizes) * float(k_cols)
    return _PMF_COPIES * 8.0 * entries, _PMF_SECONDS * entries


def _truncate_each(pmf: np.ndarray, total: np.ndarray, tail: float) -> np.ndarray:
    """Zero the terms of each size past its own truncation point (left-out mass < tail),
    so that a size's result does not depend on the other sizes computed with it."""
    left_after = total[:, None] - np.cumsum(pmf, axis=1)  # mass of k > column
    reached = left_after < tail
    own_k = np.where(reached.any(axis=1), np.argmax(reached, axis=1) + 1, pmf.shape[1])
    return np.where(np.arange(pmf.shape[1])[None, :] < own_k[:, None], pmf, 0.0)


def first_loss_density(y, k: int, y_bar) -> np.ndarray:
    """Density of the data sent before the first of k losses, per byte.

    ``f(y, k, y_bar) = (k / y_bar) (1 - y / y_bar)^(k - 1)`` for ``0 <= y <= y_bar``:
    the minimum of k independent uniform loss positions (paper, Section 2).

    Parameters
    ----------
    y : array_like
        Bytes sent before the first loss.
    k : int
        Number of losses (>= 1).
    y_bar : array_like
        File size, bytes (> 0).
    """
    k = check_int("k", k, low=1)
    y_bar = check_array("y_bar", y_bar, low=0.0, low_open=True)
    y = np.asarray(y, dtype=float)
    x = np.minimum(np.maximum(1.0 - y / y_bar, 0.0), 1.0)
    inside = (y >= 0) & (y <= y_bar)
    return np.where(inside, k / y_bar * x ** (k - 1), 0.0)
