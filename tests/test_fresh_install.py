"""A user's fresh clone: the project copied to a folder with no ``shared/`` beside it, installed
(not editable) into a new virtual environment, loads every shipped dataset by name."""
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from cdlab.data import list_datasets

ROOT = Path(__file__).resolve().parents[1]


def project_files():
    """The files a clone has: git's tracked and untracked-but-not-ignored files (else the tree)."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                             capture_output=True).stdout
        return [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts and ".venv" not in p.parts]


@pytest.mark.slow
def test_shipped_datasets_load_from_a_fresh_install(tmp_path):
    clone = tmp_path / "clone" / "cdlab-project"
    for path in project_files():
        if path.is_file():
            target = clone / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    assert not (clone.parent / "shared").exists()
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(clone)], check=True, timeout=600)
    # the dependencies come from this interpreter's site-packages (a path entry: its own .pth files,
    # among them an editable cdlab, are not read), so the test needs no download of numba & co.
    site_dir = next(Path(env_dir / "lib").glob("python*/site-packages"))
    (site_dir / "zz_test_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    script = (
        "import cdlab, sys\n"
        "from pathlib import Path\n"
        f"assert Path(cdlab.__file__).is_relative_to({str(env_dir)!r}), cdlab.__file__\n"
        "from cdlab.data import DATASETS, list_datasets, load_dataset\n"
        "for name in list_datasets('shipped'):\n"
        "    X, y = load_dataset(name)\n"
        "    info = DATASETS[name]\n"
        "    assert X.shape == (info.n_samples, info.n_features), name\n"
        "    print(name, X.shape)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CDLAB_", "PYTHON"))}
    env["CDLAB_CACHE"] = str(tmp_path / "cache")
    done = subprocess.run([python, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == list_datasets("shipped")
