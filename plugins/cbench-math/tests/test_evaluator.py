"""The evaluator's contract: the issue's examples, registration, laziness, deadline, threads."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading

import pytest

from cbench_math.evaluator import MathEquivalence, from_options
from context_bench import Limits, Output, RunConfig, Scope, Scores
from context_bench.plugins import PluginHost
from context_bench.specs import resolve


def test_issue_examples(evaluator):
    assert evaluator.score({"answer": r"\frac{1}{2}"}, {"response": "0.5"}) == {"math_equiv": 1.0}
    boxed = r"The answer is $\boxed{42}$."
    assert evaluator.score({"answer": "42"}, {"response": boxed}) == {"math_equiv": 1.0}


def test_wrong_answer_scores_zero_without_failure(evaluator):
    scores = evaluator.score({"answer": "42"}, {"response": r"so $\boxed{41}$"})
    assert scores == {"math_equiv": 0.0}
    assert getattr(scores, "failure", None) is None


def test_rows_without_answer_get_no_score(evaluator):
    assert evaluator.score({"question": "2+2?"}, {"response": "4"}) == {}


def test_non_string_gold_and_missing_response(evaluator):
    assert evaluator.score({"answer": 18}, {"response": "The answer is 18."}) == {"math_equiv": 1.0}
    assert evaluator.score({"answer": "18"}, {}) == {"math_equiv": 0.0}


def test_a_list_of_golds_matches_any(evaluator):
    assert evaluator.score({"answer": ["18", "20"]}, {"response": "#### 20"}) == {"math_equiv": 1.0}
    assert evaluator.score({"answer": ["18", "20"]}, {"response": "#### 19"}) == {"math_equiv": 0.0}


def test_registered_lazily_and_autowired():
    host = PluginHost(allow=["cbench-math"], strict=True)
    spec = host.find_evaluator("MathEquivalence")
    assert spec.factory == "cbench_math.evaluator:MathEquivalence"
    assert spec.fields == ("math_equiv",)
    assert resolve(spec.factory) is MathEquivalence
    rules = [r for r in host.rules() if r.evaluator == "MathEquivalence"]
    assert len(rules) == 1 and set(rules[0].datasets) == {"math", "gsm8k", "mgsm"}
    built = resolve(rules[0].build)({"math_timeout": 2.5, "math_workers": None})
    assert isinstance(built, MathEquivalence) and built.timeout == 2.5 and built.workers == 1


def test_listing_and_building_never_import_sympy_in_the_caller():
    code = (
        "import sys\n"
        "from context_bench.plugins import PluginHost\n"
        "from context_bench.specs import resolve\n"
        "host = PluginHost(allow=['cbench-math'], strict=True)\n"
        "[s for _, s in host.evaluator_specs()]\n"
        "host.rules()\n"
        "import cbench_math.plugin\n"
        "assert 'sympy' not in sys.modules, 'listing imported sympy'\n"
        "e = resolve(host.find_evaluator('MathEquivalence').factory)()\n"
        "assert e.score({'answer': '1/2'}, {'response': '0.5'}) == {'math_equiv': 1.0}\n"
        "assert 'sympy' not in sys.modules, 'scoring imported sympy in the caller'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="timeout"):
        MathEquivalence(timeout=0)
    with pytest.raises(ValueError, match="workers"):
        MathEquivalence(workers=0)
    with pytest.raises(ValueError, match="timeout"):
        MathEquivalence(timeout="5")
    with pytest.raises(ValueError, match="workers"):
        MathEquivalence(workers=1.5)


def test_pickles_by_configuration():
    copy = pickle.loads(pickle.dumps(MathEquivalence(timeout=3, workers=2)))
    assert (copy.timeout, copy.workers) == (3.0, 2)
    assert copy.config == {"timeout": 3.0, "workers": 2}


def test_concurrent_threads_get_their_own_verdicts():
    evaluator = MathEquivalence(workers=2)
    cases = [(str(n), f"The answer is {n}." if n % 3 else f"The answer is {n + 1}.") for n in range(40)]
    results: dict[int, float] = {}

    def run(i: int) -> None:
        gold, response = cases[i]
        results[i] = evaluator.score({"answer": gold}, {"response": response})["math_equiv"]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: (1.0 if i % 3 else 0.0) for i in range(len(cases))}


#: A gold inequality whose solution set sympy must work out (seconds, not milliseconds).
_SLOW = (r"e^{x} + \sin(x)^{3} > x^{5} - \cos(x)", r"x \in (0, 1)")


class _SlowCaseDeadline(MathEquivalence):
    """A 20 ms deadline for the slow case (seconds of sympy), 30 s for the others: only the slow
    case times out, however busy the machine (rows run one at a time)."""

    def _judge(self, gold, response):
        self.timeout = 0.02 if gold == _SLOW[0] else 30.0
        return super()._judge(gold, response)


def test_deadline_from_a_worker_thread_scores_zero_and_is_counted():
    evaluator = MathEquivalence(timeout=0.02)
    out: list = []
    thread = threading.Thread(
        target=lambda: out.append(evaluator.score({"answer": _SLOW[0]}, {"response": _SLOW[1]}))
    )
    thread.start()
    thread.join()
    (scores,) = out
    assert isinstance(scores, Scores)
    assert scores == {"math_equiv": 0.0}
    assert scores.failure.startswith("timeout:")
    assert evaluator.timeouts == 1
    # the killed worker was replaced: the next case is judged normally (under a deadline no busy
    # machine overruns: only the slow case is meant to time out)
    evaluator.timeout = 30.0
    assert evaluator.score({"answer": "3"}, {"response": "3.0"}) == {"math_equiv": 1.0}
    assert evaluator.timeouts == 1


def test_deadline_leaves_the_callers_alarm_alone():
    import signal

    if not hasattr(signal, "SIGALRM"):
        pytest.skip("no SIGALRM on this platform")
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        MathEquivalence(timeout=0.02).score({"answer": _SLOW[0]}, {"response": _SLOW[1]})
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert remaining > 0 and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_from_options_defaults():
    built = from_options({})
    assert (built.timeout, built.workers) == (5.0, 1)


def test_the_runner_counts_a_timeout_per_evaluator():
    import context_bench as cb

    rows = [
        {"id": "1", "answer": "18", "response": "The answer is 18."},
        {"id": "2", "answer": _SLOW[0], "response": _SLOW[1]},
    ]
    result = cb.evaluate(
        None,
        {"math": rows},
        RunConfig(
            scope=Scope(evaluators=[_SlowCaseDeadline()]),
            limits=Limits(max_concurrency=1),
            output=Output(progress=False),
        ),
    )
    assert [row.scores["math_equiv"] for row in result.rows] == [1.0, 0.0]
    assert result.summary.failures["math_equivalence"].kinds == {"timeout": 1}


def test_autowired_for_math_datasets_with_cli_options():
    import context_bench as cb

    rows = [{"id": "1", "answer": r"\frac{1}{2}", "response": "0.5"}]
    for name in ("math", "gsm8k", "mgsm"):
        result = cb.evaluate(
            None, {name: rows}, RunConfig(output=Output(progress=False), plugins={"math_timeout": 3})
        )
        assert result.rows[0].scores["math_equiv"] == 1.0


def test_a_worker_killed_from_outside_is_replaced_transparently():
    from cbench_math.pool import shared_pool

    evaluator = MathEquivalence(workers=3)
    assert evaluator.score({"answer": "2"}, {"response": "2.0"}) == {"math_equiv": 1.0}
    pool = shared_pool(3)
    for worker in list(pool._idle):
        worker.proc.kill()
        worker.proc.wait()
    assert evaluator.score({"answer": "2"}, {"response": "#### 2"}) == {"math_equiv": 1.0}


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--math-timeout", "-1"),
        ("--math-timeout", "0"),
        ("--math-timeout", "nan"),
        ("--math-timeout", "inf"),
        ("--math-timeout", "soon"),
        ("--math-workers", "0"),
        ("--math-workers", "1.5"),
    ],
)
def test_invalid_math_options_exit_2_with_one_line(tmp_path, capsys, flag, value):
    from context_bench.cli import main

    data = tmp_path / "gsm8k.jsonl"
    data.write_text('{"id": "1", "answer": "18", "response": "#### 18"}\n')
    code = main(["score", str(data), "--no-progress", f"{flag}={value}"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and flag in err and repr(value) in err


def test_invalid_math_options_through_the_api_are_a_usage_error():
    from context_bench import UsageError

    rule = next(
        r for r in PluginHost(allow=["cbench-math"], strict=True).rules() if r.evaluator == "MathEquivalence"
    )
    with pytest.raises(UsageError, match="--math-timeout"):
        resolve(rule.build)({"math_timeout": -1})
    with pytest.raises(ValueError, match="positive seconds"):
        MathEquivalence(timeout=float("inf"))
