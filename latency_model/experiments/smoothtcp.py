"""SmoothTCP's experiment (Vieira & Bauer, SmoothTCP, Section V): RTT variation on a slow bottleneck.

Paper setup (Section V, Figure 2): two long-lived connections; sender -> router 1 Mb/s, 1 ms;
router -> receiver 0.03125 Mb/s, 8 ms (the bottleneck); a drop-tail queue of 20 packets that
sends an ICMP Source Quench for each arriving packet while it holds tau = 7 or more; 586 B
packets; 600 s; SmoothTCP with A_a = 40, B_a = 0.003038, A_q = 0, B_q = 0.5493, C_q = 0.0625,
M_q = 0, kappa = 0.005, against Standard TCP. Claims (Section V.A-B): SmoothTCP's window and RTT
are smaller and vary much less; its queue is smaller, with about as many ICMP-SQ messages;
it drops packets only during slow start, none in congestion avoidance; both have about the
same throughput (Standard TCP 988,384 + 1,192,600 bytes, SmoothTCP 1,046,272 + 1,230,656
bytes); Standard TCP's RTT lies "most of the time between 1.4 s and 3 s".

Here the dumbbell of :mod:`latency_model.sim.dumbbell` carries it: sender access links
1 Mb/s / 1 ms, bottleneck 0.03125 Mb/s / 8 ms, and receiver access links 1 Mb/s / 1 ms (the
paper's receiver sits on the bottleneck; this extra hop adds 6 ms to RTTs of 0.3-3 s). The
run is deterministic (no random input): one run per rule, no seeds. ``scale`` stretches or
shrinks the run length (600 s at 1).

"After slow start" is measured from the rule's own state: the time of the first RTT sample
of each flow with ``in_slow_start`` false (SmoothTCP: the smooth start has ended; Standard
TCP: cwnd >= ssthresh, normally right after the first loss), the later of the flows.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..checks import check_choice, check_int, check_items, check_real, check_work, checked_call
from ..growth import RULES, SmoothStartRule, SmoothTcpRule, make_rule
from ..growth.smoothtcp import SS_SIGNALS
from ..params import TcpParams
from ..results import ResultData
from ..sim.config import SimConfig
from ..sim.dumbbell import Dumbbell
from ..sim.scenario import Flow, Scenario, run

__all__ = ["SmoothTcpExperiment", "SmoothTcpResult", "run_smoothtcp", "PAPER_CLAIMS", "PAPER_BYTES"]

PAPER_CLAIMS = {
    "rtt": "SmoothTCP's window and RTT are smaller and vary much less than Standard TCP's, whose "
           "RTT varies 'most of the time between 1.4 s and 3 s' (Section V.A-B, Figures 3 and 6)",
    "drops": "SmoothTCP drops packets only during slow start, none in congestion avoidance; "
             "Standard TCP drops periodically (Figures 5 and 8)",
    "queue": "SmoothTCP generally gives a smaller queue, with almost as many ICMP-SQ messages "
             "(Figures 4 and 7)",
    "throughput": "almost the same throughput: Standard TCP 988,384 + 1,192,600 bytes, SmoothTCP "
                  "1,046,272 + 1,230,656 bytes in 600 s (Section V.B)",
}

PAPER_BYTES = {"standard": 988_384 + 1_192_600, "smoothtcp": 1_046_272 + 1_230_656}
"""Bytes both connections transferred in the paper's 600 s run (Section V.B)."""

ACCESS_RATE_BPS = 1e6
ACCESS_DELAY_S = 0.001
BOTTLENECK_RATE_BPS = 0.03125e6
BOTTLENECK_DELAY_S = 0.008
RUN_S = 600.0

# Agreement rules of the claims (stated in the output and in validation/EXPERIMENTS.md).
MUCH_SMALLER = 0.5  # "much smaller": at most half
SAME_THROUGHPUT = (0.9, 1.1)  # "almost the same": ratio within +-10%
SAME_COUNT = (0.8, 1.25)  # "almost the same" number of ICMP-SQ messages
PAPER_BYTES_TOL = 0.1  # the paper's byte counts: within 10%


