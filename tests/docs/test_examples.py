"""Every example in the docs runs (issue 12 #15): each ```python block of README.md and docs/*.md, and
every `context-bench ...` command of their ```sh and ```console blocks.

A Python block runs as written, top-level statement by statement, in a fresh namespace, in a
scratch working folder, with line numbers of its document (a traceback points into the .md file).
The only adaptations, made here and never in the docs:

- every endpoint URL (``http://localhost:8080``, ``:4000``, ``https://api.openai.com``, ...) becomes
  the URL of a FakeServer on 127.0.0.1 that answers like a careful model and judge (conftest.py);
- environment variables an example reads are set to test values (``--api-key-env VAR`` and
  ``export VAR=...`` included);
- names the prose defines elsewhere are supplied as stubs, each listed below with its reason;
- a block opened by a file-name comment (``# my_memory.py``) is also that file of the scratch
  folder, as the prose asks the reader to save it; input files a command names come from
  conftest.INPUT_FILES; ``~`` is the scratch folder (``$HOME``), as the shell would expand it;
- ``[--flag]`` in a command line is the usual "optional" notation: both readings run.

What an example states is asserted: a top-level expression followed by a comment that reads as a
value (``# {'f1': 0.5, ...}``, ``# -> {"judge_score": float}``) must equal it (a type stands for
any value of that type, ``...`` for any value), and each block's ``check`` asserts what its prose
or comments claim otherwise. A block that cannot run at all is in ``Example.cannot_run`` with the
reason; a block that is wrong as written is a strict xfail naming the fix; an entry that no longer
matches a block fails (test_every_listed_example_is_in_the_docs), so nothing is skipped silently.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import re
import sys
import tokenize
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

import cbench_judge
import context_bench
from context_bench.systems import OpenAIProxy

ROOT = Path(__file__).resolve().parents[2]


# -- the docs' blocks -----------------------------------------------------------------------------

if "cbench_doc_blocks" not in sys.modules:  # a helper module by its path (tests/ is not a package)
    _spec = importlib.util.spec_from_file_location(
        "cbench_doc_blocks", Path(__file__).with_name("doc_blocks.py")
    )
    sys.modules["cbench_doc_blocks"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["cbench_doc_blocks"])
doc_blocks = sys.modules["cbench_doc_blocks"]
Block, blocks, DOCS = doc_blocks.Block, doc_blocks.blocks, doc_blocks.DOCS
with_endpoint, write_files = doc_blocks.with_endpoint, doc_blocks.write_files
Command, commands, TEST_KEY = doc_blocks.Command, doc_blocks.commands, doc_blocks.TEST_KEY


def python_blocks() -> list[Block]:
    return [block for doc in DOCS for block in blocks(doc) if block.lang == "python"]


def write_inputs(names: list[str], where: Path, input_files: dict[str, tuple[str, str]]) -> None:
    """The input files among ``names`` (command-line words, string literals), from conftest.INPUT_FILES."""
    for name in names:
        if Path(name).name in input_files:
            path = where / Path(name).expanduser()  # $HOME is the scratch folder
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(input_files[Path(name).name][0], encoding="utf-8")


# -- running a Python block and reading its claims ------------------------------------------------

#: Names a claim may use for "any value of this type".
CLAIM_TYPES = {"float": float, "int": int, "str": str, "bool": bool, "dict": dict, "list": list}
#: What a stated result is made of: literals, and type names.
PLAIN = (ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Name, ast.UnaryOp, ast.USub, ast.Load)


def _stated_text(comment: str) -> str | None:
    """The value a comment states (``{'f1': 0.5}``, ``-> {"x": float}``), or None for prose."""
    text = comment.lstrip("#").strip()
    text = text[2:].strip() if text.startswith("->") else text
    return text if re.match(r"[{\[('\"\d]|-\d", text) else None


def claim_of(comment: str) -> tuple[bool, Any]:
    """(True, value) when a comment states a value; a comment that looks like one must be one."""
    text = _stated_text(comment)
    if text is None:
        return False, None
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise AssertionError(f"a comment reads as a stated result but is no value: {comment!r}") from None
    for node in ast.walk(tree.body):
        if isinstance(node, ast.Name) and node.id not in CLAIM_TYPES:
            raise AssertionError(f"a stated result names {node.id!r}: {comment!r}")
        if not isinstance(node, PLAIN):
            raise AssertionError(f"a stated result is no plain value: {comment!r}")
    return True, eval(compile(tree, "<claim>", "eval"), {"__builtins__": {}}, dict(CLAIM_TYPES))


def matches(value: Any, claim: Any) -> bool:
    if claim is Ellipsis:
        return True
    if isinstance(claim, type):
        return isinstance(value, claim)
    if isinstance(claim, dict):
        if not isinstance(value, dict):
            return False
        if Ellipsis in claim:  # {'f1': 0.5, ...}: these keys, maybe more
            return all(k in value and matches(value[k], v) for k, v in claim.items() if k is not Ellipsis)
        return value.keys() == claim.keys() and all(matches(value[k], v) for k, v in claim.items())
    return value == claim


def comments(source: str) -> dict[int, str]:
    """Each line's comment, by line number."""
    found = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string
    return found


