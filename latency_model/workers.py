"""Worker processes that end with their parent.

:func:`watch_parent` is the initializer guard of every process pool of the package (the
sweep, the reproduction, the Monte Carlo's ``workers``, the experiments): after a SIGKILL of
the parent no worker lives on under PID 1 holding memory and pipes. It imports
nothing of the package, so the model, the simulator and the studies can all use it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

__all__ = ["PARENT_POLL_S", "watch_parent", "worker_init"]


PARENT_POLL_S = 0.5
"""Seconds between two checks, in a worker process, that its parent is still alive."""


def watch_parent(parent_pid: int | None = None, poll_s: float = PARENT_POLL_S) -> None:
    """Make this (worker) process exit when process ``parent_pid`` dies.

    A worker blocked on its task queue would otherwise live on under PID 1 after the
    parent is killed (SIGKILL runs no clean-up, and the queue's pipe stays open in the
    other workers). Two guards: on Linux, ``PR_SET_PDEATHSIG`` has the kernel send SIGKILL
    when the direct parent dies; everywhere, a daemon thread checks every ``poll_s``
    seconds that the direct parent (``os.getppid()``) is unchanged and that ``parent_pid``
    (default: the direct parent; another one under a fork server) still exists, and ends
    the process (``os._exit``) otherwise. Call it in the worker's initializer.
    """
    direct = os.getppid()
    parent_pid = direct if parent_pid is None else parent_pid
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def alive() -> bool:
        if os.getppid() != direct:
            return False
        if parent_pid != direct:
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                pass
        return True

    if not alive():  # died before the guards were set
        os._exit(1)

    def poll():
        while alive():
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=poll, name="watch-parent", daemon=True).start()


def worker_init(parent_pid: int) -> None:
    """Pool initializer: exit with process ``parent_pid`` (see :func:`watch_parent`).

    Use as ``ProcessPoolExecutor(initializer=worker_init, initargs=(os.getpid(),))``."""
    watch_parent(parent_pid)
