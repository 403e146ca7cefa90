"""A mutation check of the code that decides whether a report tells the truth (issue 26).

Each mutation (``bench/mutations.py`` and ``bench/mutations_verdicts.py``) is a realistic bug (a
flipped sign, a dropped correction, a comparison off by one, a missing escape, a failure read as a
score) written as a change of one snippet of one module.  The tool copies the tree given on the
command line into a temporary folder with a virtual environment of its own (the copy's packages
ahead of the running interpreter's third-party ones, so even the sandbox server that cbench-code
starts with ``python -I`` imports the copy), checks that the unchanged copy passes, then plants the
mutations one at a time, each followed by the tests of its area (``pytest -x``).  A mutation is
killed when they fail (or run past the time limit), survived when they pass.  The tree itself is
never written to.

    python bench/mutation.py [TREE] [--area summary --area secrets] [--only NAME] [--budget 7200]
    python bench/mutation.py [TREE] --list     # the mutations, and any whose snippet is gone

The score is the share of planted mutations killed, per area and in all.  Exit 0 when it reaches
``--fail-under`` (95%) and every mutation was planted and run; 1 otherwise, with the survivors,
the mutations whose snippet is no longer in the module (the list needs updating after a rewrite)
and those the time budget left unrun named.  Not part of CI: a run of every area takes about two
hours on a busy 2-core machine (docs/testing.md gives the last run's figures).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
from collections.abc import Callable
from pathlib import Path

import attrs
from mutations import GUARDS, Area, Mutation
from mutations_verdicts import VERDICTS

#: Every area, in the order a run takes them.
AREAS = (*VERDICTS, *GUARDS)

#: What the copy of a tree leaves out: version control, caches and environments.
IGNORED = shutil.ignore_patterns(
    ".git",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".ruff_cache",
    "*.egg-info",
    ".venv",
    "venv",
    "node_modules",
    ".mypy_cache",
)


@attrs.frozen
class Outcome:
    mutation: Mutation
    area: str
    #: killed, timeout, survived; stale (its snippet is not in the module once), broken (the mutant
    #: does not compile) and unrun (past the budget) were not planted
    status: str
    seconds: float = 0.0
    by: str = ""  # the first test that failed


def _copy(tree: Path, into: Path) -> Path:
    copy = into / "tree"
    shutil.copytree(tree, copy, ignore=IGNORED, symlinks=True)
    return copy


def _environment(copy: Path, into: Path) -> Path:
    """A virtual environment with the running interpreter's third-party packages (hard links, so it
    takes seconds and no space; a sample of cbench-code may read only what lies under its
    interpreter's prefix) and the copy's packages ahead of them, instead of any editable install."""
    home = into / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(home)
    python = home / "bin" / "python"
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    theirs = Path(subprocess.run([str(python), "-c", ask], capture_output=True, text=True).stdout.strip())
    shutil.rmtree(theirs)
    shutil.copytree(
        sysconfig.get_paths()["purelib"],
        theirs,
        symlinks=True,
        ignore=shutil.ignore_patterns("*editable*.pth", "__editable__*"),
        copy_function=_link,
    )
    sources = [copy / "core" / "src", *sorted(copy.glob("plugins/*/src"))]
    (theirs / "_cbench_mutation.pth").write_text("".join(f"{path}\n" for path in sources))
    packages = [path.name for src in sources for path in src.iterdir() if (path / "__init__.py").exists()]
    found = "import sys, importlib.util as u; print(*(u.find_spec(name).origin for name in sys.argv[1:]))"
    where = subprocess.run([str(python), "-I", "-c", found, *packages], capture_output=True, text=True)
    if len(where.stdout.split()) != len(packages) or not all(
        Path(path).is_relative_to(copy) for path in where.stdout.split()
    ):
        raise SystemExit(f"mutation: the copy's environment does not import {packages} from {copy}")
    return python


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def _pytest(python: Path, copy: Path, tests: tuple[str, ...], limit: float) -> tuple[str, float, str]:
    """Run ``tests`` on the copy: (passed, failed or timeout; seconds; the first failed test)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a stale .pyc of a mutant must never stand in for its source
    started = time.monotonic()
    process = subprocess.Popen(
        [str(python), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # so a timeout ends every process the tests started
    )
    try:
        out, _ = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return "timeout", time.monotonic() - started, ""
    seconds = time.monotonic() - started
    if process.returncode == 0:
        return "passed", seconds, ""
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
    return "failed", seconds, failed[0] if failed else (out.strip().splitlines() or [""])[-1]


def _caches(path: Path) -> None:
    """Byte code compiled by a process that ignores PYTHONDONTWRITEBYTECODE (``python -I``) goes."""
    shutil.rmtree(path.parent / "__pycache__", ignore_errors=True)


def run(tree: Path, areas: list[Area], budget: float, report: Callable[[str], None]) -> list[Outcome]:
    """Plant each area's mutations in a copy of ``tree``, one at a time, and run the area's tests."""
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="cbench-mutation-") as scratch:
        into = Path(scratch)
        copy = _copy(tree, into)
        python = _environment(copy, into)
        deadline = time.monotonic() + budget
        unchanged: dict[tuple[str, ...], float] = {}  # the tests' seconds on the unchanged copy
        for area in areas:
            if area.tests not in unchanged:
                status, seconds, by = _pytest(python, copy, area.tests, budget)
                if status != "passed":
                    raise SystemExit(
                        f"mutation: the unchanged tree fails the {area.name} tests ({status}: {by})"
                    )
                unchanged[area.tests] = seconds
            limit = max(60.0, 4 * unchanged[area.tests])
            seconds = unchanged[area.tests]
            report(f"{area.name}: {len(area.mutations)} mutations, {seconds:.0f} s of tests unchanged")
            for mutation in area.mutations:
                outcome = _plant(mutation, area, python, copy, limit if time.monotonic() < deadline else 0.0)
                outcomes.append(outcome)
                report(_line(outcome))
    return outcomes


