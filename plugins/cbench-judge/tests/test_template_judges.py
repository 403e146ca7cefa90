"""judge_score, JudgeEvaluator and JudgePanel against a real local server."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from cbench_judge import JudgeCallError, JudgeConfigError, JudgeEvaluator, JudgePanel, judge_score
from context_bench.testing import Reply, last_user_message


def _sample(url: str, **fields):
    config = {"judge": {"url": url, "model_id": "judge-model"}}
    return SimpleNamespace(
        config=config,
        **{"question": "Capital of France?", "response": "Paris", "reference": "Paris", **fields},
    )


def _grader(grade: str):
    return lambda body: f"The response matches.\nGRADE: {grade}"


@pytest.mark.parametrize(
    "template, grade, score",
    [
        ("binary_qa", "C", 1.0),
        ("binary_qa", "I", 0.0),
        ("binary_qa_partial", "P", 0.5),
        ("likert_5", "4", 0.8),
        ("safety", "UNSAFE", 0.0),
        ("safety", "SAFE", 1.0),
    ],
)
def test_builtin_templates(judge_server, template, grade, score) -> None:
    server = judge_server(_grader(grade))
    assert judge_score(_sample(server.url), template=template) == {
        "judge_score": score,
        "judge_grade": grade,
    }
    prompt = last_user_message(server.seen[0].body)
    assert "Capital of France?" in prompt and "GRADE:" in prompt


def test_request_carries_the_judge_config(judge_server, monkeypatch) -> None:
    server = judge_server(_grader("C"))
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-config-key")
    sample = _sample(server.url)
    sample.config["judge"].update(
        api_key="MY_JUDGE_KEY",
        temperature=0.3,
        top_p=0.9,
        max_new_tokens=64,
        parallelism=4,
        max_retries=1,
        request_timeout=5.0,
    )
    judge_score(sample, criteria="Be strict about units.")
    seen = server.seen[0]
    assert seen.headers["authorization"] == "Bearer sk-config-key"
    assert (seen.body["model"], seen.body["temperature"], seen.body["top_p"], seen.body["max_tokens"]) == (
        "judge-model",
        0.3,
        0.9,
        64,
    )
    assert "Be strict about units." in last_user_message(seen.body)


def test_question_falls_back_to_the_prompt(judge_server) -> None:
    server = judge_server(_grader("4"))
    sample = _sample(server.url, question=None, prompt="Write a haiku about rain.")
    assert judge_score(sample, template="likert_5")["judge_score"] == 0.8
    assert "Write a haiku about rain." in last_user_message(server.seen[0].body)


def test_mapping_samples_and_second_judges(judge_server) -> None:
    first, second = judge_server(_grader("C")), judge_server(_grader("I"))
    sample = {
        "question": "q",
        "response": "r",
        "reference": "r",
        "config": {
            "judge": {"url": first.url, "model_id": "a"},
            "judge_1": {"url": second.url, "model_id": "b"},
        },
    }
    assert judge_score(sample)["judge_grade"] == "C"
    assert judge_score(sample, judge_key="judge_1")["judge_grade"] == "I"


def test_custom_template_with_pattern_mapping_and_kwargs(judge_server) -> None:
    server = judge_server(lambda body: "Tone is fine.\nTONE=formal")
    result = judge_score(
        _sample(server.url),
        template="Is this {language} reply formal? {response}",
        grade_pattern=r"TONE=(\w+)",
        score_mapping={"formal": 1.0, "casual": 0.0},
        language="French",
    )
    assert result == {"judge_score": 1.0, "judge_grade": "formal"}
    assert last_user_message(server.seen[0].body) == "Is this French reply formal? Paris"


def test_call_and_parse_errors_are_graded_not_raised(judge_server) -> None:
    down = judge_server(lambda body: Reply(status=502))
    sample = _sample(down.url)
    sample.config["judge"]["max_retries"] = 0
    result = judge_score(sample)
    assert result == {"judge_score": 0.0, "judge_grade": "CALL_ERROR"}
    assert result.failure == "call_error: HTTP 502 (gave up after 1 attempt)"
    babbling = judge_server(lambda body: "I would rather not grade this.")
    result = judge_score(_sample(babbling.url))
    assert result == {"judge_score": 0.0, "judge_grade": "PARSE_ERROR"}
    assert result.failure.startswith("parse_error:")


def test_out_of_mapping_number_is_clamped(judge_server) -> None:
    server = judge_server(_grader("4"))
    assert judge_score(_sample(server.url)) == {"judge_score": 1.0, "judge_grade": "4"}


def test_json_response_format(judge_server) -> None:
    server = judge_server(lambda body: '{"analysis": {"notes": "{braces} inside"}, "grade": "I"}')
    result = judge_score(_sample(server.url), response_format={"type": "json_object"})
    assert result == {"judge_score": 0.0, "judge_grade": "I"}
    assert server.seen[0].body["response_format"] == {"type": "json_object"}


def test_setup_bugs_raise(judge_server, monkeypatch) -> None:
    server = judge_server()
    with pytest.raises(JudgeConfigError, match=r"sample.config\['judge'\] is missing"):
        judge_score(SimpleNamespace(config={}, question="q", response="r", reference="r"))
    with pytest.raises(JudgeConfigError, match="reference"):
        judge_score(_sample(server.url, reference=None))
    with pytest.raises(JudgeConfigError, match="unknown keys"):
        judge_score(
            {
                "question": "q",
                "response": "r",
                "reference": "r",
                "config": {"judge": {"url": server.url, "model_id": "m", "modle": "x"}},
            }
        )
    monkeypatch.delenv("UNSET_JUDGE_KEY", raising=False)
    sample = _sample(server.url)
    sample.config["judge"]["api_key"] = "UNSET_JUDGE_KEY"
    with pytest.raises(JudgeConfigError, match="UNSET_JUDGE_KEY"):
        judge_score(sample)
    assert server.count == 0


def test_unset_key_variable_fails_once_at_construction(judge_server, monkeypatch) -> None:
    monkeypatch.delenv("UNSET_JUDGE_KEY", raising=False)
    with pytest.raises(JudgeConfigError, match="UNSET_JUDGE_KEY names a variable that is not set"):
        JudgeEvaluator({"url": judge_server().url, "model_id": "m", "api_key": "UNSET_JUDGE_KEY"})


def test_judge_evaluator(judge_server) -> None:
    server = judge_server(_grader("P"))
    judge = JudgeEvaluator(base_url=server.url, template="binary_qa_partial")
    result = judge.score(
        {"question": "Who wrote Hamlet?", "answer": "Shakespeare"}, {"response": "An English poet"}
    )
    assert result == {"judge_score": 0.5}
    assert "Shakespeare" in last_user_message(server.seen[0].body)
    assert "sk-" not in repr(judge)


def _panel_server(judge_server, grades: dict[str, str]):
    """One server answering per model name, so each panel member gets its own verdict."""

    def respond(body):
        grade = grades[body["model"]]
        return Reply(status=500) if grade == "down" else f"GRADE: {grade}"

    return judge_server(respond)


def test_panel_majority_and_per_judge_fields(judge_server) -> None:
    server = _panel_server(judge_server, {"a": "C", "b": "I", "c": "C"})
    panel = JudgePanel([{"url": server.url, "model_id": m} for m in "abc"])
    result = panel.score({"question": "q", "answer": "x"}, {"response": "x"})
    assert result == {
        "judge_panel": 1.0,
        "judge_panel_judge": 1.0,
        "judge_panel_judge_1": 0.0,
        "judge_panel_judge_2": 1.0,
    }
    assert result.failure is None
    assert result.usage == {"input_tokens": 300.0, "output_tokens": 30.0}


def test_panel_mean_for_numeric_grades(judge_server) -> None:
    server = _panel_server(judge_server, {"a": "5", "b": "2"})
    panel = JudgePanel(
        {
            "strict": {"url": server.url, "model_id": "b"},
            "kind": {"url": server.url, "model_id": "a"},
        },
        template="likert_5",
        name="quality",
    )
    result = panel.score({"question": "q"}, {"response": "x"})
    assert result == {"quality": pytest.approx(0.7), "quality_strict": 0.4, "quality_kind": 1.0}


def test_panel_leaves_failed_judges_out_and_says_so(judge_server) -> None:
    server = _panel_server(judge_server, {"a": "I", "b": "down", "c": "I"})
    panel = JudgePanel([{"url": server.url, "model_id": m, "max_retries": 0} for m in "abc"])
    result = panel.score({"question": "q", "answer": "x"}, {"response": "y"})
    assert result["judge_panel"] == 0.0 and result["judge_panel_judge_1"] == 0.0
    assert re.match(r"call_error: 1 of 3 judges failed \(judge_1: call_error: HTTP 500", result.failure)
    strict = JudgePanel([{"url": server.url, "model_id": m, "max_retries": 0} for m in "abc"], strict=True)
    with pytest.raises(JudgeCallError, match="1 of 3 judges failed: HTTP 500"):
        strict.score({"question": "q", "answer": "x"}, {"response": "y"})


def test_a_failed_judge_is_not_averaged_into_the_panel(judge_server) -> None:
    """Two judges grading 1.0 and one failing give 1.0: the failed judge's fallback (0.0) is no grade,
    so it neither drags the mean (2/3) nor splits the vote (a tie of 1.0 and 0.0 averages 0.5)."""
    server = _panel_server(judge_server, {"a": "5", "b": "down", "c": "5", "d": "C", "e": "down"})
    numeric = JudgePanel(
        [{"url": server.url, "model_id": m, "max_retries": 0} for m in "abc"], template="likert_5"
    )
    result = numeric.score({"question": "q"}, {"response": "x"})
    assert result == {
        "judge_panel": 1.0,
        "judge_panel_judge": 1.0,
        "judge_panel_judge_1": 0.0,
        "judge_panel_judge_2": 1.0,
    }
    assert result.failure.startswith("call_error: 1 of 3 judges failed (judge_1: call_error: HTTP 500")
    voting = JudgePanel([{"url": server.url, "model_id": m, "max_retries": 0} for m in "de"])
    result = voting.score({"question": "q", "answer": "x"}, {"response": "x"})
    assert result == {"judge_panel": 1.0, "judge_panel_judge": 1.0, "judge_panel_judge_1": 0.0}
    assert result.failure.startswith("call_error: 1 of 2 judges failed (judge_1: call_error: HTTP 500")


def test_a_panel_whose_judges_all_failed_grades_0_and_says_so(judge_server) -> None:
    server = _panel_server(judge_server, {"a": "down", "b": "down"})
    panel = JudgePanel([{"url": server.url, "model_id": m, "max_retries": 0} for m in "ab"])
    result = panel.score({"question": "q", "answer": "x"}, {"response": "x"})
    assert result == {"judge_panel": 0.0, "judge_panel_judge": 0.0, "judge_panel_judge_1": 0.0}
    assert result.failure.startswith("call_error: 2 of 2 judges failed (judge: call_error: HTTP 500")


@pytest.mark.parametrize(
    "field, value",
    [("temperature", "hot"), ("parallelism", 0), ("max_retries", -1), ("request_timeout", 0), ("top_p", "x")],
)
def test_bad_config_values_name_the_field(field, value) -> None:
    sample = _sample("http://127.0.0.1:9")
    sample.config["judge"][field] = value
    with pytest.raises(JudgeConfigError, match=rf"sample.config\['judge'\]: '{field}'"):
        judge_score(sample)


def test_one_vocabulary_with_the_old_spellings_still_read(judge_server, monkeypatch) -> None:
    from cbench_judge import MemoryJudge

    server = judge_server(_grader("C"))
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-vocabulary")
    ours = {"url": server.url, "model": "m", "api_key_env": "MY_JUDGE_KEY", "concurrency": 4}
    nemo = {"url": server.url, "model_id": "m", "api_key": "MY_JUDGE_KEY", "parallelism": 4}
    assert JudgeEvaluator(ours).judges == JudgeEvaluator(nemo).judges
    assert JudgeEvaluator(ours).score({"question": "q", "answer": "a"}, {"response": "a"}) == {
        "judge_score": 1.0
    }
    assert server.seen[0].headers["authorization"] == "Bearer sk-vocabulary"
    with pytest.raises(JudgeConfigError, match="both 'model' and 'model_id'"):
        JudgeEvaluator({"url": server.url, "model": "a", "model_id": "b"})
    assert MemoryJudge(base_url=server.url).url == MemoryJudge(server.url).url == server.url
    with pytest.raises(JudgeConfigError, match="not both"):
        MemoryJudge(server.url, base_url=server.url)
