"""The viewer as a user sees it: ``context-bench view`` started as a real process on a free port,
driven in headless Chromium: the run list, a run's page and paging through a large run, two runs
side by side, the trend chart, hostile text shown as text, and no script error anywhere."""

from __future__ import annotations

from context_bench.store import store_url

#: As conftest.py records them.
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
LARGE = 5000

CELLS = "[...document.querySelectorAll('{} tr')].slice(1).map(tr => [...tr.cells].map(c => c.textContent))"


def _text(page) -> str:
    return page.run("document.body.innerText")


def test_the_run_list_shows_every_run_newest_first_with_its_verdict(page, viewer, stored):
    _, ids = stored
    page.open(viewer + "/")
    lines = page.run(CELLS.format("#runs"))
    assert [line[0] for line in lines] == [
        str(ids[n]) for n in ("unfinished", "large", "hostile", "next", "base")
    ]
    unfinished, large, hostile, _, base = lines
    assert (unfinished[2], unfinished[7]) == ("unfinished", "no summary: the run did not finish")
    assert (large[2], large[3], large[6]) == ("finished", "nightly", "5,000")
    assert large[7].startswith("compressor on qa: f1 0.500")
    assert base[7] == "compressor on qa: f1 0.900 [0.60, 0.98], 10 rows" and base[8] == "a" * 10 + " (main)"
    assert hostile[3] == HOSTILE  # a tag of markup, shown as its text
    page.open(viewer + "/?tag=v2")
    assert [line[0] for line in page.run(CELLS.format("#runs"))] == [str(ids["next"])]
    assert page.errors == []


def test_a_run_page_shows_the_report_and_pages_through_a_large_run(page, viewer, stored):
    _, ids = stored
    page.open(f"{viewer}/runs/{ids['large']}")
    titles = page.run("[...document.querySelectorAll('h2')].map(e => e.textContent)")
    assert (
        "Charts per data set" in titles and "Rows" in titles
    )  # the HTML report's charts and tables, then the rows
    # its rows report no tokens or latency: the chart of the means with their intervals alone
    assert page.run("[...document.querySelectorAll('#summary svg > title')].map(t => t.textContent)") == [
        "qa: means with 95% intervals"
    ]
    assert "No rows." not in _text(page)
    pager = "document.querySelector('#rows .pager span').textContent"
    first_id = "document.querySelector('#rows tr:nth-child(2) td:nth-child(4)').textContent"
    assert page.run(pager) == f"1–50 of {LARGE:,}"
    assert page.run("document.querySelectorAll('#rows tr').length") == 51
    assert page.run(first_id) == "q0"
    page.run("[...document.querySelectorAll('#rows .pager a')].find(a => a.textContent == 'next').click()")
    page.wait_for(f"document.readyState == 'complete' && {pager} == '51–100 of {LARGE:,}'")
    assert page.run(first_id) == "q50"
    page.run("[...document.querySelectorAll('#rows .pager a')].find(a => a.textContent == 'last').click()")
    page.wait_for(f"document.readyState == 'complete' && {pager} == '4,951–5,000 of {LARGE:,}'")
    assert page.run(first_id) == "q4950"
    page.run("document.querySelector('#rows input[name=q]').value = 'NEEDLE'")
    page.run("document.querySelector('#rows form').submit()")
    page.wait_for(f"document.readyState == 'complete' && {pager} == '1–50 of 50'")
    responses = page.run(CELLS.format("#rows table"))
    assert [line[3] for line in responses[:3]] == ["q7", "q107", "q207"]
    assert all(line[-1].endswith("needle") for line in responses)
    assert page.errors == []


def test_an_example_page_shows_each_system_s_row_of_it(page, viewer, stored):
    _, ids = stored
    page.open(f"{viewer}/runs/{ids['base']}")
    page.run("document.querySelector('#rows a[href*=example]').click()")
    page.wait_for("document.readyState == 'complete' && location.pathname.endsWith('/example')")
    assert page.run("document.querySelector('h1').textContent") == f"Run {ids['base']}: q0 of qa"
    assert "row number 0" in _text(page)
    assert page.errors == []


