"""Uploads bounded on the server while they stream (cdlab.ui.upload): compressed bombs, streams over
the raw limit, nonzero floods — each dropped at once with memory bounded; what the page says."""
import bz2
import gzip
import tracemalloc
from types import SimpleNamespace

import pytest

from cdlab.ui import datasource
from cdlab.ui.state import Experiment
from cdlab.ui.upload import (NNZ_LIMIT, TEXT_LIMIT_BYTES, UPLOAD_LIMIT_BYTES, BoundedFileDropper, UploadGuard,
                             check_upload)

CHUNK = 2_000_000  # the page's FileDropper chunk size


def events(content: bytes, name: str):
    """The upload events a browser sends for one file, in order."""
    chunks = [content[i:i + CHUNK] for i in range(0, len(content), CHUNK)] or [b""]
    for k, chunk in enumerate(chunks, start=1):
        yield SimpleNamespace(event_name="upload_event", data={"name": name, "chunk": k, "total_chunks": len(chunks),
                                                               "data": chunk, "type": "application/octet-stream"})


def feed_all(guard, content):
    for event in events(content, guard.filename):
        reason = guard.feed(event.data["data"])
        if reason:
            return reason
    return ""


GZIP_BOMB = gzip.compress(b"1 1:1\n" * (100 * 10**6 // 6), compresslevel=9)  # 100 MB of text in ~100 kB
COMMENT_LINE = b"1 # " + b"x" * 996 + b"\n"  # no index:value token: only the text limit can stop it
BZ2_TEXT_BOMB = bz2.compress(COMMENT_LINE * (TEXT_LIMIT_BYTES // len(COMMENT_LINE) + 2000))


def test_gzip_bomb_is_refused_within_bounded_memory():
    assert len(GZIP_BOMB) < UPLOAD_LIMIT_BYTES // 10
    tracemalloc.start()
    try:
        guard = UploadGuard("bomb.svm.gz")
        reason = feed_all(guard, GZIP_BOMB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "holds over 2,000,000 nonzeros" in reason
    assert guard.text <= 6 * NNZ_LIMIT + (1 << 20)  # stopped within a step of the limit (6 bytes a line), not at 100 MB
    assert peak < 8 * 10**6  # a few decompression steps, never the text


def test_bz2_bomb_of_text_is_refused_at_the_text_limit():
    guard = UploadGuard("bomb.bz2")
    reason = feed_all(guard, BZ2_TEXT_BOMB)
    assert f"decompresses to over {TEXT_LIMIT_BYTES // 10**6} MB of text" in reason
    assert TEXT_LIMIT_BYTES < guard.text <= TEXT_LIMIT_BYTES + (1 << 20)


def test_plain_text_is_counted_as_it_is_and_a_nonzero_flood_refused():
    flood = b"1 " + b"1:1 " * (NNZ_LIMIT + 100_000) + b"\n"  # 8.4 MB: under the raw limit
    reason = feed_all(UploadGuard("flood.svm"), flood)
    assert "holds over 2,000,000 nonzeros" in reason
    assert feed_all(UploadGuard("fine.svm"), b"1 1:0.5 2:1\n-1 3:2\n") == ""


def test_concatenated_bz2_streams_are_all_counted():
    part = bz2.compress(COMMENT_LINE * (TEXT_LIMIT_BYTES // len(COMMENT_LINE) // 2 + 1000))
    guard = UploadGuard("two.bz2")
    assert "decompresses to over" in feed_all(guard, part + part)


def test_corrupt_compressed_stream_is_named():
    assert "is not a valid gz file" in feed_all(UploadGuard("bad.gz"), b"\x1f\x8bnot really gzip" * 10)


def test_file_dropper_drops_a_stream_over_the_raw_limit_at_once():
    """A client that ignores the browser's limit: the server stops buffering at the limit, ignores the
    rest of that upload, keeps the value it had and says why."""
    drop = BoundedFileDropper()
    big = b"1 1:1\n" * ((UPLOAD_LIMIT_BYTES + 3 * CHUNK) // 6)
    stream = list(events(big, "huge.svm"))
    for event in stream:
        drop._process_event(event)
        if drop.refused:
            refused_at = event.data["chunk"]
            break
    assert drop.refused == "huge.svm is over 10 MB" and refused_at == UPLOAD_LIMIT_BYTES // CHUNK + 1
    assert drop.value == {} and "huge.svm" not in drop._guards
    for event in stream[refused_at:]:  # the remaining chunks are ignored
        drop._process_event(event)
    assert drop.value == {}
    good = b"1 1:0.5\n-1 2:1\n"
    for event in events(good, "good.svm"):
        drop._process_event(event)
    assert drop.value == {"good.svm": good}


def test_page_says_why_an_upload_was_refused_and_shows_label_notes():
    s = Experiment(auto_run=False)
    from cdlab.ui.views import Controls
    import panel as pn

    drop = pn.panel(Controls(state=s)).select(BoundedFileDropper)[0]
    for event in events(GZIP_BOMB, "bomb.svm.gz"):
        drop._process_event(event)
    assert s.upload_message.startswith("❌ Not loaded: bomb.svm.gz holds over 2,000,000 nonzeros")
    assert s.source != datasource.UPLOAD
    three = b"".join(f"{i % 3} 1:{i} 2:1\n".encode() for i in range(30))
    for event in events(three, "three.svm"):
        drop._process_event(event)
    assert s.upload_message == ("✅ Loaded three.svm (3 distinct labels: only the squared and absolute losses "
                                "apply (the classification losses need two classes)).")


def test_parse_errors_name_the_file_not_a_server_path():
    with pytest.raises(ValueError) as info:
        datasource.parse_upload(b"1 1:0.5 2:oops\n", "broken.svm")
    assert str(info.value).startswith("broken.svm, line 1") and "/tmp" not in str(info.value)
    with pytest.raises(ValueError, match="decompresses to over"):
        check_upload(BZ2_TEXT_BOMB, "bomb.bz2")
