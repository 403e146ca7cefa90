"""Example ids kept compactly, so a run of millions of rows can remember every row's id.

A Python string costs some 55 bytes plus its text, and a set of them as much again; a run keeps an
id per row twice (the duplicate check of the input, and each group's :class:`Columns` for paired
comparisons).  :class:`Ids` keeps the ids' UTF-8 text in one buffer with an end offset each (the
text plus 8 bytes), and :class:`IdSet` answers "seen before?" with an open-addressing table of
8-byte slots over such a list, so both stay a small constant per row (docs/architecture.md).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

#: Ids are stored as UTF-8; a lone surrogate (from a ``\ud800`` escape) survives the round trip.
_ERRORS = "surrogatepass"


class Ids(Sequence[str]):
    """A list of strings that only grows, in one byte buffer (what ``Columns.ids`` holds)."""

    __slots__ = ("_data", "_ends")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._data = bytearray()
        self._ends = array("q")
        for text in ids:
            self.append(text)

    def append(self, text: str) -> None:
        self._data += text.encode("utf-8", _ERRORS)
        self._ends.append(len(self._data))

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        ends = self._ends
        if index < 0:
            index += len(ends)
        end = ends[index]  # an IndexError out of range, as a list's
        return self._data[ends[index - 1] if index else 0 : end].decode("utf-8", _ERRORS)

    def __iter__(self) -> Iterator[str]:
        data, start = self._data, 0
        for end in self._ends:
            yield data[start:end].decode("utf-8", _ERRORS)
            start = end

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Ids):
            return self._ends == other._ends and self._data == other._data
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"Ids({list(self)!r})"

    def __getstate__(self) -> tuple[bytes, array]:
        return bytes(self._data), self._ends

    def __setstate__(self, state: tuple[bytes, array]) -> None:
        self._data, self._ends = bytearray(state[0]), state[1]


class IdSet:
    """Strings seen so far, for a duplicate check: :meth:`add` says whether a string is new.

    Linear probing over a power-of-two table of slots, each the low 32 bits of the string's hash
    and its position in an :class:`Ids` list (the exact check on a hash match), kept at most
    two-thirds full.
    """

    __slots__ = ("_hashes", "_ids", "_mask", "_positions", "_size")

    def __init__(self) -> None:
        self._ids = Ids()
        self._size = 0  # len(self._ids), without a call for every row
        self._mask = 7
        self._hashes = array("I", [0]) * 8
        self._positions = array("I", [0]) * 8  # position + 1; 0 is an empty slot

    def add(self, text: str) -> bool:
        """Add ``text``; False when it was already there."""
        low = hash(text) & 0xFFFFFFFF
        mask, hashes, positions = self._mask, self._hashes, self._positions
        slot = low & mask
        while True:
            found = positions[slot]
            if not found:
                break
            if hashes[slot] == low and self._ids[found - 1] == text:
                return False
            slot = (slot + 1) & mask
        self._ids.append(text)
        size = self._size = self._size + 1
        positions[slot] = size
        hashes[slot] = low
        if size * 3 > mask * 2:
            self._grow()
        return True

    def _grow(self) -> None:
        old_hashes, old_positions = self._hashes, self._positions
        size = (self._mask + 1) * 2
        mask = self._mask = size - 1
        hashes = self._hashes = array("I", [0]) * size
        positions = self._positions = array("I", [0]) * size
        for low, found in zip(old_hashes, old_positions, strict=True):
            if found:
                slot = low & mask
                while positions[slot]:
                    slot = (slot + 1) & mask
                positions[slot] = found
                hashes[slot] = low

    def __contains__(self, text: Any) -> bool:
        if not isinstance(text, str):
            return False
        low = hash(text) & 0xFFFFFFFF
        slot = low & self._mask
        while found := self._positions[slot]:
            if self._hashes[slot] == low and self._ids[found - 1] == text:
                return True
            slot = (slot + 1) & self._mask
        return False

    def __len__(self) -> int:
        return self._size
