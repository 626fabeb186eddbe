"""Optional numba compilation, shared by the solver and the simulator.

numba is a regular dependency (it installs as a wheel with the README's command). A kernel
is plain Python over numpy arrays that :func:`compile_twins` compiles as it is; where numba
is missing or switched off the same functions run interpreted, with bit-identical results
(numba compiles without fast-math, so nothing is reassociated or fused). Setting the environment
variable ``LATENCY_MODEL_NO_NUMBA=1`` forces the pure path (used to test the default
install).
"""

from __future__ import annotations

import functools
import os

__all__ = ["numba_available", "numba_cache_dir", "compile_twin", "compile_twins", "inline", "uncounted", "held"]


def numba_available() -> bool:
    """True if numba can be imported and is not switched off by ``LATENCY_MODEL_NO_NUMBA``.

    Importing numba through here first points its on-disk cache at
    :func:`numba_cache_dir`, so compiled code never lands inside the installed package.
    """
    if os.environ.get("LATENCY_MODEL_NO_NUMBA"):
        return False
    os.environ.setdefault("NUMBA_CACHE_DIR", numba_cache_dir())
    try:
        import numba
    except Exception:  # pragma: no cover - depends on the environment
        return False
    if not numba.config.CACHE_DIR:  # numba was imported before us, without NUMBA_CACHE_DIR
        numba.config.CACHE_DIR = numba_cache_dir()
    _install_package_locator()
    return True


