"""Dollar prices of tokens, per model, as the user gives them: ``--price
MODEL=IN,OUT[,CACHED_IN[,CACHE_WRITE]]`` (dollars per million input and output tokens, and of the
prompt tokens read from and written to the provider's cache, repeatable) or a TOML file
(``--prices FILE``)::

    [gpt-4o-mini]
    input = 0.15
    output = 0.60
    cached_input = 0.075    # optional, as cache_write

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
#: A price file's optional keys: the cache's prices.
_CACHED = ("cached_input", "cache_write")


@attrs.frozen
class Price:
    """Dollars per million input and output tokens, and of the input tokens read from
    (``cached_input``) and written to (``cache_write``) the provider's cache (None: the input's)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def dollars(
        self, input_tokens: float, output_tokens: float, cached: float = math.nan, written: float = math.nan
    ) -> float:
        """The price of the tokens, the cached and cache-write ones (parts of ``input_tokens``) at
        their own prices; an unknown count (NaN) counts none.  The cached and written parts are
        held within the input: an upstream's usage is not ours to trust, and a count from another
        source (a tokenizer's input beside the upstream's cache) may be smaller, and a cached part
        larger than the input would price the rest below nothing."""
        known_in = input_tokens if input_tokens == input_tokens else 0.0
        known_out = output_tokens if output_tokens == output_tokens else 0.0
        cached = min(cached, known_in) if cached == cached else 0.0
        written = min(written, known_in - cached) if written == written else 0.0
        dollars = (known_in - cached - written) * self.input + known_out * self.output
        dollars += cached * _or(self.cached_input, self.input) + written * _or(self.cache_write, self.input)
        return dollars / PER_TOKENS


def _or(price: float | None, otherwise: float) -> float:
    return otherwise if price is None else price


@attrs.frozen
class Prices:
    """Prices by model (or system) name."""

    table: Mapping[str, Price] = attrs.Factory(dict)

    @classmethod
    def parse(cls, given: Sequence[str] = (), file: str | None = None) -> Prices:
        """The prices of ``--prices FILE`` then ``--price MODEL=IN,OUT[,CACHED_IN[,CACHE_WRITE]]``
        (a flag overrides the file)."""
        table = dict(_read(file)) if file else {}
        for text in given:
            model, equals, amounts = text.rpartition("=")
            parts = amounts.split(",")
            if not equals or not model or not 2 <= len(parts) <= 4:
                raise UsageError(
                    f"--price {text}: expected MODEL=IN,OUT[,CACHED_IN[,CACHE_WRITE]] (dollars per "
                    "million tokens)"
                )
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
        if (
            not isinstance(entry, dict)
            or not {"input", "output"} <= set(entry)
            or not set(entry) <= {"input", "output", *_CACHED}
        ):
            raise UsageError(
                f"--prices {file}: [{model}] needs input and output, and may have cached_input and "
                "cache_write (dollars per million tokens)"
            )
        where = f"--prices {file}: [{model}]"
        table[model] = Price(**{key: _amount(value, where) for key, value in entry.items()})
    return table
