"""Attacks on the verdict itself: each must fail, and honest code must still pass."""

from __future__ import annotations

import pytest

from cbench_code import CodeExecution
from cbench_code.integrity import compile_tests, harden_tree, honest

ROW = {
    "context": "def f(x):\n",
    "test": "def check(candidate):\n    assert candidate(2) == 4\n",
    "entry_point": "f",
}

ATTACKS = {
    "forged_stdout": "    print('PASS')\n    print('{\"passed\": true}')\n    return 5\n",
    "forged_result_pipe": (
        "    import os\n"
        "    for fd in range(3, 20):\n"
        "        try:\n"
        "            os.write(fd, b'PASS ' + b'0' * 32 + b' 0.1\\n')\n"
        "        except OSError:\n"
        "            pass\n"
        "    os._exit(0)\n"
    ),
    "sys_exit_0_in_function": "    import sys\n    sys.exit(0)\n",
    "sys_exit_0_at_import": "    return 5\nimport sys\nsys.exit(0)\n",
    "os_exit_0_in_function": "    import os\n    os._exit(0)\n",
    "os_exit_0_at_import": "    return 5\nimport os\nos._exit(0)\n",
    "raise_systemexit_subclass": "    class Done(SystemExit):\n        pass\n    raise Done(0)\n",
    "always_true_eq": "    class Yes:\n        def __eq__(self, other):\n            return True\n"
    "    return Yes()\n",
    "int_subclass_eq": "    class Four(int):\n        def __eq__(self, other):\n            return True\n"
    "        __hash__ = int.__hash__\n    return Four(5)\n",
    "always_false_ne": (
        "    class Same:\n"
        "        def __eq__(self, other):\n            return True\n"
        "        def __ne__(self, other):\n            return False\n"
        "    return Same()\n"
    ),
    "liar_inside_list": "    class Yes:\n        def __eq__(self, o):\n            return True\n"
    "    return [Yes()]\n",
    "replace_the_guard": (
        "    globals()['__cbench_honest__'] = lambda v: v\n"
        "    class Yes:\n        def __eq__(self, o):\n            return True\n"
        "    return Yes()\n"
    ),
    "kill_own_group": "    import os, signal\n    os.kill(0, signal.SIGKILL)\n",
    # The token is drawn only once the tests ran: before that its pipe is empty.
    "read_token_early": (
        "    import os\n"
        "    os.set_blocking(4, False)\n"
        "    try:\n"
        "        token = os.read(4, 64)\n"
        "    except BlockingIOError:\n"
        "        token = b''\n"
        "    os.write(3, b'PASS ' + token + b' 0.1\\n')\n"
        "    os._exit(0)\n"
    ),
    "empty_token": "    import os\n    os.write(3, b'PASS  0.1\\n')\n    os._exit(0)\n",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_integrity_attack_fails(evaluator, attack):
    [result] = evaluator.check(dict(ROW), {"response": ATTACKS[attack]})
    assert not result.passed, result
    assert evaluator.score(dict(ROW), {"response": ATTACKS[attack]}) == {"pass_at_1": 0.0}


def test_liar_container_membership_fails(evaluator):
    row = {
        "context": "def f():\n",
        "test": "def check(candidate):\n    assert 7 in candidate()\n",
        "entry_point": "f",
    }
    liar = (
        "    class Bag:\n        def __contains__(self, item):\n            return True\n    return Bag()\n"
    )
    assert evaluator.score(row, {"response": liar}) == {"pass_at_1": 0.0}
    assert evaluator.score(row, {"response": "    return {7, 8}\n"}) == {"pass_at_1": 1.0}


@pytest.mark.parametrize(
    ("response", "expect"),
    [
        (
            "    import collections\n    P = collections.namedtuple('P', 'a b')\n    return P(1, 2)\n",
            "== (1, 2)",
        ),
        ("    return (x for x in [1, 2])\n", "!= [1, 2]"),  # a generator is not a list, honestly
        ("    from fractions import Fraction\n    return Fraction(1, 2) * 2\n", "== 1"),
        ("    import numbers\n    class N(numbers.Number):\n        pass\n    return N()\n", "!= 1"),
    ],
    ids=["namedtuple", "generator", "fraction", "custom-class"],
)
def test_honest_non_plain_values_still_pass(evaluator, response, expect):
    test = f"def check(candidate):\n    assert candidate() {expect}\n"
    assert evaluator.score(
        {"context": "def f():\n", "test": test, "entry_point": "f"}, {"response": response}
    ) == {"pass_at_1": 1.0}


def test_honest_dataclass_from_the_prompt_passes(evaluator):
    context = (
        "from dataclasses import dataclass\n\n@dataclass\nclass Point:\n    x: int\n    y: int\n\ndef f():\n"
    )
    row = {
        "context": context,
        "test": "def check(candidate):\n    assert candidate() == Point(1, 2)\n",
        "entry_point": "f",
    }
    assert evaluator.score(row, {"response": "    return Point(1, 2)\n"}) == {"pass_at_1": 1.0}
    assert evaluator.score(row, {"response": "    return Point(2, 1)\n"}) == {"pass_at_1": 0.0}


def test_hardening_wraps_every_value_comparison():
    import ast

    hardened = ast.unparse(
        harden_tree("assert f(1) == 2\nassert 1 < g() <= 3\nassert h() is None\nx = [a == b for a, b in z]\n")
    )
    assert hardened.count("__cbench_honest__(") == 2 + 3 + 2
    assert "h() is None" in hardened
    with pytest.raises(SyntaxError):
        compile_tests("def broken(:\n")


def test_broken_tests_are_a_sandbox_error_not_a_verdict(evaluator):
    row = {"context": "def f():\n", "test": "def check(candidate:\n    pass\n", "entry_point": "f"}
    scores = evaluator.score(row, {"response": "    return 1\n"})
    assert scores == {"pass_at_1": 0.0} and scores.failure.startswith(
        "sandbox_error: the tests do not compile"
    )


def test_honest_passes_plain_data_unchanged():
    value = {"a": [1, 2.5, ("x", None)], "b": {frozenset({1})}}
    assert honest(value) is value


def test_honest_flags_a_liar_nested_in_plain_data():
    class Yes:
        def __eq__(self, other):
            return True

    with pytest.raises(AssertionError, match="Yes"):
        honest({"k": [1, (2, Yes())]})


def test_waiting_for_the_token_before_the_tests_times_out():
    """A blocking read of the token pipe gets nothing: the server draws the token after the tests."""
    ev = CodeExecution(timeout=1.0, workers=1)
    attack = (
        "    import os\n"
        "    token = os.read(4, 64)\n"
        "    os.write(3, b'PASS ' + token + b' 0.1\\n')\n"
        "    os._exit(0)\n"
    )
    try:
        [result] = ev.check(dict(ROW), {"response": attack})
    finally:
        ev.close()
    assert result.status == "timeout", result
