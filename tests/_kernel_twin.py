"""What the driver tests share: ``run_transfer``'s measures (one transfer at a time, on the
flat engine's ``run_single``) and a Monte Carlo batch (``run_batch``) on the same uniforms,
two drivers of one engine that must agree bit for bit (tests/test_sim_engines.py,
test_sim_kernel_ns3.py, test_sim_kernel_sack.py, test_sim_linux_mechanisms.py,
test_sim_rule_laws.py)."""

import numpy as np

from latency_model.sim import OUT_FIELDS, run_transfer
from latency_model.sim.kernel import block_size

MSS = 500


def reference(params, size_bytes, config, children):
    """``run_transfer``'s measures (rows of OUT_FIELDS), one run per SeedSequence child."""
    rows = []
    for c in children:
        r = run_transfer(params, size_bytes=size_bytes, config=config,
                         rng=np.random.Generator(np.random.PCG64(c)))
        rows.append([getattr(r, f) for f in OUT_FIELDS])
    return np.array(rows, dtype=float)


class KernelTwin:
    """Runs of one kernel module ``K`` whose parameters come from ``pack(params, size, config)``."""

    def __init__(self, pack, K):
        self.pack, self.K = pack, K

    def run_kernel(self, fn, params, size_bytes, config, children, width=None):
        """The kernel on ``width`` uniforms per run (default: run_transfer's first block)."""
        K = self.K
        PI, PF = self.pack(params, size_bytes, config)
        k = block_size(int(PI[K.P_N]), params.p, config.p_ack) if width is None else width
        U = np.array([np.random.Generator(np.random.PCG64(c)).random(k) for c in children])
        out = np.zeros((len(children), K.N_OUT))
        status = np.zeros(len(children), np.int64)
        fn(U, PI, PF, out, status)
        return out, status

    def check_identical(self, fn, params, size_bytes, config, children, ref):
        """Assert the kernel equals ``ref`` exactly; a run the first block cannot finish
        completes with more uniforms of the same stream and still agrees."""
        out, status = self.run_kernel(fn, params, size_bytes, config, children)
        ok = status == 0
        assert np.array_equal(ref[ok], out[ok])
        assert set(status[~ok].tolist()) <= {self.K.FAIL_UNIFORMS, self.K.FAIL_QUEUE}
        if not ok.all():
            k0 = block_size(-(-size_bytes // MSS), params.p, config.p_ack)
            bad = [children[i] for i in np.flatnonzero(~ok)]
            out2, status2 = self.run_kernel(fn, params, size_bytes, config, bad, width=16 * k0)
            assert (status2 == 0).all()
            assert np.array_equal(ref[~ok], out2)
        return status
