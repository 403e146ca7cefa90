"""The rows ``run`` and ``score`` read: ``-n`` per data set, rows numbered when they have no id,
a run's own JSONL report read back, and files that belong to another command refused up front."""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..plugins import PluginHost
from ..runner import ID_KEYS, example_id

#: Rows of each file read before the run: the checks and the evaluators line look at them; the rest
#: of a bigger file is read as the run draws its rows, so no run holds a whole file.
HEAD = 10_000


class Inputs:
    """Data sets by name, filled file by file: at most ``limit`` rows of each data set (and
    system, for rows that carry one), however many files it is spread over.

    Each file's first :data:`HEAD` rows are read when it is added (``heads``); ``datasets`` reads
    the rest as it is iterated, once.  A notice about a file read to its end is in ``notices``
    at once, about a longer one once the run has read it.
    """

    def __init__(self, host: PluginHost, limit: int | None = None) -> None:
        self.host = host
        self.limit = limit
        #: Each data set's rows read so far (of files read to their end: all of them).
        self.heads: dict[str, list[Any]] = {}
        self.notices: list[str] = []
        #: Rows scored before, handed on as they are (``score --baseline RUN``: the stored run's).
        self.scored: list[Any] = []
        self._parts: dict[str, list[Iterable[Any]]] = {}
        self._taken: Counter[tuple[str, str]] = Counter()

    @property
    def datasets(self) -> dict[str, Iterable[Any]]:
        """Each data set's rows, in file order (iterate once: the rest of a big file is read then)."""
        return {name: _joined(parts) for name, parts in self._parts.items()}

    def names(self, default_system: str) -> tuple[list[str], list[str]] | None:
        """The data sets and the systems the rows name (their ``dataset`` and ``system`` fields,
        else the data set's name and ``default_system``), when every file was read whole (else
        None: a longer file's rows are only known as the run reads them)."""
        if not all(type(part) is list for parts in self._parts.values() for part in parts):
            return None
        datasets: dict[str, None] = {}
        systems: dict[str, None] = {}
        for name, rows in self.heads.items():
            for row in rows:
                own = row if isinstance(row, Mapping) else {}
                datasets[str(own.get("dataset") or name)] = None
                systems[str(own.get("system", default_system))] = None
        for scored in self.scored:
            datasets[scored.dataset] = systems[scored.system] = None
        return list(datasets), list(systems)

    def add(self, name: str, rows: Iterable[Any], source: str) -> None:
        rows = iter(rows)
        head = list(itertools.islice(rows, 3))
        self._refuse_foreign_file(head, source)
        taken = self._take(name, itertools.chain(head, rows), source)
        read = list(itertools.islice(taken, HEAD))
        self.heads.setdefault(name, []).extend(read)
        # a file read to its end is a list: the run knows its size (the progress bar's total)
        self._parts.setdefault(name, []).append(read if len(read) < HEAD else itertools.chain(read, taken))

    def _take(self, name: str, rows: Iterable[Any], source: str) -> Iterator[Any]:
        numbered = 0
        positions: Counter[tuple[str, str]] = Counter()
        for row in rows:
            key = ("", name)
            if isinstance(row, dict):
                if "scores" in row:
                    _from_report(row)
                key = (str(row.get("system") or ""), str(row.get("dataset") or name))
                positions[key] += 1
                # set in place: a row's own type (and notes) stays
                if row.get("id") in (None, "") and example_id(row) is None:
                    row["id"] = str(positions[key])
                    numbered += 1
            if self.limit is not None and self._taken[key] >= self.limit:
                continue
            self._taken[key] += 1
            yield row
        if numbered:
            self.notices.append(
                f"{numbered} rows of {source} have no 'id' (nor {', '.join(ID_KEYS[1:])}): "
                "numbered by their position (1, 2, ...), which holds while the file does not change"
            )

    def _refuse_foreign_file(self, rows: Sequence[Any], source: str) -> None:
        """A file of another command's (a memory benchmark's: :attr:`Providers.files`) is refused
        with that command, and the plugin to install when it is absent."""
        from ..providers import providers

        known = providers()
        for row in rows[:3]:
            if not isinstance(row, Mapping):
                continue
            for file in known.files:
                if file.fields <= row.keys():
                    have = any(command.name == file.command for _, command in self.host.commands())
                    dist = known.commands.get(file.command)
                    install = "" if have or not dist else f" (after pip install {dist})"
                    raise UsageError(
                        f"{source} looks like a {file.looks_like} file (records with "
                        f"{', '.join(sorted(file.fields))}): score memory systems on it with "
                        f"`context-bench {file.command} --dataset {source}`{install}"
                    )


def _joined(parts: list[Iterable[Any]]) -> Iterable[Any]:
    """The parts one after the other: a list when each is one (so its size is known)."""
    if all(type(part) is list for part in parts):
        return parts[0] if len(parts) == 1 else [row for part in parts for row in part]
    return itertools.chain.from_iterable(parts)


def _from_report(row: dict[str, Any]) -> None:
    """Read a row of ``run``'s JSONL report as ``score`` needs it: its ``example_id`` is its id, and
    a system that gave no response is not scored as if it had answered ``None``."""
    if "example_id" not in row or "scores" not in row:
        return
    if example_id(row) is None:
        row["id"] = row["example_id"]
    if row.get("response") is None:
        row.pop("response", None)


def refuse_input_as_out(out: str | None, inputs: Iterable[str]) -> None:
    """``--out`` naming a file the command reads would overwrite the data set: refuse before running."""
    if not out:
        return
    if not Path(out).is_file():
        return
    for spec in inputs:
        path = Path(spec)
        if path.is_file() and os.path.samefile(path, out):  # a link or another name for it too
            raise UsageError(f"--out {out} is an input file of this command: write the report elsewhere")
