"""``run``'s sweep flags (``--sweep``, ``--margin``, ``--sweep-rate``, the sweep's gates) and
``--repeats``, a run file's ``[[sweeps]]``, and the systems a sweep expands into: each system that
takes a swept parameter becomes one system per setting, named ``SYSTEM[NAME=value]``; the baseline
runs once, as given (docs/sweeps.md).

An endpoint other than the baseline takes every swept parameter, as a key of its request body; a
``--command`` takes those its command line names as ``{NAME}`` placeholders (each replaced by the
value, quoted for the shell's reading), and a placeholder that names no swept parameter is refused.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..bounds import flag_type
from ..defaults import DEFAULT_MARGIN, DEFAULT_REPEATS
from ..errors import UsageError
from ..gates import OperatingFloor
from ..sweep import Setting, Sweep, axis_range, parse_axis
from ._system_flags import _check_names

if TYPE_CHECKING:
    from ._run_options import RunOptions
    from ._system_flags import SystemSettings

#: A command line's ``{NAME}`` placeholder (``${HOME}`` is the shell's, not one).
PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: The keys of a run file's ``[[sweeps]]``.
SWEEP_KEYS = ("name", "values", "start", "stop", "step")


def _axis_words(text: str) -> str:
    try:
        parse_axis(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_sweep_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "sweeps", "Run each system that takes a parameter once per value of it (docs/sweeps.md)."
    )
    group.add_argument(
        "--sweep",
        action="append",
        default=[],
        type=_axis_words,
        metavar="NAME=V1,V2,...",
        help="run each system that takes NAME once per value, as a system named SYSTEM[NAME=value]: "
        "a key of an endpoint's request body, a {NAME} placeholder of a --command; the baseline "
        "runs once without it (repeatable: a grid)",
    )
    group.add_argument(
        "--margin",
        type=flag_type("--margin"),
        default=DEFAULT_MARGIN,
        metavar="M",
        help="the safe operating point is the setting with the lowest input ratio whose paired "
        f"interval's upper bound is at least -M (default {DEFAULT_MARGIN})",
    )
    group.add_argument(
        "--repeats",
        type=flag_type("--repeats"),
        default=DEFAULT_REPEATS,
        metavar="K",
        help="send each row K times to each system: its score is the mean of its repeats, and the "
        "report adds the within-row standard deviation, the rows whose repeats disagree, pass@k and "
        f"pass^k (default {DEFAULT_REPEATS})",
    )
    group.add_argument(
        "--require-operating-point",
        action="append",
        default=[],
        metavar="NAME>=VALUE",
        help="exit 3 when a swept system's safe operating point over all data sets is missing or "
        "below VALUE (NAME<=VALUE: above it)",
    )
    group.add_argument(
        "--gate-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="--fail-if-worse reads this setting of the swept systems alone (default: every setting)",
    )
    group.add_argument(
        "--refine",
        type=flag_type("--refine"),
        default=0,
        metavar="K",
        help="add up to K settings of the one numeric --sweep between the last safe and the first "
        "unsafe value, bisecting, each run before the next is chosen (its rows cached)",
    )
    group.add_argument(
        "--sweep-rate",
        action="append",
        default=[],
        metavar="NAME",
        help="the swept NAME is a rate: a setting whose achieved input ratio is more than 10%% from "
        "it is flagged",
    )


def sweep_words(listed: Any, path: str) -> list[str]:
    """A run file's ``[[sweeps]]`` as ``--sweep`` words: each a ``name`` with ``values`` (a list) or
    ``start``, ``stop`` and ``step``."""
    if not isinstance(listed, list) or not all(isinstance(entry, dict) for entry in listed):
        raise UsageError(f"{path}: [[sweeps]] must be a list of tables")
    words = []
    for number, entry in enumerate(listed, start=1):
        where = f"{path}: sweep {number}"
        unknown = next((key for key in entry if key not in SWEEP_KEYS), None)
        if unknown is not None:
            raise UsageError(f"{where}: unknown key {unknown!r} (it takes {', '.join(SWEEP_KEYS)})")
        name = entry.get("name")
        if not isinstance(name, str):
            raise UsageError(f"{where}: needs name = PARAMETER")
        ranged = [entry.get(key) for key in ("start", "stop", "step")]
        if ("values" in entry) == any(value is not None for value in ranged):
            raise UsageError(f"{where}: give values = [...], or start, stop and step")
        try:
            if "values" in entry:
                values = entry["values"]
                if not isinstance(values, list) or not values:
                    raise ValueError(f"{name}: values must be a list of one value or more")
                axis = parse_axis(f"{name}={','.join(str(value) for value in values)}")
            else:
                if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in ranged):
                    raise ValueError(f"{name}: start, stop and step must all be numbers")
                axis = axis_range(name, *ranged)
        except ValueError as exc:
            raise UsageError(f"{where}: {exc}") from None
        words.append(f"{axis.name}={','.join(str(value) for value in axis.values)}")
    return words


def swept(
    systems: list[SystemSettings], args: argparse.Namespace, options: RunOptions
) -> tuple[list[SystemSettings], RunOptions]:
    """The systems the sweep ``args`` give expands ``systems`` into, and ``options`` with the sweep
    and its baseline in the run's configuration; unchanged without ``--sweep``.  Every mistake is
    one line, before any row runs.  With ``--repeats``, the repeats go into the configuration too
    (a system at temperature 0 gets one warning: its repeats will likely be alike)."""
    if args.repeats > 1:
        scope = attrs.evolve(options.config.scope, repeats=args.repeats)
        options = attrs.evolve(options, config=attrs.evolve(options.config, scope=scope))
        if any(system.temperature == 0 for system in systems):
            print(
                f"context-bench: warning: --repeats {args.repeats} with --temperature 0: the repeats "
                "of a row will likely be alike",
                file=sys.stderr,
            )
    sweep = _sweep_of(args)
    if not sweep.axes:
        given = next((f for f in ("require_operating_point", "gate_setting") if getattr(args, f)), None)
        if given is not None:
            raise UsageError(f"--{given.replace('_', '-')} reads a sweep: give --sweep NAME=V1,V2,...")
        return systems, options
    floors = tuple(_floor(text, sweep) for text in args.require_operating_point)
    baseline = options.config.analysis.baseline or systems[0].name
    names = [system.name for system in systems]
    if len(systems) < 2 or baseline not in names:
        raise UsageError(
            "--sweep compares each setting with a baseline: give the baseline as a system of the run "
            "(the first, or the one --baseline names)"
        )
    swept_names = {axis.name for axis in sweep.axes}
    expanded: list[SystemSettings] = []
    settings: list[Setting] = []
    taken: set[str] = set()
    for system in systems:
        if system.name == baseline and system.command and PLACEHOLDER.search(system.command):
            raise UsageError(
                f"{system.label}: the baseline is never sent a swept parameter, so its command line "
                "may hold no {NAME} placeholder"
            )
        takes = set() if system.name == baseline else _takes(system, swept_names)
        grid = sweep.grid(system.name, takes)
        taken |= takes
        expanded.extend([_at(system, setting) for setting in grid] if grid else [system])
        settings.extend(grid)
    untaken = sweep.untaken(taken)
    if untaken is not None:
        raise UsageError(
            f"--sweep {untaken}: no system takes it (an endpoint other than the baseline takes any "
            f"parameter; a --command takes it as {{{untaken}}} in its command line)"
        )
    _check_names(expanded)  # a system named like another's setting
    gates = attrs.evolve(
        options.gates,
        operating_floors=floors,
        ungated=_ungated(args.gate_setting, sweep, settings),
    )
    config = attrs.evolve(
        options.config,
        sweep=sweep.with_settings(settings),
        analysis=attrs.evolve(options.config.analysis, baseline=baseline),
    )
    return expanded, attrs.evolve(options, config=config, gates=gates)


def _floor(text: str, sweep: Sweep) -> OperatingFloor:
    floor = OperatingFloor.parse(text)
    if floor.parameter not in {axis.name for axis in sweep.axes}:
        raise UsageError(f"--require-operating-point {text}: {floor.parameter} is not swept")
    return floor


def _ungated(picked: list[str], sweep: Sweep, settings: list[Setting]) -> frozenset[str]:
    """The settings ``--gate-setting NAME=VALUE`` (each naming a swept value) does not pick."""
    chosen = {}
    for text in picked:
        try:
            axis = parse_axis(text)
        except ValueError as exc:
            raise UsageError(f"--gate-setting {text}: {exc}") from None
        swept = next((a for a in sweep.axes if a.name == axis.name), None)
        if swept is None or len(axis.values) != 1 or axis.values[0] not in swept.values:
            raise UsageError(f"--gate-setting {text}: not one value of a --sweep")
        chosen[axis.name] = axis.values[0]
    return frozenset(
        s.name for s in settings if any(dict(s.values).get(k, v) != v for k, v in chosen.items())
    )


def _sweep_of(args: argparse.Namespace) -> Sweep:
    try:
        return Sweep(
            axes=[parse_axis(text) for text in args.sweep],
            margin=args.margin,
            rates=args.sweep_rate,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _takes(system: SystemSettings, swept: set[str]) -> set[str]:
    if system.command is None:
        return set(swept)
    named = set(PLACEHOLDER.findall(system.command))
    unknown = sorted(named - swept)
    if unknown:
        raise UsageError(
            f"{system.label}: {{{unknown[0]}}} names no swept parameter (--sweep {unknown[0]}=...)"
        )
    return named


def _at(system: SystemSettings, setting: Setting) -> SystemSettings:
    """``system`` at ``setting``: its values in the request body, or in the command line."""
    values = dict(setting.values)
    if system.command is None:
        return attrs.evolve(system, name=setting.name, extra_body={**(system.extra_body or {}), **values})
    command = PLACEHOLDER.sub(lambda found: shlex.quote(str(values[found.group(1)])), system.command)
    return attrs.evolve(system, name=setting.name, command=command)


def refined(args: argparse.Namespace, host: Any, run: Callable[[argparse.Namespace, Any], int]) -> int:
    """``--refine K``: run the sweep quietly, then up to K times add the value halfway between the
    safe operating point (over all data sets) and its unsafe neighbour and run again, every pass's
    rows cached (in ``--cache-dir``, else a temporary one) so no row runs twice; then ``run`` the
    sweep with every value added, as the report."""
    axes = [parse_axis(text) for text in args.sweep]
    if len(axes) != 1 or not all(isinstance(v, (int, float)) for v in axes[0].values):
        raise UsageError("--refine bisects one --sweep of numbers: give exactly one")
    axis = axes[0]
    values = list(axis.values)
    with tempfile.TemporaryDirectory(prefix="cbench-refine-") as folder:
        probe = copy.copy(args)
        probe.output, probe.out, probe.store = "json", str(Path(folder) / "probe.json"), "none"
        probe.cache_dir = args.cache_dir = args.cache_dir or str(Path(folder) / "cache")
        probe.fail_under = probe.fail_over = probe.fail_if_worse = probe.require_operating_point = []
        probe.max_failure_rate = 1.0
        for _ in range(args.refine):
            probe.sweep = [f"{axis.name}={','.join(map(str, values))}"]
            run(copy.copy(probe), host)
            summary = json.loads(Path(probe.out).read_text(encoding="utf-8"))["summary"]
            middle = _middle(summary, values)
            if middle is None:
                break
            print(f"context-bench: refining {axis.name}: {middle}", file=sys.stderr)
            values.append(middle)
        args.sweep = [f"{axis.name}={','.join(map(str, values))}"]
        return run(args, host)


def _middle(summary: Mapping[str, Any], values: list[Any]) -> float | None:
    """The value halfway between the safe operating point over all data sets and the nearest value
    on its side of lower input ratio that is not safe everywhere (None: nothing left to bisect)."""
    point = next((p for p in summary.get("operating_points") or [] if p["dataset"] is None), None)
    if point is None:
        return None
    ratios: dict[Any, list[float]] = {}
    unsafe = set()
    for p in summary.get("sweeps") or []:
        if p["input_ratio"] is not None:
            ratios.setdefault(p["value"], []).append(p["input_ratio"])
        if not p["safe"]:
            unsafe.add(p["value"])
    below = [v for v in unsafe if v in ratios and max(ratios[v]) < point["input_ratio"]]
    if not below:
        return None
    nearest = min(below, key=lambda v: abs(v - point["value"]))
    middle = round((nearest + point["value"]) / 2, 10)
    return None if middle in values else middle
