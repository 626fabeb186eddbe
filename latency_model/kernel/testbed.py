"""The testbed: two network namespaces, a TUN device in each, the link emulator between them.

Layout (nothing is ever added to the caller's namespace)::

    client (sender) netns              emulator (caller's netns)          server netns
    10.77.0.1  lmk0 (TUN) <-- fd --> link_emulator <-- fd --> lmk0 (TUN)  10.77.0.2

Each namespace is anonymous and belongs to the one process living in it (an endpoint of
:mod:`.endpoint`, started with ``unshare(CLONE_NEWNET)``); the emulator opens one TUN
device inside each (``setns``). Every child gets ``PR_SET_PDEATHSIG(SIGKILL)``, so the
namespaces, the devices and the processes all vanish when the testbed closes, when the
controller is interrupted, and when it dies without a chance to clean up. Nothing is named
outside the namespaces, so nothing can be left behind for a later run to remove.

Completion time is measured by the emulator as the simulator defines it
(:class:`~latency_model.sim.TransferResult` ``completion_s``): from the sender's first data
packet entering the link to the delivery, at the sender, of the ACK covering the last byte.
"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from .emulator import LinkStats, build

__all__ = ["Unavailable", "TransferSpec", "KernelTransfer", "Testbed", "machine_problem", "transfer_seeds"]

CLIENT_ADDR, SERVER_ADDR = "10.77.0.1", "10.77.0.2"
DEVICE = "lmk0"
PORTS = (10000, 60000)  # client ports, cycled: a port in TIME_WAIT (60 s) is skipped
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1


class Unavailable(RuntimeError):
    """The machine cannot run the testbed (no root, no /dev/net/tun, no namespaces, no cc)."""


def machine_problem() -> str | None:
    """Why this machine cannot run the testbed, or ``None``: root, ``/dev/net/tun``
    (read-write), the ``ip`` command and a C compiler are needed; namespaces are tried when
    the testbed starts."""
    import shutil

    if sys.platform != "linux":
        return f"the kernel testbed needs Linux (this is {sys.platform})"
    if os.geteuid() != 0:
        return "the kernel testbed needs root (network namespaces and TUN devices)"
    if not os.path.exists("/dev/net/tun") or not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        return "the kernel testbed needs /dev/net/tun (read-write)"
    if shutil.which("ip") is None:
        return "the kernel testbed needs the ip command (iproute2)"
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        return "the kernel testbed needs a C compiler (cc) to build its link emulator"
    return None


def config_hz() -> int | None:
    """The running kernel's ``CONFIG_HZ`` (its timers' tick, jiffies a second) from
    ``/proc/config.gz``, or ``None`` when the kernel does not expose its configuration."""
    import gzip

    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            for line in f:
                if line.startswith("CONFIG_HZ="):
                    return int(line.split("=", 1)[1])
    except (OSError, ValueError):
        return None
    return None


def _child_setup(new_netns: bool):
    """preexec_fn: die with the parent; optionally enter a new network namespace."""
    def setup():
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() == 1:  # the parent died before prctl
            os._exit(1)
        if new_netns and libc.unshare(_CLONE_NEWNET) != 0:
            os._exit(97)
    return setup


def transfer_seeds(seed: int, runs: int) -> list[int]:
    """64-bit loss seeds of transfers ``0..runs-1``: child ``i`` of
    ``SeedSequence(seed).spawn(runs)``, as :func:`~latency_model.sim.simulate` seeds run ``i``,
    so a transfer's losses do not depend on the concurrency."""
    return [int(c.generate_state(1, np.uint64)[0]) for c in np.random.SeedSequence(seed).spawn(runs)]


@dataclass(frozen=True)
class TransferSpec:
    """One transfer to run.

    Attributes
    ----------
    index : int
        Run number within its cell.
    size_bytes : int
        Bytes written by the sender.
    cc : str
        Congestion control (``TCP_CONGESTION``): ``reno`` or ``cubic``.
    seed : int
        Seed of the emulator's loss stream for this transfer (0 .. 2**64 - 1).
    p : float
        Loss probability of each data transmission.
    drops : tuple of int
        Segments (0-based) whose first transmission is dropped.
    """

    index: int
    size_bytes: int
    cc: str
    seed: int
    p: float
    drops: tuple = ()


@dataclass(frozen=True)
class KernelTransfer:
    """Measures of one real transfer (times in seconds).

    ``completion_s`` as the simulator's; ``lost_packets`` data transmissions the emulator
    dropped; ``timeouts`` RTO expiries (``tcpi_total_rto``); ``fin_bare``: the FIN left as
    a bare segment before the data was all acknowledged; ``dropped_segments``: the segment
    (0-based) of each dropped transmission, in the order dropped.
    """

    index: int
    size_bytes: int
    cc: str
    seed: int
    completion_s: float
    lost_packets: int
    first_transmissions_lost: int
    data_packets_sent: int
    retransmissions: int
    timeouts: int
    fin_bare: int
    total_retrans: int
    srtt_s: float
    rto_s: float
    port: int
    dropped_segments: tuple = ()

    def to_dict(self) -> dict:
        return asdict(self)


