"""Uploads bounded on the server, while they stream in.

The browser's file dropper refuses a file over the raw limit, but nothing obliges a client to use
it, and a small compressed file can hold a huge text (a 3.4 kB .bz2 held 19 MB of text, 4 M
nonzeros, 575 MB of server memory once parsed). So every chunk is counted on arrival — raw bytes,
decompressed bytes (decompressed as the reader will, by the file's suffix, at most ``STEP`` bytes at
a time) and nonzeros (the ``index:value`` tokens, counted as ':' characters, an upper bound) — and an
upload is dropped the moment it passes a limit. Only the raw bytes (≤ the raw limit) are kept.
"""
from __future__ import annotations

import bz2
import zlib

import param
from panel.widgets import FileDropper

UPLOAD_LIMIT_MB = 10  # decimal MB (10⁶ bytes), as the page's file dropper counts them
UPLOAD_LIMIT_BYTES = UPLOAD_LIMIT_MB * 10**6
TEXT_LIMIT_BYTES = 40 * 10**6  # decompressed text
NNZ_LIMIT = 2_000_000  # parsed, with the page's analysis, ≈ 150 bytes of server memory a nonzero
STEP = 1 << 20  # decompressed bytes produced per step


def _decompressor(filename: str):
    """The reader's choice by suffix (cdlab.data.libsvm._open_binary): gzip, bz2 or none."""
    lowered = (filename or "").lower()
    if lowered.endswith(".gz"):
        return lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)
    if lowered.endswith(".bz2"):
        return bz2.BZ2Decompressor
    return None


class UploadGuard:
    """One upload's counters; ``feed`` each chunk in order, then ``content()``."""

    def __init__(self, filename: str):
        self.filename = filename
        self.chunks: list[bytes] = []
        self.raw = self.text = self.nnz = 0
        self._new = _decompressor(filename)
        self._stream = self._new() if self._new else None

    def feed(self, chunk: bytes) -> str:
        """Count a chunk; '' if the upload is still within the limits, else why it is refused."""
        self.raw += len(chunk)
        if self.raw > UPLOAD_LIMIT_BYTES:
            return f"{self.filename} is over {UPLOAD_LIMIT_MB} MB"
        self.chunks.append(chunk)
        return self._text(chunk) if self._stream is not None else self._count(chunk)

    def _count(self, text: bytes) -> str:
        self.text += len(text)
        self.nnz += text.count(b":")
        if self.text > TEXT_LIMIT_BYTES:
            return (f"{self.filename} decompresses to over {TEXT_LIMIT_BYTES // 10**6} MB of text; the page takes "
                    f"at most that (load larger files with cdlab.load_dataset)")
        if self.nnz > NNZ_LIMIT:
            return (f"{self.filename} holds over {NNZ_LIMIT:,} nonzeros; the page takes at most that (load larger "
                    "files with cdlab.load_dataset)")
        return ""

    def _text(self, data: bytes) -> str:
        try:
            while data:
                out = self._step(data)
                data = b""
                while True:
                    reason = self._count(out)
                    if reason:
                        return reason
                    if self._stream.eof:  # a concatenated stream (bz2 -c a b, gzip members) goes on
                        data = self._stream.unused_data
                        self._stream = self._new()
                        break
                    if not self._more():
                        break
                    out = self._step(b"")
        except (OSError, EOFError, zlib.error) as exc:
            return f"{self.filename} is not a valid {self.filename.rsplit('.', 1)[-1]} file ({exc})"
        return ""

    def _step(self, data: bytes) -> bytes:
        if isinstance(self._stream, bz2.BZ2Decompressor):
            return self._stream.decompress(data, max_length=STEP)
        return self._stream.decompress(self._stream.unconsumed_tail + data, STEP)

    def _more(self) -> bool:
        """Whether the decompressor holds input it has not turned into output yet."""
        if isinstance(self._stream, bz2.BZ2Decompressor):
            return not self._stream.needs_input
        return bool(self._stream.unconsumed_tail)

    def content(self) -> bytes:
        return b"".join(self.chunks)


def check_upload(content: bytes, filename: str) -> None:
    """Raise ValueError if the content (all of it at once) passes an upload limit."""
    guard = UploadGuard(filename)
    for start in range(0, len(content), STEP):
        reason = guard.feed(content[start:start + STEP])
        if reason:
            raise ValueError(reason)


class BoundedFileDropper(FileDropper):
    """A FileDropper whose chunks are counted as they arrive (UploadGuard); an upload over a limit is
    dropped at once and its remaining chunks ignored, with the reason in ``refused``."""

    refused = param.String(default="", doc="why the last upload was dropped ('' if it was not)")

    _rename = {**FileDropper._rename, "refused": None}  # server-side only: not a property of the browser model

    def __init__(self, **params):
        super().__init__(**params)
        self._guards: dict[str, UploadGuard] = {}

    def _process_event(self, event):
        if event.event_name != "upload_event":
            return super()._process_event(event)
        data = event.data
        name = data["name"]
        if data["chunk"] == 1:
            self._guards[name] = UploadGuard(name)
        guard = self._guards.get(name)
        if guard is None:
            return  # the rest of an upload already dropped
        reason = guard.feed(bytes(data["data"]))
        if reason:
            del self._guards[name]
            self.refused = ""
            self.refused = reason  # a repeated refusal still reaches the watchers
            return
        if data["chunk"] != data["total_chunks"]:
            return
        del self._guards[name]
        with param.discard_events(self):  # then one trigger, even for the same file again
            self.mime_type = {**self.mime_type, name: data["type"]}
            self.value = {name: guard.content()}  # bytes as sent: the parser decodes
        self.param.trigger("mime_type", "value")