def stated(stmt: ast.stmt, notes: dict[int, str], lines: list[str]) -> list[str]:
    """The comments after an expression statement: on its last line, then on whole lines below it."""
    found = [notes[stmt.end_lineno]] if stmt.end_lineno in notes else []
    line = stmt.end_lineno + 1
    while line in notes and lines[line - 1].lstrip().startswith("#"):
        found.append(notes[line])
        line += 1
    return found


@dataclass
class Ran:
    """What a block left: its namespace, each top-level expression's value, what it printed."""

    namespace: dict[str, Any]
    values: list[Any] = field(default_factory=list)
    claims: int = 0
    out: str = ""


def run_block(block: Block, source: str, namespace: dict[str, Any]) -> Ran:
    tree = ast.parse(source, filename=block.doc)
    ast.increment_lineno(tree, block.line)  # line numbers of the document
    notes = {line + block.line: text for line, text in comments(source).items()}
    lines = (ROOT / block.doc).read_text(encoding="utf-8").splitlines()
    ran = Ran(namespace)
    filename = str(ROOT / block.doc)
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        for stmt in tree.body:
            if not isinstance(stmt, ast.Expr):
                exec(compile(ast.Module([stmt], []), filename, "exec"), namespace)
                continue
            value = eval(compile(ast.Expression(stmt.value), filename, "eval"), namespace)
            ran.values.append(value)
            for comment in stated(stmt, notes, lines):
                is_claim, claim = claim_of(comment)
                if is_claim:
                    ran.claims += 1
                    assert matches(value, claim), (
                        f"{block.doc}:{stmt.lineno}: the example states {comment.lstrip('# ')}, got {value!r}"
                    )
    ran.out = stdout.getvalue()
    stated_results = [c for c in notes.values() if _stated_text(c) is not None]
    assert ran.claims == len(stated_results), (
        f"a stated result follows no top-level expression: {stated_results}"
    )
    return ran


# -- what each Python block needs and claims ------------------------------------------------------


@dataclass
class Context:
    """What a stub or a check sees."""

    server: Any
    workdir: Path
    ran: Ran | None = None
    block: Block | None = None


Stub = tuple[Callable[[Context], Any], str]  # (builds the value, why the example lacks it)


@dataclass
class Example:
    """The adaptations and checks of one Python block, found by a line it holds (``marker``)."""

    doc: str
    marker: str
    stubs: dict[str, Stub] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    path: tuple[str, str] | None = None  # (a folder put on sys.path, relative to the scratch folder, why)
    check: Callable[[Context], None] | None = None
    cannot_run: str = ""  # why it cannot run at all (its check still reads it)
    xfail: str = ""  # what is wrong as written, and the fix
    raises: type[BaseException] = Exception  # what it raises as written


def _usage(prompt: int, completion: int) -> Any:
    return types.SimpleNamespace(prompt=prompt, completion=completion)


def _sample(ctx: Context) -> Any:
    return types.SimpleNamespace(
        question="Where did Alice grow up?",
        response="Alice grew up in Paris.",
        reference="Paris",
        config={"judge": {"url": ctx.server.url, "model": "judge-model"}},
    )


def _bearers(server: Any) -> set[str]:
    return {seen.headers.get("authorization", "") for seen in server.seen}


def _check_readme_api(ctx: Context) -> None:
    # "print(result.summary.groups[0].scores)  # every score field, e.g. {'f1': ..., 'exact_match': ...}"
    printed = ast.literal_eval(ctx.ran.out.splitlines()[0])
    assert {"f1", "exact_match", "recall", "contains"} <= printed.keys()
    assert printed["contains"] == 1.0  # the stub's answer holds the gold