class _Proc:
    """A child with line-oriented stdin/stdout."""

    def __init__(self, argv, new_netns: bool, env=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  preexec_fn=_child_setup(new_netns), bufsize=0, env=env)
        os.set_blocking(self.p.stdout.fileno(), False)
        self.buf = b""
        self.kept: list[str] = []  # lines read while waiting for another one

    def send(self, line: str) -> None:
        self.p.stdin.write((line + "\n").encode())

    def lines(self) -> list[str]:
        try:
            chunk = self.p.stdout.read()
        except BlockingIOError:
            chunk = None
        if chunk:
            self.buf += chunk
        *done, self.buf = self.buf.split(b"\n")
        kept, self.kept = self.kept, []
        return kept + [x.decode() for x in done]

    def stop(self) -> None:
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
            except OSError:
                pass
            try:
                self.p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        for f in (self.p.stdout, self.p.stderr):
            try:
                f.close()
            except OSError:
                pass


@dataclass
class Testbed:
    """A running testbed (use as a context manager: it always cleans up).

    Parameters
    ----------
    delay_s : float
        One-way propagation delay of the emulated link, seconds.
    rate_bps : float
        Link rate, bit/s (each transfer has its own link: concurrent transfers never queue
        behind each other).
    mss_bytes : int
        Payload per segment: the TUN devices' MTU is ``mss_bytes + 52`` (IPv4 20 + TCP 20 +
        timestamps 12), so Linux's MSS with timestamps is ``mss_bytes``.
    packet_log : path, optional
        The emulator's packet log (CSV).

    Attributes
    ----------
    kernel_release, hz, sysctls
        ``uname -r``, ``CONFIG_HZ`` (None if not exposed) and every ``net.ipv4.tcp_*``
        sysctl of the sender's namespace, filled in by :meth:`start`.
    fifo : bool
        Whether the emulator got SCHED_FIFO.

    Raises
    ------
    ValueError
        For a delay outside [0, 10] s, a rate outside [1e5, 1e10] bit/s or an MSS outside
        [40, 1400] bytes.
    """

    delay_s: float = 0.05
    rate_bps: float = 100e6
    mss_bytes: int = 500
    packet_log: str | None = None
    sysctls: dict = field(default_factory=dict)
    kernel_release: str = ""
    hz: int | None = None
    fifo: bool = False
    _procs: dict = field(default_factory=dict)
    _port: int = PORTS[0]

    HEADER_BYTES = 52
    __test__ = False  # not a pytest test class

    def __post_init__(self) -> None:
        from ..checks import check_int, check_real

        self.delay_s = check_real("delay_s", self.delay_s, low=0.0, high=10.0)
        self.rate_bps = check_real("rate_bps", self.rate_bps, low=1e5, high=1e10)
        self.mss_bytes = check_int("mss_bytes", self.mss_bytes, low=40, high=1400)

    # -- lifetime -------------------------------------------------------------
    def __enter__(self) -> "Testbed":
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        problem = machine_problem()
        if problem:
            raise Unavailable(problem)
        try:
            exe = build()
        except RuntimeError as exc:
            raise Unavailable(str(exc)) from None
        self.kernel_release = os.uname().release
        self.hz = config_hz()
        py = [sys.executable, "-m", "latency_model.kernel.endpoint"]
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        for role in ("client", "server"):
            self._procs[role] = _Proc(py + [role], new_netns=True, env=env)
        time.sleep(0.05)
        for role in ("client", "server"):
            if self._procs[role].p.poll() is not None:
                raise Unavailable("the kernel testbed could not create a network namespace (unshare failed)")
        a, b = (f"/proc/{self._procs[r].p.pid}/ns/net" for r in ("client", "server"))
        argv = [str(exe), "-a", a, "-b", b, "-A", DEVICE, "-B", DEVICE, "-d", repr(self.delay_s),
                "-r", repr(float(self.rate_bps))]
        if self.packet_log:
            argv += ["-l", str(self.packet_log)]
        self._procs["link"] = _Proc(argv, new_netns=False)
        ready = self._expect("link", "ready", 10.0)
        self.fifo = ready.split()[1:] == ["1"]
        mtu = str(self.mss_bytes + self.HEADER_BYTES)
        for role, (me, peer) in (("client", (CLIENT_ADDR, SERVER_ADDR)), ("server", (SERVER_ADDR, CLIENT_ADDR))):
            self._procs[role].send(f"setup {DEVICE} {me} {peer} {mtu}")
            got = self._expect(role, "sysctls", 10.0)
            values = json.loads(got.split(" ", 1)[1])
            if role == "client":
                self.sysctls = values
        self._procs["server"].send(f"listen {SERVER_ADDR} 5001")
        self._expect("server", "listening", 10.0)

    def close(self) -> None:
        """Stop every child (its namespace and TUN device go with it)."""
        for name in ("client", "server", "link"):
            proc = self._procs.pop(name, None)
            if proc is not None:
                proc.stop()

    # -- plumbing -------------------------------------------------------------
    def _expect(self, name: str, word: str, timeout_s: float) -> str:
        proc = self._procs[name]
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            lines = proc.lines()
            for i, line in enumerate(lines):
                if line.split(" ", 1)[0] == word:
                    proc.kept = lines[:i] + lines[i + 1:] + proc.kept
                    return line
                if line.startswith("error"):
                    raise RuntimeError(f"testbed {name}: {line}")
            proc.kept = lines + proc.kept
            if proc.p.poll() is not None:
                err = proc.p.stderr.read().decode(errors="replace").strip().splitlines()
                raise Unavailable(f"testbed {name} stopped: {err[-1] if err else 'no message'}")
            sel = selectors.DefaultSelector()
            sel.register(proc.p.stdout, selectors.EVENT_READ)
            sel.select(0.05)
            sel.close()
        raise RuntimeError(f"testbed {name}: no '{word}' within {timeout_s:g} s")

    def _next_port(self) -> int:
        port = self._port
        self._port = PORTS[0] + (self._port + 1 - PORTS[0]) % (PORTS[1] - PORTS[0])
        return port

    def link_stats(self) -> LinkStats:
        """Lateness of the emulator's deliveries since the last call."""
        self._procs["link"].send("stats")
        line = self._expect("link", "stats", 5.0)
        return LinkStats(*map(int, line.split()[1:6]))

    # -- transfers --------------------------------------------------------------
    def run(self, specs, concurrency: int = 8, timeout_s: float = 300.0, progress=None) -> list[KernelTransfer]:
        """Run the transfers ``specs`` (a list of :class:`TransferSpec`), ``concurrency`` at a
        time, each on its own emulated link; return one :class:`KernelTransfer` per spec in
        the order given.

        Raises
        ------
        RuntimeError
            A transfer that did not finish within ``timeout_s`` seconds, or that failed
            (the reason from the client).
        """
        link, client = self._procs["link"], self._procs["client"]
        todo = list(specs)[::-1]
        live: dict[int, list] = {}  # port -> [spec, start time, done line, info]
        out: dict[int, KernelTransfer] = {}
        sel = selectors.DefaultSelector()
        sel.register(link.p.stdout, selectors.EVENT_READ)
        sel.register(client.p.stdout, selectors.EVENT_READ)
        try:
            while todo or live:
                while todo and len(live) < concurrency:
                    spec = todo.pop()
                    port = self._next_port()
                    drops = ",".join(str(int(i)) for i in spec.drops) or "-"
                    link.send(f"flow {port} {spec.seed} {spec.p!r} {spec.size_bytes} {self.mss_bytes} {drops}")
                    self._expect("link", "ok", 5.0)
                    client.send(f"run {port} {spec.size_bytes} {spec.cc} {CLIENT_ADDR} {SERVER_ADDR}")
                    live[port] = [spec, time.monotonic(), None, None]
                sel.select(0.5)
                for line in link.lines():
                    w = line.split()
                    if w and w[0] == "done" and int(w[1]) in live:
                        live[int(w[1])][2] = w
                for line in client.lines():
                    w = line.split(" ", 2)
                    if len(w) < 2 or int(w[1]) not in live:
                        continue
                    if w[0] == "info":
                        live[int(w[1])][3] = json.loads(w[2])
                    elif w[0] == "fail":
                        spec = live.pop(int(w[1]))[0]
                        if "in use" in line:
                            todo.append(spec)  # a port still in TIME_WAIT: next port
                        else:
                            raise RuntimeError(f"kernel transfer {spec.index} failed: {w[2] if len(w) > 2 else ''}")
                now = time.monotonic()
                for port, (spec, t0, done, info) in list(live.items()):
                    if done is not None and info is not None:
                        del live[port]
                        out[spec.index] = _record(spec, port, done, info)
                        if progress is not None:
                            progress(1)
                    elif now - t0 > timeout_s:
                        raise RuntimeError(f"kernel transfer {spec.index} did not finish within {timeout_s:g} s")
                for name, proc in self._procs.items():
                    if proc.p.poll() is not None:
                        raise RuntimeError(f"testbed {name} stopped unexpectedly")
        finally:
            sel.close()
        return [out[s.index] for s in specs]


def _record(spec: TransferSpec, port: int, done: list, info: dict) -> KernelTransfer:
    t_first, t_done, tx, retx, lost, first_lost, fin_bare = (int(x) for x in done[2:9])
    return KernelTransfer(
        index=spec.index, size_bytes=spec.size_bytes, cc=spec.cc, seed=spec.seed,
        completion_s=(t_done - t_first) / 1e9, lost_packets=lost, first_transmissions_lost=first_lost,
        data_packets_sent=tx, retransmissions=retx, timeouts=int(info.get("total_rto", -1)),
        fin_bare=fin_bare, total_retrans=int(info.get("total_retrans", -1)),
        srtt_s=info.get("rtt_us", 0) / 1e6, rto_s=info.get("rto_us", 0) / 1e6, port=port,
        dropped_segments=() if done[9] == "-" else tuple(int(x) for x in done[9].split(",")))
