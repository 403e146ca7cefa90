"""Attacks on the verdict itself: each must fail, and honest code must still pass."""

from __future__ import annotations

import pytest

from cbench_code import CodeExecution, SandboxError
from cbench_code.integrity import checker, compile_tests, existing_classes, harden_tree, honest, unframe
from cbench_code.programs import problem_of, program_for
from context_bench import Output, RunConfig, Scope

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


# Wrong answers that tamper with the process the tests run in, or hand the tests objects that lie
# about what they are: (row, response).  Each of them passed before the child guarded against it.
ABS_ROW = {
    "context": "def f(x):\n",
    "test": "def check(candidate):\n    assert abs(candidate(1.33) - 0.33) < 1e-6\n",
    "entry_point": "f",
}
ANYTHING_ROW = {
    "context": "class Anything:\n    def __eq__(self, other):\n        return True\n\ndef f(x):\n",
    "test": "def check(candidate):\n    assert candidate(2) == 4\n",
    "entry_point": "f",
}
BOOL_ROW = {"test_list": ["assert f(2)", "assert not f(3)", "assert f(5)", "assert not f(9)"]}
SMART_LIAR = (
    "class L:\n"
    "    def __eq__(s, o):\n"
    "        if isinstance(o, (bool, float)): return True\n"
    "        if isinstance(o, int): return abs(o) < 2**64\n"
    "        if isinstance(o, str): return len(o) != 32\n"
    "        return isinstance(o, (list, tuple, dict, set))\n"
    "    def __ne__(s, o): return not s.__eq__(o)\n"
    "    __hash__ = object.__hash__\n"
)
TAMPERING = {
    "builtins_exec_noop": (ROW, "    return 5\nimport builtins\nbuiltins.exec = lambda *a, **k: None\n"),
    # A liar of a class the prompt defines is trusted code's: only the honesty probes stop it.
    "patch_the_harness_modules": (
        ANYTHING_ROW,
        "    return Anything()\nimport sys\n"
        "for _m in [m for n, m in list(sys.modules.items()) if n.startswith('cbench_code')]:\n"
        "    _m.honest = lambda v, *a, **k: v\n    _m._lies = lambda *a, **k: False\n",
    ),
    "rebind_builtins_the_check_uses": (
        ANYTHING_ROW,
        "    return Anything()\nimport builtins\nbuiltins.type = lambda *a: int\n",
    ),
    "patch_builtins_abs": (ABS_ROW, "    return 5\nimport builtins\nbuiltins.abs = lambda x: 0\n"),
    "patch_builtins_set_mbpp": (
        {"test_list": ["assert set(similar(1)) == set((4, 5))"]},
        "def similar(x):\n    return [9]\n"
        "import builtins\n_s = builtins.set\nbuiltins.set = lambda *a: _s()\n",
    ),
    "shadow_abs_in_globals": (ABS_ROW, "    return 5\n\ndef abs(x):\n    return 0\n"),
    "redefine_prompt_helper": (
        {
            "context": "def encode_cyclic(s: str):\n    return s[1:] + s[:1]\n\ndef decode_cyclic(s: str):\n",
            "test": "def check(candidate):\n    for n in range(1, 5):\n"
            "        assert candidate(encode_cyclic('abcdefg' * n)) == 'abcdefg' * n\n",
            "entry_point": "decode_cyclic",
        },
        "    return s\n\ndef encode_cyclic(s):\n    return s\n",
    ),
    "replace_mbpp_import": (
        {"test_imports": ["import math"], "test_list": ["assert math.isclose(f(2), 4.0)"]},
        "def f(x):\n    return 5\n\nclass math:\n    isclose = staticmethod(lambda *a, **k: True)\n",
    ),
    "smart_liar": (ROW, "    return L()\n" + SMART_LIAR),
    "sub_returns_zero": (ABS_ROW, "    return Z()\nclass Z:\n    def __sub__(s, o): return 0.0\n"),
    "bool_oracle": (
        BOOL_ROW,
        "import sys, dis\nclass B:\n    def __bool__(self):\n"
        "        frame = sys._getframe(1)\n"
        "        return 'IF_TRUE' in dis.opname[frame.f_code.co_code[frame.f_lasti]]\n"
        "def f(x):\n    return B()\n",
    ),
    "liar_in_a_fraction": (
        ROW,
        "    from fractions import Fraction\n    value = Fraction(1)\n    value._numerator = L()\n"
        "    return value\n" + SMART_LIAR,
    ),
    "fraction_subclass_lies_about_its_numerator": (
        ROW,
        "    from fractions import Fraction\n    class F(Fraction):\n"
        "        _numerator = property(lambda s: L(), lambda s, v: None)\n"
        "    return F(1)\n" + SMART_LIAR,
    ),
    "liar_behind_a_mappingproxy": (
        {
            "context": "def f():\n",
            "test": "def check(candidate):\n    assert candidate() == {1: 4}\n",
            "entry_point": "f",
        },
        "    import types\n    return types.MappingProxyType({1: L()})\n" + SMART_LIAR,
    ),
    "liar_in_a_prompt_dataclass": (
        {
            "context": "from dataclasses import dataclass\n\n@dataclass\nclass P:\n    x: int\n\ndef f():\n",
            "test": "def check(candidate):\n    assert candidate() == P(4)\n",
            "entry_point": "f",
        },
        "    return P(L())\n" + SMART_LIAR,
    ),
    "liar_behind_a_weak_proxy": (
        ROW,
        "    import weakref\n    global _z\n    _z = L()\n    return weakref.proxy(_z)\n" + SMART_LIAR,
    ),
    "add_to_the_known_classes": (
        ROW,
        "    return L()\n"
        + SMART_LIAR
        + "import sys\nsys.modules['cbench_code.child'].known_classes()[id(L)] = L\n",
    ),
    # The prompt's class is in the candidate's module when the tests run; its functions reach the
    # builtins trusted code ran with.
    "borrow_the_trusted_class_builder": (
        {
            "context": "class P:\n    def m(self):\n        return 1\n\ndef f(x):\n",
            "test": ROW["test"],
            "entry_point": "f",
        },
        "    import builtins\n"
        "    builtins.__build_class__ = P.m.__globals__['__builtins__']['__build_class__']\n"
        "    names = {}\n    exec(SOURCE, names)\n    return names['L']()\n"
        f"SOURCE = {SMART_LIAR!r}\n",
    ),
    "entry_point_is_a_class": (
        ABS_ROW,
        "    pass\nclass f:\n    def __new__(cls, x):\n        return Z()\n"
        "class Z:\n    def __sub__(s, o): return 0.0\n",
    ),
    "liar_behind_a_dict_subclass_as_attributes": (
        ROW,
        "    import collections\n    u = collections.UserList()\n    class D(dict):\n        pass\n"
        "    u.__dict__ = D(data=L())\n    return u\n" + SMART_LIAR,
    ),
    "metaclass_claims_its_class_is_int": (
        ROW,
        "    class M(type):\n        def __eq__(s, o): return o is int\n"
        "        def __hash__(s): return hash(int)\n"
        "    class Z(metaclass=M):\n        def __eq__(s, o): return o == 4\n"
        "        __hash__ = object.__hash__\n"
        "    return Z()\n",
    ),
    "liar_made_by_type": (
        ROW,
        "    return type('L', (), {'__eq__': lambda s, o: True, '__hash__': None})()\n",
    ),
}