def _check_math(ctx: Context) -> None:
    grader = ctx.ran.namespace["grader"]  # "timeout=5.0 seconds per case, workers=1"
    assert (grader.timeout, grader.workers) == (5.0, 1)


def _check_memory_judge(ctx: Context) -> None:
    assert ctx.server.requests[-1]["model"] == "claude-haiku-4-5-20251001"  # the stated default


def _check_constructors(ctx: Context) -> None:
    """The listing's parameters, kinds and defaults are the constructors' own."""
    entries = re.findall(r"^(\w+)\((.*?)\)\n(?=\w|\Z)", ctx.block.text, re.S | re.M)
    assert len(entries) == len(re.findall(r"^\w+\(", ctx.block.text, re.M))
    for name, params in entries:
        params = params.replace("...same...", "").strip(" ,")
        documented = ast.parse(f"def f({params}): pass").body[0].args
        real = inspect.signature(getattr(cbench_judge, name).__init__).parameters
        if not params:  # "(...same...)": the first constructor's
            assert list(real) == list(inspect.signature(cbench_judge.MemoryJudge.__init__).parameters)
            continue
        positional = [a.arg for a in documented.args]
        with_default = documented.args[len(documented.args) - len(documented.defaults) :]
        defaults = {a.arg: d for a, d in zip(with_default, documented.defaults, strict=True)}
        kw_defaults = zip(documented.kwonlyargs, documented.kw_defaults, strict=True)
        defaults.update({a.arg: d for a, d in kw_defaults if d is not None})
        for arg in positional:
            assert real[arg].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, (name, arg)
        for arg in (a.arg for a in documented.kwonlyargs):
            assert real[arg].kind is inspect.Parameter.KEYWORD_ONLY, (name, arg)
        for arg, default in defaults.items():
            assert real[arg].default == ast.literal_eval(default), (name, arg)


def _check_judge_config(ctx: Context) -> None:
    from cbench_judge import judge_score

    assert judge_score(ctx.ran.namespace["sample"])["judge_score"] == 1.0
    seen = ctx.server.seen[-1]
    assert seen.body["model"] == "claude-haiku-4-5-20251001"  # "model": ...
    assert seen.headers["authorization"] == f"Bearer {TEST_KEY}"  # the key in $MY_JUDGE_KEY


def _check_custom_template(ctx: Context) -> None:
    assert ctx.ran.values[-1]["judge_score"] == 1.0  # the grade the pattern reads, mapped
    assert "Is this French reply formal?" in ctx.server.requests[-1]["messages"][-1]["content"]


def _check_panel(ctx: Context) -> None:
    ns = ctx.ran.namespace
    row = ({"question": "Where did Alice grow up?", "answer": "Paris"}, {"response": "In Paris."})
    assert ns["judge"].score(*row) == {"judge_score": 1.0}
    assert f"Bearer {TEST_KEY}" in _bearers(ctx.server)  # api_key_env="MY_KEY"
    # "{name: aggregate, f"{name}_{key}": score, ...}", judge keys judge, judge_1, ... for a list
    assert ns["panel"].score(*row) == {
        "judge_panel": 1.0,
        "judge_panel_judge": 1.0,
        "judge_panel_judge_1": 1.0,
        "judge_panel_judge_2": 1.0,
    }


TURNS = [
    {"speaker": "Alice", "text": "I grew up in Paris, you know.", "session": 1, "date": "8 May 2023"},
    {"speaker": "Bob", "text": "Nice.", "session": 1, "date": "8 May 2023"},
]


def _check_my_memory(ctx: Context) -> None:
    memory = ctx.ran.namespace["NotesMemory"]()
    memory.reset()
    memory.ingest(TURNS)
    assert memory._notes == ["[8 May 2023] Alice: I grew up in Paris, you know."]  # only the fact
    answer = memory.query("Where did Alice grow up?")
    assert answer["response"] == "Alice grew up in Paris." and answer["input_tokens"] == 10
    assert _bearers(ctx.server) == {f"Bearer {TEST_KEY}"}  # "sent as a Bearer token when set"


