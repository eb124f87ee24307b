"""Compiled kernels are cached per version of cdlab's source (cdlab/_jit_cache.py)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import cdlab
from cdlab import _jit_cache


def test_the_digest_follows_every_source_file(tmp_path, monkeypatch):
    """An edit to any file (here losses.py, whose steps other files' kernels inline) moves the cache."""
    copy = tmp_path / "cdlab"
    shutil.copytree(_jit_cache.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "files"))
    monkeypatch.setattr(_jit_cache, "PACKAGE", copy)
    before = _jit_cache.source_digest()
    assert before == _jit_cache.source_digest()
    with open(copy / "losses.py", "a") as f:
        f.write("\n# an edit\n")
    assert _jit_cache.source_digest() != before


def test_a_fresh_process_compiles_into_its_versions_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "CDLAB_CACHE")}
    env["CDLAB_CACHE"] = str(tmp_path)
    env["PYTHONPATH"] = str(Path(cdlab.__file__).parent.parent)
    script = ("import numpy as np, cdlab\n"
              "from numba.core import config\n"
              "from cdlab import losses\n"
              "print(config.CACHE_DIR)\n"
              "print(losses.sum_loss(0, np.ones(3), np.ones(3), 1.0))\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    where = Path(done.stdout.splitlines()[0])
    assert where == tmp_path / "numba" / _jit_cache.source_digest()
    assert list(where.rglob("*.nbi")), "no kernel was cached there"
    # numba's own setting wins
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.splitlines()[0] == str(tmp_path / "mine"), done.stderr
