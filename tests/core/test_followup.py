"""A row with ``followup`` is two calls, as a chain-of-thought benchmark makes them: the row's prompt,
then ``followup.prompt`` alone with its ``reply`` text replaced by the first answer (stripped) and
its own ``max_tokens``; the second answer is the response, the first kept in ``replies``, tokens and
cost summed.  Against a real loopback server, and a ``--command`` program run twice as a process;
a malformed ``followup`` is the row's error before any call."""

from __future__ import annotations

import sys

from context_bench import OpenAIProxy, Output, RunConfig, evaluate
from context_bench.command_system import CommandSystem
from context_bench.testing import FakeServer, Reply, last_user_message

ROW = {
    "id": "1",
    "prompt": "Think: which city?",
    "answer": "Paris",
    "max_tokens": 1024,
    "followup": {"prompt": "You thought: $R$ $R$. So?", "reply": "$R$", "max_tokens": 128},
}
QUIET = RunConfig(output=Output(progress=False))


def scripted(body):
    cost = {"x-litellm-response-cost": "0.25"}
    if last_user_message(body).startswith("Think"):
        return Reply("  the capital  \n", headers=cost, usage={"prompt_tokens": 7, "completion_tokens": 3})
    return Reply("Paris", headers=cost, usage={"prompt_tokens": 9, "completion_tokens": 1})


def test_the_second_call_quotes_the_first_answer_and_is_the_response():
    with FakeServer(scripted) as server:
        proxy = OpenAIProxy(server.url, system_prompt="Be brief.", api_key_env=None)
        (row,) = evaluate([proxy], [ROW], QUIET).rows
        first, second = server.requests
    assert (first["messages"][-1]["content"], first["max_tokens"]) == ("Think: which city?", 1024)
    assert second["messages"] == [  # a conversation of its own: no first prompt, no first answer
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "You thought: the capital the capital. So?"},
    ]
    assert second["max_tokens"] == 128
    assert row.response == "Paris" and row.meta["output"]["replies"] == ["  the capital  \n"]
    assert (row.input_tokens, row.output_tokens, row.cost) == (16.0, 4.0, 0.5)
    assert row.scores["exact_match"] == 1.0


def test_a_malformed_followup_is_the_rows_error_before_any_call():
    with FakeServer(scripted) as server:
        proxy = OpenAIProxy(server.url, api_key_env=None)
        (row,) = evaluate([proxy], [{**ROW, "followup": {"prompt": "no reply named"}}], QUIET).rows
        assert server.requests == []
    assert row.response is None
    (error,) = row.errors
    assert error.message.startswith("the row's followup must be {prompt, reply, max_tokens}")


def test_a_command_system_runs_its_program_twice(tmp_path):
    script = tmp_path / "answer.py"
    script.write_text(
        "import sys\ntext = sys.stdin.read()\n"
        "print(' thinking ' if text.startswith('Think') else 'Paris? ' + text)\n",
        encoding="utf-8",
    )
    system = CommandSystem(f"{sys.executable} {script}")
    (row,) = evaluate([system], [ROW], QUIET).rows
    assert row.response.strip() == "Paris? You thought: thinking thinking. So?"
    assert row.meta["output"]["replies"] == [" thinking"]  # its output, the last newline cut
