"""``run --sweep NAME=V1,V2,...``: each system that takes the parameter runs once per value, as a
system named ``SYSTEM[NAME=value]``; the baseline runs once and is never sent it (issue 28)."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from context_bench import RunConfig, evaluate
from context_bench.config import Output
from context_bench.sweep import Axis, Setting, Sweep, axis_range, parse_axis
from context_bench.sweep_factory import factory_systems
from context_bench.testing import FakeServer, Reply, last_user_message

PY = shlex.quote(sys.executable)
ROWS = [
    {"id": "1", "question": "capital of France", "answer": "Paris"},
    {"id": "2", "question": "capital of Italy", "answer": "Rome"},
]


def answer(body):
    """A compressor behind an endpoint: right while its rate keeps the answer (at least 0.5), its
    input tokens 100 times the rate (the baseline's 100)."""
    rate = body.get("rate", 1.0)
    capital = "Paris" if "France" in last_user_message(body) else "Rome"
    return Reply(text=capital if rate >= 0.5 else "?", usage={"prompt_tokens": round(100 * rate)})


@pytest.fixture
def server():
    with FakeServer(answer) as running:
        yield running


@pytest.fixture
def data(write_rows):
    return str(write_rows(ROWS))


def _systems(out):
    return sorted({row["system"] for row in json.loads(out)["rows"]})


def _sent(server, model):
    return sorted(body.get("rate") for body in server.requests if body["model"] == model)


PROXIES = (
    "--proxy",
    "URL",
    "--name",
    "baseline",
    "--model",
    "base",
    "--proxy",
    "URL",
    "--name",
    "compressed",
    "--model",
    "comp",
)


def _proxies(server):
    return [server.url if word == "URL" else word for word in PROXIES]


def test_each_setting_is_a_system_and_the_baseline_is_never_sent_the_parameter(cbench, server, data):
    code, out, err = cbench(
        "run", *_proxies(server), "--sweep", "rate=0.3,0.6", "--dataset", data, "--output", "json"
    )
    assert code == 0, err
    assert _systems(out) == ["baseline", "compressed[rate=0.3]", "compressed[rate=0.6]"]
    assert _sent(server, "comp") == [0.3, 0.3, 0.6, 0.6]
    assert [body for body in server.requests if body["model"] == "base" and "rate" in body] == []
    assert len([body for body in server.requests if body["model"] == "base"]) == 2


def test_the_value_is_merged_into_the_extra_body(cbench, server, data):
    code, _, err = cbench(
        "run", "--proxy", server.url, "--name", "baseline", "--model", "base", "--extra-body", '{"top_p": 1}',
        "--proxy", server.url, "--name", "compressed", "--model", "comp", "--extra-body", '{"top_p": 0.5}',
        "--sweep", "rate=0.3", "--dataset", data, "--output", "json",
    )  # fmt: skip
    assert code == 0, err
    sent = [body for body in server.requests if body["model"] == "comp"]
    assert [(body["rate"], body["top_p"]) for body in sent] == [(0.3, 0.5), (0.3, 0.5)]
    assert [body["top_p"] for body in server.requests if body["model"] == "base"] == [1, 1]


def test_a_grid_runs_every_combination(cbench, server, data):
    code, out, err = cbench(
        "run", *_proxies(server), "--sweep", "rate=0.3,0.6", "--sweep", "k=1,2",
        "--dataset", data, "--output", "json",
    )  # fmt: skip
    assert code == 0, err
    assert _systems(out) == [
        "baseline",
        "compressed[rate=0.3,k=1]",
        "compressed[rate=0.3,k=2]",
        "compressed[rate=0.6,k=1]",
        "compressed[rate=0.6,k=2]",
    ]
    sent = sorted((body["rate"], body["k"]) for body in server.requests if body["model"] == "comp")
    assert sent == [(0.3, 1), (0.3, 1), (0.3, 2), (0.3, 2), (0.6, 1), (0.6, 1), (0.6, 2), (0.6, 2)]


def test_a_command_takes_the_value_in_its_placeholder(cbench, server, data):
    echo = f"{PY} -c 'import sys; sys.stdin.read(); print(\"rate\", sys.argv[1])' {{rate}}"
    code, out, err = cbench(
        "run", "--proxy", server.url, "--name", "baseline", "--command", echo, "--name", "squeeze",
        "--sweep", "rate=0.25,0.75", "--dataset", data, "--output", "json",
    )  # fmt: skip
    assert code == 0, err
    responses = {
        (row["system"], row["response"]) for row in json.loads(out)["rows"] if row["system"] != "baseline"
    }
    assert responses == {("squeeze[rate=0.25]", "rate 0.25"), ("squeeze[rate=0.75]", "rate 0.75")}
    assert [body for body in server.requests if "rate" in body] == []


def test_a_run_file_sweeps_a_range(cbench, server, data, workdir):
    (workdir / "run.toml").write_text(
        f'[[systems]]\nurl = "{server.url}"\nname = "baseline"\nmodel = "base"\n'
        f'[[systems]]\nurl = "{server.url}"\nname = "compressed"\nmodel = "comp"\n'
        '[[sweeps]]\nname = "rate"\nstart = 0.2\nstop = 0.6\nstep = 0.2\n'
    )
    code, out, err = cbench("run", "--config", "run.toml", "--dataset", data, "--output", "json")
    assert code == 0, err
    assert _systems(out) == [
        "baseline",
        "compressed[rate=0.2]",
        "compressed[rate=0.4]",
        "compressed[rate=0.6]",
    ]
    assert _sent(server, "comp") == [0.2, 0.2, 0.4, 0.4, 0.6, 0.6]


def test_the_documented_range_is_the_one_swept(cbench, server, data, workdir):
    text = (Path(__file__).parents[2] / "docs" / "sweeps.md").read_text(encoding="utf-8")
    (sweeps,) = re.findall(r"^```toml\n(.*?)^```$", text, re.S | re.M)
    (workdir / "run.toml").write_text(
        f'[[systems]]\nurl = "{server.url}"\nname = "baseline"\nmodel = "base"\n'
        f'[[systems]]\nurl = "{server.url}"\nname = "compressed"\nmodel = "comp"\n{sweeps}'
    )
    code, out, err = cbench("run", "--config", "run.toml", "--dataset", data, "--output", "json")
    assert code == 0, err
    assert _sent(server, "comp") == [0.2, 0.2, 0.4, 0.4, 0.6, 0.6, 0.8, 0.8]


def test_each_setting_is_cached_and_a_new_value_runs_alone(cbench, server, data, workdir):
    flags = ("--dataset", data, "--output", "json", "--cache-dir", str(workdir / "cache"))
    assert cbench("run", *_proxies(server), "--sweep", "rate=0.3,0.6", *flags)[0] == 0
    assert len(server.requests) == 6
    code, out, _ = cbench("run", *_proxies(server), "--sweep", "rate=0.3,0.6,0.9", *flags)
    assert code == 0
    assert len(server.requests) == 8 and _sent(server, "comp")[-2:] == [0.9, 0.9]
    assert len(_systems(out)) == 4


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--sweep", "rate="), "rate: an empty value in ''"),
        (("--sweep", "rate=0.2,,0.4"), "rate: an empty value in '0.2,,0.4'"),
        (("--sweep", "rate"), "expected NAME=V1,V2,... (got 'rate')"),
        (("--sweep", "rate=0.2,0.2"), "rate: a value is given twice"),
        (
            ("--sweep", "rate=0.2", "--sweep", "rate=0.4"),
            "rate is swept twice: give its values in one --sweep",
        ),
        (("--sweep", "rate=0.2", "--sweep-rate", "k"), "--sweep-rate k: no --sweep k=... to declare a rate"),
        (("--sweep", "rate=0.2", "--margin", "-1"), "--margin: must be"),
    ],
)
def test_bad_sweeps_are_one_line_before_any_row(cbench, server, data, flags, said):
    code, out, err = cbench("run", *_proxies(server), *flags, "--dataset", data)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and said in err
    assert server.requests == []


