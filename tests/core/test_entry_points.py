"""Discovery through real entry points: plugins pip-installed into a fresh virtual environment.

The new environment also sees the packages of the one running the tests (a ``.pth`` file adds its
site-packages), so only the test plugins are built and installed there; nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WORDCOUNT = ROOT / "examples" / "cbench-wordcount"


def _write_plugin(root: Path, dist: str, module_body: str) -> Path:
    package = dist.replace("-", "_")
    (root / "src" / package).mkdir(parents=True)
    (root / "src" / package / "__init__.py").write_text("")
    (root / "src" / package / "plugin.py").write_text(textwrap.dedent(module_body))
    (root / "pyproject.toml").write_text(
        textwrap.dedent(f"""
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"
        [project]
        name = "{dist}"
        version = "0.0.1"
        [project.entry-points."context_bench.plugins"]
        {dist} = "{package}.plugin"
        [tool.hatch.build.targets.wheel]
        packages = ["src/{package}"]
    """)
    )
    return root


class Venv:
    def __init__(self, path: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
        self.python = str(path / "bin" / "python")
        own = subprocess.run(
            [self.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()
        outer = [p for p in sys.path if p.endswith("site-packages")]
        lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in outer)
        Path(own, "zz_outer_environment.pth").write_text(lines)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CBENCH_")}

    def run(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.python, *args],
            capture_output=True,
            text=True,
            check=check,
            env={**self.env, **(env or {})},
            timeout=300,
        )

    def pip_install(self, path: Path) -> None:
        self.run("-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", str(path))

    def cbench(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        return self.run("-m", "context_bench", *args, check=check, env=env)

    def plugins(self, *flags: str, env: dict[str, str] | None = None) -> dict[str, dict]:
        out = self.cbench(*flags, "plugins", "--json", env=env)
        return {p["name"]: p for p in json.loads(out.stdout)}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Venv:
    root = tmp_path_factory.mktemp("venv")
    env = Venv(root / "env")
    env.pip_install(WORDCOUNT)
    plugins = root / "plugins"
    env.pip_install(
        _write_plugin(
            plugins / "a", "cbench-broken-import", "raise ImportError('no such thing: frobnicate')\n"
        )
    )
    env.pip_install(
        _write_plugin(
            plugins / "b",
            "cbench-broken-register",
            """
        from context_bench import hookimpl
        CBENCH_PLUGIN_API = 1

        @hookimpl
        def cbench_register_evaluators(register):
            raise RuntimeError("registration exploded")
    """,
        )
    )
    env.pip_install(
        _write_plugin(
            plugins / "d",
            "cbench-clash",
            """
        from context_bench import CommandSpec, hookimpl
        CBENCH_PLUGIN_API = 1

        def configure(parser, host):
            pass

        def run(args, host):
            print("clash says hi")
            return 0

        @hookimpl
        def cbench_register_commands(register):
            register(CommandSpec("compare", "takes the core's compare", configure, run))
            register(CommandSpec("clash-hi", "says hi", configure, run))
    """,
        )
    )
    env.pip_install(
        _write_plugin(
            plugins / "c",
            "cbench-from-the-future",
            """
        CBENCH_PLUGIN_API = 99
        raise_if_hooks_run = True
    """,
        )
    )
    return env


def test_wordcount_is_discovered_listed_and_importable(venv):
    plugins = venv.plugins()
    info = plugins["cbench-wordcount"]
    assert info["status"] == "loaded" and info["distribution"] == "cbench-wordcount"
    assert info["evaluators"][0]["fields"] == ["word_count_ratio", "extra_words"]
    assert info["autowire"][0]["datasets"] == ["wordcount"]
    listing = venv.cbench("evaluators").stdout
    assert "WordCountDiff" in listing and "cbench-wordcount" in listing
    code = (
        "from context_bench.evaluators import WordCountDiff; "
        "print(WordCountDiff().score({'answer': 'a b'}, {'response': 'a'}))"
    )
    assert venv.run("-c", code).stdout.strip() == "{'word_count_ratio': 0.5, 'extra_words': 0.0}"


def test_wordcount_is_auto_wired_and_passes_its_own_tests(venv, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"id": "1", "dataset": "wordcount", "answer": "one two three four", "response": "one two"})
        + "\n"
    )
    out = venv.cbench("score", str(rows), "--output", "json", "--no-progress").stdout
    scores = json.loads(out)["rows"][0]["scores"]
    assert scores["word_count_ratio"] == 0.5 and "f1" in scores
    result = venv.run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(WORDCOUNT / "tests"), check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_broken_plugins_are_isolated_with_status_and_reason(venv):
    completed = venv.cbench("plugins", "--json")
    plugins = {p["name"]: p for p in json.loads(completed.stdout)}
    assert plugins["cbench-broken-import"]["status"] == "failed"
    assert "frobnicate" in plugins["cbench-broken-import"]["reason"]
    assert plugins["cbench-broken-register"]["status"] == "failed"
    assert "registration exploded" in plugins["cbench-broken-register"]["reason"]
    assert plugins["cbench-from-the-future"]["status"] == "incompatible"
    assert "99" in plugins["cbench-from-the-future"]["reason"]
    warning_lines = [line for line in completed.stderr.splitlines() if "cbench-broken-import" in line]
    assert len(warning_lines) == 1 and "0.0.1" in warning_lines[0]
    assert plugins["cbench-wordcount"]["status"] == "loaded"


def test_a_failed_plugin_asked_for_by_name_says_so(venv, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "1", "answer": "a", "response": "a"}) + "\n")
    completed = venv.cbench("score", str(rows), "--evaluator", "Frobnicate", check=False)
    last = completed.stderr.splitlines()[-1]
    assert completed.returncode == 2 and last.startswith(
        "context-bench: error: no loaded plugin registers an evaluator named 'Frobnicate'"
    )
    assert (
        "; plugin cbench-broken-import is installed but failed: import failed: "
        "ImportError: no such thing: frobnicate; "
        "plugin cbench-broken-register is installed but failed: "
        "cbench_register_evaluators raised RuntimeError: registration exploded"
    ) in last


def test_a_command_clashing_with_the_core_breaks_no_command(venv):
    completed = venv.cbench("compare", "--help")
    assert completed.stdout.startswith("usage: context-bench compare")
    assert "Compare saved JSON results" in completed.stdout and "clash says hi" not in completed.stdout
    clash = [line for line in completed.stderr.splitlines() if "cbench-clash" in line]
    assert clash == [
        "context-bench: plugin cbench-clash 0.0.1 partial: command 'compare' is reserved for the core"
    ]
    assert venv.cbench("clash-hi").stdout == "clash says hi\n"
    assert venv.plugins()["cbench-clash"]["commands"] == [{"name": "clash-hi", "help": "says hi"}]


def test_strict_mode_turns_a_broken_plugin_into_an_error(venv):
    completed = venv.cbench("plugins", check=False, env={"CBENCH_STRICT_PLUGINS": "1"})
    assert completed.returncode == 2
    assert "cbench-broken-import" in completed.stderr and "Traceback" not in completed.stderr


def test_allow_deny_and_autoload_switches(venv):
    denied = venv.plugins("-p", "no:cbench-wordcount")
    assert denied["cbench-wordcount"]["status"] == "disabled"
    allowed = venv.plugins(env={"CBENCH_PLUGINS": "cbench-wordcount"})
    assert allowed["cbench-wordcount"]["status"] == "loaded"
    assert allowed["cbench-broken-import"]["status"] == "disabled"
    none = venv.plugins(env={"CBENCH_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert list(none) == ["context-bench"]


def test_uninstalling_removes_the_plugin(tmp_path):
    env = Venv(tmp_path / "env")
    env.pip_install(WORDCOUNT)
    assert "cbench-wordcount" in env.plugins()
    env.run("-m", "pip", "uninstall", "-y", "-q", "cbench-wordcount")
    assert "cbench-wordcount" not in env.plugins()
    completed = env.run("-c", "from context_bench.evaluators import WordCountDiff", check=False)
    assert completed.returncode != 0 and "WordCountDiff" in completed.stderr


def test_a_plugin_adds_a_command_through_its_entry_point(tmp_path):
    env = Venv(tmp_path / "env")
    env.pip_install(
        _write_plugin(
            tmp_path / "hello",
            "cbench-hello",
            """
        from context_bench import CommandSpec, hookimpl
        CBENCH_PLUGIN_API = 1

        def configure(parser, host):
            parser.add_argument("--who", default="world")

        def run(args, host):
            print(f"hello {args.who}")
            return 0

        @hookimpl
        def cbench_register_commands(register):
            register(CommandSpec("hello", "say hello", configure, run))
    """,
        )
    )
    assert env.cbench("hello", "--who", "plugins").stdout == "hello plugins\n"
    assert env.plugins()["cbench-hello"]["commands"] == [{"name": "hello", "help": "say hello"}]
    gone = env.cbench("hello", "-p", "no:cbench-hello", check=False)
    assert gone.returncode == 2 and gone.stderr == (
        "context-bench: error: no loaded plugin adds a command named 'hello'; "
        "plugin cbench-hello is disabled by -p no:cbench-hello\n"
    )
    # the core alone has no memory command: it comes with cbench-memory, like any plugin's
    alone = env.cbench("memory", "--help", check=False, env={"CBENCH_PLUGINS": "cbench-hello"})
    assert alone.returncode == 2 and "no loaded plugin adds a command named 'memory'" in alone.stderr
    assert "plugin cbench-memory is disabled: not in CBENCH_PLUGINS" in alone.stderr
    listed = env.cbench("plugins", env={"CBENCH_PLUGINS": "cbench-hello"}).stdout
    assert "command memory" not in listed and "data set locomo" not in listed