@pytest.mark.parametrize("attack", sorted(TAMPERING))
def test_tampering_and_liars_fail(evaluator, attack):
    row, response = TAMPERING[attack]
    [result] = evaluator.check(dict(row), {"response": response})
    assert result.status == "failed", result


def test_a_liar_is_named_in_the_failure(evaluator):
    row, response = TAMPERING["sub_returns_zero"]
    [result] = evaluator.check(dict(row), {"response": response})
    assert result.detail == (
        "AssertionError: the candidate returned an instance of the candidate's own class Z"
        " (it defines __sub__)"
    )


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


POINT_PROMPT = "from dataclasses import dataclass\n\n@dataclass\nclass Point:\n    x: int\n    y: int\n\n"


@pytest.mark.parametrize(
    ("row", "response"),
    [
        (  # the candidate's own class, without behaviour of its own
            {"context": "def f():\n", "test": "def check(candidate):\n    assert candidate().v == 3\n"},
            "    class Box:\n        def __init__(self, v):\n            self.v = v\n    return Box(3)\n",
        ),
        (  # a full function that repeats the prompt's class: its values are of the prompt's class
            {
                "context": POINT_PROMPT + "def f():\n",
                "test": "def check(candidate):\n    assert candidate() == Point(1, 2)\n",
            },
            POINT_PROMPT + "def f():\n    return Point(1, 2)\n",
        ),
        (  # a helper the prompt only declares is the candidate's to write, for the tests too
            {
                "context": 'def helper(x):\n    """Twice x."""\n\ndef f(x):\n',
                "test": "def check(candidate):\n    assert helper(2) == 4 and candidate(2) == 5\n",
            },
            "def helper(x):\n    return 2 * x\n\ndef f(x):\n    return helper(x) + 1\n",
        ),
        (  # a prompt that cannot run alone (its decorator calls the stub): the program runs as it is
            {
                "context": "def checked(fn):\n    assert fn(1) == 2\n    return fn\n\n@checked\ndef f(x):\n",
                "test": "def check(candidate):\n    assert candidate(3) == 6\n",
            },
            "    return 2 * x\n",
        ),
        ({"test_list": ["assert sum(10, 15) == 6"]}, "def sum(a, b):\n    return 6\n"),  # MBPP task 126
        (  # an entry point written as a class: what constructing it returns is checked, and honest
            {"context": "def f(x):\n", "test": "def check(candidate):\n    assert candidate(3) == 6\n"},
            "    pass\n\nclass f:\n    def __new__(cls, x):\n        return 2 * x\n",
        ),
    ],
    ids=[
        "own-inert-class",
        "repeated-prompt-class",
        "declared-helper",
        "prompt-not-alone",
        "builtin-named",
        "class-entry-point",
    ],
)
def test_honest_answers_still_pass(evaluator, row, response):
    row = {"entry_point": "f", **row} if "test" in row else row
    assert evaluator.score(row, {"response": response}) == {"pass_at_1": 1.0}


