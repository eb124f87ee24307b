"""Shared fixtures: real datasets, loaded once per test session and scaled as
in the face-off paper's Section 7 (divided by the mean example norm)."""
import functools
import gc

import pytest
from threadpoolctl import threadpool_limits

# One BLAS thread: on a 2-core machine shared by parallel test processes,
# OpenBLAS's spinning threads slowed scipy's L-BFGS-B 20-fold.
threadpool_limits(limits=1)


@functools.lru_cache(maxsize=None)
def _normalized(name):
    from cdlab.data import load

    X, y = load(name, "mean")
    X.data.setflags(write=False)
    y.setflags(write=False)
    return X, y


@pytest.fixture(scope="session")
def real_data():
    """real_data(name) -> (X, y), X scaled by its mean example norm (read-only arrays)."""
    return _normalized


# snapml, a benchmark peer, sets the CPU's flush-to-zero / denormals-are-zero flags for the whole
# process when imported (then float('1e-320') compares equal to 0). The tests that import the peers
# run last, so that no other test sees those flags.
PEER_MODULES = ("test_faceoff_bench.py", "test_race_bench.py")


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.path.name in PEER_MODULES)  # stable: the order is kept otherwise


@pytest.fixture(autouse=True)
def _earlier_tests_objects_frozen():
    """Each test starts with what earlier tests left alive frozen (``gc.collect()``, then ``gc.freeze()``), so a
    full collection inside a test (benchmarks/race.py's before each timed call) walks only the objects this test
    made: the suite's heap reached 2 GB by its end, where test_race_bench's tests took 20 times as long as alone."""
    gc.collect()
    gc.freeze()
    yield
