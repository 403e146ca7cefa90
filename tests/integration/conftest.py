"""A real LiteLLM proxy on 127.0.0.1, started once for the integration tests and stopped after them.

Its models are served by a :class:`~context_bench.testing.FakeServer` on 127.0.0.1 (LiteLLM's
``openai/`` provider pointed at it), so every answer is deterministic and nothing leaves the machine
(``LITELLM_LOCAL_MODEL_COST_MAP``: no price list is fetched).  What the backend does is decided by the
request: the model (``tiny`` answers from :data:`ANSWERS`, ``fixed`` always says ``I don't know``),
and markers in the last user message that make it fail the way upstreams do: ``[429 once:TAG]`` (a
429 with ``Retry-After: 1`` the first time TAG is seen), ``[500]``, ``[400]``.  The ``slow`` model's
backend hangs and LiteLLM times it out after 1 s (its 408).  A judge's prompt (it asks for a
``VERDICT`` or a ``RATING``) is answered as a judge would.  LiteLLM's own failure modes come on top:
a wrong key (a custom auth hook gives LiteLLM's 401) and the price of ``tiny`` (its
``x-litellm-response-cost``).  The ``metered`` model reaches the same backend through a metering
relay (``litellm_proxy.meter``), with LiteLLM forwarding the client's ``x-`` headers to it.  The
LiteLLM configuration docs/savings.md shows for a proxy under test is added as it is written
(``documented``), its ``api_base`` the port a ``run --meter`` test starts its meter on
(``meter_port``: nothing listens there between runs); the backend states one prompt token per word
of that model's question, so each row's metered count is its own.

The tests skip, saying why, only where LiteLLM (with its proxy extra) cannot be imported.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from context_bench.meter import Meter
from context_bench.testing import (
    FakeServer,
    Reply,
    free_port,
    last_user_message,
    loopback_environment,
    wait_until_serving,
)

ROOT = Path(__file__).parents[2]
#: The model of docs/savings.md's LiteLLM configuration (:func:`documented`).
DOCUMENTED_MODEL = "gpt-4o-mini"
#: The key that configuration reads from LiteLLM's environment for the upstream (the meter).
UPSTREAM_KEY = "sk-cbench-upstream-" + "9876543210" * 2

#: The key the proxy accepts (LiteLLM's auth hook below); any other key gets its 401.
GOOD_KEY = "sk-cbench-integration-0123456789"
MASTER_KEY = "sk-cbench-master-" + "0123456789abcdef" * 2
#: Dollars per token LiteLLM charges for ``tiny``: a reply of 10 + 2 tokens costs 0.014.
INPUT_PRICE, OUTPUT_PRICE = 0.001, 0.002
ANSWERS = {"What is 2 + 2?": "4", "Capital of France?": "Paris", "Colour of the sky?": "blue"}
START_TIMEOUT = 120.0

AUTH_HOOK = """
from litellm.proxy._types import ProxyException, UserAPIKeyAuth


async def user_api_key_auth(request, api_key: str) -> UserAPIKeyAuth:
    if api_key == "{good}":
        return UserAPIKeyAuth(api_key=api_key)
    raise ProxyException(
        message="Authentication Error, invalid key", type="auth_error", param="api_key", code=401
    )
"""

CONFIG = """
model_list:
  - model_name: tiny
    litellm_params:
      model: openai/tiny
      api_base: {backend}/v1
      api_key: backend-needs-none
      input_cost_per_token: {input_price}
      output_cost_per_token: {output_price}
  - model_name: fixed
    litellm_params:
      model: openai/fixed
      api_base: {backend}/v1
      api_key: backend-needs-none
  - model_name: slow
    litellm_params:
      model: openai/slow
      api_base: {backend}/v1
      api_key: backend-needs-none
      timeout: 1
  - model_name: metered
    litellm_params:
      model: openai/metered
      api_base: {meter}
      api_key: backend-needs-none
litellm_settings:
  num_retries: 0
  request_timeout: 30
  model_group_settings:
    forward_client_headers_to_llm_api: [metered]
router_settings:
  num_retries: 0
  disable_cooldowns: true
general_settings:
  master_key: {master}
  custom_auth: cbench_auth.user_api_key_auth
"""


class Backend:
    """The model behind the proxy: deterministic answers and scripted upstream failures."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._once: set[str] = set()

    def __call__(self, body: dict) -> Reply | str:
        prompt = last_user_message(body)
        model = body.get("model")
        if model == "slow":
            return Reply(fault="hang")
        if "[429 once:" in prompt:
            tag = prompt.split("[429 once:", 1)[1].split("]", 1)[0]
            with self._lock:
                first = tag not in self._once
                self._once.add(tag)
            if first:
                return Reply("upstream rate limit reached", status=429, headers={"Retry-After": "1"})
        if "[500]" in prompt:
            return Reply("upstream exploded", status=500)
        if "[400]" in prompt:
            return Reply("upstream rejects this request", status=400)
        if "VERDICT" in prompt:
            return "The response is right.\nVERDICT: YES"
        if "RATING" in prompt.upper() and "1" in prompt and "5" in prompt:
            return "Helpful and correct.\nRATING: 5"
        if model == "fixed":
            return "I don't know"
        answer = next((answer for question, answer in ANSWERS.items() if question in prompt), "no idea")
        if model == DOCUMENTED_MODEL:
            return Reply(answer, usage={"prompt_tokens": len(prompt.split()), "completion_tokens": 1})
        return answer


