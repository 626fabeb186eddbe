"""Budget of the slow suite, set by ``--slow-budget`` (see conftest.py).

Under the small budget (CI) each slow check runs with fewer samples or cases; its
tolerance stays stated against the samples it actually draws, so it can still fail.
"""

SMALL = False


def pick(full, small):
    """``small`` under ``--slow-budget small``, else ``full``."""
    return small if SMALL else full
