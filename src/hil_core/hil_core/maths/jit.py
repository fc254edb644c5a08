"""numba ``njit`` with an on-disk cache that may be absent (shared by the compiled hot paths).

``cache=True`` stores the machine code next to the source (``__pycache__``) or in the user's
cache directory, so a new process loads it in milliseconds instead of compiling for seconds.
When no cache location is writable (read-only install, no writable home), numba refuses
``cache=True`` at decoration time with a RuntimeError: then the function is compiled in memory
on its first call in every process, which is slower to start but computes the same. Nothing
global (numba.config, environment) is changed.

numba checks a cached kernel against its own source file only, not against the files of the
kernels it inlines (an edited ``inverse_kernel.py`` would leave the timebase kernel stale) nor the
options chosen here. :func:`njit_cached` therefore stamps each cache with the contents of this
file, the kernel's file and the files it ``depends`` on.

Nothing is compiled at import: the ``warm_up()`` functions of the compiled modules compile (or
load from the cache) every kernel with the argument types the callers use, and report how long
that took, so a node can pay it during configuration instead of in its first real-time cycle.
"""
from __future__ import annotations

import hashlib
import inspect
import pathlib
import time

from numba import njit

CACHE_FALLBACKS: list = []     # kernels that could not use the on-disk cache, and why
_OPTIONS = dict(error_model='numpy')   # float division by zero -> inf/NaN as in numpy, no checks


def _files_hash(files) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(pathlib.Path(f).read_bytes())
    return h.hexdigest()


def njit_cached(fn=None, *, depends=()):
    """``njit(cache=True, error_model='numpy')`` where possible, else without the cache.

    ``depends``: modules whose kernels ``fn`` calls (their source is part of the cache stamp).
    """
    if fn is None:
        return lambda f: njit_cached(f, depends=depends)
    name = f'{fn.__module__}.{fn.__qualname__}'
    try:
        disp = njit(cache=True, **_OPTIONS)(fn)
    except RuntimeError as exc:            # 'cannot cache function ...: no locator available'
        CACHE_FALLBACKS.append(f'{name}: {exc}')
        return njit(**_OPTIONS)(fn)
    files = [__file__, inspect.getfile(fn)] + [inspect.getfile(m) for m in depends]
    try:
        cache_file = disp._cache._cache_file            # numba internals (pinned numba version)
        cache_file._source_stamp = (cache_file._source_stamp, _files_hash(files))
    except AttributeError as exc:          # another numba: no safe cache without the stamp
        CACHE_FALLBACKS.append(f'{name}: cannot stamp the cache ({exc})')
        return njit(**_OPTIONS)(fn)
    return disp


def cache_stamp(dispatcher):
    """The freshness stamp of a kernel's on-disk cache (None without a cache): for the tests."""
    cache = getattr(dispatcher, '_cache', None)
    cache_file = getattr(cache, '_cache_file', None)
    return getattr(cache_file, '_source_stamp', None)


def timed_warm_up(run) -> float:
    """Seconds ``run()`` takes (the compile or cache-load cost of its first call)."""
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def compile_frozen(signatures: dict) -> float:
    """Compile (or load from the cache) each kernel of ``{kernel: [signature, ...]}`` for its
    signatures and freeze it (``disable_compile``: a call with other types raises TypeError
    instead of compiling in a frame); seconds taken."""
    def build():
        for kernel, sigs in signatures.items():
            for sig in sigs:
                kernel.compile(sig)
            kernel.disable_compile()
    return timed_warm_up(build)


class FrozenKernels:
    """A kernel module's entry points, compiled once for their signatures and frozen
    (``compile_frozen``): the module exposes ``warm_up = KERNELS.warm_up`` and ``ready = KERNELS.ready``."""

    def __init__(self, signatures: dict):
        self.signatures = signatures
        self.seconds: float | None = None

    def warm_up(self) -> float:
        """Compile (or load from the cache) and freeze; seconds taken (0.0 when already done)."""
        if self.seconds is not None:
            return 0.0
        self.seconds = compile_frozen(self.signatures)
        return self.seconds

    def ready(self) -> bool:
        return self.seconds is not None