def _missing() -> str | None:
    for module in ("litellm", "fastapi", "uvicorn", "yaml"):
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):
            return module
    return None


def documented() -> dict:
    """docs/savings.md's LiteLLM configuration for a proxy under test that sends upstream through
    the meter (its one ``yaml`` block), as a dict."""
    import yaml

    (block,) = re.findall(
        r"```yaml\n(.*?)```", (ROOT / "docs" / "savings.md").read_text(encoding="utf-8"), re.S
    )
    return yaml.safe_load(block)


def _config(meter_port: int, **values: object) -> str:
    """The proxy's configuration: :data:`CONFIG` with the documented model added as written, its
    ``api_base`` port ``meter_port``, and its header forwarding."""
    import yaml

    config = yaml.safe_load(CONFIG.format(**values))
    shown = documented()
    (model,) = shown["model_list"]
    params = model["litellm_params"]
    params["api_base"] = params["api_base"].replace("PORT", str(meter_port))
    config["model_list"].append(model)
    forwarding = config["litellm_settings"]["model_group_settings"]["forward_client_headers_to_llm_api"]
    forwarding += shown["litellm_settings"]["model_group_settings"]["forward_client_headers_to_llm_api"]
    return yaml.safe_dump(config, sort_keys=False)


def _environment() -> dict[str, str]:
    return loopback_environment(
        OPENAI_API_KEY=UPSTREAM_KEY,  # the documented model's api_key: os.environ/OPENAI_API_KEY
        LITELLM_LOCAL_MODEL_COST_MAP="True",  # no price list from the network
        LITELLM_TELEMETRY="False",
        LITELLM_DONT_SHOW_FEEDBACK_BOX="True",
        LITELLM_LOG="ERROR",
    )


def _wait_until_live(process: subprocess.Popen, url: str, log: Path) -> float:
    try:
        return wait_until_serving(f"{url}/health/liveliness", process, START_TIMEOUT)
    except RuntimeError as exc:
        pytest.fail(f"the LiteLLM proxy did not start: {exc}:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen) -> None:
    """End the proxy and anything it started (its own process group), politely first."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="session")
def litellm_proxy(tmp_path_factory):
    """The proxy's URL and key, its backend (a FakeServer: ``backend.seen``) and its start-up time."""
    missing = _missing()
    if missing:
        pytest.skip(
            f"LiteLLM's proxy cannot be imported ({missing} is missing): pip install 'litellm[proxy]'"
        )
    home = tmp_path_factory.mktemp("litellm")
    meter_port = free_port()
    with FakeServer(Backend()) as backend, Meter(backend.url) as meter:
        (home / "cbench_auth.py").write_text(AUTH_HOOK.format(good=GOOD_KEY))
        (home / "config.yaml").write_text(
            _config(
                meter_port,
                backend=backend.url,
                meter=meter.url,
                master=MASTER_KEY,
                input_price=INPUT_PRICE,
                output_price=OUTPUT_PRICE,
            )
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = home / "proxy.log"
        launch = "from litellm.proxy.proxy_cli import run_server; run_server()"
        argv = [sys.executable, "-c", launch, "--config", "config.yaml", "--host", "127.0.0.1"]
        with open(log, "wb") as sink:
            process = subprocess.Popen(
                [*argv, "--port", str(port), "--num_workers", "1"],
                cwd=home,
                env=_environment(),
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            startup = _wait_until_live(process, url, log)
            yield SimpleNamespace(
                url=url,
                key=GOOD_KEY,
                backend=backend,
                meter=meter,
                meter_port=meter_port,
                documented=documented(),
                upstream_key=UPSTREAM_KEY,
                config=home / "config.yaml",
                startup=startup,
                log=log,
                answers=ANSWERS,
                prices=(INPUT_PRICE, OUTPUT_PRICE),
                seen_with=lambda marker: [s for s in backend.seen if marker in last_user_message(s.body)],
            )
        finally:
            _stop(process)


@pytest.fixture
def proxy(litellm_proxy, monkeypatch):
    """The session's proxy, with ``$OPENAI_API_KEY`` set to its key for the command line."""
    monkeypatch.setenv("OPENAI_API_KEY", litellm_proxy.key)
    return litellm_proxy
