"""Streaming writer of one IndexedDataset (``prefix.bin`` + ``prefix.idx``)."""

from __future__ import annotations

import array
from types import TracebackType
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.megatron.format import bin_path, idx_path, normalize_dtype, pack_index

_INT32_MAX = 2**31 - 1


def publish(tmp_prefix: str, final_prefix: str) -> None:
    """Move a finished ``tmp_prefix`` pair to ``final_prefix``: ``.bin`` first, ``.idx`` last.

    Readers treat a dataset as present only when its ``.idx`` exists, so the ``.idx`` move is the
    commit point. Locally each move is an atomic ``os.replace``; on object stores it is copy +
    delete (no atomic rename on GCS), so a Spark task attempt must never call it there: the
    tokenize stage leaves attempt pairs in place and the driver copies the winning attempt's pair
    to the final name after the job (``pipeline.tokenize.stage.publish_winners``).
    """
    storage.commit([(bin_path(tmp_prefix), bin_path(final_prefix)), (idx_path(tmp_prefix), idx_path(final_prefix))])


class IndexedDatasetWriter:
    """Write documents (one sequence each) to ``prefix.bin``; write ``prefix.idx`` on close.

    Token bytes stream to ``.bin`` through a buffer of ``buffer_bytes``; only the sequence lengths
    stay in memory (4 bytes per document). A token id outside the dtype's range raises
    ``ValueError`` instead of wrapping around.

    With ``tmp_suffix`` (e.g. ``".attempt-3.tmp"``) the pair is written as
    ``prefix + tmp_suffix + ".bin/.idx"`` and moved to ``prefix.{bin,idx}`` by :func:`publish` when
    the writer closes without error. On error (an exception inside ``with``, or :meth:`abort`)
    the partial files are deleted and nothing is published.
    """

    def __init__(
        self,
        prefix: str,
        dtype: object = np.uint16,
        *,
        tmp_suffix: str | None = None,
        buffer_bytes: int = 4 << 20,
    ) -> None:
        self.prefix = str(prefix)
        self.dtype = normalize_dtype(dtype)
        self.tmp_suffix = tmp_suffix
        self.write_prefix = self.prefix + tmp_suffix if tmp_suffix else self.prefix
        self._buffer_bytes = int(buffer_bytes)
        self._lengths = array.array("i")
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._num_tokens = 0
        self._closed = False
        if self.dtype.kind in "iu":
            info = np.iinfo(self.dtype)
            self._lo, self._hi = int(info.min), int(info.max)
        fs, inner = storage.resolve(bin_path(self.write_prefix))
        storage.ensure_parent(bin_path(self.write_prefix))
        self._bin: Any = fs.open(inner, "wb")

    @property
    def num_documents(self) -> int:
        """Documents added so far."""
        return len(self._lengths)

    @property
    def num_tokens(self) -> int:
        """Tokens added so far."""
        return self._num_tokens

    def add_document(self, token_ids: Any) -> None:
        """Append one document (a sequence of token ids: list, array or tensor-like)."""
        ids = np.asarray(token_ids).reshape(-1)
        self.add_documents(ids, np.array([ids.size], dtype=np.int64))

    def add_documents(self, token_ids: np.ndarray, ends: np.ndarray) -> None:
        """Append several documents at once: ``token_ids`` (1-D integers) holds them back to back,
        ``ends[i]`` is the end of document i in it (the last end must be ``len(token_ids)``).
        Writes the same bytes as :meth:`add_document` called once per document."""
        if self._closed:
            raise ValueError(f"{self.write_prefix}: writer is closed")
        ids = np.asarray(token_ids).reshape(-1)
        ends = np.asarray(ends, dtype=np.int64).reshape(-1)
        if ends.size == 0:
            if ids.size:
                raise ValueError("token ids given without document ends")
            return
        lengths = np.diff(ends, prepend=0)
        if ends[-1] != ids.size or (lengths < 0).any():
            raise ValueError(f"document ends must rise to len(token_ids) = {ids.size}, got last {int(ends[-1])}")
        if (lengths > _INT32_MAX).any():
            raise ValueError(f"a document exceeds {_INT32_MAX} tokens, the int32 length field")
        if ids.size and self.dtype.kind in "iu":
            if ids.dtype.kind not in "iub":
                raise ValueError(f"token ids must be integers, got dtype {ids.dtype}")
            if not self._fits(ids):
                lo, hi = int(ids.min()), int(ids.max())
                bad = lo if lo < self._lo else hi
                doc = len(self._lengths) + int(np.searchsorted(ends, int(np.flatnonzero(ids == bad)[0]), "right"))
                raise ValueError(
                    f"token id {bad} does not fit {self.dtype.name} [{self._lo}, {self._hi}] "
                    f"(document {doc} of {self.write_prefix}); use a wider dtype, e.g. dtype_for_vocab(vocab_size)"
                )
        data = np.ascontiguousarray(ids.astype(self.dtype, copy=False))
        self._lengths.frombytes(lengths.astype(np.int32).tobytes())
        self._num_tokens += ids.size
        if data.nbytes >= self._buffer_bytes:  # large: straight to the file, no copy
            self._flush()
            self._bin.write(memoryview(data).cast("B"))  # type: ignore[arg-type]  # ndarray is a Buffer
            return
        self._pending.append(data.tobytes())
        self._pending_size += data.nbytes
        if self._pending_size >= self._buffer_bytes:
            self._flush()

    def _fits(self, ids: np.ndarray) -> bool:
        """Whether every integer id fits the dtype, in at most one pass over ``ids``.

        No pass when the ids' own type fits (int32 ids into int32); for signed ids into an unsigned
        dtype of fewer bytes (the tokenize stage's int32 ids into uint16) one ``max`` of the ids viewed
        as unsigned, where a negative id becomes at least 2**31 (for int32), above the dtype's maximum;
        else ``min`` and ``max``."""
        if np.can_cast(ids.dtype, self.dtype, "safe"):
            return True
        if self._lo == 0 and ids.dtype.kind == "i" and ids.dtype.itemsize > self.dtype.itemsize:
            unsigned = ids.view(ids.dtype.str.replace("i", "u"))
            return int(unsigned.max()) <= self._hi
        return int(ids.min()) >= self._lo and int(ids.max()) <= self._hi

    def _flush(self) -> None:
        if self._pending:
            self._bin.write(b"".join(self._pending))
            self._pending.clear()
            self._pending_size = 0

    def close(self) -> None:
        """Finish ``.bin``, write ``.idx`` and publish if a ``tmp_suffix`` was given."""
        if self._closed:
            return
        try:
            self._flush()
            self._bin.close()
            lengths = np.frombuffer(self._lengths, dtype=np.int32) if self._lengths else np.zeros(0, np.int32)
            doc_indices = np.arange(len(lengths) + 1, dtype=np.int64)
            fs, inner = storage.resolve(idx_path(self.write_prefix))
            with fs.open(inner, "wb") as f:
                f.write(pack_index(self.dtype, lengths, doc_indices))
            self._closed = True
            if self.tmp_suffix:
                publish(self.write_prefix, self.prefix)
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Discard everything written (partial ``.bin``/``.idx`` under the write prefix)."""
        self._closed = True
        self._pending.clear()
        try:
            self._bin.close()
        except Exception:  # noqa: BLE001 - already failing; the cleanup below matters more
            pass
        storage.remove(bin_path(self.write_prefix), best_effort=True)
        storage.remove(idx_path(self.write_prefix), best_effort=True)

    def __enter__(self) -> IndexedDatasetWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
