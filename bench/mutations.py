"""The mutations bench/mutation.py plants, by area: each a realistic bug in one module of the code
that decides whether a report tells the truth, and the tests that cover that module.  Here the
areas that guard the figures (how the summary counts failures, secrets, the cache, the HTML
escapes, cbench-code's verdicts, cbench-judge's failed calls); the verdicts code (the statistics,
the gates, the comparisons, a field's direction) is in ``mutations_verdicts.py``.

A mutation is a snippet of its module (``old``, which must occur there exactly once) and what it
becomes (``new``).  When a module is rewritten, a mutation whose snippet is gone is reported as
not planted: write it anew against the new code rather than drop it.
"""

from __future__ import annotations

import attrs

CORE = "core/src/context_bench/"
CODE = "plugins/cbench-code/src/cbench_code/"
JUDGE = "plugins/cbench-judge/src/cbench_judge/"


@attrs.frozen
class Mutation:
    """``old`` (found exactly once in ``path``) replaced by ``new``: one bug, named ``name``."""

    name: str
    path: str
    old: str
    new: str


@attrs.frozen
class Area:
    """Modules and the tests that cover them (run in this order, so the quickest to fail go first)."""

    name: str
    tests: tuple[str, ...]
    mutations: tuple[Mutation, ...]


SUMMARY = CORE + "_summary.py"
HTML = CORE + "reports/_html.py"

