"""Window-growth rules: one class per rule, one registry.

Adding a rule means adding one module here and one line to :data:`RULES`.
"""

from __future__ import annotations

import dataclasses

from ..checks import check_choice, checked_call
from .base import CongestionState, ContinuousLaw, GrowthRule
from .ass import AssRule
from .btcp import BtcpRule
from .cubic import CubicRule
from .generalized import GeneralizedRule
from .linux_reno import LinuxRenoRule
from .lss import LssRule
from .smooth import SmoothStartRule
from .smoothtcp import SmoothTcpRule
from .standard import StandardRule

__all__ = [
    "GrowthRule",
    "CongestionState",
    "ContinuousLaw",
    "StandardRule",
    "LinuxRenoRule",
    "GeneralizedRule",
    "BtcpRule",
    "LssRule",
    "AssRule",
    "SmoothStartRule",
    "SmoothTcpRule",
    "RULES",
    "make_rule",
    "rule_parameters",
]

RULES: dict[str, type[GrowthRule]] = {
    StandardRule.name: StandardRule,
    GeneralizedRule.name: GeneralizedRule,
    BtcpRule.name: BtcpRule,
    LssRule.name: LssRule,
    AssRule.name: AssRule,
    SmoothStartRule.name: SmoothStartRule,
    SmoothTcpRule.name: SmoothTcpRule,
    CubicRule.name: CubicRule,
    LinuxRenoRule.name: LinuxRenoRule,
}
"""Registry: rule name -> rule class."""
for _cls in RULES.values():  # an unknown or missing parameter is a ValueError naming it
    checked_call(_cls)


def make_rule(name: str, **rule_params) -> GrowthRule:
    """Build a registered rule from its name and parameters.

    Parameters
    ----------
    name : str
        A key of :data:`RULES`.
    **rule_params
        The rule's dataclass fields.

    Raises
    ------
    ValueError
        Naming the valid rules for an unknown rule, or the valid parameters for an
        unknown parameter.

    Returns
    -------
    GrowthRule
        An instance of ``RULES[name]``.
    """
    check_choice("rule", name, sorted(RULES))
    cls = RULES[name]
    valid = [f.name for f in dataclasses.fields(cls)]
    for key in rule_params:
        if key not in valid:
            listed = ", ".join(valid) if valid else "none"
            raise ValueError(f"rule {name!r} has no parameter {key!r} (valid: {listed})")
    return cls(**rule_params)


def rule_parameters(name: str) -> dict:
    """Parameters of a registered rule with their defaults.

    Parameters
    ----------
    name : str
        A key of :data:`RULES`.

    Returns
    -------
    dict
        ``{parameter: default}`` (units as in the rule's own docstring).

    Raises
    ------
    ValueError
        Naming the valid rules for an unknown rule.
    """
    check_choice("rule", name, sorted(RULES))
    return {f.name: f.default for f in dataclasses.fields(RULES[name])}
