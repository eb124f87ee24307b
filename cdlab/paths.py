"""Where cdlab keeps files on the user's machine: one cache root for every cache.

    $CDLAB_CACHE                    if set
    the platform's user cache dir   otherwise (platformdirs: $XDG_CACHE_HOME/cdlab or ~/.cache/cdlab
                                    on Linux, ~/Library/Caches/cdlab on macOS, %LOCALAPPDATA% on Windows)

Fetched datasets go to ``data_home()`` (``$CDLAB_DATA_DIR``, else ``<cache root>/data``);
certified reference optima to ``<cache root>/reference``; compiled kernels to
``<cache root>/numba/<source digest>`` (cdlab/_jit_cache.py).
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """$CDLAB_CACHE, else the platform's user cache directory for cdlab (not created here)."""
    env = os.environ.get("CDLAB_CACHE")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("cdlab", appauthor=False))


def data_home() -> Path:
    """$CDLAB_DATA_DIR, else <cache root>/data: where fetched datasets live (not created here)."""
    env = os.environ.get("CDLAB_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return cache_root() / "data"
