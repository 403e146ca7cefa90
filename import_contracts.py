"""The repository's own import-linter contract type (pyproject.toml's ``contract_types``).

``private_by_name``: a forbidden contract whose forbidden modules are those, among
``forbidden_modules`` and their descendants, whose name or a parent's starts with an underscore
(``context_bench._executor``, ``context_bench.cli._app``, everything in ``context_bench._catalog``),
as pluggy and httpx mark theirs.  A new private module is private by its name alone: import-linter's
own wildcards stand for whole names only, so ``context_bench.**._*`` is not one.
"""

from __future__ import annotations

from typing import Any

from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.domain.helpers import module_expressions_to_modules
from importlinter.domain.imports import ModuleExpression


def private(module: str) -> bool:
    """Whether ``module``'s name or a parent's starts with one underscore (``__main__`` is no such)."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


class PrivateByName(ForbiddenContract):
    type_name = "private_by_name"

    def check(self, graph: Any, verbose: bool) -> Any:
        scope = module_expressions_to_modules(graph, self.forbidden_modules, as_packages=True)
        self.forbidden_modules = {
            ModuleExpression(m.name)
            for m in scope
            if private(m.name) and not private(m.name.rpartition(".")[0])  # a private package, once
        }
        return super().check(graph, verbose)


# import-linter reads a contract's fields from its own class's __dict__, not its bases'.
for _name in ForbiddenContract._get_field_names():
    setattr(PrivateByName, _name, getattr(ForbiddenContract, _name))