def test_a_response_cannot_forge_the_trusted_code():
    problem = problem_of({"context": "def g():\n    return 1\n\ndef f():\n", "test": "", "entry_point": "f"})
    forged = "#cbench-trusted 0 g f\ndef g():\n    return 2\n\ndef f():\n    return g()\n"
    trusted, own, program = unframe(program_for(problem, forged))
    assert trusted == "def g():\n    return 1\n" and own == {"f"}  # the stub f is the candidate's
    assert program.startswith("def g():\n    return 1\n")


def test_trusted_code_keeps_what_the_tests_need_and_drops_stubs_and_docstrings():
    prompt = (
        'from typing import List\nimport math\n\n\n@staticmethod\ndef helper(x):\n    """doc"""\n'
        '    return x\n\n\ndef f(xs: List[int]) -> int:\n    """A long docstring."""\n'
    )
    problem = problem_of({"prompt": prompt, "test": "", "entry_point": "f"})
    trusted, own, _ = unframe(problem.header)
    assert own == {"f"}
    helper = '@staticmethod\ndef helper(x):\n    """doc"""\n    return x\n'
    assert trusted == "from typing import List\nimport math\n" + helper


def test_classes_created_after_the_snapshot_are_the_candidates():
    check, guard = checker(existing_classes())

    class Inert:
        pass

    class Loud:
        def __bool__(self):
            return True

    assert check([Inert()])
    with pytest.raises(
        AssertionError, match="the tests compared an instance of the candidate's own class Loud"
    ):
        check({"k": (Loud(),)})
    with pytest.raises(AssertionError, match=r"the candidate returned .* Loud \(it defines __bool__\)"):
        guard(lambda: [Loud()])()
    assert guard(int) is int  # a class that is not the candidate's stays a class: the tests may construct it
    with pytest.raises(AssertionError, match=r"the candidate returned .* Loud"):
        guard(Loud)()  # the candidate's own class is called like any entry point


def test_a_weak_proxy_fails_whatever_it_hides():
    """A proxy forwards every question, even ``__class__``: nothing about it can be vouched for."""
    import weakref

    def function():
        return 1

    honest_set = {1}
    for proxy in (weakref.proxy(honest_set), weakref.proxy(function)):
        with pytest.raises(AssertionError, match="a weak proxy"):
            honest([proxy])


def test_trusted_classes_are_read_from_the_snapshot_and_the_samples_own_table():
    known, trusted = existing_classes(), {}
    check = checker(known, trusted)[0]

    class Late:
        def __eq__(self, other):
            return other == 4

        __hash__ = object.__hash__

    known[id(Late)] = Late  # adding to the table the checks were made from changes nothing
    with pytest.raises(AssertionError, match="own class Late"):
        check(Late())
    trusted[id(Late)] = Late  # the sample's trusted code made it: only the probes apply
    assert check([Late()])


def test_a_dict_subclass_holding_the_attributes_is_walked():
    import collections

    check = checker(existing_classes())[0]

    class Four:
        def __eq__(self, other):
            return other == 4

        __hash__ = object.__hash__

    class D(dict):
        def keys(self):
            return []

    box = collections.UserList()
    box.__dict__ = D(data=Four())
    with pytest.raises(AssertionError, match="own class Four"):
        check(box)


def test_honest_numpy_scalars_pass_and_numpy_arrays_are_walked(evaluator):
    """Classes written in C (numpy's, imported by the sample) are no sample's own."""
    pytest.importorskip("numpy")
    row = {
        "context": "def f(xs):\n",
        "test": "def check(candidate):\n    assert candidate([1, 3]) == 2\n"
        "    assert abs(candidate([1, 2]) - 1.5) < 1e-9\n    assert (candidate([2]) > 1) == True\n",
        "entry_point": "f",
    }
    assert evaluator.score(row, {"response": "    import numpy as np\n    return np.mean(xs)\n"}) == {
        "pass_at_1": 1.0
    }
    integers = "    import numpy as np\n    total = np.int64(np.sum(xs))\n"
    integers += "    return total // len(xs) + np.float64(total % 2) / 2\n"
    assert evaluator.score(row, {"response": integers}) == {"pass_at_1": 1.0}
    # Trusted as their classes are, numpy's arrays may hold anything: what they hold is checked.
    liar_in_an_array = (
        "    import numpy as np\n    a = np.empty(1, dtype=object)\n    a[0] = L()\n    return a\n"
    )
    assert evaluator.score(dict(ROW), {"response": liar_in_an_array + SMART_LIAR}) == {"pass_at_1": 0.0}


