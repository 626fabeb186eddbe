"""One writer per output: a lock file beside (or inside) every output a command writes.

Two runs writing the same output would each report success while one's results are lost
(the last rename wins). :func:`output_lock` and :func:`hold` take an exclusive lock on
``<file>.lock`` (a file output) or ``<dir>/.latency-model.lock`` (a folder), naming the
holder's pid, command and start time in it; a second writer is refused at once with
:class:`OutputBusy` (a ValueError) naming that pid.

The lock is ``flock(2)`` on the lock file, which the kernel drops when its holder dies
(even by SIGKILL): a lock left by a dead process is taken over, never waited for. A forked
worker closes its copy of the descriptor at once (``os.register_at_fork``), so the lock
ends with the process that took it, not with its last worker. Where ``flock`` is not
supported, the pid written in the file decides: a live pid other than ours holds it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["OutputBusy", "lock_path", "output_lock", "hold", "release", "release_held"]

DIR_LOCK = ".latency-model.lock"
"""Name of the lock file inside a locked folder."""

_held: dict = {}  # lock path -> (fd, target): the locks this process holds


class OutputBusy(ValueError):
    """An output another live process is writing: ``pid`` (None when unknown) and ``path``."""

    def __init__(self, target: Path, pid: int | None, command: str, started: str):
        who = f"pid {pid}" if pid is not None else "a process whose pid is not recorded"
        command = command if len(command) <= 60 else command[:57] + "..."
        what = f"{who}{': ' + command if command else ''}{', since ' + started if started else ''}"
        super().__init__(f"out {target} is being written by another run ({what}); wait for it to "
                         "end or choose another output")
        self.pid, self.path = pid, target


def lock_path(target) -> Path:
    """The lock file of ``target``: ``<dir>/.latency-model.lock`` for a folder (existing, or
    named with a trailing slash), ``<file>.lock`` for anything else."""
    target = Path(target)
    if target.is_dir():
        return target / DIR_LOCK
    return target.with_name(target.name + ".lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(fd: int) -> dict:
    """The holder's record from an open lock file ({} when empty or unreadable)."""
    try:
        data = os.pread(fd, 4096, 0)
        info = json.loads(data.decode("utf-8"))
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        return {}


def _busy(target: Path, info: dict) -> OutputBusy:
    pid = info.get("pid")
    return OutputBusy(target, pid if isinstance(pid, int) else None, str(info.get("command", "")),
                      str(info.get("started", "")))


def hold(target, command: str = "", remove_if_empty=()) -> Path:
    """Take the lock of ``target`` (a file or folder path) for this process, until
    :func:`release` (or :func:`release_held`, or the process's end). Taking a lock this
    process already holds is a no-op.

    Parameters
    ----------
    target : str or Path
        The output: a file, or an existing folder (see :func:`lock_path`). Its parent folder
        must exist.
    command : str
        What writes it (recorded for the message a second writer gets).
    remove_if_empty : sequence of path
        Folders the command made for this output (deepest first): removed on release
        where they are left empty (a command that failed before writing).

    Returns
    -------
    Path
        The lock file.

    Raises
    ------
    OutputBusy
        (a ValueError) When another live process holds it; names that process's pid.
    OSError
        When the lock file cannot be created (naming its path).
    """
    target = Path(target)
    path = lock_path(target)
    key = str(path.resolve())
    if key in _held:
        return path
    record = json.dumps({"pid": os.getpid(), "command": command,
                         "started": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}) + "\n"
    for attempt in range(100):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            locked = _flock(fd)
            if locked is None:  # no flock here: a live pid other than ours holds the file
                info = _holder(fd)
                pid = info.get("pid")
                locked = not (isinstance(pid, int) and pid != os.getpid() and _alive(pid))
            if not locked:
                info = _holder(fd)
                if not info and attempt < 99:  # taken a moment ago: its record is being written
                    os.close(fd)
                    time.sleep(0.01)
                    continue
                raise _busy(target, info)
            try:  # the holder before us may have removed the file between our open and lock
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, record.encode("utf-8"), 0)
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise
        _held[key] = (fd, path, tuple(Path(d) for d in remove_if_empty))
        return path
    raise _busy(target, {})  # pragma: no cover - 100 lost races in a row


def _flock(fd: int) -> bool | None:
    """Lock ``fd`` exclusively without waiting: True, False when another holds it, None
    when the file system has no flock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            return None
        raise
    return True


def release(target) -> None:
    """Release this process's lock of ``target`` (removing the lock file); no-op when not held."""
    path = lock_path(target)
    with contextlib.suppress(OSError):
        path = path.resolve()
    entry = _held.pop(str(path), None)
    if entry is not None:
        _release(*entry)


def release_held() -> None:
    """Release every lock this process holds (a command's end)."""
    for key in list(_held):
        _release(*_held.pop(key))


def _release(fd: int, lock: Path, remove_if_empty: tuple) -> None:
    try:
        if os.stat(lock).st_ino == os.fstat(fd).st_ino:
            os.unlink(lock)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    for folder in remove_if_empty:
        try:
            folder.rmdir()
        except OSError:  # holds the outputs (or anything else): it stays, and so do its parents
            break


@contextlib.contextmanager
def output_lock(target, command: str = ""):
    """``with output_lock(path, "sweep"):`` hold ``target``'s lock for the block (:func:`hold`);
    a lock this process already held stays held after the block."""
    already = str(lock_path(target).resolve()) in _held
    path = hold(target, command)
    try:
        yield path
    finally:
        if not already:
            release(target)


def _forget_in_child() -> None:
    """In a forked child: close the inherited lock descriptors (the parent holds the locks;
    the child's copies would keep them held after the parent dies)."""
    for fd, _, _ in _held.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
