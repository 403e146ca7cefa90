"""Lazy package attributes: what keeps ``import context_bench`` (and a plugin's package) cheap.

A package names its public attributes in a table, ``name -> "module"`` (relative as ``".module"``,
or another distribution's ``("module", "distribution")``), and sets ``__getattr__ =
lazy_getattr(__name__, table)``: each module is imported on first access only, and the value is
kept in the package for the next access.  A name that lives in a distribution which is not
installed fails with an ImportError saying what to install.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from typing import Any

#: ``".module"`` (relative to the package), ``"package.module"``, or ``("module", "distribution")``.
Target = str | tuple[str, str]


def lazy_getattr(
    package: str,
    table: Mapping[str, Target],
    *,
    submodules: bool = False,
    fallback: Callable[[str], Any] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` resolving ``table``; then, with ``submodules``, a lower-case name as a
    submodule of the package; then ``fallback(name)`` (not cached), else AttributeError."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        target = table.get(name)
        if target is not None:
            value = getattr(import_target(target, name, package), name)
            setattr(sys.modules[package], name, value)
            return value
        if submodules and name.islower() and importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def import_target(target: Target, name: str, package: str) -> Any:
    """The module of ``target`` (for ``name`` of ``package``): another distribution's that is not
    installed is an ImportError naming what to install."""
    if isinstance(target, str):
        return importlib.import_module(target, package)
    module, distribution = target
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module.partition(".")[0]:
            raise  # the distribution is there but broken: its own error says more
        raise ImportError(
            f"cannot import name {name!r} from {package!r}: it comes from the {distribution} plugin, "
            f"which is not installed (pip install {distribution})",
            name=module,
        ) from None