GUARDS = (
    Area(
        "summary",
        (
            "tests/core/test_errored_rows.py",
            "tests/core/test_streaming.py",
            "tests/core/test_runner.py",
            "tests/core/test_gates.py",
        ),
        (
            Mutation("fill-failed-zero", SUMMARY, "failed = failure_values.get(field, 0.0)", "failed = 0.0"),
            Mutation(
                "soft-failure-rate-over-raised",
                SUMMARY,
                "        found.subtract(self.failure_counts.raised)\n",
                "",
            ),
            Mutation(
                "soft-failure-rate-over-run",
                SUMMARY,
                "rate=sum(c.values()) / scored[name]",
                "rate=sum(c.values()) / self._rows",
            ),
            Mutation(
                "errored-rows-weightless",
                SUMMARY,
                "weight = counts.get(field, 0.0) + missing.get(field, 0.0)",
                "weight = counts.get(field, 0.0)",
            ),
            Mutation(
                "failed-group-has-no-fields",
                SUMMARY,
                "return {key: names or tuple(by_dataset[key[1]]) for",
                "return {key: names for",
            ),
            Mutation(
                "exclude-errors-inverted",
                SUMMARY,
                "if not self.exclude_errors:\n                group.fill_failed",
                "if self.exclude_errors:\n                group.fill_failed",
            ),
            Mutation(
                "errored-rows-unmarked",
                SUMMARY,
                "            self.errored.append(len(columns))\n",
                "            pass\n",
            ),
            Mutation(
                "errored-weight-one",
                SUMMARY,
                "weights[position] = average.get(field, 1.0)",
                "weights[position] = 1.0",
            ),
            Mutation(
                "system-failure-rate-inclusive",
                SUMMARY,
                "if count / asked > limit:",
                "if count / asked >= limit:",
            ),
            Mutation(
                "gate-ignores-soft-failures",
                SUMMARY,
                "if not row.errors and not row.failures:",
                "if not row.errors:",
            ),
            Mutation(
                "gate-ignores-raising-evaluators",
                SUMMARY,
                "self.failed.update(raised.union(row.failures))",
                "self.failed.update(row.failures)",
            ),
            Mutation(
                "warning-ignores-limit",
                SUMMARY,
                "if info.rate > self.failure_rate:",
                "if info.rate > FAILURE_WARNING_RATE:",
            ),
            Mutation(
                "input-errors-not-unreadable",
                SUMMARY,
                'if any(error.stage == "input" for error in row.errors):\n                self.unreadable',
                'if any(error.stage == "system" for error in row.errors):\n                self.unreadable',
            ),
        ),
    ),
    Area(
        "secrets",
        (
            "tests/core/test_secrets.py",
            "plugins/cbench-judge/tests/test_secrets.py",
            "tests/core/test_client.py",
            "tests/core/test_runner.py",
        ),
        (
            Mutation("key-run-longer", CORE + "secrets.py", "KEY_RUN = 8", "KEY_RUN = 12"),
            Mutation(
                "short-secret-kept",
                CORE + "secrets.py",
                "spans.extend((m.start(), m.end()) for m in re.finditer(re.escape(secret), text))",
                "pass",
            ),
            Mutation(
                "last-window-missed",
                CORE + "secrets.py",
                "for start in range(len(secret) - KEY_RUN + 1):",
                "for start in range(len(secret) - KEY_RUN):",
            ),
            Mutation(
                "adjacent-masks-apart",
                CORE + "secrets.py",
                "if begin <= merged[-1][1]:",
                "if begin < merged[-1][1]:",
            ),
            Mutation(
                "url-password-kept",
                CORE + "secrets.py",
                '    text = _URL_PASSWORD.sub(rf"\\1:{MASK}@", text)\n',
                "",
            ),
            Mutation("bearer-kept", CORE + "secrets.py", '    text = _BEARER.sub(rf"\\1{MASK}", text)\n', ""),
            Mutation("hf-prefix-forgotten", CORE + "secrets.py", '|AIza|hf_"', '|AIza"'),
            Mutation(
                "password-name-forgotten",
                CORE + "secrets.py",
                "key|token|secret|passw|credential",
                "key|token|secret|credential",
            ),
            Mutation(
                "key-in-env-flag-echoed",
                CORE + "secrets.py",
                'return secret_name(name) and not (name.endswith("_env") and not looks_like_key(value))',
                'return secret_name(name) and not name.endswith("_env")',
            ),
            Mutation(
                "flag-equals-value-echoed",
                CORE + "secrets.py",
                'shown.append(f"{name}={_flag_value(name, value, depth)}")',
                "shown.append(arg)",
            ),
            Mutation("hex-key-longer", CORE + "secrets.py", "if len(value) < 16 or", "if len(value) < 24 or"),
            Mutation(
                "query-parameter-kept",
                CORE + "secrets.py",
                'f"{m[1]}={MASK}" if secret_name(m[1]) else m[0]',
                "m[0]",
            ),
            Mutation(
                "key-shaped-name-echoed",
                CORE + "secrets.py",
                "not _VARIABLE.fullmatch(name.strip()) or key_shaped(name)",
                "not _VARIABLE.fullmatch(name.strip())",
            ),
            Mutation(
                "url-password-unknown",
                CORE + "secrets.py",
                "return urlsplit(url).password or None",
                "return None",
            ),
        ),
    ),
    Area(
        "cache",
        ("tests/core/test_resume.py", "tests/core/test_rescoring.py", "tests/core/test_runner.py"),
        (
            Mutation(
                "changed-example-reused",
                CORE + "cache.py",
                "return found if found is not None and found.example_hash == example_hash else None",
                "return found",
            ),
            Mutation("scores-unchecked", CORE + "cache.py", '        and _numbers(hit["scores"])\n', ""),
            Mutation(
                "torn-line-crashes",
                CORE + "cache.py",
                "except (ValueError, RecursionError):\n                    continue",
                "except RecursionError:\n                    continue",
            ),
            Mutation(
                "torn-line-joined",
                CORE + "cache.py",
                'if existing.read(1) != b"\\n":',
                'if existing.read(1) == b"\\n":',
            ),
            Mutation(
                "later-record-replaces-scores",
                CORE + "cache.py",
                'entry.scores.update(record.get("scores") or {})',
                'entry.scores = dict(record.get("scores") or {})',
            ),
            Mutation(
                "changed-example-merged",
                CORE + "cache.py",
                "if entry is None or entry.example_hash != example_hash:",
                "if entry is None:",
            ),
            Mutation("soft-failure-cached", CORE + "_rowtask.py", "if record and not failure:", "if record:"),
        ),
    ),
    Area(
        "html",
        ("tests/core/test_reports.py", "tests/core/test_html_report.py", "tests/core/test_html_paging.py"),
        (
            Mutation("script-lt-unescaped", CORE + "reports/_html_rows.py", '    ("<", "\\\\u003c"),\n', ""),
            Mutation("cell-unescaped", HTML, 'else f"<td>{escape(text)}</td>"', 'else f"<td>{text}</td>"'),
            Mutation(
                "warnings-unescaped",
                HTML,
                '"".join(f"<li>{escape(n)}</li>" for n in notes)',
                '"".join(f"<li>{n}</li>" for n in notes)',
            ),
            Mutation(
                "run-line-unescaped",
                HTML,
                "{escape(label)}: {escape(text)}</li>",
                "{escape(label)}: {text}</li>",
            ),
            Mutation(
                "legend-unescaped", HTML, "</i>{escape(printable(s))}</span>", "</i>{printable(s)}</span>"
            ),
            Mutation(
                "response-preview-unescaped",
                HTML,
                "<summary>{escape(preview)}…</summary>",
                "<summary>{preview}…</summary>",
            ),
            Mutation(
                "chart-label-unescaped",
                CORE + "reports/_svg.py",
                "y - 7, escape(p.system), anchor=",
                "y - 7, p.system, anchor=",
            ),
            Mutation(
                "rows-file-unescaped",
                HTML,
                "all from {escape(rows_file)}, the file",
                "all from {rows_file}, the file",
            ),
        ),
    ),
    Area(
        "code",
        ("plugins/cbench-code/tests/test_verdict.py", "plugins/cbench-code/tests/test_integrity.py"),
        (
            Mutation("timeout-passes", CODE + "verdict.py", "if at >= 0 and not timed_out:", "if at >= 0:"),
            Mutation(
                "empty-token-accepted",
                CODE + "verdict.py",
                "at = output.rfind(marker) if token else -1",
                "at = output.rfind(marker)",
            ),
            Mutation(
                "program-claims-sandbox-error",
                CODE + "verdict.py",
                'if last.startswith("ERROR ") and not program_started:',
                'if last.startswith("ERROR "):',
            ),
            Mutation(
                "disk-full-always-sandbox",
                CODE + "verdict.py",
                "if disk_full and _NO_SPACE.match(detail):",
                "if _NO_SPACE.match(detail):",
            ),
            Mutation(
                "ne-probe-dropped",
                CODE + "integrity.py",
                "if value == probe or probe == value or not (value != probe):",
                "if value == probe or probe == value:",
            ),
            Mutation(
                "contains-probe-dropped",
                CODE + "integrity.py",
                'if has_attr(kind_of(value), "__contains__"):',
                "if False:",
            ),
            Mutation(
                "trusted-python-class-attributes",
                CODE + "integrity.py",
                '(over_python or (starts(name, "__") and ends(name, "__")))',
                '(starts(name, "__") and ends(name, "__"))',
            ),
            Mutation(
                "right-operand-unchecked",
                CODE + "integrity.py",
                "        node.comparators = [_guard(c) for c in node.comparators]\n",
                "",
            ),
            Mutation(
                "not-equal-unchecked",
                CODE + "integrity.py",
                "(ast.Eq, ast.NotEq, ast.Lt,",
                "(ast.Eq, ast.Lt,",
            ),
            Mutation(
                "weak-proxy-trusted",
                CODE + "integrity.py",
                "if kind is proxy or kind is callable_proxy:",
                "if kind is proxy and kind is callable_proxy:",
            ),
            Mutation(
                "returned-values-unchecked",
                CODE + "integrity.py",
                '                raise fail(f"the candidate returned {found}")\n',
                "                pass\n",
            ),
        ),
    ),
    Area(
        "judge",
        (
            "plugins/cbench-judge/tests/test_template_judges.py",
            "plugins/cbench-judge/tests/test_where_judges_run.py",
            "plugins/cbench-judge/tests/test_memory_judges.py",
            "plugins/cbench-judge/tests/test_plugin.py",
            "plugins/cbench-judge/tests/test_client.py",
        ),
        (
            Mutation(
                "panel-averages-failed-judges",
                JUDGE + "template_judge.py",
                'good = [r["judge_score"] for r in results if not r.failure]',
                'good = [r["judge_score"] for r in results]',
            ),
            Mutation(
                "panel-all-failed-passes",
                JUDGE + "template_judge.py",
                "scores[self.name] = self._aggregate(good) if good else 0.0",
                "scores[self.name] = self._aggregate(good) if good else 1.0",
            ),
            Mutation(
                "panel-failure-always-parse",
                JUDGE + "template_judge.py",
                'kind = "call_error" if any(f.startswith("call_error")',
                'kind = "parse_error" if any(f.startswith("call_error")',
            ),
            Mutation(
                "panel-usage-last-judge",
                JUDGE + "template_judge.py",
                "usage[field] = usage.get(field, 0.0) + value",
                "usage[field] = value",
            ),
            Mutation(
                "parse-error-graded-call-error",
                JUDGE + "template_judge.py",
                'if scores.failure and scores.failure.startswith("parse_error"):',
                "if False:",
            ),
            Mutation(
                "call-failure-silent",
                JUDGE + "base.py",
                "        return Scores(fallback, failure=exc.failure)\n",
                "        return Scores(fallback)\n",
            ),
            Mutation(
                "parse-failure-silent",
                JUDGE + "base.py",
                "return Scores(fallback, failure=exc.failure, usage=completion.usage)",
                "return Scores(fallback, usage=completion.usage)",
            ),
            Mutation(
                "strict-call-error-swallowed",
                JUDGE + "base.py",
                "    except JudgeError as exc:\n        if strict:\n            raise\n        return",
                "    except JudgeError as exc:\n        return",
            ),
            Mutation(
                "parse-errors-uncounted", JUDGE + "base.py", "        client.stats.parse_errors += 1\n", ""
            ),
            Mutation(
                "false-memory-fallback-zero",
                JUDGE + "memory.py",
                "read, {})",
                'read, {"false_memory": 0.0})',
            ),
            Mutation(
                "memory-judge-fallback-pass",
                JUDGE + "memory.py",
                'read, {"memory_judge": 0.0, "memory_judge_raw": 0.0}',
                'read, {"memory_judge": 1.0, "memory_judge_raw": 1.0}',
            ),
        ),
    ),
)
