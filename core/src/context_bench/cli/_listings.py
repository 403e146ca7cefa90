"""``context-bench plugins``, ``evaluators`` and ``datasets``: what the installed plugins offer."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from ..direction import LOWER_MARK, named
from ..errors import UsageError
from ..plugins import PluginHost
from ..specs import AutowireRule, DatasetSpec


def cmd_plugins(args: argparse.Namespace, host: PluginHost) -> int:
    plugins = [info.to_dict() for info in host.plugins.values()]
    if args.json:
        print(json.dumps(plugins, indent=2))
        return 0
    for info in plugins:
        version = f" {info['version']}" if info["version"] else ""
        reason = f" ({info['reason']})" if info["reason"] else ""
        print(f"{info['name']}{version}: {info['status']}{reason}")
        for ev in info["evaluators"]:
            print(f"  evaluator {ev['name']} -> {', '.join(_labels(ev))}")
        for rule in info["autowire"]:
            when = " or ".join(
                filter(
                    None,
                    [
                        f"data sets {', '.join(rule['datasets'])}" if rule["datasets"] else "",
                        f"rows with {' + '.join(rule['fields'])}" if rule["fields"] else "",
                    ],
                )
            )
            needs = f" when {', '.join(rule['requires'])} is set" if rule["requires"] else ""
            runs = f" (in {', '.join(rule['runs'])} runs)" if rule["runs"] else ""
            print(f"  auto-wire {rule['evaluator']}: {when}{needs}{runs}")
        for dataset in info["datasets"]:
            print(f"  data set {dataset['name']} ({dataset['kind']})")
        for command in info["commands"]:
            print(f"  command {command['name']}: {command['help']}")
        for executor in info["executors"]:
            options = f" (options: {', '.join(executor['options'])})" if executor["options"] else ""
            print(f"  executor {executor['name']}: {executor['description']}{options}")
        for fmt in info["formats"]:
            kind = ", ".join(filter(None, [fmt["extension"], "streamed" if fmt["streams"] else ""]))
            print(f"  report format {fmt['name']}{f' ({kind})' if kind else ''}: {fmt['description']}")
        for section in info["sections"]:
            print(f"  summary section {section['name']}: {section['description']}")
        for key, value in info["info"].items():
            print(f"  {key}: {value}")
    if any(spec.lower_is_better for info in host.plugins.values() for spec in info.evaluators):
        print(LOWER_MARK)
    return 0


def cmd_evaluators(args: argparse.Namespace, host: PluginHost) -> int:
    specs = host.evaluator_specs()
    counts: dict[str, int] = {}
    for _, spec in specs:
        counts[spec.name] = counts.get(spec.name, 0) + 1
    listing = [
        {
            "name": spec.name if counts[spec.name] == 1 else f"{plugin}/{spec.name}",
            "plugin": plugin,
            "fields": list(spec.fields),
            "score_fields": spec.score_fields(),
            "description": spec.description,
        }
        for plugin, spec in specs
    ]
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    width = max((len(e["name"]) for e in listing), default=10)
    for e in listing:
        print(f"{e['name']:<{width}}  [{e['plugin']}]  {', '.join(_labels(e))}")
        if e["description"]:
            print(f"{'':<{width}}  {e['description']}")
    if any(spec.lower_is_better for _, spec in specs):
        print(LOWER_MARK)
    return 0


def _labels(evaluator: dict[str, Any]) -> list[str]:
    """An evaluator's fields as the listings show them: ``extra_words ↓`` where lower is better."""
    fields = evaluator["score_fields"]
    return [named(fields.get(f, {}).get("direction")).label(f) for f in evaluator["fields"]]


