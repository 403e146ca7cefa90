"""``context-bench plugin new NAME``: a plugin's skeleton to start from, which builds, installs,
passes its own tests and ``check_plugin`` as written (docs/plugins.md, "A template").

The files are templates in ``context_bench/plugin_template/`` (``string.Template``, ``${name}``),
shipped in the core's wheel.
"""

from __future__ import annotations

import argparse
import keyword
import re
from importlib.resources import files
from pathlib import Path
from string import Template

from .. import __version__
from ..errors import UsageError
from ..plugins import PluginHost

#: Each file of the skeleton: where it goes (a template of the names) and the template it is.
FILES = {
    "pyproject.toml": "pyproject.toml.tmpl",
    "README.md": "README.md.tmpl",
    "src/${package}/__init__.py": "__init__.py.tmpl",
    "src/${package}/plugin.py": "plugin.py.tmpl",
    "src/${package}/evaluator.py": "evaluator.py.tmpl",
    "src/${package}/dataset.py": "dataset.py.tmpl",
    "src/${package}/${data_file}": "data.jsonl.tmpl",
    "src/${package}/command.py": "command.py.tmpl",
    "tests/test_plugin.py": "test_plugin.py.tmpl",
}

#: A distribution name the skeleton builds from: lower-case words of letters and digits, joined by
#: hyphens, each starting with a letter (so every name made of it is a Python identifier).
NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*")


def configure(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.description = "Tools for plugin authors (docs/plugins.md)."
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser), required=True)
    new = actions.add_parser(
        "new",
        help="write a plugin's skeleton: an evaluator, a rule, a data set, a command and their tests",
        description="Write a plugin's skeleton (pyproject.toml with hatchling, an evaluator, an auto-wire "
        "rule, a data set shipped in the package, a command, tests using context_bench.testing) that "
        "builds, installs and passes its tests as written.",
    )
    new.add_argument("name", metavar="NAME", help="the distribution's name, such as cbench-profanity")
    new.add_argument("--to", metavar="DIR", help="the folder to write (default ./NAME); new or empty")
    new.set_defaults(handler=cmd_new)


def names(name: str) -> dict[str, str]:
    """What the skeleton of ``name`` is made of: ``cbench-profanity`` is the package
    ``cbench_profanity``, the data set and command ``profanity``, the evaluator ``ProfanityScore``
    scoring ``profanity_score``."""
    package = name.replace("-", "_")
    if not NAME.fullmatch(name) or keyword.iskeyword(package) or name == "cbench":
        raise UsageError(
            f"plugin name {name!r}: use lower-case words of letters and digits joined by hyphens, "
            "such as cbench-profanity"
        )
    short = name.removeprefix("cbench-")
    major = int(__version__.split(".")[0])
    return {
        "name": name,
        "package": package,
        "short": short,
        "evaluator": "".join(word.capitalize() for word in short.split("-")) + "Score",
        "field": short.replace("-", "_") + "_score",
        "data_file": short.replace("-", "_") + ".jsonl",
        "core_major": str(major),
        "core_next": str(major + 1),
    }


def _refuse_taken(made: dict[str, str], host: PluginHost) -> None:
    """A name of the skeleton that the core or an installed plugin has would be refused at discovery."""
    short = made["short"]
    taken = [
        f"the command {short!r}" if any(c.name == short for _, c in host.commands()) else "",
        f"the data set {short!r}" if short in host.datasets() else "",
        f"the evaluator {made['evaluator']!r}" if host.has_evaluator(made["evaluator"]) else "",
    ]
    if any(taken):
        said = ", ".join(filter(None, taken))
        raise UsageError(f"{made['name']}: {said} is already installed; choose another name")


def cmd_new(args: argparse.Namespace, host: PluginHost) -> int:
    made = names(args.name)
    _refuse_taken(made, host)
    target = Path(args.to or made["name"])
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target} exists and is not an empty folder: give a new one with --to")
    templates = files("context_bench").joinpath("plugin_template")
    for where, template in FILES.items():
        path = target / Template(where).substitute(made)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = templates.joinpath(template).read_text(encoding="utf-8")
        path.write_text(Template(text).substitute(made), encoding="utf-8")
    print(
        f"wrote {target}/: the evaluator {made['evaluator']} ({made['field']}), its auto-wire rule, "
        f"the data set {made['short']}, the command `context-bench {made['short']}` and their tests"
    )
    print(f"next: cd {target} && pip install -e '.[test]' && pytest")
    return 0
