"""What keeps the viewer safe to leave running: read-only unless --allow-write, a change only from
its own page (the server's token, its own origin), only its own host names answered (no DNS
rebinding), and a policy that forbids any script on its pages."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from context_bench.store import open_store


@pytest.fixture
def store(tmp_path, make_store):
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return url, make_store(url)


def test_a_read_only_viewer_offers_no_change_and_refuses_one(store, viewer_process):
    url, ids = store
    base = viewer_process(url)
    page = httpx.get(f"{base}/runs/{ids['base']}")
    assert page.status_code == 200 and 'method="post"' not in page.text
    refused = httpx.post(f"{base}/runs/{ids['base']}/delete", data={"confirm": "yes", "token": "x"})
    assert refused.status_code == 403 and "read-only" in refused.text
    with open_store(url) as opened:
        assert opened.run(ids["base"]).tags == ("v1",)


def test_every_page_forbids_scripts_and_answers_only_its_own_host_names(store, viewer_process):
    url, ids = store
    base = viewer_process(url)
    for path in (
        "/",
        f"/runs/{ids['base']}",
        "/diff",
        "/trend",
        f"/runs/{ids['base']}/report.json",
        "/runs/999",
    ):
        answer = httpx.get(base + path)
        policy = answer.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy, path
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert httpx.get(base + "/runs/999").status_code == 404
    assert httpx.get(base + "/", headers={"Host": "evil.example"}).status_code == 400
    assert httpx.get(base.replace("127.0.0.1", "localhost") + "/").status_code == 200


def test_the_report_of_a_run_downloads_as_the_export_writes_it(store, viewer_process, tmp_path):
    url, ids = store
    base = viewer_process(url)
    answer = httpx.get(f"{base}/runs/{ids['base']}/report.jsonl")
    assert answer.headers["content-disposition"] == f'attachment; filename="run-{ids["base"]}.jsonl"'
    assert [json.loads(line)["example_id"] for line in answer.text.splitlines()] == [
        f"q{n}" for n in range(10)
    ]


def test_with_allow_write_a_change_must_come_from_the_viewer_s_own_page(store, viewer_process, page):
    url, ids = store
    base = viewer_process(url, "--allow-write")
    run = ids["next"]
    page.open(f"{base}/runs/{run}")
    page.run("document.querySelector('input[name=tags]').value = 'alpha, beta'")
    page.run("[...document.querySelectorAll('button')].find(b => b.textContent == 'save tags').click()")
    page.wait_for("document.readyState == 'complete' && document.body.innerText.includes('alpha, beta')")
    with open_store(url) as opened:
        assert opened.run(run).tags == ("alpha", "beta")
    token = re.search(r'name="token" value="([^"]+)"', httpx.get(f"{base}/runs/{run}").text)[1]
    for form, headers in (
        ({"tags": "x"}, {}),  # no token
        ({"tags": "x", "token": "guessed"}, {}),
        ({"tags": "x", "token": token}, {"Origin": "http://evil.example"}),  # another site's form
    ):
        assert httpx.post(f"{base}/runs/{run}/tags", data=form, headers=headers).status_code == 403
    with open_store(url) as opened:
        assert opened.run(run).tags == ("alpha", "beta")
    page.run("document.querySelector('input[name=confirm]').checked = true")
    page.run("[...document.querySelectorAll('button')].find(b => b.textContent == 'delete').click()")
    page.wait_for("document.readyState == 'complete' && location.pathname == '/'")
    with open_store(url) as opened:
        assert run not in [info.id for info in opened.runs()]
    assert page.errors == []