def _check_my_agent(ctx: Context) -> None:
    """endpoints.md's toy agent, run as `--command` runs it: the prompt on stdin, its answer out."""
    from context_bench.command_system import CommandSystem

    agent = CommandSystem([sys.executable, str(ctx.workdir / "my_agent.py")])
    row = {"question": "Where did Alice grow up?", "context": "Bob is tall. Alice grew up in Paris."}
    assert agent.process(row) == {"response": "Alice grew up in Paris"}


def _check_evaluate_memory(ctx: Context) -> None:
    lines = ctx.ran.out.splitlines()
    assert lines[0] == "1.0 0.0"  # memory_judge, false_memory: right answers, nothing invented
    assert lines[1:] == ["single-hop 2 1.0"]


def _check_baselines(ctx: Context) -> None:
    from cbench_memory import BM25Memory, FullContextMemory

    full, bm25 = (factory() for factory in ctx.ran.namespace["systems"])
    assert isinstance(full, FullContextMemory) and isinstance(bm25, BM25Memory) and bm25.top_k == 5


def _check_plugin_file(ctx: Context) -> None:
    from context_bench.testing import check_plugin

    plugin = types.ModuleType("cbench_wordcount.plugin")
    plugin.__dict__.update(ctx.ran.namespace)
    info = check_plugin(plugin)  # the lazy strings resolve to the files beside it
    fields = ["word_count_ratio", "extra_words"]
    assert [(e.name, list(e.fields)) for e in info.evaluators] == [("WordCountDiff", fields)]
    assert [r.evaluator for r in info.rules] == ["WordCountDiff"]
    assert [d.name for d in info.datasets] == ["wordcount"]


def _check_data_set_file(ctx: Context) -> None:
    """The loader reads the data file the doc ships beside it, as installed."""
    rows = ctx.ran.namespace["load_wordcount"]()
    assert [row["id"] for row in rows] == ["cat", "paris", "biscuit"]


def _check_evaluator_file(ctx: Context) -> None:
    from context_bench._protocols import Evaluator

    assert isinstance(ctx.ran.namespace["WordCountDiff"](), Evaluator)


def _check_protocol(ctx: Context) -> None:
    sketch = ctx.ran.namespace["Evaluator"]
    assert sketch.__annotations__ == {"name": "str"}
    assert inspect.iscoroutinefunction(sketch.ascore) and callable(sketch.score)


