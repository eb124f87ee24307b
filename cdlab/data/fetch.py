"""Fetching the larger registry datasets into the data home, on first use.

    fetch_dataset("rcv1.binary")        # → data_home()/rcv1_train.binary.bz2, checked, ready to load

The download goes to ``<file>.part`` beside its destination and is resumed from there (an HTTP
Range request) when a previous try was cut off; a server that ignores the range restarts it. A
complete download is parsed and checked against the published shape (n, d and, where recorded,
nnz) before an atomic rename puts it in place, so the data home never holds a file that is partial
or of the wrong shape. Every failure is one ValueError (or a DataFileNotFoundError for HTTP 404)
naming the URL and how to place the file by hand.
"""
from __future__ import annotations

import http.client
import os
import socket
import sys
import urllib.error
import urllib.request
from pathlib import Path

from .libsvm import DataFileNotFoundError
from .registry import DATASETS, FETCH, DatasetInfo, read_registry_file

CHUNK = 1 << 16
TIMEOUT = 30.0  # seconds without a byte from the server before the download is abandoned


def _by_hand(info: DatasetInfo, dest: Path) -> str:
    return f"download {info.url} yourself and place it at {dest} (or set CDLAB_DATA_DIR to another folder)"


def _part_path(dest: Path) -> Path:
    # the reader picks its decompressor by the last suffix, so the partial keeps it: x.bz2 → x.part.bz2
    return dest.with_name(f"{dest.stem}.part{dest.suffix}")


def _open(url: str, offset: int, timeout: float):
    request = urllib.request.Request(url, headers={"User-Agent": "cdlab"})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 (http/https URLs of the registry)


def _expected_total(response, offset: int) -> int | None:
    """Total file size from Content-Range (a 206) or Content-Length (a 200), if the server says."""
    content_range = response.headers.get("Content-Range", "")
    if response.status == 206 and "/" in content_range and not content_range.endswith("/*"):
        return int(content_range.rsplit("/", 1)[1])
    length = response.headers.get("Content-Length")
    if length is None:
        return None
    return int(length) + (offset if response.status == 206 else 0)


def _progress_bar(name, total, initial, enabled):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="B", unit_scale=True, unit_divisor=1024,
                desc=f"fetching {name}", disable=not enabled, file=sys.stderr, leave=False)


def _download(info: DatasetInfo, part: Path, dest: Path, *, timeout, progress, show_progress):
    offset = part.stat().st_size if part.exists() else 0
    try:
        response = _open(info.url, offset, timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:  # our partial is not a prefix the server knows: start again
            part.unlink()
            return _download(info, part, dest, timeout=timeout, progress=progress, show_progress=show_progress)
        error = DataFileNotFoundError if exc.code == 404 else ValueError
        raise error(f"cannot fetch {info.name!r}: {info.url} answered HTTP {exc.code} ({exc.reason}); "
                    f"{_by_hand(info, dest)}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ValueError(f"cannot fetch {info.name!r} from {info.url} ({reason}): offline? "
                         f"{_by_hand(info, dest)}") from None
    with response:
        if response.status != 206:
            offset = 0  # the server sent the whole file
        total = _expected_total(response, offset)
        done = offset
        with open(part, "ab" if offset else "wb") as out, \
                _progress_bar(info.name, total, offset, show_progress) as bar:
            try:
                while True:
                    chunk = response.read1(CHUNK)  # what has arrived: a stall is seen after the bytes before it
                    if not chunk:
                        break
                    out.write(chunk)
                    done += len(chunk)
                    bar.update(len(chunk))
                    if progress is not None:
                        progress(done, total)
            except (socket.timeout, TimeoutError):
                raise ValueError(f"cannot fetch {info.name!r}: {info.url} sent nothing for {timeout:g} s after "
                                 f"{done:,} bytes; run the fetch again to resume, or {_by_hand(info, dest)}") from None
            except (OSError, ValueError, http.client.HTTPException) as exc:  # a reset, an IncompleteRead
                raise ValueError(f"cannot fetch {info.name!r}: the transfer from {info.url} broke after "
                                 f"{done:,} bytes ({exc}); run the fetch again to resume") from None
            finally:
                out.flush()
                os.fsync(out.fileno())
    if total is not None and done != total:
        raise ValueError(f"cannot fetch {info.name!r}: the transfer from {info.url} ended after {done:,} of "
                         f"{total:,} bytes; run the fetch again to resume")


def fetch_dataset(name_or_info, *, force=False, timeout=TIMEOUT, progress=None, show_progress=None) -> Path:
    """Download a fetchable registry dataset into the data home, check it, and return its path.

    Parameters
    ----------
    name_or_info : str or DatasetInfo
        A name from ``list_datasets("fetch")`` (or a DatasetInfo with a ``url``).
    force : bool
        Download again even when the file is already in place.
    timeout : float
        Seconds without data from the server after which the download is abandoned (and resumable).
    progress : callable(done_bytes, total_bytes or None), optional
        Called after every chunk (the page's progress bar).
    show_progress : bool, optional
        A progress bar on stderr; default: when stderr is a terminal.
    """
    info = DATASETS.get(name_or_info) if isinstance(name_or_info, str) else name_or_info
    if not isinstance(info, DatasetInfo):
        fetchable = ", ".join(n for n, i in DATASETS.items() if i.kind == FETCH)
        raise ValueError(f"unknown dataset {name_or_info!r}; the fetchable ones are {fetchable}")
    if not info.url:
        raise ValueError(f"dataset {info.name!r} ships with cdlab: there is nothing to fetch")
    dest = info.path
    if dest.is_file() and not force:
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create the data home {dest.parent}: {exc} (set CDLAB_DATA_DIR to a writable "
                         "folder)") from None
    part = _part_path(dest)
    if force and part.exists():
        part.unlink()
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    _download(info, part, dest, timeout=timeout, progress=progress, show_progress=show_progress)
    try:
        read_registry_file(info, part)
    except ValueError as exc:
        part.unlink()  # a complete file of the wrong content: resuming it cannot help
        raise ValueError(f"cannot fetch {info.name!r}: the downloaded file is not the published one ({exc}); "
                         "it was removed") from None
    os.replace(part, dest)
    return dest
