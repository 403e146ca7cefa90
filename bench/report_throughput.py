"""Writing the HTML report of a 100,000-row run against writing its JSON report.

Two systems answer 50,000 QA rows each (a context of a few hundred characters, a question, a
reference, a response, tokens, latency, two score fields; one row in 50 errored, one in 40 with a
judge failure, one in 100 with a long response).  Both reports are rendered from the same
summarized result, best of ``--repeat`` runs, in this interpreter; CPU time is the figure a busy
machine distorts least (wall time is printed too).  Goal: the HTML report takes at most 2x the
JSON report's time, and its size grows linearly (the bytes per row are printed; each text a row
carries is cut at ``html_rows.TEXT_LIMIT`` characters, so a row's cost is bounded).  Then, when
Debian's chromium is installed, the page is opened in it and the wait for its script, a filter and
a sort over every row are timed.

Then the paged report of a bigger run (``--paged-rows``, default 1,000,000): its rows written as
the CLI writes them past ``--html-inline-rows`` (one line each to the rows file, the page holding
none), beside the JSONL report of the same rows, CPU time and bytes of each; then the page served
over loopback HTTP to headless Chromium, timed until every row is read and indexed, then a filter,
a sort and a row's detail (read from its line), with the browser's JavaScript heap.

    python bench/report_throughput.py [--rows 100000] [--repeat 3] [--paged-rows 1000000]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import random
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from context_bench import EvalResult, EvalRow, RowError
from context_bench._summary import Summarizer
from context_bench.reports import _html_rows as html_rows
from context_bench.reports import render

WORDS = "the a of city river paris london capital answer model context memory token north south".split()
GOAL = 2.0
#: What a reader does first, timed in the page: keep the rows with errors, then sort by a score;
#: gives the milliseconds of each.
FILTER_AND_SORT = (
    "(() => { const t = performance.now();"
    " const box = document.getElementById('cb-errors'); box.value = '1';"
    " box.dispatchEvent(new Event('change'));"
    " const f = performance.now();"
    " document.querySelector('#cb-table th[data-column=\"4\"]').click();"
    " return [f - t, performance.now() - f]; })()"
)


def make_result(count: int) -> EvalResult:
    rows = list(make_rows(count))
    return EvalResult(rows=rows, summary=Summarizer()(rows), metadata={"command": "bench"})


def make_rows(count: int) -> Iterator[EvalRow]:
    rng = random.Random(7)
    systems = ("baseline", "compressed")
    index = 0
    for s, system in enumerate(systems):
        for i in range(count // len(systems)):
            answer = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
            response = " ".join(rng.choices(WORDS, k=rng.randint(3, 12 if i % 100 else 600)))
            row = EvalRow(
                system,
                "qa",
                f"q{i}",
                scores={"f1": rng.random(), "exact_match": float(rng.random() < 0.5)},
                response=response,
                latency=rng.uniform(0.1, 2.0),
                input_tokens=float(rng.randint(100, 400) // (1 + s)),
                output_tokens=float(rng.randint(3, 20)),
                index=index,
            )
            index += 1
            row.example = {
                "id": f"q{i}",
                "context": " ".join(rng.choices(WORDS, k=60)),
                "question": f"question {i}?",
                "answer": answer,
            }
            if i % 50 == 7:
                row.errors = [RowError("system", system, "ReadTimeout", "timed out after 60 s")]
                row.scores = {}
            elif i % 40 == 3:
                row.failures = {"judge": "parse_error: no verdict in the reply"}
            yield row


def best(result: EvalResult, fmt: str, repeat: int) -> tuple[float, float, int]:
    """The least CPU and wall time of ``repeat`` renderings, and the report's size in bytes."""
    cpu, wall, size = [], [], 0
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        text = render(result, fmt)
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start)
        size = len(text.encode("utf-8"))
        del text
    return min(cpu), min(wall), size


def in_chromium(result: EvalResult) -> None:
    """Open the 100,000-row report in headless Chromium (tests/browser.py) and time the page until
    its script is ready, then a filter and a sort over every row: what a reader waits for."""
    browser = _browser()
    if browser.missing():
        print(f"chromium: skipped ({browser.missing()})")
        return
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "report.html"
        page.write_text(render(result, "html"), encoding="utf-8")
        with browser.Browser() as driver:
            start = time.perf_counter()
            driver.open(page)
            loaded = time.perf_counter() - start
            took = driver.run(FILTER_AND_SORT)
            shown = driver.run("document.getElementById('cb-info').textContent")
            print(f"chromium: page loaded and its script ready in {loaded:.2f} s")
            print(f"chromium: filter {took[0]:.0f} ms, sort {took[1]:.0f} ms ({shown.strip()})")
            print(f"chromium: script errors: {driver.errors or 'none'}")


def _browser():
    spec = importlib.util.spec_from_file_location(
        "browser", Path(__file__).parents[1] / "tests" / "browser.py"
    )
    browser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(browser)
    return browser


