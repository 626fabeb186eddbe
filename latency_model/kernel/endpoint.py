"""The two ends of the testbed's transfers, each run in its own network namespace.

``python -m latency_model.kernel.endpoint client|server`` reads commands on stdin and
answers on stdout, one line each (the controller is :mod:`.testbed`):

- ``setup DEV ADDR PEER MTU``: bring ``lo`` and ``DEV`` up with ``ADDR`` (peer ``PEER``)
  and ``MTU``; set ``net.ipv4.tcp_no_metrics_save = 1`` (each transfer starts as on a fresh
  host, not from the cached RTT of the one before); answer ``sysctls {json}``, every
  ``net.ipv4.tcp_*`` and ``net.core.default_qdisc`` of this namespace.
- server ``listen ADDR PORT``: accept connections, read each to its end, close it.
- client ``run PORT SIZE CC``: connect from ``PORT`` with congestion control ``CC``, write
  ``SIZE`` bytes in one call (the send buffer holds them all), shut the write side (FIN),
  read to the server's FIN; answer ``info PORT {json}`` with the socket's TCP_INFO
  (``total_rto``: RTO expiries, Linux >= 6.7) or ``fail PORT reason``.

Only addresses inside the testbed's namespaces are used.
"""

from __future__ import annotations

import errno
import json
import os
import selectors
import socket
import struct
import subprocess
import sys

SERVER_PORT = 5001
SNDBUF_BYTES = 1 << 22

# struct tcp_info (include/uapi/linux/tcp.h): byte offsets of the fields read
_INFO = {"ca_state": (1, "B"), "backoff": (4, "B"), "rto_us": (8, "I"), "snd_mss": (16, "I"),
         "rtt_us": (68, "I"), "rttvar_us": (72, "I"), "snd_ssthresh": (76, "I"), "snd_cwnd": (80, "I"),
         "total_retrans": (100, "I"), "segs_out": (136, "I"), "data_segs_out": (156, "I"),
         "min_rtt_us": (148, "I"), "dsack_dups": (216, "I"), "total_rto": (240, "H"),
         "total_rto_recoveries": (242, "H"), "total_rto_time_ms": (244, "I")}
_INFO_LEN = 248


def tcp_info(sock: socket.socket) -> dict:
    """The fields of :data:`_INFO` from ``getsockopt(TCP_INFO)``; a field past the end of
    what this kernel returns is left out."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _INFO_LEN)
    out = {}
    for name, (off, fmt) in _INFO.items():
        if off + struct.calcsize(fmt) <= len(raw):
            out[name] = struct.unpack_from("=" + fmt, raw, off)[0]
    return out


def sysctls() -> dict:
    """Every ``net.ipv4.tcp_*`` of this namespace, and ``net.core.default_qdisc``."""
    out = {}
    base = "/proc/sys/net/ipv4"
    for name in sorted(os.listdir(base)):
        if name.startswith("tcp_"):
            try:
                with open(os.path.join(base, name)) as f:
                    out[f"net.ipv4.{name}"] = " ".join(f.read().split())
            except OSError:
                pass
    try:
        with open("/proc/sys/net/core/default_qdisc") as f:
            out["net.core.default_qdisc"] = f.read().strip()
    except OSError:
        pass
    return out


def setup(dev: str, addr: str, peer: str, mtu: str) -> dict:
    for cmd in (["ip", "link", "set", "lo", "up"],
                ["ip", "link", "set", dev, "mtu", mtu, "up"],
                ["ip", "addr", "add", addr, "peer", peer, "dev", dev]):
        subprocess.run(cmd, check=True, capture_output=True)
    with open("/proc/sys/net/ipv4/tcp_no_metrics_save", "w") as f:
        f.write("1")
    return sysctls()


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class _Conn:
    __slots__ = ("sock", "port", "left", "state")

    def __init__(self, sock, port, payload):
        self.sock, self.port, self.left, self.state = sock, port, memoryview(payload), "connect"


def serve(sel: selectors.BaseSelector, addr: str, port: int) -> None:
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind((addr, port))
    lst.listen(4096)
    lst.setblocking(False)
    sel.register(lst, selectors.EVENT_READ, "listen")


def main(role: str) -> int:
    sel = selectors.DefaultSelector()
    os.set_blocking(0, False)
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    pending = b""
    payloads: dict[int, bytes] = {}
    while True:
        for key, _ in sel.select():
            what = key.data
            if what == "stdin":
                chunk = os.read(0, 65536)
                if not chunk:
                    return 0
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    _command(sel, role, line.decode().split(), payloads)
            elif what == "listen":
                try:
                    conn, _ = key.fileobj.accept()
                except OSError:
                    continue
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ, "drain")
            elif what == "drain":
                try:
                    data = key.fileobj.recv(1 << 16)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
            else:
                _client_event(sel, key.fileobj, what)


def _command(sel, role: str, words: list, payloads: dict) -> None:
    if not words:
        return
    if words[0] == "setup":
        say("sysctls " + json.dumps(setup(*words[1:5])))
    elif words[0] == "listen" and role == "server":
        serve(sel, words[1], int(words[2]))
        say("listening")
    elif words[0] == "run" and role == "client":
        port, size, cc, local, remote = int(words[1]), int(words[2]), words[3], words[4], words[5]
        payload = payloads.get(size)
        if payload is None:
            payload = payloads[size] = bytes(size)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF_BYTES)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
            s.bind((local, port))
            s.setblocking(False)
            err = s.connect_ex((remote, SERVER_PORT))
            if err not in (0, errno.EINPROGRESS):
                raise OSError(err, os.strerror(err))
        except OSError as exc:
            s.close()
            say(f"fail {port} {exc.strerror or exc}".replace("\n", " "))
            return
        sel.register(s, selectors.EVENT_WRITE, _Conn(s, port, payload))
    else:
        say("error " + " ".join(words))


def _client_event(sel, sock, c: _Conn) -> None:
    try:
        if c.state == "connect":
            err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                raise OSError(err, os.strerror(err))
            c.state = "write"
        if c.state == "write":
            while c.left:
                try:
                    n = sock.send(c.left)
                except BlockingIOError:
                    return
                c.left = c.left[n:]
            sock.shutdown(socket.SHUT_WR)
            c.state = "read"
            sel.modify(sock, selectors.EVENT_READ, c)
            return
        if c.state == "read":
            while True:
                try:
                    data = sock.recv(1 << 16)
                except BlockingIOError:
                    return
                if not data:
                    break
            info = tcp_info(sock)
            sel.unregister(sock)
            sock.close()
            say(f"info {c.port} {json.dumps(info)}")
    except OSError as exc:
        try:
            sel.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()
        say(f"fail {c.port} {exc.strerror or exc}".replace("\n", " "))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
