"""The downloader of the fetchable datasets (cdlab.data.fetch) against an HTTP server the test
starts on 127.0.0.1: a good file, a 404, a truncated transfer (then resumed), a wrong shape, a
server that stops answering, a port where nothing listens; and the `cdlab datasets` command."""
import bz2
import http.server
import threading
import time

import numpy as np
import pytest

import cdlab.data.registry as registry
from cdlab.cli import main
from cdlab.data import DATASETS, DataFileNotFoundError, fetch_dataset, load_dataset
from cdlab.data.registry import DatasetInfo

ROWS = [f"{1 if i % 3 else 2} 1:{i + 1} {2 + i % 4}:0.5\n" for i in range(400)]  # labels 1/2 as covtype's
GOOD = bz2.compress("".join(ROWS).encode())
WRONG = bz2.compress("".join(ROWS[:10]).encode())
NNZ = 2 * len(ROWS)


class Handler(http.server.BaseHTTPRequestHandler):
    requests = []  # (path, Range header) of every request, for the assertions
    truncate_once = set()

    def log_message(self, *args):
        pass

    def do_GET(self):
        Handler.requests.append((self.path, self.headers.get("Range")))
        name = self.path.rsplit("/", 1)[-1]
        if name == "missing.bz2":
            self.send_error(404, "Not Found")
            return
        body = WRONG if name == "wrong.bz2" else GOOD
        start = 0
        ranged = self.headers.get("Range")
        if ranged and name != "norange.bz2":
            start = int(ranged.split("=")[1].rstrip("-"))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        if name == "stall.bz2":
            self.wfile.write(body[:100])
            self.wfile.flush()
            time.sleep(3)
            return
        if name in Handler.truncate_once:  # half the file, then the connection drops
            Handler.truncate_once.discard(name)
            self.wfile.write(body[start:len(body) // 2])
            self.wfile.flush()
            return
        self.wfile.write(body[start:])


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("CDLAB_DATA_DIR", str(tmp_path))
    Handler.requests.clear()
    return tmp_path


def toy(server, file, nnz=NNZ):
    return DatasetInfo("toy", file, len(ROWS), 5, "toy", nnz=nnz, kind="fetch", url=f"{server}/{file}",
                       download_mb=0.01, label_map=((1.0, 1.0), (2.0, -1.0)))


def test_good_file_is_fetched_checked_and_loaded(server, home, monkeypatch):
    info = toy(server, "good.bz2")
    seen = []
    path = fetch_dataset(info, progress=lambda done, total: seen.append((done, total)))
    assert path == home / "good.bz2" and path.read_bytes() == GOOD
    assert seen[-1] == (len(GOOD), len(GOOD))
    assert not list(home.glob("*.part*"))
    # then a registry entry loads it with labels mapped and no further request
    monkeypatch.setitem(DATASETS, "toy", info)
    registry._load_cached.cache_clear()
    X, y = load_dataset("toy")
    assert X.shape == (len(ROWS), 5) and X.nnz == NNZ
    np.testing.assert_array_equal(np.unique(y), [-1.0, 1.0])
    assert int((y == -1).sum()) == sum(1 for i in range(len(ROWS)) if i % 3 == 0)
    assert len(Handler.requests) == 1


def test_first_use_downloads(server, home, monkeypatch):
    monkeypatch.setitem(DATASETS, "toy", toy(server, "good.bz2"))
    registry._load_cached.cache_clear()
    with pytest.raises(DataFileNotFoundError, match="cdlab datasets fetch toy"):
        load_dataset("toy", download=False)
    assert not Handler.requests
    assert load_dataset("toy")[0].shape == (len(ROWS), 5)
    assert len(Handler.requests) == 1


def test_404_names_the_url_and_the_manual_route(server, home):
    info = toy(server, "missing.bz2")
    with pytest.raises(DataFileNotFoundError, match=rf"{server}/missing.bz2 answered HTTP 404.*place it at "
                                                    + str(home / "missing.bz2")):
        fetch_dataset(info)
    assert not list(home.iterdir())


def test_truncated_transfer_is_resumed(server, home):
    info = toy(server, "flaky.bz2")
    Handler.truncate_once.add("flaky.bz2")
    with pytest.raises(ValueError, match="run the fetch again to resume"):
        fetch_dataset(info)
    part = home / "flaky.part.bz2"
    assert part.stat().st_size == len(GOOD) // 2 and not (home / "flaky.bz2").exists()
    path = fetch_dataset(info)
    assert path.read_bytes() == GOOD
    assert Handler.requests[-1] == ("/flaky.bz2", f"bytes={len(GOOD) // 2}-")  # only the rest was asked for


def test_server_ignoring_the_range_restarts_cleanly(server, home):
    info = toy(server, "norange.bz2")
    (home / "norange.part.bz2").write_bytes(GOOD[:50])
    assert fetch_dataset(info).read_bytes() == GOOD


def test_wrong_shape_is_refused_and_removed(server, home):
    info = toy(server, "wrong.bz2")
    with pytest.raises(ValueError, match=r"not the published one .*n=10, d=5, nnz=20; the published shape is "
                                         rf"n={len(ROWS)}, d=5, nnz={NNZ}"):
        fetch_dataset(info)
    assert not list(home.iterdir())


def test_wrong_nnz_alone_is_refused(server, home):
    with pytest.raises(ValueError, match=rf"nnz={NNZ}; the published shape is n={len(ROWS)}, d=5, nnz={NNZ + 1}"):
        fetch_dataset(toy(server, "good.bz2", nnz=NNZ + 1))


def test_server_that_stops_answering(server, home):
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"sent nothing for 0.5 s after 100 bytes; run the fetch again to resume"):
        fetch_dataset(toy(server, "stall.bz2"), timeout=0.5)
    assert time.perf_counter() - started < 2.5  # abandoned at the timeout, not at the server's whim


def test_offline_is_one_clear_error(home):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    info = DatasetInfo("toy", "toy.bz2", 1, 1, "toy", kind="fetch", url=f"http://127.0.0.1:{port}/toy.bz2")
    with pytest.raises(ValueError, match=rf"cannot fetch 'toy' from http://127.0.0.1:{port}/toy.bz2 .*offline\? "
                                         r"download .* yourself and place it at"):
        fetch_dataset(info)


def test_shipped_or_unknown_names_are_refused():
    with pytest.raises(ValueError, match="ships with cdlab"):
        fetch_dataset("a9a")
    with pytest.raises(ValueError, match="fetchable ones are rcv1.binary"):
        fetch_dataset("a9b")


def test_datasets_command_lists_and_fetches(server, home, monkeypatch, capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for name, info in DATASETS.items():
        assert name in lines
    assert "shipped" in lines["a9a"] and "32,561" in lines["a9a"] and "yes" in lines["a9a"].split()
    assert "fetch" in lines["news20.binary"] and "1,355,191" in lines["news20.binary"]
    assert "≈ 35 MB to fetch" in lines["news20.binary"] and "no" in lines["news20.binary"].split()
    assert str(home) in out

    monkeypatch.setitem(DATASETS, "toy", toy(server, "good.bz2"))
    assert main(["datasets", "fetch", "toy", "--no-progress"]) == 0
    assert (home / "good.bz2").read_bytes() == GOOD
    assert main(["datasets", "fetch", "a9a"]) == 2
    assert "not a fetchable dataset" in capsys.readouterr().err