def test_a_placeholder_no_sweep_names_and_a_parameter_no_system_takes_are_refused(cbench, server, data):
    echo = f"{PY} -c 'print(1)' {{k}}"
    code, _, err = cbench(
        "run", "--proxy", server.url, "--command", echo, "--sweep", "rate=0.2", "--dataset", data
    )
    assert code == 2 and err.count("\n") == 1 and "{k} names no swept parameter (--sweep k=...)" in err
    plain = f"{PY} -c 'print(1)'"
    code, _, err = cbench(
        "run", "--proxy", server.url, "--command", plain, "--sweep", "rate=0.2", "--dataset", data
    )
    assert code == 2 and err.count("\n") == 1 and "--sweep rate: no system takes it" in err
    code, _, err = cbench("run", "--proxy", server.url, "--sweep", "rate=0.2", "--dataset", data)
    assert code == 2 and "--sweep compares each setting with a baseline" in err
    code, _, err = cbench(
        "run", "--command", echo, "--proxy", server.url, "--sweep", "k=1", "--dataset", data
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "the baseline is never sent a swept parameter" in err
    assert server.requests == []


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            'name = "rate"\nstart = 0.2\nstop = 0.6\nstep = 0',
            "rate: step must be a finite number other than 0",
        ),
        ('name = "rate"\nstart = 0.6\nstop = 0.2\nstep = 0.2', "rate: step 0.2 does not go from 0.6 to 0.2"),
        ('name = "rate"\nvalues = []', "rate: values must be a list of one value or more"),
        ('name = "rate"\nvalues = [0.2]\nstep = 0.1', "give values = [...], or start, stop and step"),
        ('name = "rate"\nvalue = [0.2]', "unknown key 'value'"),
    ],
)
def test_bad_run_file_sweeps_are_one_line(cbench, server, data, workdir, entry, said):
    (workdir / "run.toml").write_text(
        f'[[systems]]\nurl = "{server.url}"\n[[systems]]\nurl = "{server.url}"\n[[sweeps]]\n{entry}\n'
    )
    code, _, err = cbench("run", "--config", "run.toml", "--dataset", data)
    assert code == 2 and err.count("\n") == 1 and f"run.toml: sweep 1: {said}" in err
    assert server.requests == []


