"""The machine's own Linux TCP as a reference: real transfers between two network
namespaces joined by TUN devices and a link emulator (``docs/kernel.md``).

:class:`Testbed` runs transfers; :func:`measure` runs a cell of them and summarises it as
``simulate`` does. Needs root, ``/dev/net/tun`` and a C compiler; :func:`machine_problem`
says what is missing. Names are imported on first use (the endpoints that run inside the
namespaces import nothing but the standard library).
"""

from __future__ import annotations

import importlib

_API = {
    "Testbed": "testbed", "TransferSpec": "testbed", "KernelTransfer": "testbed",
    "Unavailable": "testbed", "machine_problem": "testbed", "transfer_seeds": "testbed",
    "measure": "measure", "KernelCell": "measure", "summarise": "measure", "self_check": "measure",
}

__all__ = sorted(_API)


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_API[name]}", __name__), name)
    globals()[name] = value
    return value
