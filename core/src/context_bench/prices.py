"""Dollar prices of tokens, per model, as the user gives them: ``--price MODEL=IN,OUT`` (dollars
per million input and output tokens, repeatable) or a TOML file (``--prices FILE``)::

    [gpt-4o-mini]
    input = 0.15
    output = 0.60

A row whose endpoint reported a cost keeps it; its tokens are priced only otherwise.  A model
without a price has no dollars (never 0): the summary names it once in ``prices.missing``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .errors import UsageError

#: Prices are per this many tokens.
PER_TOKENS = 1_000_000


@attrs.frozen
class Price:
    """Dollars per million input and output tokens."""

    input: float
    output: float

    def dollars(self, input_tokens: float, output_tokens: float) -> float:
        """The price of the tokens; an unknown count (NaN) counts none."""
        known_in = input_tokens if input_tokens == input_tokens else 0.0
        known_out = output_tokens if output_tokens == output_tokens else 0.0
        return (known_in * self.input + known_out * self.output) / PER_TOKENS


@attrs.frozen
class Prices:
    """Prices by model (or system) name."""

    table: Mapping[str, Price] = attrs.Factory(dict)

    @classmethod
    def parse(cls, given: Sequence[str] = (), file: str | None = None) -> Prices:
        """The prices of ``--prices FILE`` then ``--price MODEL=IN,OUT`` (a flag overrides the file)."""
        table = dict(_read(file)) if file else {}
        for text in given:
            model, equals, amounts = text.rpartition("=")
            parts = amounts.split(",")
            if not equals or not model or len(parts) != 2:
                raise UsageError(f"--price {text}: expected MODEL=IN,OUT (dollars per million tokens)")
            table[model] = Price(*(_amount(part, f"--price {text}") for part in parts))
        return cls(table)

    def find(self, *names: str | None) -> Price | None:
        """The price of the first of ``names`` (a model, then the system's own name) that has one."""
        for name in names:
            if name is not None and name in self.table:
                return self.table[name]
        return None


def _amount(text: Any, where: str) -> float:
    from .bounds import BOUNDS

    bound = BOUNDS["--price"]
    try:
        value = float(text)
    except (TypeError, ValueError, OverflowError):  # a huge whole number in a TOML file
        value = math.nan
    if isinstance(text, bool) or not bound.holds(value):
        raise UsageError(f"{where}: {text!r} is not a price ({bound.describe()})")
    return value


def _read(file: str) -> dict[str, Price]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(Path(file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--prices {file}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--prices {file}: not TOML: {exc}") from None
    table = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise UsageError(
                f"--prices {file}: [{model}] needs exactly input and output (dollars per million tokens)"
            )
        where = f"--prices {file}: [{model}]"
        table[model] = Price(_amount(entry["input"], where), _amount(entry["output"], where))
    return table
