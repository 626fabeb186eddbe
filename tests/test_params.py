"""TcpParams validation, IW presets and loss-recovery variants."""

import math

import pytest

from latency_model import TcpParams, apply_variant, initial_window_bytes
from latency_model.params import variant_of

BAD_VALUES = [
    ("mss_bytes", 0),
    ("mss_bytes", -500),
    ("mss_bytes", 500.5),
    ("mss_bytes", float("nan")),
    ("rtt_s", 0.0),
    ("rtt_s", -0.1),
    ("rtt_s", float("inf")),
    ("p", 1.0),
    ("p", -0.01),
    ("p", float("nan")),
    ("w0", 0.0),
    ("w0", 31.0),  # above rwnd = 30
    ("w0", float("nan")),
    ("w_ss", 0.0),
    ("w_ss", float("inf")),
    ("rwnd", 0.5),
    ("b", 0),
    ("b", 1.5),
    ("b", True),
    ("dup_t", 0),
    ("dup_lt", 0),
    ("dup_lt", 4),  # above dup_t = 3
    ("rto_s", 0.0),
    ("rto_s", float("nan")),
    ("tail_retransmit", 1),
    ("early_retransmit", "yes"),
    ("rule", "standard"),
]


@pytest.mark.parametrize("name,value", BAD_VALUES)
def test_bad_parameter_raises_value_error_naming_it(name, value):
    with pytest.raises(ValueError) as err:
        TcpParams(**{name: value})
    assert str(err.value).startswith(name), str(err.value)


def test_error_message_states_value_and_range():
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\), got 1.0"):
        TcpParams(p=1.0)
    with pytest.raises(ValueError, match=r"b must be an integer in \[1, 2147483\], got 0"):
        TcpParams(b=0)


def test_defaults_are_the_papers_setting():
    p = TcpParams()
    assert (p.mss_bytes, p.rtt_s, p.p, p.w0, p.w_ss, p.rwnd, p.b, p.dup_t) == (500, 0.1, 0.1, 2, 30, 30, 1, 3)
    assert p.dup_lt is None
    assert p.rto == 1.0  # max(1 s, 4 x 0.1 s)


def test_rto_rule_is_max_of_one_second_and_four_rtt_unless_fixed():
    assert TcpParams(rtt_s=0.4).rto == pytest.approx(1.6)
    assert TcpParams(rtt_s=0.2).rto == 1.0
    assert TcpParams(rto_s=3.0).rto == 3.0


def test_timeout_threshold_is_one_plus_dup():
    assert TcpParams().timeout_threshold == 4
    assert TcpParams(dup_lt=2).timeout_threshold == 3
    assert TcpParams(dup_lt=1).timeout_threshold == 2


def test_params_are_frozen_and_replace_revalidates():
    p = TcpParams()
    with pytest.raises(Exception):
        p.p = 0.2
    with pytest.raises(ValueError, match="^p must"):
        p.replace(p=2.0)


@pytest.mark.parametrize(
    "preset,mss,expected",
    [
        ("rfc3390", 500, 2000),  # 4 MSS < 4380
        ("rfc3390", 1460, 4380),  # min(5840, max(2920, 4380))
        ("rfc3390", 2190, 4380),  # 2 MSS = 4380
        ("rfc3390", 4000, 8000),  # max(2 MSS, 4380) = 8000 <= 4 MSS
        ("rfc6928", 500, 5000),  # 10 MSS < 14600
        ("rfc6928", 1460, 14600),
        ("rfc6928", 9000, 18000),  # 2 MSS
    ],
)
def test_initial_window_presets(preset, mss, expected):
    assert initial_window_bytes(preset, mss) == expected


def test_unknown_iw_preset_lists_valid_ones():
    with pytest.raises(ValueError, match="rfc3390, rfc6928"):
        initial_window_bytes("rfc9999", 500)


def test_variants_set_recovery_axis_only():
    base = TcpParams(w0=3, b=2)
    lt = apply_variant(base, "lt")
    assert (lt.dup_lt, lt.tail_retransmit, lt.w0, lt.b) == (2, False, 3, 2)
    prop = apply_variant(base, "proposal")
    assert (prop.dup_lt, prop.tail_retransmit) == (1, True)
    assert variant_of(prop) == "proposal"
    assert apply_variant(base, "er").early_retransmit is True


def test_size_based_variant_switches_at_10_kb():
    base = TcpParams()
    assert variant_of(apply_variant(base, "size-based", 9_999)) == "proposal"
    assert variant_of(apply_variant(base, "size-based", 10_000)) == "lt"
    with pytest.raises(ValueError, match="size_bytes"):
        apply_variant(base, "size-based")
    with pytest.raises(ValueError, match="variant must be one of"):
        apply_variant(base, "reno")


def test_to_dict_is_json_ready():
    import json

    d = TcpParams().to_dict()
    assert json.loads(json.dumps(d))["rule"] == {"name": "standard", "abc_l": None}
    assert math.isclose(d["rto_effective_s"], 1.0)