def configure_listing(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def configure_datasets(parser: argparse.ArgumentParser, host: PluginHost) -> None:
    """``datasets`` lists; ``datasets download NAME... --to DIR`` fills a hub mirror."""
    configure_listing(parser, host)
    parser.add_argument(
        "--hub-mirror",
        metavar="DIR",
        default=os.environ.get("CBENCH_HUB_MIRROR") or None,
        help="say which data sets DIR holds (default $CBENCH_HUB_MIRROR; else the Hugging Face cache)",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    download = actions.add_parser(
        "download",
        help="copy hub data sets into DIR/<owner>/<name>/, a mirror for --hub-mirror DIR",
        description="Copy hub data sets (the revision each loads from) into DIR/<owner>/<name>/, so that "
        "`context-bench run --dataset NAME --hub-mirror DIR` loads them with no network.",
    )
    download.add_argument("names", nargs="+", metavar="NAME[:CONFIG]", help="catalog names")
    download.add_argument("--to", required=True, metavar="DIR", help="the mirror directory")
    download.set_defaults(handler=cmd_download)


def _matches(rule: AutowireRule, name: str, fields: tuple[str, ...]) -> bool:
    if "*" in rule.datasets or name in rule.datasets:
        return True
    return bool(rule.fields and fields) and all(
        any(alternative in fields for alternative in field.split("|")) for field in rule.fields
    )


def _wired(host: PluginHost, spec: DatasetSpec) -> list[dict[str, Any]]:
    """The evaluators the auto-wire rules give ``spec``'s rows, each with the options it needs."""
    found: dict[str, list[str]] = {}
    for _, rule in host.plugin_rules():
        if rule.serves(spec.kind) and _matches(rule, spec.name.lower(), spec.fields):
            needs = found.setdefault(rule.evaluator, list(rule.requires))
            if not rule.requires:
                needs.clear()
    return [{"name": name, "requires": needs} for name, needs in found.items()]


def _entry(host: PluginHost, plugin: str, spec: DatasetSpec) -> dict[str, Any]:
    from ..hub._cache import available

    source = spec.source
    return {
        "name": spec.name,
        "plugin": plugin,
        "kind": spec.kind,
        "description": spec.description,
        "source": None
        if source is None
        else {
            "repo": source.repo,
            "config": source.config,
            "configs": list(source.configs),
            "split": source.split,
            "revision": source.revision,
            "gated": source.gated,
        },
        "evaluators": _wired(host, spec),
        "available": None if source is None else available(source),
    }


def cmd_datasets(args: argparse.Namespace, host: PluginHost) -> int:
    from ..hub import mirrored

    with mirrored(args.hub_mirror):
        listing = [_entry(host, plugin, spec) for plugin, spec in host.datasets().values()]
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    if not listing:
        print("no registered data sets (any JSONL/JSON/CSV file can be passed as --dataset PATH)")
    width = max((len(d["name"]) for d in listing), default=0)
    for d in listing:
        print(f"{d['name']:<{width}}  [{d['plugin']}, {d['kind']}]  {d['description']}")
        details = []
        if d["source"]:
            details.append(_source_text(d["source"]))
        if d["evaluators"]:
            details.append("evaluators " + ", ".join(_evaluator_text(e) for e in d["evaluators"]))
        if d["source"]:
            details.append(f"local: {d['available'] or 'no'}")
        if details:
            print(f"{'':<{width}}  " + "; ".join(details))
    return 0


def _source_text(source: dict[str, Any]) -> str:
    text = f"{source['repo']}"
    if source["config"]:
        text += f", config {source['config']}"
    configs = source["configs"]
    if len(configs) > 1:
        text += (
            f" ({', '.join(configs)})" if len(configs) <= 8 else f" (of {len(configs)}: --json lists them)"
        )
    text += f", split {source['split']}"
    if source["revision"]:
        text += f", revision {source['revision']}"
    return text + (", gated: needs HF_TOKEN" if source["gated"] else "")


def _evaluator_text(evaluator: dict[str, Any]) -> str:
    needs = evaluator["requires"]
    flags = ", ".join("--" + dest.replace("_", "-") for dest in needs)
    return evaluator["name"] + (f" (with {flags})" if needs else "")


def cmd_download(args: argparse.Namespace, host: PluginHost) -> int:
    """Each named hub data set's repository into ``--to``; a bad name fails before any download."""
    from ..files import check_directory
    from ..hub._fetch import download

    known = host.datasets()
    chosen = []
    for word in args.names:
        name, _, config = word.partition(":")
        found = known.get(name.lower())
        if found is None:
            unknown = f"unknown data set {name!r} (`context-bench datasets` lists them)"
            raise UsageError(host.not_found("data set", name, unknown))
        spec = found[1]
        if spec.source is None:
            raise UsageError(f"{spec.name} is not a hub data set: there is nothing to download")
        chosen.append((spec, spec.source.pick(config or None)))
    target = Path(args.to).expanduser()
    check_directory(str(target), "--to")
    for spec, config in chosen:
        where = download(spec.source, config, target)
        print(f"{spec.name}: {spec.source.repo} -> {where}")
    print(f"load them with no network: context-bench run --dataset NAME --hub-mirror {target} ...")
    return 0
