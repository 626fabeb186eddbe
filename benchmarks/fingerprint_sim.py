"""Fingerprint of the simulator's results: many configurations, every engine.

Records, for each configuration, a SHA-256 of the exact bits of its results: every stack
profile (rfc, ns3, linux), every recovery (newreno, lt, proposal, er, SACK, PRR, RACK-TLP),
b = 1 and 2, every growth rule, scripted drops with traces (``run_transfer(drops=...,
trace=True)``), random losses on one transfer, and Monte Carlo runs with fixed seeds on the
``python`` and ``compiled`` engines (the latter only where numba is available and the run
is supported). A refactoring that must not change results is checked by running this
before and after and comparing the two files (``--compare``).

Usage::

    python benchmarks/fingerprint_sim.py --out before.json
    python benchmarks/fingerprint_sim.py --out after.json --compare before.json
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys

import numpy as np

from latency_model import TcpParams, apply_variant
from latency_model.growth import RULES, make_rule
from latency_model.sim import SimConfig, fast_path_supported, run_many, run_transfer

VARIANTS = ("newreno", "lt", "proposal", "er")
RECOVERIES = {  # SimConfig overrides of the sack recoveries
    "sack": dict(sender="sack", prr="off", rack_tlp=False),
    "sack-prr": dict(sender="sack", prr="ssrb", rack_tlp=False),
    "sack-crb": dict(sender="sack", prr="crb", rack_tlp=False),
    "sack-rack": dict(sender="sack", prr="off", rack_tlp=True),
    "sack-rack-prr": dict(sender="sack", prr="ssrb", rack_tlp=True),
}


def _digest(obj) -> str:
    return hashlib.sha256(repr(obj).encode()).hexdigest()[:16]


def _result(r) -> tuple:
    return tuple(sorted(r.to_dict().items()))


def _configs():
    """(name, params, config) of every combination fingerprinted."""
    for stack in ("rfc", "ns3", "linux"):
        for b in (1, 2):
            for variant in VARIANTS:
                if stack == "ns3" and variant in ("proposal", "er"):
                    continue  # ns-3 has neither (check_ns3_params)
                if stack == "linux" and variant == "er":
                    continue  # refused under RACK-TLP
                params = apply_variant(TcpParams(p=0.1, w0=2, w_ss=30, rwnd=30, b=b, mss_bytes=500,
                                                 rtt_s=0.1), variant)
                config = SimConfig.profile(stack, link_rate_bps=10e6, delay_s=0.05)
                yield f"{stack}/b{b}/{variant}", params, config
    for name, over in RECOVERIES.items():
        for variant in VARIANTS:
            if variant == "er" and over["rack_tlp"]:
                continue
            params = apply_variant(TcpParams(p=0.1, w0=3, w_ss=20, rwnd=40, b=2, mss_bytes=500,
                                             rtt_s=0.2), variant)
            yield f"{name}/{variant}", params, SimConfig(**over)
    for extra in (dict(rtt_sampling="timestamps"), dict(rto_rule="paper"), dict(lt_mode="paper"),
                  dict(p_ack=0.05), dict(quick_acks=4, fin=False), dict(delack_timeout_s=0.04)):
        for sender in ("rfc", "sack"):
            if sender == "rfc" or extra.get("rto_rule") != "paper":
                params = apply_variant(TcpParams(p=0.05, w0=2, w_ss=8, rwnd=20, b=2, mss_bytes=500,
                                                 rtt_s=0.1, rule=make_rule("standard", abc_l=2)), "lt")
                yield f"{sender}/{sorted(extra.items())}", params, SimConfig(sender=sender, **extra)
    for rule in sorted(RULES):
        for sender in ("rfc", "sack"):
            params = apply_variant(TcpParams(p=0.05, w0=2, w_ss=30, rwnd=60, b=1, mss_bytes=500,
                                             rtt_s=0.1, rule=make_rule(rule)), "lt")
            yield f"rule-{rule}/{sender}", params, SimConfig(sender=sender)
    params = TcpParams(p=0.05, w0=2, w_ss=30, rwnd=60, b=1, mss_bytes=500, rtt_s=0.1)
    yield "rfc/queue8", params, SimConfig(queue_packets=8, link_rate_bps=2e6)


def fingerprint(runs: int, engines: tuple[str, ...]) -> dict:
    out = {}
    drops_sets = ([3], {0: 2}, [5, 6, 7], {9: 1, 12: 3}, [39], list(range(10, 20, 3)))
    for name, params, config in _configs():
        # scripted drops with traces (the reference path)
        for i, drops in enumerate(drops_sets):
            try:
                r, rows = run_transfer(params, size_packets=40, config=config, drops=drops, trace=True)
                out[f"{name}/drops{i}"] = _digest((_result(r), [dataclasses.astuple(x) for x in rows]))
            except ValueError as e:
                out[f"{name}/drops{i}"] = f"ValueError: {e}"
        # one random transfer, odd size
        r = run_transfer(params, size_bytes=40 * 500 - 123, config=config, rng=np.random.default_rng(7))
        out[f"{name}/random"] = _digest(_result(r))
        # Monte Carlo on every engine
        children = np.random.SeedSequence(2026).spawn(runs)
        for engine in engines:
            if engine == "compiled" and not fast_path_supported(params, config):
                continue
            res = run_many(params, 30 * 500 + 77, children, config, engine=engine)
            out[f"{name}/mc-{engine}"] = hashlib.sha256(res.tobytes()).hexdigest()[:16]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--engines", default="python,compiled")
    ap.add_argument("--out", required=True)
    ap.add_argument("--compare")
    args = ap.parse_args()
    fp = fingerprint(args.runs, tuple(args.engines.split(",")))
    with open(args.out, "w") as fh:
        json.dump(fp, fh, indent=1, sort_keys=True)
    print(f"{len(fp)} fingerprints -> {args.out}")
    if args.compare:
        with open(args.compare) as fh:
            ref = json.load(fh)
        diff = sorted(k for k in set(ref) | set(fp) if ref.get(k) != fp.get(k))
        for k in diff[:50]:
            print("DIFF", k, ref.get(k), fp.get(k))
        print("identical" if not diff else f"{len(diff)} differ")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