@checked_call
@dataclass(frozen=True)
class SmoothTcpExperiment:
    """Settings of the SmoothTCP experiment (defaults: the paper's Section V at ``scale = 1``).

    Parameters
    ----------
    scale : float
        Run length as a fraction of the paper's 600 s, in (0, 10]. Default 1 (the paper's run,
        a few seconds here).
    flows : int
        Long-lived flows, each from its own sender node, all starting at t = 0 (paper: 2), >= 1.
    queue_packets : int
        Router drop-tail buffer, packets waiting (paper: 20), >= 1.
    tau : int
        Source Quench threshold, packets waiting (paper: 7), >= 0.
    rwnd : int
        Receiver window M and initial ssthresh W_SS, packets (not stated in the paper), >= 1.
        Default 64: not binding (no window here exceeds 46 packets); ns-2's default is 20.
    packet_bytes : int
        Segment payload, bytes (paper: 586), >= 1; 40 B headers are added on the wire.
    kappa : float
        SmoothTCP's fairness factor (paper: 0.005; Appendix A also 0.010), in [0, 1].
    ss_signal : {"loss", "all"}
        What restarts SmoothTCP's smooth start (see :data:`latency_model.growth.smoothtcp.SS_SIGNALS`).
    min_rto_s : float
        RFC 6298 minimum and initial RTO, seconds (> 0). Default 1.0.
    rules : tuple of str
        Registered growth rules to run, each on its own run (default: ``standard``, ``smoothtcp``).
    bin_s : float
        Bin width of the exported time series, seconds (> 0). Default 5.
    """

    scale: float = 1.0
    flows: int = 2
    queue_packets: int = 20
    tau: int = 7
    rwnd: int = 64
    packet_bytes: int = 586
    kappa: float = 0.005
    ss_signal: str = "loss"
    min_rto_s: float = 1.0
    rules: tuple = ("standard", "smoothtcp")
    bin_s: float = 5.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "scale", check_real("scale", self.scale, low=0.0, high=10.0, low_open=True))
        set_(self, "flows", check_int("flows", self.flows, low=1))
        set_(self, "queue_packets", check_int("queue_packets", self.queue_packets, low=1))
        set_(self, "tau", check_int("tau", self.tau, low=0))
        set_(self, "rwnd", check_int("rwnd", self.rwnd, low=1))
        set_(self, "packet_bytes", check_int("packet_bytes", self.packet_bytes, low=1))
        set_(self, "kappa", check_real("kappa", self.kappa, low=0.0, high=1.0))
        check_choice("ss_signal", self.ss_signal, SS_SIGNALS)
        set_(self, "min_rto_s", check_real("min_rto_s", self.min_rto_s, low=0.0, low_open=True))
        rules = check_items("rules", self.rules, "rule names") if not isinstance(self.rules, str) else (self.rules,)
        if not rules:
            raise ValueError(f"rules must name at least one of {', '.join(sorted(RULES))}, got none")
        for r in rules:
            if r not in RULES:
                raise ValueError(f"rules must be growth rules among {', '.join(sorted(RULES))}, got {r!r}")
        if len(set(rules)) != len(rules):
            raise ValueError(f"rules must not repeat a rule, got {rules!r}")
        set_(self, "rules", rules)
        set_(self, "bin_s", check_real("bin_s", self.bin_s, low=0.0, low_open=True))
        check_work(f"experiment smoothtcp with {self.flows:,} flows over {self.horizon_s:g} s (scale) x "
                   f"{len(self.rules)} rules", *self.work())

    def work(self) -> tuple[float, float]:
        """Estimated peak memory (bytes) and CPU seconds of :func:`run_smoothtcp`.

        Every flow is long-lived: it sends, is dropped or signalled and times out for the
        whole run, so a run costs about flows x (a start-up cost + a cost per simulated
        second), and holds each flow's RTT samples and series. Measured (2026-11-28, one
        core, two rules): 10,000 flows, 600 s, 70 s and 3.3 GB; 60 s, 19 s and 500 MB;
        1,000 flows, 600 s, 4.7 s: 0.67 ms + 4.7 us per simulated second a flow and run,
        9 kB + 0.51 kB per simulated second a flow.
        """
        from ..checks import PROCESS_BYTES

        h = self.horizon_s
        return (PROCESS_BYTES + self.flows * (9e3 + 510.0 * h),
                self.flows * (6.7e-4 + 4.7e-6 * h) * len(self.rules))

    @property
    def horizon_s(self) -> float:
        """Run length, ``600 scale`` seconds."""
        return RUN_S * self.scale

    @property
    def wire_bytes(self) -> int:
        """Packet size on the wire, payload + header, bytes."""
        return self.packet_bytes + self.config().header_bytes

    def topology(self) -> Dumbbell:
        """The paper's Figure 2 as a dumbbell with one node per flow and Source Quench above tau."""
        return Dumbbell(nodes=self.flows, access_rate_bps=ACCESS_RATE_BPS, access_delay_s=ACCESS_DELAY_S,
                        bottleneck_rate_bps=BOTTLENECK_RATE_BPS, bottleneck_delay_s=BOTTLENECK_DELAY_S,
                        queue_packets=self.queue_packets, signal="source_quench",
                        signal_threshold_packets=self.tau)

    def config(self) -> SimConfig:
        """Timers: RFC 6298 with ``min_rto_s`` as minimum and initial RTO; 40 B headers."""
        return SimConfig(min_rto_s=self.min_rto_s, initial_rto_s=self.min_rto_s)

    def rule(self, name: str):
        """The growth rule ``name``; SmoothTCP's and the smooth start's with this ``kappa``
        (and ``ss_signal``), the paper's other coefficients; other rules with their defaults."""
        if name == SmoothTcpRule.name:
            return SmoothTcpRule(kappa=self.kappa, ss_signal=self.ss_signal)
        if name == SmoothStartRule.name:
            return SmoothStartRule(kappa=self.kappa)
        return make_rule(name)

    def tcp(self, name: str) -> TcpParams:
        """TCP of rule ``name``: MSS ``packet_bytes``, W0 = 1, W_SS = M = ``rwnd``, b = 1, NewReno."""
        topo = self.topology()
        return TcpParams(mss_bytes=self.packet_bytes, rtt_s=topo.round_trip_s, p=0.0, w0=1.0,
                         w_ss=float(self.rwnd), rwnd=float(self.rwnd), b=1, dup_t=3, dup_lt=None,
                         rule=self.rule(name))

    def flow_size_bytes(self) -> int:
        """A size no flow can finish within the run: twice the bottleneck's packets in it."""
        packets = math.ceil(2.0 * self.horizon_s * BOTTLENECK_RATE_BPS / (8.0 * self.wire_bytes)) + 100
        return packets * self.packet_bytes

    def scenario(self, name: str) -> Scenario:
        """The run of rule ``name``: ``flows`` long-lived flows from t = 0, RTT samples recorded."""
        tcp = self.tcp(name)
        size = self.flow_size_bytes()
        flows = tuple(Flow(0.0, size, tcp, node=i) for i in range(self.flows))
        return Scenario(flows=flows, topology=self.topology(), config=self.config(),
                        horizon_s=self.horizon_s, bin_s=self.bin_s, record_rtt=True)

    def to_dict(self) -> dict:
        """JSON-serialisable settings plus the derived run."""
        d = asdict(self)
        d["rules"] = list(self.rules)
        d.update(horizon_s=self.horizon_s, topology=self.topology().describe(),
                 header_bytes=self.config().header_bytes, wire_bytes=self.wire_bytes, w0_packets=1,
                 flow_size_bytes=self.flow_size_bytes(),
                 bottleneck_packets_per_s=BOTTLENECK_RATE_BPS / (8.0 * self.wire_bytes),
                 rule_params={r: self.rule(r).describe() for r in self.rules})
        return d