def _check_command(ctx: Context) -> None:
    import argparse

    from context_bench.plugins import get_host

    ns = ctx.ran.namespace
    host = get_host()
    parser = argparse.ArgumentParser()
    ns["configure"](parser, host)
    args = parser.parse_args(["--dataset", "qa.jsonl", "-n", "1", "--output", "json"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert ns["run"](args, host) == 0
    assert json.loads(out.getvalue())["summary"]["groups"][0]["rows"] == 1


def _check_plugin_tests(ctx: Context) -> None:
    for name in ("test_registers", "test_scores", "test_the_shipped_data_set_is_scored_by_name"):
        ctx.ran.namespace[name]()


def _qa_rows(ctx: Context) -> list[dict]:
    return [{"id": "1", "question": "Where did Alice grow up?", "answer": "Paris"}]


EXAMPLES = [
    Example(
        "README.md",
        "class MyCompressor:",
        stubs={
            "compress": (
                lambda ctx: lambda text: text,
                "the reader's compressor: the prose leaves it to them",
            ),
            "ask_llm": (
                lambda ctx: lambda context, question: ("Alice grew up in Paris.", _usage(12, 5)),
                "the reader's LLM call: an answer and a usage with .prompt and .completion",
            ),
        },
        check=_check_readme_api,
    ),
    Example("docs/math.md", "grader = MathEquivalence()", check=_check_math),
    Example("docs/judge.md", "judge = MemoryJudge(", check=_check_memory_judge),
    Example(
        "docs/judge.md",
        'MemoryJudge(url, model="claude-haiku-4-5-20251001"',
        cannot_run="a listing of signatures: `*` and `...same...` are no call syntax",
        check=_check_constructors,
    ),
    Example(
        "docs/judge.md",
        'judge_score(sample, template="binary_qa"',
        stubs={
            "sample": (_sample, "a sample as the prose below describes it, its judge at the endpoint"),
            "template_kwargs": (lambda ctx: {}, "the signature's **template_kwargs: binary_qa needs none"),
        },
    ),
    Example(
        "docs/judge.md",
        "sample.config = {",
        stubs={
            "sample": (
                lambda ctx: types.SimpleNamespace(
                    question="Where did Alice grow up?", response="Paris.", reference="Paris"
                ),
                "the sample the block gives its config",
            )
        },
        env={"MY_JUDGE_KEY": TEST_KEY},
        check=_check_judge_config,
    ),
    Example(
        "docs/judge.md",
        'grade_pattern=r"TONE=',
        stubs={
            "judge_score": (
                lambda ctx: cbench_judge.judge_score,
                "imported by the block above",
            ),
            "sample": (_sample, "a sample as the prose above describes it, its judge at the endpoint"),
        },
        check=_check_custom_template,
    ),
    Example(
        "docs/judge.md",
        "panel = JudgePanel(",
        stubs={
            name: (lambda ctx: ctx.server.url, "one of the panel's three judge endpoints") for name in "abc"
        },
        env={"MY_KEY": TEST_KEY},
        check=_check_panel,
    ),
    Example(
        "docs/endpoints.md",
        "# my_agent.py",
        cannot_run="it reads its prompt from standard input, which pytest closes: the check and the "
        "documented `--command` run run it as a program",
        check=_check_my_agent,
    ),
    Example("docs/memory.md", "# my_memory.py", env={"OPENAI_API_KEY": TEST_KEY}, check=_check_my_memory),
    Example(
        "docs/memory.md",
        "from my_memory import NotesMemory",
        path=(".", "the folder that holds my_memory.py, where a script or REPL importing it is started"),
        check=_check_evaluate_memory,
    ),
    Example("docs/memory.md", "client = OpenAIProxy(", check=_check_baselines),
    Example(
        "docs/plugins.md",
        "# src/cbench_wordcount/plugin.py",
        path=("src", "the documented package's source folder, as `pip install -e .` would add it"),
        check=_check_plugin_file,
    ),
    Example("docs/plugins.md", "# src/cbench_wordcount/evaluator.py", check=_check_evaluator_file),
    Example(
        "docs/plugins.md",
        "# src/cbench_wordcount/dataset.py",
        path=("src", "the documented package's source folder, as `pip install -e .` would add it"),
        check=_check_data_set_file,
    ),
    Example(
        "docs/plugins.md",
        "# tests/test_wordcount.py",
        path=("src", "the documented package's source folder, as `pip install -e .` would add it"),
        check=_check_plugin_tests,
    ),
    Example(
        "docs/plugins.md",
        "class Evaluator(Protocol):",
        check=_check_protocol,
    ),
    Example(
        "docs/plugins.md",
        "from context_bench.cli import RunOptions",
        stubs={
            "url": (lambda ctx: ctx.server.url, "the command's own endpoint (its --my-endpoint)"),
            "evaluate": (
                lambda ctx: context_bench.evaluate,
                "context_bench.evaluate, named in the prose",
            ),
            "systems": (
                lambda ctx: [OpenAIProxy(ctx.server.url)],
                "the systems the command builds from its own flags",
            ),
            "rows": (_qa_rows, "the rows of the command's --dataset"),
        },
        check=_check_command,
    ),
]


def example_for(block: Block) -> Example:
    found = [e for e in EXAMPLES if e.doc == block.doc and e.marker in block.text]
    assert len(found) <= 1, f"{block.doc} python block {block.number}: {len(found)} entries match it"
    return found[0] if found else Example(block.doc, "")


def test_every_listed_example_is_in_the_docs():
    """An entry whose block changed or went away fails here, rather than leaving a block unadapted."""
    for example in EXAMPLES:
        held = [b for b in python_blocks() if b.doc == example.doc and example.marker in b.text]
        assert len(held) == 1, f"{example.doc}: {len(held)} python blocks hold {example.marker!r}"


def _param(block: Block) -> Any:
    example = example_for(block)
    marks = (
        [pytest.mark.xfail(strict=True, raises=example.raises, reason=example.xfail)] if example.xfail else []
    )
    return pytest.param(block, id=f"{block.doc}:python{block.number}:L{block.line}", marks=marks)


@pytest.mark.parametrize("block", [_param(block) for block in python_blocks()])
def test_python_example_runs(block, endpoint, workdir, input_files, monkeypatch):
    example = example_for(block)
    write_files(block.doc, workdir, endpoint.url)
    with contextlib.suppress(SyntaxError):
        strings = [n.value for n in ast.walk(ast.parse(block.text)) if isinstance(n, ast.Constant)]
        write_inputs([s for s in strings if isinstance(s, str)], workdir, input_files)
    for name, value in example.env.items():
        monkeypatch.setenv(name, value)
    if example.path:
        sys.path.insert(0, str(workdir / example.path[0]))
    ctx = Context(endpoint, workdir, block=block)
    if example.cannot_run:
        if example.check:
            example.check(ctx)
        return
    namespace: dict[str, Any] = {"__name__": "__main__"}
    namespace.update({name: build(ctx) for name, (build, _why) in example.stubs.items()})
    try:
        ctx.ran = run_block(block, with_endpoint(block.text, endpoint.url), namespace)
        if example.check:
            example.check(ctx)
    finally:
        for value in namespace.values():  # sandbox servers, HTTP clients
            if not isinstance(value, (type, types.ModuleType, types.FunctionType)) and callable(
                getattr(value, "close", None)
            ):
                value.close()


# -- the command lines ------------------------------------------------------------------------------


@dataclass
class Said:
    """What a documented command did: its exit status, output, and the requests the endpoint saw."""

    doc: str
    argv: list[str]
    out: str
    err: str
    server: Any
    workdir: Path

    def keys(self, model: str | None = None) -> set[str]:
        """The Authorization headers sent (with the model asked for, when given)."""
        return {
            seen.headers.get("authorization", "")
            for seen in self.server.seen
            if model is None or seen.body.get("model") == model
        }


def _check_wiring_line(said: Said) -> None:
    """endpoints.md shows the line a run starts with; its LiteLLM run over gsm8k_test.jsonl prints it."""
    (shown,) = [
        line
        for block in blocks(said.doc)
        if not block.lang
        for line in block.text.splitlines()
        if line.startswith("context-bench: evaluators:")
    ]
    assert shown in said.err.splitlines()
    assert said.keys() == {f"Bearer {TEST_KEY}"}  # --api-key-env LITELLM_KEY before the first --proxy


def _check_two_systems(said: Said) -> None:
    """README: --api-key-env after a --proxy is that system's; a system naming none sends no key."""
    assert said.keys("gpt-4o-mini") == {f"Bearer {TEST_KEY}"} and said.keys("gpt-4o") == {""}
    assert all(body["temperature"] == 0 for body in said.server.requests)  # before the first --proxy
    report = (said.workdir / "report.html").read_text(encoding="utf-8")
    assert "compressed" in report and "baseline" in report


def _check_shared_setting(said: Said) -> None:
    """endpoints.md: a flag before the first --proxy is every system's; temperature is sent when set."""
    assert {(b["model"], b["temperature"]) for b in said.server.requests} == {("tiny", 0), ("fixed", 0)}


def _check_vllm(said: Said) -> None:
    """endpoints.md: vLLM usually wants no key; --max-tokens is sent, temperature is not."""
    assert said.keys() == {""}
    assert all(b["max_tokens"] == 512 and "temperature" not in b for b in said.server.requests)


def _check_openai(said: Said) -> None:
    """endpoints.md: without any --api-key-env, $OPENAI_API_KEY is sent."""
    assert said.keys() == {f"Bearer {TEST_KEY}"}


def scores_table(out: str) -> dict[tuple[str, str], dict[str, str]]:
    """The table report's "Scores" sections, merged: (system, data set) -> column -> cell (a table
    too wide for the terminal is turned on its side: one line per figure, a column per group)."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    lines = out.splitlines()
    for index in range(1, len(lines) - 1):
        if not (lines[index - 1].startswith("Scores") and re.fullmatch(r"-+( +-+)*", lines[index + 1])):
            continue
        header = re.split(r" {2,}", lines[index].strip())
        turned = header[0] == "figure"
        for row in lines[index + 2 :]:
            if not row.strip():
                break
            cells = dict(zip(header, re.split(r" {2,}", row.strip()), strict=True))
            if turned:
                for group in header[1:]:
                    system, dataset = group.split(" / ")
                    found.setdefault((system, dataset), {})[cells["figure"]] = cells[group]
            else:
                found.setdefault((cells["system"], cells["dataset"]), {}).update(cells)
    return found


def _check_pairwise_run(said: Said) -> None:
    """judge.md: score --pairwise judges the two systems in both orders, and no rating judge is
    asked (--judge-dataset names no data set of the run)."""
    assert "Pairwise judging against baseline, answers in both orders" in said.out
    prompts = [body["messages"][-1]["content"] for body in said.server.requests]
    assert prompts and all("[The Start of Assistant A's Answer]" in p for p in prompts)
    assert len(prompts) == 2 * sum(
        1 for line in (said.workdir / "systems.jsonl").open() if "baseline" in line
    )


def _check_agreement_run(said: Said) -> None:
    """judge.md: --judge-agreement shows the judge's kappa and n beside its scores."""
    assert "Judge agreement with people" in said.out
    shown = r"judge_score +gpt-4o-mini +binary_qa +0\.000 +\[0\.00, 0\.00\] +0\.500 +2 +pass/fail"
    assert re.search(shown, said.out), said.out  # kappa and n beside the field


#: What a memory run over the example data earns: right answers, nothing invented, no failure
#: (false_memory is lower-is-better: the table marks it ↓).
RIGHT = {"errors": "0", "memory_judge": "1.000", "memory_judge_raw": "1.000", "false_memory ↓": "0.000"}


def _check_memory_run(said: Said) -> None:
    """A judge at the relay asks the relay's --model; right answers score as such."""
    from context_bench.cli import main

    assert {body["model"] for body in said.server.requests} == {"gpt-4o-mini"}
    with contextlib.redirect_stdout(io.StringIO()) as detail:  # the scores table is --detail's
        assert main([*said.argv, "--detail"]) == 0
    table = scores_table(detail.getvalue())
    assert len(table) == said.argv.count("--system"), detail.getvalue()  # one row of scores per system
    for cells in table.values():
        assert {k: cells.get(k) for k in RIGHT} == RIGHT, detail.getvalue()


#: What a command's prose states beyond exit status 0, found by (document, a word of its command line).
COMMAND_CHECKS: dict[tuple[str, str], Callable[[Said], None]] = {
    ("docs/endpoints.md", "gsm8k_test.jsonl"): _check_wiring_line,
    ("README.md", "compressed"): _check_two_systems,
    ("docs/endpoints.md", "small"): _check_shared_setting,
    ("docs/endpoints.md", "Qwen/Qwen2.5-7B-Instruct"): _check_vllm,
    ("docs/endpoints.md", "https://api.openai.com"): _check_openai,
    ("README.md", "memory"): _check_memory_run,
    ("docs/memory.md", "memory"): _check_memory_run,
    ("docs/judge.md", "--pairwise"): _check_pairwise_run,
    ("docs/judge.md", "--judge-agreement"): _check_agreement_run,
}


def _command_id(command: Command) -> str:
    return f"{command.block.doc}:L{command.line}:{' '.join(command.argv)[:60]}"


@pytest.mark.parametrize("command", commands(), ids=_command_id)
def test_documented_command_runs(command, endpoint, workdir, input_files, monkeypatch, capsys):
    from context_bench.cli import main

    write_files(command.block.doc, workdir, endpoint.url)
    run_files = [b.text for b in blocks(command.block.doc) if b.file and b.file.endswith(".toml")]
    write_inputs([w for text in run_files for w in re.findall(r'"([^"]+)"', text)], workdir, input_files)
    for name, value in command.env:
        monkeypatch.setenv(name, value)
    argv = [with_endpoint(word, endpoint.url) for word in command.argv]
    argv = [str(Path(word).expanduser()) if word.startswith("~/") else word for word in argv]
    for flag, value in pairwise(argv):
        if flag == "--api-key-env":
            monkeypatch.setenv(value, TEST_KEY)
    write_inputs(argv, workdir, input_files)
    monkeypatch.setattr(sys, "argv", ["context-bench", *argv])  # what a report records as the command
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    options = dict(pairwise(argv))
    if "--out" in options:
        assert (workdir / options["--out"]).stat().st_size > 0
    elif "--json" in argv or options.get("--output") == "json":
        json.loads(out)
    else:
        assert out.strip(), err
    if "--out" not in options and (argv[0] in ("run", "score", "memory") or argv[0].startswith("--")):
        assert re.search(r"\b0 errors\b", out + err), out + err
    asked = {body.get("model") for body in endpoint.requests}
    for flag, value in pairwise(argv):
        if flag == "--model":
            assert value in asked, f"--model {value} was never asked for: {asked}"
    said = Said(command.block.doc, argv, out, err, endpoint, workdir)
    for (doc, word), check in COMMAND_CHECKS.items():
        if command.block.doc == doc and word in command.argv:
            check(said)


def test_every_command_check_has_its_command():
    held = {(c.block.doc, word) for c in commands() for word in c.argv}
    assert set(COMMAND_CHECKS) <= held


# -- the other blocks -------------------------------------------------------------------------------

#: Blocks in no language run above, by (document, language), with what checks them or why nothing can.
OTHER_BLOCKS = {
    ("docs/architecture.md", ""): "diagrams of the distributions and of the source tree, not code",
    ("docs/code.md", ""): "the plugin's source tree, not code",
    (
        "docs/endpoints.md",
        "",
    ): "the line a run starts with: _check_wiring_line asserts the LiteLLM run prints it",
    (
        "docs/endpoints.md",
        "json",
    ): "the run file: tests/core/test_cli_systems.py::test_the_documented_run_file_reads",
    ("docs/memory.md", "json"): "the conversation layout: test_the_conversation_layout_runs",
    ("docs/ci.md", "yaml"): "the GitHub Actions job: tests/docs/test_ci_doc.py runs its context-bench step",
    ("docs/ci.md", "toml"): "the run file: saved as its first line names it, for the commands that read it",
    ("docs/plugins.md", "toml"): "the plugin's pyproject.toml: test_plugin_doc.py builds the plugin with it",
    ("docs/plugins.md", "jsonl"): "the plugin's data file: test_plugin_doc.py builds it into the wheel",
    ("docs/plugins.md", "text"): "building and trying the plugin: test_plugin_doc.py runs each line",
    (
        "docs/ci.md",
        "text",
    ): "a report's plan: test_report_plan.py::test_the_documented_plan_is_what_a_report_gets",
    ("docs/pytest.md", ""): "assert_scores's message: test_pytest_plugin.py runs the example",
    ("docs/sweeps.md", "toml"): "[[sweeps]]: test_sweeps.py::test_the_documented_range_is_the_one_swept",
    (
        "docs/sweeps.md",
        "",
    ): "the JSON names and the report's and the gate's lines: test_sweep_curve.py reads each",
    ("docs/reports.md", "toml"): "the prices file: write_files saves it for `score --prices prices.toml`",
    (
        "docs/reports.md",
        "",
    ): "a verdict line: test_report_verdict.py::test_the_documented_verdict_is_a_wrapped_verdict",
    (
        "README.md",
        "",
    ): "what the first command prints: test_report_verdict.py::test_the_readme_shows_what_score_prints",
    (
        "docs/history.md",
        "text",
    ): "sessions with a store (runs, export, view, PostgreSQL): tests/core/test_store_cli.py and "
    "plugins/cbench-view/tests run each command; the newer-schema line is test_store_schema.py's",
    (
        "docs/longbench.md",
        "text",
    ): "the LongBench-E run by length: plugins/cbench-longbench/tests/test_run.py::"
    "test_longbench_e_by_length_prints_the_papers_table runs it on the fixture mirror",
    (
        "docs/reports.md",
        "text",
    ): "the same --by run as docs/longbench.md's (a hub set): test_run.py of cbench-longbench runs it",
    (
        "docs/savings.md",
        "yaml",
    ): "LiteLLM behind the meter: test_litellm_meter.py::test_the_documented_forwarding_is_the_tested_one",
    (
        "docs/savings.md",
        "text",
    ): "a fragment of the reader's own proxy (its request and body are theirs): the header it forwards is "
    "ROW_HEADER, which tests/core/test_meter_relay.py sends",
}


def test_every_other_block_is_checked_or_listed():
    found = {
        (b.doc, b.lang) for doc in DOCS for b in blocks(doc) if b.lang not in ("python", "sh", "console")
    }
    assert found == set(OTHER_BLOCKS)


def test_the_conversation_layout_runs(endpoint, workdir, capsys):
    """memory.md's layout, saved as a file and given to `context-bench memory --dataset PATH`."""
    from context_bench.cli import main

    (layout,) = [b for b in blocks("docs/memory.md") if b.lang == "json"]
    (workdir / "conversations.json").write_text(f"[{layout.text}]", encoding="utf-8")
    argv = ["memory", "--dataset", "conversations.json", "--system", "full-context", "--relay", endpoint.url]
    argv.append("--detail")  # the scores table
    assert main(argv) == 0
    out = capsys.readouterr().out
    (cells,) = scores_table(out).values()
    assert {k: cells.get(k) for k in RIGHT} == RIGHT and cells["rows"] == "1", out
