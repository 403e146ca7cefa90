"""Cache identities: every configuration difference shows, and equal configurations agree in any process."""

from __future__ import annotations

import copy
import enum
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from context_bench import Output, RunConfig, Scope, evaluate
from context_bench.identity import config_of, identity
from context_bench.testing import isolated_host


class Keywords:
    """An evaluator whose configuration is whatever it is given."""

    name = "keywords"

    def __init__(self, **config):
        vars(self).update(config)

    def score(self, original, processed):
        hit = any(word in processed["response"] for word in self.words)
        return {"hit": float(hit), "match": float(bool(self.pattern.search(processed["response"])))}


class Color(enum.Enum):
    RED = 1
    BLUE = 2


class Client:
    def __init__(self, url, api_key="sk-one"):
        self.url = url
        self.api_key = api_key


class Shown:
    """No public attributes, but a repr that shows its settings (and a secret)."""

    def __init__(self, url, token="sk-one"):
        self._url, self._token = url, token

    def __repr__(self):
        return f"Shown({self._url!r}, token={self._token!r})"


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"cat"}, {"dog"}),
        (frozenset({"cat"}), frozenset({"cat", "dog"})),
        (re.compile("cat"), re.compile("dog")),
        (re.compile("cat"), re.compile("cat", re.IGNORECASE)),
        (re.compile("c" * 300 + "a"), re.compile("c" * 300 + "b")),  # beyond what repr() shows
        (Path("/data/a"), Path("/data/b")),
        (Color.RED, Color.BLUE),
        (Client("http://a"), Client("http://b")),
        ([{"client": Client("http://a")}], [{"client": Client("http://b")}]),
        (Shown("http://a"), Shown("http://b")),
        (Client, Shown),
    ],
    ids="set frozenset pattern flags long-pattern path enum object nested repr class".split(),
)
def test_a_configuration_difference_changes_the_identity(one, other):
    assert identity(Keywords(field=one)) != identity(Keywords(field=other))
    # an equal configuration in other objects (another address in memory) keeps the identity
    assert identity(Keywords(field=one)) == identity(Keywords(field=copy.deepcopy(one)))


def test_secrets_stay_out_of_nested_configurations():
    config = json.dumps(config_of(Keywords(client=Client("http://a"), shown=Shown("http://a"))))
    assert "http://a" in config and "sk-one" not in config
    one, other = Keywords(client=Client("u", "sk-one")), Keywords(client=Client("u", "sk-two"))
    assert identity(one) == identity(other)


def test_cycles_are_cut_and_too_deep_a_configuration_is_never_reused():
    client = Client("http://a")
    client.again = client
    assert "<cycle>" in json.dumps(config_of(Keywords(client=client)))
    deep: list = []
    for _ in range(30):
        deep = [deep]
    with pytest.warns(RuntimeWarning, match="nested more than"):
        assert identity(Keywords(deep=deep)) == identity(Keywords(deep=deep))  # stable within a process


_PROCESS = """
import enum, re
from pathlib import Path
from context_bench.identity import identity

class Color(enum.Enum):
    RED = 1

class Client:
    def __init__(self):
        self.url = "http://a"
        self.headers = {"accept", "user-agent", "x-one", "x-two", "x-three"}

class Keywords:
    name = "keywords"
    def __init__(self, **config):
        vars(self).update(config)

configured = Keywords(words={"cat", "dog", "emu", "fox", "gnu"}, pattern=re.compile("c.t", re.I),
                      path=Path("/data/a"), color=Color.RED, client=Client(), more=[frozenset({"x", "y"})])
opaque = Keywords(handle=object())
print(identity(configured))
print(identity(opaque), identity(opaque) == identity(opaque))
"""


def _identities_in_a_new_process(hash_seed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", _PROCESS], env=env, capture_output=True, text=True, check=True, timeout=60
    )
    assert "RuntimeWarning" in done.stderr and "builtins.object" in done.stderr
    return done.stdout.splitlines()


def test_equal_configurations_agree_across_processes_and_opaque_ones_never_do():
    first = _identities_in_a_new_process("1")
    second = _identities_in_a_new_process("2")  # another string hash order: sets iterate differently
    assert first[0] == second[0]
    assert first[1].endswith("True") and second[1].endswith("True")  # stable within its process
    assert first[1] != second[1]


def test_a_changed_set_or_pattern_is_not_served_from_the_cache(tmp_path):
    rows = [{"id": "1", "response": "the cat sat"}]

    def run(word):
        evaluator = Keywords(words={word}, pattern=re.compile(word))
        result = evaluate(
            None,
            rows,
            RunConfig(scope=Scope(evaluators=[evaluator]), output=Output(cache_dir=tmp_path, progress=False)),
            host=isolated_host(),
        )
        return result.rows[0].scores

    assert run("cat") == {"hit": 1.0, "match": 1.0}
    assert run("dog") == {"hit": 0.0, "match": 0.0}
