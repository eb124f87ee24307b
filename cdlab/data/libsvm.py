"""Reading svmlight / LIBSVM files, with errors that say where a file is broken.

scikit-learn's `load_svmlight_file` does the parsing (plain, .gz and .bz2
files). Its messages ("could not convert string to float: b'x'") name neither
the file nor the line, so when it fails, or when it accepts a value we do not
(NaN, inf), the file is scanned again line by line, applying the same rules as
sklearn's parser (`sklearn/datasets/_svmlight_format_fast.pyx`), to find the
first bad line. The rescan runs only on failure: good files cost nothing extra.

Format of one line: `label [qid:q] index:value index:value ... [# comment]`,
indices strictly increasing, 1-based unless the file is zero-based.

The number of features a file implies is its largest index (+1 if
zero-based), which costs memory in every per-feature array downstream even
when almost all features are empty. Unless ``n_features`` is passed, a file
implying more than max(FEATURES_FLOOR, FEATURES_PER_NONZERO × nnz) features
is refused, naming the index and its line: a two-line file holding index 10⁹
would otherwise become ~60 GiB of per-feature arrays.
"""
from __future__ import annotations

import bz2
import gzip
import os
from pathlib import Path

import numpy as np

from .._checks import check_int


# Features a file may imply without n_features: up to 4M (64 MiB per float64
# feature array) whatever its size, or 64 per nonzero it holds.
FEATURES_FLOOR = 2 ** 22
FEATURES_PER_NONZERO = 64


class DataFileNotFoundError(FileNotFoundError, ValueError):
    """A dataset file that does not exist (both a FileNotFoundError and a ValueError)."""


def _open_binary(path: Path):
    # the same choice by extension as sklearn's _gen_open, so the rescan reads what sklearn read
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")
    return open(path, "rb")


def _text(raw: bytes) -> str:
    """Bytes of the file as the user wrote them (UTF-8; undecodable bytes shown as �)."""
    return raw.decode("utf-8", errors="replace")


