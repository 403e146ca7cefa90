"""How much ``Any`` is left where the types are checked.

Counts the name ``Any`` (as code: not in comments or strings) in each module mypy checks strictly
(``[tool.mypy] files`` in the root pyproject.toml, the core's seams and each plugin's public
modules), their total, and the whole core beside the 718 issue 27 counted in it, when no type
checker ran.  An ``Any`` in a checked module is one a reader cannot trust mypy on: a seam a plugin
or a user fills (an example, a system's output), or a type not written yet.

    python bench/typing_report.py [--root PATH]
"""

from __future__ import annotations

import argparse
import io
import tokenize
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: mypy brings tomli there
    import tomli as tomllib

#: Issue 27's count of ``Any`` in the core (core/src) before mypy ran in CI.
ISSUE_COUNT = 718


def count_any(source: str) -> int:
    """The ``Any`` names in ``source``'s code: annotations, casts, imports; not comments or strings."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return sum(1 for token in tokens if token.type == tokenize.NAME and token.string == "Any")


def mypy_config(root: Path) -> dict[str, Any]:
    """``[tool.mypy]`` of the root pyproject.toml: ``files`` are the modules checked strictly."""
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def module_name(path: Path) -> str:
    """``core/src/context_bench/config.py`` -> ``context_bench.config``; a package is its ``__init__``."""
    parts = path.with_suffix("").parts
    parts = parts[parts.index("src") + 1 :]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    checked = [Path(name) for name in mypy_config(args.root)["files"]]
    counts = {module_name(p): count_any((args.root / p).read_text(encoding="utf-8")) for p in checked}
    core = sorted((args.root / "core" / "src").rglob("*.py"))
    in_core = sum(count_any(path.read_text(encoding="utf-8")) for path in core)
    width = max(map(len, counts)) + 2
    print(f"{'module (checked by mypy --strict)':<{width}}  Any")
    for name, count in counts.items():
        print(f"{name:<{width}}{count:>5}")
    print(f"{f'{len(counts)} checked modules':<{width}}{sum(counts.values()):>5}")
    print(f"{f'the whole core ({len(core)} modules)':<{width}}{in_core:>5}  (issue 27 counted {ISSUE_COUNT})")


if __name__ == "__main__":
    main()