_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The folder holding the ``latency_model`` package (site-packages, or a source checkout)."""


def _package_relative(path: str) -> str | None:
    """``path`` relative to :data:`_PACKAGE_PARENT` (``latency_model/sim/flat.py``), or
    ``None`` for a file outside the package."""
    rel = os.path.relpath(os.path.abspath(path), _PACKAGE_PARENT)
    return rel if rel.split(os.sep, 1)[0] == "latency_model" else None


@functools.cache
def _install_package_locator() -> None:
    """Key numba's cache of this package's kernels by their place in the package and their
    content, not by the absolute path of the installed copy.

    numba files a compiled function under a hash of its source folder's absolute path, so
    the copy that ``pip install .`` puts in site-packages and an editable install of the
    same sources each compiled everything afresh (about 1.5 CPU-minutes), and the two never
    shared. Here a locator put first in numba's list files the package's functions under
    ``<cache>/latency_model/<subpackage>`` and validates them by a SHA-256 of the source
    (numba's own stamp is the file's mtime and size in releases before 0.68): the same
    sources, wherever installed, load the same machine code; other sources recompile.
    Files outside the package keep numba's own locators. Where numba's cache internals
    differ, nothing is changed (each copy then compiles once, as before)."""
    import hashlib

    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - another numba's layout
        return
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    base = (getattr(caching, "UserProvidedCacheLocator", None)
            or getattr(caching, "_UserProvidedCacheLocator", None))
    classes = getattr(impl, "_locator_classes", None)
    if base is None or not isinstance(classes, list):  # pragma: no cover - another numba's layout
        return

    class PackageCacheLocator(base):
        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            from numba.core import config

            self._cache_path = os.path.join(config.CACHE_DIR, os.path.dirname(_package_relative(py_file)))

        def get_source_stamp(self):
            with open(self._py_file, "rb") as fh:
                return hashlib.sha256(fh.read()).hexdigest()

        @classmethod
        def from_function(cls, py_func, py_file):
            if _package_relative(py_file) is None:
                return None
            return super().from_function(py_func, py_file)

    impl._locator_classes = [PackageCacheLocator, *classes]


def numba_cache_dir() -> str:
    """Folder of numba's compiled-code cache: ``NUMBA_CACHE_DIR`` when set, else
    ``<user cache>/latency_model/numba`` (``platformdirs.user_cache_dir``, e.g.
    ``~/.cache/latency_model/numba`` on Linux).

    numba's default, a ``__pycache__`` beside each source file, writes files that pip does
    not record: after ``pip install .`` they outlive an uninstall, and the leftover package
    folder then shadows a later editable install.
    """
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return given
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("latency_model", appauthor=False), "numba")


def compile_twin(namespace: dict, helpers, entry):
    """numba-compiled copy of ``entry``, or ``None`` when :func:`numba_available` is False.

    ``helpers`` (names in ``namespace``, a module's ``globals()``, in dependency order) are
    compiled first into a private copy of ``namespace`` that ``entry`` then resolves its
    globals in, so the module's own functions stay the pure-Python twins. ``cache=True``:
    numba keeps the machine code on disk (keyed by the functions' place in the package and their source), so a
    process compiles once per install.
    """
    twins = compile_twins(namespace, helpers, (entry,))
    return None if twins is None else twins[0]


def compile_twins(namespace: dict, helpers, entries):
    """:func:`compile_twin` for several entry points sharing one compiled set of helpers:
    a tuple of compiled functions, or ``None`` when numba is not available."""
    if not numba_available():
        return None
    import numba

    ns = dict(namespace)
    stamp = _sources_stamp(namespace, entries)
    for name, intrinsic in _intrinsics().items():
        if ns.get(name) is globals()[name]:
            ns[name] = intrinsic
    for name in helpers:
        fn = namespace[name]
        ns[name] = _fresh(numba.njit(cache=True, nogil=True, **_inline_option(fn))(_rebind(fn, ns)), stamp)
    compiled = tuple(_fresh(numba.njit(cache=True, nogil=True, **_inline_option(entry))(_rebind(entry, ns)), stamp)
                     for entry in entries)
    _announce_compile(namespace.get("__name__", "?"), compiled)
    return compiled


def _inline_option(fn) -> dict:
    """numba's option for ``fn``: ``inline="always"`` where :func:`inline` marked it."""
    return {"inline": "always"} if getattr(fn, "inline_compiled", False) else {}


def _announce_compile(module: str, dispatchers) -> None:
    """One line on a terminal's stderr when ``dispatchers`` have no machine code in numba's
    cache yet: their first call compiles (once per install and source version, up to about
    a minute), which would otherwise look like a hang. Silent when stderr is not a terminal
    (logs, tests) and for code already cached."""
    import sys

    try:
        if not sys.stderr.isatty():
            return
        missing = [d for d in dispatchers if not os.path.exists(d._cache._cache_file._index_path)]
    except (AttributeError, ValueError, OSError):  # another numba's internals, a closed stream
        return
    if missing:
        print(f"latency-model: compiling {module}'s numba kernels (once per install; later runs load them "
              f"from {numba_cache_dir()})", file=sys.stderr, flush=True)


def inline(fn):
    """Mark ``fn`` (a helper or an entry of :func:`compile_twins`) to be inlined where it is called
    (numba's ``inline="always"``, at the level of numba's IR); interpreted, nothing changes.
    For small helpers called from many places: a call that LLVM does not inline passes
    each array argument as a struct of seven or more fields."""
    fn.inline_compiled = True
    return fn


def _source_files(namespace: dict, entries) -> set:
    """The source files a compiled set depends on: the namespace's module and the file of
    every function in it or among ``entries`` (the helpers imported from other modules, and
    with them the constants those modules define); for a function compiled before (a numba
    dispatcher, e.g. a growth rule's law from :mod:`latency_model.growth.laws`), its own
    file and, recursively, the files of the functions its globals hold, so that editing a
    rule recompiles the engine that calls its law."""
    import types

    files = {namespace.get("__file__")}
    seen = set()

    def add(fn, depth):
        code = getattr(fn, "__code__", None)
        if code is not None:
            files.add(code.co_filename)
        py_func = getattr(fn, "py_func", None)
        if py_func is not None and id(fn) not in seen and depth < 8:
            seen.add(id(fn))
            add(py_func, depth + 1)
            for g in list(py_func.__globals__.values()):
                if hasattr(g, "py_func") or isinstance(g, types.FunctionType):
                    add(g, depth + 1)

    for fn in [*namespace.values(), *entries]:
        add(fn, 0)
    return {f for f in files if f and os.path.isfile(f)}


def _sources_stamp(namespace: dict, entries) -> str:
    """SHA-256 of the files of :func:`_source_files`, each named by its place in the package
    (:func:`_package_relative`), so that installed and editable copies of the same sources
    agree."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted(_source_files(namespace, entries), key=lambda f: _package_relative(f) or f):
        with open(f, "rb") as fh:
            h.update((_package_relative(f) or f).encode() + b"\0" + fh.read())
    return h.hexdigest()


def _fresh(dispatcher, stamp: str):
    """``dispatcher`` with its on-disk cache dropped if the sources behind it changed.

    numba keys its cache by the compiled function's own bytecode and file, not by the
    helpers it inlines from other files nor the constants it reads from them: a kernel in
    ``_packet_levels.py`` kept the machine code of an older ``_packet_flat.py`` (a stale
    ``_rtt_sample``) until its own file changed. A ``.deps`` file beside the cache's index
    holds :func:`_sources_stamp`; on a mismatch the index is removed, so the first call
    compiles afresh. Where numba's cache internals differ or the folder is not writable,
    nothing is done."""
    try:
        index = dispatcher._cache._cache_file._index_path
    except AttributeError:  # pragma: no cover - another numba's internals
        return dispatcher
    deps = index + ".deps"
    try:
        with open(deps) as fh:
            if fh.read() == stamp:
                return dispatcher
    except OSError:
        pass
    try:
        if os.path.exists(index):
            os.remove(index)
        os.makedirs(os.path.dirname(deps), exist_ok=True)
        tmp = f"{deps}.{os.getpid()}.tmp"
        with open(tmp, "w") as fh:
            fh.write(stamp)
        os.replace(tmp, deps)
    except OSError:  # a read-only install: numba caches elsewhere or not at all
        pass
    return dispatcher


def _rebind(fn, ns: dict):
    """Copy of ``fn`` whose global names resolve in ``ns``."""
    import types

    return types.FunctionType(fn.__code__, ns, fn.__name__, fn.__defaults__, fn.__closure__)


def uncounted(arrays):
    """``arrays`` (an array or a tuple of arrays) as views that numba does not reference-count.

    Pure Python: ``arrays`` itself. Compiled (:func:`compile_twins` puts an intrinsic in its
    place): the same arrays with a null meminfo, so that passing them to a helper, or taking a
    row of them, costs no atomic increment and decrement (numba's ``NRT_incref`` and
    ``NRT_decref`` skip a null meminfo). Measured (docs/packet-model.md, its cost): those atomics
    were half the packet model's time, as every helper call increments and decrements each
    array it is given. The views must not outlive what owns the memory: a kernel's arguments
    (held by its caller) or a local array kept referenced past the views' last use
    (:func:`held`). Nothing is computed differently: the results are the same bits."""
    return arrays


def held(arrays):
    """Nothing (pure and compiled): a use of ``arrays`` (an array or a tuple of arrays), which
    numba keeps alive up to here, so :func:`uncounted` views of them stay valid until then."""
    return None


@functools.cache
def _intrinsics() -> dict:
    """The compiled :func:`uncounted` and :func:`held` (numba intrinsics)."""
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    def arrays_of(ty):
        if isinstance(ty, types.Array):
            return True
        return isinstance(ty, types.BaseTuple) and all(isinstance(t, types.Array) for t in ty)

    def strip(context, builder, ty, value):
        ary = context.make_array(ty)(context, builder, value=value)
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()

    @intrinsic
    def uncounted_(typingctx, arrays):
        if not arrays_of(arrays):
            return None

        def codegen(context, builder, sig, args):
            if isinstance(arrays, types.Array):
                return strip(context, builder, arrays, args[0])
            items = [strip(context, builder, ty, builder.extract_value(args[0], i))
                     for i, ty in enumerate(arrays)]
            return context.make_tuple(builder, sig.return_type, items)

        return arrays(arrays), codegen

    @intrinsic
    def held_(typingctx, arrays):
        if not arrays_of(arrays):
            return None

        def codegen(context, builder, sig, args):
            return context.get_dummy_value()

        return types.none(arrays), codegen

    return {"uncounted": uncounted_, "held": held_}