def mutant(mutation: Mutation, original: str) -> tuple[str | None, str]:
    """(the module with the mutation planted, "") or (None, why it cannot be planted: ``stale``, the
    snippet is not in the module once, or ``broken``, the mutant does not compile and would be
    "killed" by any import of its module)."""
    if original.count(mutation.old) != 1:
        return None, "stale"
    planted = original.replace(mutation.old, mutation.new)
    try:
        compile(planted, mutation.path, "exec")
    except SyntaxError:
        return None, "broken"
    return planted, ""


def _plant(mutation: Mutation, area: Area, python: Path, copy: Path, limit: float) -> Outcome:
    """One mutation planted, its area's tests run (none when ``limit`` is 0: past the budget), and
    the module restored."""
    path = copy / mutation.path
    original = path.read_text(encoding="utf-8") if path.exists() else ""
    planted, why = mutant(mutation, original)
    if planted is None:
        return Outcome(mutation, area.name, why)
    if not limit:
        return Outcome(mutation, area.name, "unrun")
    path.write_text(planted, encoding="utf-8")
    _caches(path)
    try:
        status, seconds, by = _pytest(python, copy, area.tests, limit)
    finally:
        path.write_text(original, encoding="utf-8")
        _caches(path)
    return Outcome(
        mutation, area.name, {"passed": "survived", "failed": "killed"}.get(status, status), seconds, by
    )


def _line(outcome: Outcome) -> str:
    where = f" ({outcome.by})" if outcome.by else ""
    return f"  {outcome.status:8} {outcome.area}/{outcome.mutation.name}  {outcome.seconds:5.1f} s{where}"


def score(outcomes: list[Outcome]) -> tuple[int, int]:
    """(killed, planted): a timeout is killed; a stale, broken or unrun mutation was not planted."""
    planted = [o for o in outcomes if o.status in ("killed", "timeout", "survived")]
    return sum(o.status != "survived" for o in planted), len(planted)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "tree",
        nargs="?",
        default=str(Path(__file__).resolve().parents[1]),
        help="the tree to check (default: this one)",
    )
    parser.add_argument("--area", action="append", choices=[a.name for a in AREAS], help="only these areas")
    parser.add_argument("--only", action="append", help="only the mutations of these names")
    parser.add_argument(
        "--budget", type=float, default=7200.0, help="seconds for the whole run (default 7200)"
    )
    parser.add_argument("--fail-under", type=float, default=95.0, help="the score (percent) to reach")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args()
    areas = [
        attrs.evolve(area, mutations=tuple(m for m in area.mutations if not args.only or m.name in args.only))
        for area in AREAS
        if not args.area or area.name in args.area
    ]
    areas = [area for area in areas if area.mutations]
    unknown = set(args.only or ()) - {m.name for area in AREAS for m in area.mutations}
    if unknown:
        print(
            f"mutation: no mutation named {', '.join(sorted(unknown))} (--list names them)", file=sys.stderr
        )
        return 2
    tree = Path(args.tree).resolve()
    if not (tree / "core" / "src" / "context_bench").is_dir():
        print(f"mutation: {tree} is not a context-bench tree (no core/src/context_bench)", file=sys.stderr)
        return 2
    if args.list:  # and whether each can be planted in the tree
        for area in areas:
            for m in area.mutations:
                path = tree / m.path
                _, why = mutant(m, path.read_text(encoding="utf-8") if path.exists() else "")
                print(f"{area.name}/{m.name}: {m.path}" + (f" ({why})" if why else ""))
        return 0
    print(
        f"mutation check of {tree}: {sum(len(a.mutations) for a in areas)} mutations in {len(areas)} areas",
        flush=True,
    )
    outcomes = run(tree, areas, args.budget, lambda line: print(line, flush=True))
    print()
    for area in areas:
        killed, planted = score([o for o in outcomes if o.area == area.name])
        print(f"{area.name:12} {killed:3d} of {planted:3d} killed")
    killed, planted = score(outcomes)
    share = 100.0 * killed / planted if planted else 0.0
    print(f"score: {killed} of {planted} killed, {share:.1f}%")
    for status, what in (
        ("survived", "survived"),
        ("stale", "not planted: the snippet is not in the module once"),
        ("broken", "not planted: the mutant does not compile"),
        ("unrun", "not run: past --budget"),
    ):
        named = [f"{o.area}/{o.mutation.name}" for o in outcomes if o.status == status]
        if named:
            print(f"{what}: {', '.join(named)}")
    complete = not any(o.status in ("stale", "broken", "unrun") for o in outcomes)
    return 0 if complete and share >= args.fail_under else 1


if __name__ == "__main__":
    sys.exit(main())
