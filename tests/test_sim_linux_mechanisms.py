"""The ``linux`` profile's kernel mechanisms, pinned by traces derived by hand, on both
engines (the event-driven reference and the flat-array kernel, interpreted and compiled).

Setting unless stated: ``SimConfig.profile("linux")`` (52-byte headers, timestamps, SACK
with RACK-TLP and PRR, minimum RTO and clock granularity 200 ms, 16 quick ACKs), MSS 500 B
at 100 Mb/s (a data packet's serialisation S = 552 x 8 / 1e8 s = 44.16 us), one-way delay
0.05 s, W0 = 10. ACKs take no serialisation. Segments are 0-based.

The handshake's sample (``handshake_rtt``): a SYN and a SYN-ACK of 52 + 8 bytes each
(serialisation 4.8 us), so r0 = 0.1 + 9.6 us; the first RTT sample gives SRTT = r0, RTTVAR =
r0 / 2 and RTO = SRTT + max(4 RTTVAR, 200 ms) = 3 r0 (Linux ``tcp_rtt_estimator``: RTO =
3 RTT on the first sample, at least SRTT + 200 ms).
"""

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.sim import SimConfig, run_transfer
from latency_model.sim import kernel as K

from _kernel_twin import KernelTwin, reference

MSS = 500
S = (MSS + 52) * 8 / 100e6
R0 = 0.1 + 2 * (52 + 8) * 8 / 100e6
LINUX = SimConfig.profile("linux", delay_s=0.05)
PARAMS = TcpParams(p=0.0, w0=10, w_ss=30, rwnd=30, mss_bytes=MSS, rtt_s=0.1)
COMPILED = K.compiled_run_batch()
KERNELS = [K.run_batch] + ([COMPILED] if COMPILED is not None else [])
TWIN = KernelTwin(K.pack_params, K)


def _both_engines(params, n, config, seeds=40):
    """The flat-array kernels equal the reference on random losses (p = 0.2)."""
    params = params.replace(p=0.2)
    children = np.random.SeedSequence(46).spawn(seeds)
    ref = reference(params, n * MSS, config, children)
    for fn in KERNELS:
        TWIN.check_identical(fn, params, n * MSS, config, children, ref)


# The handshake's RTT sample -----------------------------------------------------------------

def test_handshake_sample_sets_the_first_rto_and_probe():
    # N = 1, segment 0 lost. Before any data: SRTT = r0, RTO = 3 r0 (0.300 s). The probe's
    # PTO with one segment out is 2 SRTT + 200 ms = 0.400 s, capped at the RTO's expiry,
    # 3 r0: the probe (no new data: segment 0 again) leaves at 3 r0 and is ACKed at once
    # (FIN) one RTT and S later. Without the sample the PTO is RFC 8985's 1 s: 1.1 + S.
    res, rows = run_transfer(PARAMS, size_packets=1, drops=[0], config=LINUX, trace=True)
    assert [r.time_s for r in rows if r.event == "tlp_probe"] == [pytest.approx(3 * R0, abs=1e-12)]
    assert rows[0].rto_s == pytest.approx(3 * R0, abs=1e-12)
    assert res.completion_s == pytest.approx(3 * R0 + 0.1 + S, abs=1e-12)
    old = run_transfer(PARAMS, size_packets=1, drops=[0], config=LINUX.replace(handshake_rtt=False))
    assert old.completion_s == pytest.approx(1.1 + S, abs=1e-12)


def test_handshake_sample_without_rack_times_out_at_three_rtt():
    # The same loss without RACK-TLP: the RTO (3 r0) resends segment 0.
    cfg = LINUX.replace(rack_tlp=False)
    res = run_transfer(PARAMS, size_packets=1, drops=[0], config=cfg)
    assert res.timeouts == 1
    assert res.completion_s == pytest.approx(3 * R0 + 0.1 + S, abs=1e-12)


def test_handshake_sample_on_the_rfc_sender():
    # The RFC sender, 40-byte headers (SYN 48 B), minimum RTO 200 ms, G = 0: RTO = 3 r0.
    cfg = SimConfig(delay_s=0.05, min_rto_s=0.2, handshake_rtt=True)
    s40 = (MSS + 40) * 8 / 100e6
    r0 = 0.1 + 2 * (40 + 8) * 8 / 100e6
    res = run_transfer(PARAMS.replace(w0=2), size_packets=1, drops=[0], config=cfg)
    assert res.completion_s == pytest.approx(3 * r0 + 0.1 + s40, abs=1e-12)
    # With RFC 6298's 1 s floor the sample changes nothing here.
    res1 = run_transfer(PARAMS.replace(w0=2), size_packets=1, drops=[0], config=cfg.replace(min_rto_s=1.0))
    assert res1.completion_s == pytest.approx(1.1 + s40, abs=1e-12)


@pytest.mark.parametrize("config", [LINUX, LINUX.replace(rack_tlp=False),
                                    SimConfig(delay_s=0.05, min_rto_s=0.2, handshake_rtt=True)],
                         ids=["linux", "linux-no-rack", "rfc-sender"])
@pytest.mark.parametrize("n", [1, 3, 12, 40])
def test_handshake_sample_both_engines_agree(config, n):
    _both_engines(PARAMS, n, config)


def test_handshake_rtt_refused_with_the_ns3_sender():
    with pytest.raises(ValueError, match="handshake_rtt"):
        SimConfig(sender="ns3", rtt_sampling="ns3", handshake_rtt=True)
    assert SimConfig.profile("linux", sender="ns3").handshake_rtt is False