def paged(count: int, browse: bool) -> None:
    """The rows of a ``count``-row run to a rows file beside a page without them, against the JSONL
    report of the same rows; then the page over loopback HTTP in Chromium."""
    from context_bench.reports import _html as html
    from context_bench.reports import _jsonl as jsonl

    # the page's summary and audit come from the first 2,000 rows: what is timed here is the rows
    head = list(make_rows(2000))
    summary = EvalResult(rows=[], summary=Summarizer()(head), metadata={"command": "bench"})
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        encoder = html_rows.RowEncoder()
        timed = {}
        for name, encode, target in (
            ("html rows file", encoder, where / "report.rows.jsonl"),
            ("jsonl report", lambda row: jsonl.encode_compact(jsonl.line(row)), where / "report.jsonl"),
        ):
            gc.collect()
            start = time.process_time()
            with target.open("w", encoding="utf-8") as handle:
                for row in make_rows(count):
                    handle.write(encode(row) + "\n")
            timed[name] = (time.process_time() - start, target.stat().st_size)
        start = time.process_time()
        with (where / "report.html").open("w", encoding="utf-8") as handle:
            html.write(summary, handle, encoder, rows_file="report.rows.jsonl")
        page_cpu, page_size = time.process_time() - start, (where / "report.html").stat().st_size
        # the generator's own cost, to take off both
        start = time.process_time()
        for _ in make_rows(count):
            pass
        made = time.process_time() - start
        print(f"\npaged: {count:,} rows (making them: {made:.1f} s CPU, taken off below)")
        for name, (cpu, size) in timed.items():
            per = size / count
            print(f"paged: {name}: {cpu - made:.1f} s CPU, {size / 1e6:.0f} MB ({per:.0f} bytes per row)")
        ratio = (timed["html rows file"][0] - made) / (timed["jsonl report"][0] - made)
        print(f"paged: the page: {page_cpu:.2f} s CPU, {page_size / 1e3:.0f} kB")
        print(f"paged: rows file / JSONL report CPU time: {ratio:.2f}x")
        if not browse:
            return
        browser = _browser()
        if browser.missing():
            print(f"chromium: skipped ({browser.missing()})")
            return
        import functools
        import http.server
        import threading

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with browser.Browser() as driver:
                start = time.perf_counter()
                driver.open(f"http://127.0.0.1:{server.server_address[1]}/report.html")
                ready = time.perf_counter() - start
                driver.wait_for("document.body.dataset.rows", timeout=600)
                loaded = time.perf_counter() - start
                took = driver.run(FILTER_AND_SORT)
                start = time.perf_counter()
                driver.run("document.querySelector('#cb-body tr').click()")
                driver.wait_for("document.getElementById('cb-detail').dataset.row")
                detail = time.perf_counter() - start
                heap = driver.send("Runtime.getHeapUsage")
                shown = driver.run("document.getElementById('cb-info').textContent").strip()
                state = driver.run("document.body.dataset.rows")
                print(f"chromium (paged): page ready in {ready:.2f} s, {state} every row in {loaded:.1f} s")
                print(f"chromium (paged): filter {took[0]:.0f} ms, sort {took[1]:.0f} ms ({shown})")
                print(f"chromium (paged): a row's detail, read from its line, in {detail * 1000:.0f} ms")
                print(f"chromium (paged): JavaScript heap {heap['usedSize'] / 1e6:.0f} MB used")
                print(f"chromium (paged): script errors: {driver.errors or 'none'}")
        finally:
            server.shutdown()
            server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true", help="skip the page load in headless Chromium")
    parser.add_argument(
        "--paged-rows", type=int, default=1_000_000, help="rows of the paged report (0: skip)"
    )
    args = parser.parse_args()
    result = make_result(args.rows)
    rows = len(result.rows)
    json_cpu, json_wall, json_size = best(result, "json", args.repeat)
    html_cpu, html_wall, html_size = best(result, "html", args.repeat)
    small = make_result(args.rows // 10)
    small_size = best(small, "html", 1)[2]
    ratio = html_cpu / json_cpu
    print(f"rows: {rows}")
    for name, cpu, wall, size in (
        ("json", json_cpu, json_wall, json_size),
        ("html", html_cpu, html_wall, html_size),
    ):
        per = size / rows
        print(
            f"{name} report: {cpu:.2f} s CPU ({wall:.2f} s wall), "
            f"{size / 1e6:.1f} MB ({per:.0f} bytes per row)"
        )
    per_row = (html_size - small_size) / (rows - len(small.rows))
    print(f"html bytes per added row (from {len(small.rows)} to {rows} rows): {per_row:.0f}")
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    print(
        f"html / json CPU time: {ratio:.2f}x, wall {html_wall / json_wall:.2f}x "
        f"(goal: at most {GOAL:.0f}x) {verdict}"
    )
    if not args.no_browser:
        in_chromium(result)
    if args.paged_rows:
        paged(args.paged_rows, not args.no_browser)


if __name__ == "__main__":
    main()