@dataclass(frozen=True)
class SmoothTcpResult(ResultData):
    """Outcome of :func:`run_smoothtcp`.

    Attributes
    ----------
    experiment : SmoothTcpExperiment
    summary : list of dict
        One row per rule (see :func:`_summary` for the columns).
    flows : list of dict
        One row per (rule, flow): bytes, packets, losses, timers, signals, slow-start end, RTT.
    queue_series : list of dict
        Per (rule, bin): ``t_s`` (bin start), ``queue_packets`` (time-average waiting),
        ``drops``, ``arrivals_per_s``.
    flow_series : list of dict
        Per (rule, flow, bin): ``rtt_mean_s``, ``rtt_min_s``, ``rtt_max_s`` of the samples
        in the bin and ``cwnd_packets`` at the bin's last sample (None without a sample).
    rtt_samples : list of dict
        Every RTT sample: ``rule, flow, time_s, rtt_s, cwnd_packets, slow_start``.
    claims : list of dict
        ``{"claim", "ours", "paper", "agrees"}``.
    """

    ROWS = "summary"  # to_frame(): one row per entry

    experiment: SmoothTcpExperiment
    summary: list
    flows: list
    queue_series: list
    flow_series: list
    rtt_samples: list
    claims: list

    def to_dict(self) -> dict:
        """The issue's contract ``{"experiment", "params", "series", "claims"}`` (``series`` is
        :attr:`summary`) plus ``flows``, ``queue_series``, ``flow_series`` and ``paper_text``.
        The raw RTT samples are left out (``--out`` writes them as CSV)."""
        return {"experiment": "smoothtcp", "params": self.experiment.to_dict(), "series": self.summary,
                "claims": self.claims, "flows": self.flows, "queue_series": self.queue_series,
                "flow_series": self.flow_series, "paper_text": PAPER_CLAIMS}


    def to_text(self) -> str:
        """The summary table, the paper's claims and our verdicts, as plain text."""
        ex = self.experiment
        lines = [
            f"SmoothTCP experiment (SmoothTCP, Section V): {ex.flows} long-lived flows, "
            f"{ACCESS_RATE_BPS / 1e6:g} Mb/s / {ACCESS_DELAY_S * 1e3:g} ms -> {BOTTLENECK_RATE_BPS / 1e6:g} Mb/s / "
            f"{BOTTLENECK_DELAY_S * 1e3:g} ms, queue {ex.queue_packets} packets, Source Quench at >= {ex.tau}, "
            f"{ex.packet_bytes} B packets, {ex.horizon_s:g} s (scale {ex.scale:g}), kappa {ex.kappa:g}, "
            f"smooth start restarted by {'losses' if ex.ss_signal == 'loss' else 'losses and signals'}",
            "RTT and queue after slow start (from the later flow's end of slow start); drops during / after it",
            "",
            f"{'rule':<12}{'ss end s':>9}{'RTT mean s':>11}{'RTT std s':>10}{'RTT range s':>12}"
            f"{'queue':>7}{'drops':>11}{'ICMP-SQ':>9}  bytes (per flow)",
        ]
        for r in self.summary:
            per = ", ".join(str(f["bytes_acked"]) for f in self.flows if f["rule"] == r["rule"])
            lines.append(f"{r['rule']:<12}{r['slow_start_end_s']:>9.1f}{r['rtt_mean_s']:>11.3f}{r['rtt_std_s']:>10.3f}"
                         f"{r['rtt_range_s']:>12.3f}{r['queue_mean_after_ss_packets']:>7.1f}"
                         f"{str(r['drops_during_ss']) + ' / ' + str(r['drops_after_ss']):>11}"
                         f"{r['source_quench_sent']:>9}  {r['bytes_total']} ({per})")
        lines += ["", "paper:"] + [f"  {text}" for text in PAPER_CLAIMS.values()]
        if self.claims:
            lines += ["", "claims (each with its agreement rule):"]
            for c in self.claims:
                o = c["ours"]
                ours = (", ".join(f"{k} {_fmt(v)}" for k, v in o.items()) if isinstance(o, dict) else _fmt(o))
                verdict = "agrees" if c["agrees"] else "DISAGREES"
                lines.append(f"  {verdict:<9} {c['claim']}: ours {ours}; paper {_fmt(c['paper'])}")
        return "\n".join(lines)