class Truncating:
    """A Python system: keeps the first ``rate`` share of the prompt's words."""

    def __init__(self, rate: float = 1.0, name: str = "truncating") -> None:
        self.rate = rate
        self.name = name

    def process(self, example):
        words = example["question"].split()
        return {**example, "response": " ".join(words[: round(len(words) * self.rate)])}


def test_a_python_factory_takes_the_value_as_a_keyword():
    sweep = Sweep(axes=[parse_axis("rate=0.5,1")])
    systems, sweep = factory_systems(Truncating, "truncating", sweep)
    assert [(s.name, s.rate) for s in systems] == [("truncating[rate=0.5]", 0.5), ("truncating[rate=1]", 1)]
    assert sweep.settings["truncating[rate=0.5]"] == Setting("truncating", [("rate", 0.5)])
    result = evaluate(
        [Truncating(name="baseline"), *systems], ROWS, RunConfig(sweep=sweep, output=Output(progress=False))
    )
    responses = {(row.system, row.response) for row in result.rows if row.example_id == "1"}
    assert responses == {
        ("baseline", "capital of France"),
        ("truncating[rate=0.5]", "capital of"),
        ("truncating[rate=1]", "capital of France"),
    }
    built, _ = factory_systems(f"{__name__}:Truncating", "t", Sweep(axes=[Axis("rate", [0.5])]))
    assert built[0].name == "t[rate=0.5]"
    with pytest.raises(ValueError, match="its factory takes none of the swept parameters"):
        factory_systems(Truncating, "t", Sweep(axes=[Axis("k", [1])]))


def test_values_read_as_numbers_and_ranges_include_their_stop():
    assert parse_axis("rate=0.2, 1 ,x,1e-3").values == (0.2, 1, "x", 0.001)
    assert axis_range("rate", 0.1, 0.3, 0.1).values == (0.1, 0.2, 0.3)
    assert axis_range("k", 8, 2, -3).values == (8, 5, 2)
    assert axis_range("k", 1, 1, 1).values == (1,)
    assert Setting("c", [("rate", 0.3), ("k", 2)]).name == "c[rate=0.3,k=2]"
    assert Setting("c", [("rate", 0.3), ("k", 2)]).value == [0.3, 2]


def _cached_rows(cache_dir) -> int:
    return sum(len(p.read_text().splitlines()) for p in cache_dir.rglob("*.jsonl"))


def test_ctrl_c_mid_sweep_then_the_same_command_redoes_no_row(cbench, write_rows, workdir):
    """SIGINT once the baseline, rate 0.3 and half of rate 0.6 are cached (the rest of 0.6 held
    by the server): the same command then sends exactly the five rows that never finished."""
    data = str(write_rows([{"id": str(n), "question": f"capital {n}", "answer": "Paris"} for n in range(10)]))
    cache = workdir / "cache"

    holding = [True]

    def held(body):
        late = holding[0] and body.get("rate") == 0.6 and int(last_user_message(body).rsplit(" ", 1)[1]) >= 5
        return Reply(text="Paris", delay=60 if late else 0.02)

    with FakeServer(held) as server:
        command = [
            "run", "--proxy", server.url, "--name", "baseline", "--model", "base",
            "--proxy", server.url, "--name", "compressed", "--model", "comp", "--sweep", "rate=0.3,0.6",
            "--dataset", data, "--cache-dir", str(cache), "--max-concurrency", "4", "--output", "json",
        ]  # fmt: skip
        argv = [sys.executable, "-m", "context_bench", *command, "--no-progress"]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while _cached_rows(cache) < 25 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 130, err
        assert "25 finished rows of this run kept" in err.splitlines()[-1]
        holding[0], sent = False, len(server.requests)
        code, out, err = cbench(*command)
        again = server.requests[sent:]
    assert code == 0, err
    assert sorted(last_user_message(body) for body in again) == [f"capital {n}" for n in range(5, 10)]
    assert all(body["rate"] == 0.6 for body in again)
    assert len(json.loads(out)["rows"]) == 30
    assert len(json.loads(out)["rows"]) == 30