def test_two_runs_side_by_side_list_the_regressed_and_improved_rows_with_paired_statistics(
    page, viewer, stored
):
    _, ids = stored
    base, after = ids["base"], ids["next"]
    page.open(f"{viewer}/diff?a={base}&b={after}")
    said = page.run("[...document.querySelectorAll('#statistics p')].map(p => p.textContent)")
    assert said[0] == "10 rows in both: 3 regressed, 1 improved, 6 unchanged in f1."
    # 3 lost and 1 gained: McNemar's exact p = 2 (C(4,0) + C(4,1)) / 2^4 = 0.625; mean (-3 + 1) / 10
    assert said[1].startswith(f"Run {after} (compressor) minus run {base} (compressor): mean change -0.200, ")
    assert said[1].endswith("p = 0.625 (McNemar's exact test, n = 10).")
    lines = page.run(CELLS.format("#pairs"))
    assert [(line[0], line[1], line[2], line[3]) for line in lines] == [
        (f"q{n}", "1.000", "0.000", "-1.000") for n in range(3)
    ]
    page.open(f"{viewer}/diff?a={base}&b={after}&show=improved")
    assert [line[:4] for line in page.run(CELLS.format("#pairs"))] == [["q9", "0.000", "1.000", "+1.000"]]
    assert page.errors == []


def test_the_trend_chart_marks_intervals_tags_and_commits(page, viewer, stored):
    _, ids = stored
    page.open(f"{viewer}/trend?system=compressor&dataset=qa&field=f1")
    points = page.run(CELLS.format("#points"))
    assert [(line[0], line[2], line[5]) for line in points] == [
        (str(ids["base"]), "0.900", "v1"),
        (str(ids["next"]), "0.700", "v2"),
        (str(ids["large"]), "0.500", "nightly"),
    ]
    chart = "document.querySelector('#trend')"
    assert page.run(f"{chart}.querySelectorAll('circle.point').length") == 3
    assert page.run(f"{chart}.querySelectorAll('line.ci').length") == 3
    assert page.run(f"[...{chart}.querySelectorAll('text.tag')].map(t => t.textContent)") == [
        "v1",
        "v2",
        "nightly",
    ]
    # a dashed line where the commit changes: at the second run (a -> b) and the third (b -> c)
    assert page.run(f"[...{chart}.querySelectorAll('g.commit text')].map(t => t.textContent)") == [
        "bbbbbbb",
        "ccccccc",
    ]
    assert page.errors == []


def test_hostile_text_in_rows_and_names_is_shown_as_text(page, viewer, stored):
    _, ids = stored
    hostile = ids["hostile"]
    for path in (
        "/",
        f"/runs/{hostile}",
        f"/runs/{hostile}/example?dataset={HOSTILE}&id={HOSTILE}",
        f"/diff?a={hostile}&b={hostile}",
        f"/trend?system={HOSTILE}&dataset={HOSTILE}&field=f1",
    ):
        page.open(viewer + path.replace("#", "%23").replace("&id=<", "&id=%3C"))
        assert page.run("window.__pwned === undefined"), path
        assert page.run("document.querySelectorAll('script, img, iframe').length") == 0, path
        assert HOSTILE in _text(page), path
    assert page.errors == []


def test_the_viewer_serves_a_postgresql_store(postgres_server, make_store, viewer_process):
    import httpx

    url = postgres_server.database()
    ids = make_store(url)
    base = viewer_process(url)
    found = httpx.get(base + "/")
    assert found.status_code == 200
    assert f'href="/runs/{ids["large"]}"' in found.text
    rows = httpx.get(f"{base}/runs/{ids['large']}", params={"q": "needle"})
    assert "1–50 of 50" in rows.text
    shown = store_url(url).shown
    assert "pg-Secret" not in shown and ":***@" in shown