def _fmt(v) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.4g}"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _summary(name: str, res, ex: SmoothTcpExperiment) -> tuple[dict, list, list, list, list]:
    horizon = ex.horizon_s
    ss_end = []
    for log in res.rtt:
        out = np.flatnonzero(~log.slow_start)
        ss_end.append(float(log.time_s[out[0]]) if out.size else math.nan)
    t_ss = max(ss_end) if ss_end and not any(math.isnan(t) for t in ss_end) else math.nan
    after = [log.rtt_s[log.time_s >= t_ss] for log in res.rtt] if not math.isnan(t_ss) else []
    rtt_after = np.concatenate(after) if after else np.zeros(0)
    rtt_all = np.concatenate([log.rtt_s for log in res.rtt]) if res.rtt else np.zeros(0)

    def stat(fn, x):
        return float(fn(x)) if x.size else math.nan

    q = res.queue
    dropped = q.dropped
    drops_ss = int((dropped & (q.arrival_s < t_ss)).sum()) if not math.isnan(t_ss) else int(dropped.sum())
    edges = np.arange(q.mean_length.size) * q.bin_s
    bins_after = q.mean_length[edges >= t_ss] if not math.isnan(t_ss) else np.zeros(0)
    bytes_ = np.array([r.bytes_acked for r in res.flows], dtype=float)
    total = float(bytes_.sum())
    row = {
        "rule": name,
        "slow_start_end_s": t_ss,
        "rtt_samples_after_ss": int(rtt_after.size),
        "rtt_mean_s": stat(np.mean, rtt_after),
        "rtt_std_s": stat(np.std, rtt_after),
        "rtt_min_s": stat(np.min, rtt_after),
        "rtt_max_s": stat(np.max, rtt_after),
        "rtt_range_s": stat(np.ptp, rtt_after),
        "rtt_p05_s": stat(lambda x: np.quantile(x, 0.05), rtt_after),
        "rtt_p95_s": stat(lambda x: np.quantile(x, 0.95), rtt_after),
        "rtt_in_1_4_to_3_0_s_pct": stat(lambda x: 100.0 * np.mean((x >= 1.4) & (x <= 3.0)), rtt_after),
        "rtt_std_whole_run_s": stat(np.std, rtt_all),
        "queue_mean_packets": float(q.mean_length.mean()),
        "queue_mean_after_ss_packets": stat(np.mean, bins_after),
        "queue_std_after_ss_packets": stat(np.std, bins_after),
        "queue_max_packets": int(q.max_seen.max()) if q.max_seen.size else 0,
        "drops": int(dropped.sum()),
        "drops_during_ss": drops_ss,
        "drops_after_ss": int(dropped.sum()) - drops_ss,
        "source_quench_sent": int(res.signals_sent),
        "timeouts": int(sum(r.timeouts for r in res.flows)),
        "fast_retransmits": int(sum(r.fast_retransmits for r in res.flows)),
        "bytes_total": int(total),
        "throughput_bps": 8.0 * total / horizon,
        "utilisation_pct": 100.0 * float(q.busy_fraction.mean()),
        "fairness_jain": total**2 / (bytes_.size * float((bytes_**2).sum())) if total > 0 else math.nan,
        "flows_completed": int(sum(r.completed for r in res.flows)),
    }
    flows = []
    for i, (rec, log) in enumerate(zip(res.flows, res.rtt)):
        x = log.rtt_s[log.time_s >= t_ss] if not math.isnan(t_ss) else np.zeros(0)
        flows.append({"rule": name, "flow": i, "bytes_acked": int(rec.bytes_acked),
                      "packets_sent": rec.packets_sent, "packets_lost": rec.packets_lost,
                      "retransmissions": rec.retransmissions, "timeouts": rec.timeouts,
                      "fast_retransmits": rec.fast_retransmits, "source_quench": rec.signals,
                      "slow_start_end_s": ss_end[i], "rtt_mean_s": stat(np.mean, x),
                      "rtt_std_s": stat(np.std, x)})
    queue_series = [{"rule": name, "t_s": float(t), "queue_packets": float(m), "drops": int(d),
                     "arrivals_per_s": float(a)}
                    for t, m, d, a in zip(edges, q.mean_length, q.drops, q.arrivals_per_s)]
    flow_series, samples = [], []
    n_bins = q.mean_length.size
    for i, log in enumerate(res.rtt):
        idx = np.minimum((log.time_s // q.bin_s).astype(np.int64), n_bins - 1)
        for k in range(n_bins):
            sel = np.flatnonzero(idx == k)
            if sel.size:
                r = log.rtt_s[sel]
                flow_series.append({"rule": name, "flow": i, "t_s": float(edges[k]),
                                    "rtt_mean_s": float(r.mean()), "rtt_min_s": float(r.min()),
                                    "rtt_max_s": float(r.max()),
                                    "cwnd_packets": float(log.cwnd_bytes[sel[-1]]) / ex.packet_bytes})
            else:
                flow_series.append({"rule": name, "flow": i, "t_s": float(edges[k]), "rtt_mean_s": None,
                                    "rtt_min_s": None, "rtt_max_s": None, "cwnd_packets": None})
        samples += [{"rule": name, "flow": i, "time_s": float(t), "rtt_s": float(r),
                     "cwnd_packets": float(c) / ex.packet_bytes, "slow_start": bool(s)}
                    for t, r, c, s in zip(log.time_s, log.rtt_s, log.cwnd_bytes, log.slow_start)]
    return row, flows, queue_series, flow_series, samples


@checked_call
def run_smoothtcp(experiment: SmoothTcpExperiment | None = None, progress=None) -> SmoothTcpResult:
    """Run SmoothTCP's experiment: one deterministic run per rule on the paper's bottleneck.

    Parameters
    ----------
    experiment : SmoothTcpExperiment, optional
        Settings; default ``SmoothTcpExperiment()`` (the paper's 600 s run).
    progress : callable, optional
        Called as ``progress(rule)`` after each run.

    Returns
    -------
    SmoothTcpResult
    """
    ex = SmoothTcpExperiment() if experiment is None else experiment
    if not isinstance(ex, SmoothTcpExperiment):
        raise ValueError(f"experiment must be a SmoothTcpExperiment, got {ex!r}")
    summary, flows, qs, fs, samples = [], [], [], [], []
    for name in ex.rules:
        res = run(ex.scenario(name))
        row, fl, q, f, s = _summary(name, res, ex)
        summary.append(row)
        flows += fl
        qs += q
        fs += f
        samples += s
        if progress is not None:
            progress(name)
    return SmoothTcpResult(experiment=ex, summary=summary, flows=flows, queue_series=qs, flow_series=fs,
                           rtt_samples=samples, claims=_claims(ex, summary))


def _ratio(a: float, b: float) -> float:
    return a / b if b and not (math.isnan(a) or math.isnan(b)) else math.nan


def _claims(ex: SmoothTcpExperiment, summary: list) -> list:
    """The paper's claims beside ours, judged by the fixed rules stated in each claim."""
    by = {r["rule"]: r for r in summary}
    out = []
    std, smooth = by.get("standard"), by.get("smoothtcp")
    if std is not None and smooth is not None:
        for metric, what in (("rtt_std_s", "standard deviation"), ("rtt_range_s", "range (max - min)")):
            ratio = _ratio(smooth[metric], std[metric])
            out.append({"claim": f"SmoothTCP's RTT {what} after slow start is much smaller than Standard "
                                 f"TCP's (agrees: at most {MUCH_SMALLER:g} times), s",
                        "ours": {"standard": std[metric], "smoothtcp": smooth[metric], "ratio": ratio},
                        "paper": "much smaller", "agrees": bool(ratio <= MUCH_SMALLER)})
        ratio = _ratio(smooth["queue_mean_after_ss_packets"], std["queue_mean_after_ss_packets"])
        out.append({"claim": "SmoothTCP's mean queue after slow start is smaller than Standard TCP's, packets",
                    "ours": {"standard": std["queue_mean_after_ss_packets"],
                             "smoothtcp": smooth["queue_mean_after_ss_packets"], "ratio": ratio},
                    "paper": "smaller", "agrees": bool(ratio < 1.0)})
        ratio = _ratio(smooth["source_quench_sent"], std["source_quench_sent"])
        lo, hi = SAME_COUNT
        out.append({"claim": f"about as many ICMP-SQ messages with SmoothTCP as with Standard TCP "
                             f"(agrees: ratio in [{lo:g}, {hi:g}])",
                    "ours": {"standard": std["source_quench_sent"], "smoothtcp": smooth["source_quench_sent"],
                             "ratio": ratio},
                    "paper": "almost the same", "agrees": bool(lo <= ratio <= hi)})
        ratio = _ratio(smooth["bytes_total"], std["bytes_total"])
        lo, hi = SAME_THROUGHPUT
        out.append({"claim": f"about the same throughput: SmoothTCP's bytes / Standard TCP's "
                             f"(agrees: in [{lo:g}, {hi:g}])",
                    "ours": {"standard": std["bytes_total"], "smoothtcp": smooth["bytes_total"], "ratio": ratio},
                    "paper": PAPER_BYTES["smoothtcp"] / PAPER_BYTES["standard"],
                    "agrees": bool(lo <= ratio <= hi)})
    if smooth is not None:
        out.append({"claim": "SmoothTCP drops no packets after slow start (congestion avoidance)",
                    "ours": smooth["drops_after_ss"], "paper": 0, "agrees": smooth["drops_after_ss"] == 0})
        out.append({"claim": "SmoothTCP's drops happen during slow start (paper: 'only large during the "
                             "slow-start phase'; agrees: more than 0)",
                    "ours": smooth["drops_during_ss"], "paper": "large", "agrees": smooth["drops_during_ss"] > 0})
    if std is not None:
        out.append({"claim": "Standard TCP keeps dropping packets after slow start (agrees: more than 0)",
                    "ours": std["drops_after_ss"], "paper": "periodic drops",
                    "agrees": std["drops_after_ss"] > 0})
        pct = std["rtt_in_1_4_to_3_0_s_pct"]
        out.append({"claim": "Standard TCP's RTT after slow start lies mostly in [1.4, 3] s "
                             "(agrees: at least 50% of the samples), %",
                    "ours": pct, "paper": [1.4, 3.0], "agrees": bool(pct >= 50.0)})
    if ex.scale == 1.0 and ex.flows == 2:
        for name, row in by.items():
            if name in PAPER_BYTES:
                ref = PAPER_BYTES[name]
                out.append({"claim": f"bytes both {name} connections transferred in 600 s "
                                     f"(agrees: within {100 * PAPER_BYTES_TOL:g}% of the paper's)",
                            "ours": row["bytes_total"], "paper": ref,
                            "agrees": bool(abs(row["bytes_total"] / ref - 1.0) <= PAPER_BYTES_TOL)})
    return out
