"""Where numba keeps cdlab's compiled kernels: one directory per version of cdlab's source.

numba's ``cache=True`` checks a cached kernel against its own file's timestamp only, not
against the files whose functions it compiled in (a loss's dual step from ``losses.py``
inlined into a solver in ``solvers/dual_cd.py``): after an edit or an upgrade that changed
only the loss, the solver would be loaded compiled from the old code. cdlab therefore points
numba's cache at ``<cache root>/numba/<digest of every cdlab source file>``, so any change
to the source compiles afresh, and two versions never share a kernel. ``$NUMBA_CACHE_DIR``,
when set, is numba's own setting and is left as it is. Old digests' directories are not
removed (each holds a few MB).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .paths import cache_root

PACKAGE = Path(__file__).resolve().parent


def source_digest() -> str:
    """SHA-256 (first 16 hex digits) over the path and bytes of every ``.py`` file of cdlab."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def kernel_cache_dir() -> Path:
    """``$NUMBA_CACHE_DIR`` if set, else ``<cache root>/numba/<source digest>``."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return cache_root() / "numba" / source_digest()


def configure() -> None:
    """Point numba's kernel cache at :func:`kernel_cache_dir`; must run before any kernel is
    defined (numba picks a kernel's cache directory when its ``@njit(cache=True)`` runs).
    An unwritable directory is not an error: numba then falls back to its own locations."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    from numba.core import config

    config.CACHE_DIR = str(kernel_cache_dir())