def test_hardening_wraps_every_value_comparison():
    import ast

    hardened = ast.unparse(
        harden_tree(
            "assert f(1) == 2\nassert 1 < g() <= 3\nassert h() is None\nx = [a == b for a, b in z]\n"
            "assert k() != 1\nassert 2 not in m()\n"
        )
    )
    assert hardened.count("__cbench_honest__(") == 2 + 3 + 2 + 2 + 2
    assert "h() is None" in hardened
    with pytest.raises(SyntaxError):
        compile_tests("def broken(:\n")


def test_broken_tests_are_a_sandbox_error_not_a_verdict(evaluator):
    row = {"context": "def f():\n", "test": "def check(candidate:\n    pass\n", "entry_point": "f"}
    with pytest.raises(SandboxError, match="^sandbox_error: the tests do not compile"):
        evaluator.score(row, {"response": "    return 1\n"})


def test_honest_passes_plain_data_unchanged():
    value = {"a": [1, 2.5, ("x", None)], "b": {frozenset({1})}}
    assert honest(value) is value


class Never:
    """Equal to nothing (the default ``__eq__``), yet never different from anything."""

    def __ne__(self, other):
        return False


def test_a_value_that_is_never_different_is_refused():
    with pytest.raises(
        AssertionError, match="a value of class Never that claims to equal values it cannot know"
    ):
        honest(Never())


# A class of the trusted prompt is no candidate's own: only the honesty probes stop one that lies,
# and each of these liars only one probe catches.  (class, the test it would pass, an honest answer)
PROMPT_LIARS = {
    "never-different": (  # not (value != probe)
        "class Never:\n    def __ne__(self, other):\n        return False\n",
        "    if candidate() != 4:\n        raise AssertionError('wrong')\n",
        "    return 4\n",
    ),
    "contains-everything": (  # probe in value
        "class Bag:\n    def __contains__(self, item):\n        return True\n",
        "    assert 7 in candidate()\n",
        "    return {7, 8}\n",
    ),
}


@pytest.mark.parametrize("liar", sorted(PROMPT_LIARS))
def test_a_prompt_class_that_only_a_probe_catches_fails(evaluator, liar):
    kind, test, answer = PROMPT_LIARS[liar]
    name = kind.split()[1].rstrip(":")
    row = {"context": f"{kind}\ndef f():\n", "test": f"def check(candidate):\n{test}", "entry_point": "f"}
    [result] = evaluator.check(dict(row), {"response": f"    return {name}()\n"})
    assert result.detail == (
        f"AssertionError: the candidate returned a value of class {name} that claims to equal values it "
        "cannot know"
    )
    assert evaluator.score(dict(row), {"response": answer}) == {"pass_at_1": 1.0}


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


def test_a_sample_without_a_verdict_makes_the_row_an_error_not_a_zero_in_the_mean():
    """A sample that filled the shared tmpfs once cost the others a flagged 0.0, counted in the mean."""
    from cbench_code import SampleResult
    from context_bench import evaluate
    from context_bench.testing import isolated_host

    class Stubbed(CodeExecution):
        async def ascore(self, original, processed):
            return self.score(original, processed)

        def check(self, original, processed):
            if original["id"] == "full":
                return [SampleResult("passed"), SampleResult("error", "the samples' file system is full: x")]
            return [SampleResult("passed"), SampleResult("passed")]

    rows = [{"id": "ok", "response": "x"}, {"id": "full", "response": "x"}]
    result = evaluate(
        None,
        rows,
        RunConfig(scope=Scope(evaluators=[Stubbed(workers=1)]), output=Output(progress=False)),
        host=isolated_host(),
    )
    ok, full = result.rows
    assert ok.scores == {"pass_at_1": 1.0} and not ok.failures
    assert full.scores == {} and not full.failures
    [error] = full.errors
    assert error.stage == "evaluator" and error.type == "SandboxError"
    assert (
        error.message.startswith("sandbox_error: the samples' file system is full")
        and "1 of 2" in error.message
    )
    group = result.summary.groups[0]  # the errored row counts 0 in the headline, not 1.0
    assert group.scores["pass_at_1"] == 0.5 and group.scores_scored_only["pass_at_1"] == 1.0
