"""Every evaluator an installed plugin registers, importable by its public name.

``from context_bench.evaluators import WordCountDiff`` resolves lazily through the plugin host;
when no installed plugin provides the name, the ImportError says which distribution to install.
"""

from __future__ import annotations

from typing import Any

from ..lazy import lazy_getattr


def _registered(name: str) -> Any:
    """The class a plugin registers as ``name`` (not cached: ``-p no:NAME`` may change the host)."""
    from ..errors import AmbiguousEvaluator, EvaluatorNotFound
    from ..plugins import get_host
    from ..specs import resolve

    try:
        spec = get_host().find_evaluator(name)
    except EvaluatorNotFound as exc:
        raise EvaluatorNotFound(
            f"cannot import name {name!r} from 'context_bench.evaluators': {exc}"
        ) from None
    except AmbiguousEvaluator as exc:
        raise ImportError(str(exc)) from None
    return resolve(spec.factory)


__getattr__ = lazy_getattr(__name__, {}, submodules=True, fallback=_registered)


def __dir__() -> list[str]:
    from ..plugins import get_host

    return sorted({spec.name for _, spec in get_host().evaluator_specs()})