def _excerpt(line: bytes, limit: int = 60) -> str:
    text = _text(line).rstrip("\r\n")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _parse_number(token: bytes, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise ValueError(f"{what} {_text(token)!r} is not a number") from None
    if not np.isfinite(value):
        raise ValueError(f"{what} {_text(token)!r} is not finite")
    return value


def _check_line(line: bytes, zero_based) -> tuple[int, int] | None:
    """Validate one line; returns (smallest, largest) raw feature index, or None if it holds no
    feature. Raises ValueError saying what is wrong (no file or line number: the caller adds them)."""
    hash_at = line.find(b"#")
    parts = (line if hash_at < 0 else line[:hash_at]).split()
    if not parts:
        return None
    _parse_number(parts[0], "label")
    features = parts[1:]
    if features and features[0].startswith(b"qid"):
        if b":" not in features[0]:
            raise ValueError(f"token {_text(features[0])!r} is not of the form qid:value")
        features = features[1:]
    lowest = highest = None
    for token in features:
        if b":" not in token:
            raise ValueError(f"token {_text(token)!r} is not of the form index:value")
        index_s, value_s = token.split(b":", 1)
        try:
            index = int(index_s)
        except ValueError:
            raise ValueError(f"feature index {_text(index_s)!r} is not an integer") from None
        if index < 0 or index >= 2**31:  # sklearn stores indices in a C int
            raise ValueError(f"feature index {index} is out of range [0, 2^31)")
        if index == 0 and zero_based is False:
            raise ValueError("feature index 0 in a file read as 1-based (pass zero_based=True)")
        if highest is not None and index <= highest:
            raise ValueError(f"feature indices must be strictly increasing, got {highest} then {index}")
        _parse_number(value_s, f"value of feature {index}")
        lowest = index if lowest is None else lowest
        highest = index
    return (lowest, highest) if highest is not None else None


def locate_error(path, n_features=None, zero_based="auto") -> str | None:
    """Scan an svmlight file; return "line k: what is wrong: 'text'" for its first bad line
    (k 1-based), or None if every line is fine."""
    path = Path(path)
    # first line whose largest index overflows n_features, for each possible base (0 or 1)
    too_wide = {0: None, 1: None}
    lowest_overall = None
    with _open_binary(path) as f:
        for number, line in enumerate(f, start=1):
            try:
                span = _check_line(line, zero_based)
            except ValueError as exc:
                return f"line {number}: {exc}: {_excerpt(line)}"
            if span is None:
                continue
            lowest_overall = span[0] if lowest_overall is None else min(lowest_overall, span[0])
            for shift in (0, 1):
                if n_features is not None and too_wide[shift] is None and span[1] - shift >= n_features:
                    too_wide[shift] = (number, span[1], line)
    if n_features is None or lowest_overall is None:
        return None
    # sklearn's rule: 1-based unless zero_based is True, or "auto" and some index is 0
    shift = 0 if (zero_based is True or (zero_based == "auto" and lowest_overall == 0)) else 1
    if too_wide[shift] is None:
        return None
    number, highest, line = too_wide[shift]
    return (f"line {number}: feature index {highest} does not fit n_features={n_features} "
            f"(indices are {shift}-based): {_excerpt(line)}")


def read_libsvm(path, n_features=None, zero_based="auto"):
    """Read an svmlight/LIBSVM file (plain, .gz or .bz2) into (X CSR float64, y float64).

    Parameters
    ----------
    path : str or os.PathLike
    n_features : int, optional
        Number of columns; pass it so that a train and a test file agree. Without it
        the file's largest index sets the number of columns, and more than
        max(FEATURES_FLOOR, FEATURES_PER_NONZERO × nnz) of them is refused (a file
        whose features are far sparser than that can still be read by passing
        n_features explicitly; `cdlab.Problem` then checks its memory budget).
    zero_based : bool or "auto"
        As in `sklearn.datasets.load_svmlight_file` ("auto": 1-based unless an index 0 occurs).

    Raises
    ------
    DataFileNotFoundError (a FileNotFoundError and a ValueError) if the file does not exist;
    ValueError naming the file and the 1-based number of the first bad line otherwise.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    path = Path(path)
    if n_features is not None:
        n_features = check_int("n_features", n_features, minimum=1)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if not path.exists():
        raise DataFileNotFoundError(f"no such svmlight/LIBSVM file: {path}")
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    from sklearn.datasets import load_svmlight_file  # lazy: sklearn.datasets costs ~1 s at import

    try:
        X, y = load_svmlight_file(os.fspath(path), n_features=n_features, zero_based=zero_based,
                                  dtype=np.float64)
    except (ValueError, OverflowError, TypeError) as exc:
        raise _malformed(path, n_features, zero_based, exc) from exc
    except (OSError, EOFError) as exc:  # a corrupt .gz/.bz2 stream, an unreadable file
        raise ValueError(f"{path}: cannot read the file: {exc}") from exc
    if not (np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))):
        raise _malformed(path, n_features, zero_based, "non-finite label or value")
    if X.shape[0] == 0:
        raise ValueError(f"{path}: the file holds no examples")
    limit = max(FEATURES_FLOOR, FEATURES_PER_NONZERO * X.nnz)
    if n_features is None and X.shape[1] > limit:
        number, index = _largest_index(path)
        raise ValueError(f"{path}, line {number}: feature index {index} implies {X.shape[1]} features, far beyond "
                         f"the {X.nnz} nonzeros the file holds (at most max({FEATURES_FLOOR}, "
                         f"{FEATURES_PER_NONZERO} × nnz) = {limit} without n_features); pass n_features="
                         f"{X.shape[1]} explicitly to read it anyway, or renumber the features")
    return X, np.asarray(y, dtype=np.float64)


def _largest_index(path: Path) -> tuple[int, int]:
    """(1-based line number, raw index) of the largest feature index of a file sklearn has read."""
    best = (0, -1)
    with _open_binary(path) as f:
        for number, line in enumerate(f, start=1):
            span = _check_line(line, "auto")
            if span is not None and span[1] > best[1]:
                best = (number, span[1])
    return best


def _malformed(path: Path, n_features, zero_based, cause) -> ValueError:
    where = locate_error(path, n_features, zero_based)
    if where is None:  # sklearn failed on something the rescan does not model: say so plainly
        return ValueError(f"{path}: malformed svmlight/LIBSVM file ({cause})")
    return ValueError(f"{path}, {where}")
