"""The link emulator: a small C program (``link_emulator.c``), built on first use.

The binary goes to the user cache folder (``platformdirs.user_cache_dir``), named after a
hash of its source, so an edited source is rebuilt and the package never holds a binary.
Its logic (per-transfer serialisation at the link rate, a fixed one-way delay, seeded loss
of data packets only) is in the C file's header; :func:`serialisation_ns` and
:func:`is_droppable` restate the two rules in Python for the tests and the docs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["SOURCE", "build", "serialisation_ns", "is_droppable", "LinkStats"]

SOURCE = Path(__file__).with_name("link_emulator.c")

TCP_FIN, TCP_SYN, TCP_ACK = 0x01, 0x02, 0x10


def _cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("latency_model", appauthor=False)) / "kernel"


def build(cache_dir: str | os.PathLike | None = None) -> Path:
    """The emulator's executable, compiled with ``cc -O2`` if this source has not been yet.

    Parameters
    ----------
    cache_dir : path, optional
        Where binaries are kept (default ``<user cache>/latency_model/kernel``).

    Returns
    -------
    Path
        ``link_emulator-<hash of the source>``.

    Raises
    ------
    RuntimeError
        No C compiler (``cc``), or the compiler's first error line.
    """
    text = SOURCE.read_bytes()
    digest = hashlib.sha256(text).hexdigest()[:16]
    folder = Path(cache_dir) if cache_dir is not None else _cache_dir()
    exe = folder / f"link_emulator-{digest}"
    if exe.exists():
        return exe
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("no C compiler (cc) to build the link emulator")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".link_emulator-")
    os.close(fd)
    proc = subprocess.run([cc, "-O2", "-Wall", "-o", tmp, str(SOURCE)], capture_output=True, text=True)
    if proc.returncode != 0:
        os.unlink(tmp)
        first = (proc.stderr.strip().splitlines() or ["(no message)"])[0]
        raise RuntimeError(f"building the link emulator failed: {first}")
    os.replace(tmp, exe)  # atomic: a concurrent build leaves one complete binary
    return exe


def serialisation_ns(packet_bytes: int, rate_bps: float) -> int:
    """Time a packet of ``packet_bytes`` (IP header included) occupies the link, ns,
    rounded to the nearest ns as the emulator does: ``round(L * 8 / C * 1e9)``."""
    return int(packet_bytes * 8.0 / rate_bps * 1e9 + 0.5)


def is_droppable(payload_bytes: int, flags: int, from_sender: bool) -> bool:
    """Whether the emulator may drop a packet: only data (TCP payload > 0) from the sender.
    SYNs, pure ACKs and pure FINs (payload 0) and everything from the receiver pass."""
    return bool(from_sender and payload_bytes > 0)


class LinkStats:
    """Lateness of the emulator's deliveries: actual write time minus scheduled time.

    Attributes
    ----------
    packets : int
        Packets delivered.
    mean_us, max_us : float
        Mean and largest lateness, microseconds.
    over_100us, over_1ms : int
        Deliveries later than 100 us and 1 ms.
    """

    __slots__ = ("packets", "mean_us", "max_us", "over_100us", "over_1ms")

    def __init__(self, packets=0, sum_ns=0, max_ns=0, over_100us=0, over_1ms=0):
        self.packets = int(packets)
        self.mean_us = sum_ns / packets / 1e3 if packets else 0.0
        self.max_us = max_ns / 1e3
        self.over_100us = int(over_100us)
        self.over_1ms = int(over_1ms)

    def merge(self, other: "LinkStats") -> "LinkStats":
        """Both counts together."""
        n = self.packets + other.packets
        out = LinkStats()
        out.packets = n
        out.mean_us = (self.mean_us * self.packets + other.mean_us * other.packets) / n if n else 0.0
        out.max_us = max(self.max_us, other.max_us)
        out.over_100us = self.over_100us + other.over_100us
        out.over_1ms = self.over_1ms + other.over_1ms
        return out

    def to_dict(self) -> dict:
        return {"packets": self.packets, "mean_us": round(self.mean_us, 3), "max_us": round(self.max_us, 3),
                "over_100us": self.over_100us, "over_1ms": self.over_1ms}
