"""The CodeExecution evaluator: pass@k of generated code against a row's tests, in the sandbox."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any, TypedDict

from .passk import pass_at_k
from .pool import SandboxPool, missing_layers, pack_tests
from .programs import Problem, problem_of, program_for
from .verdict import SampleResult


def _positive_ints(k: int | Iterable[int]) -> tuple[int, ...]:
    values = (k,) if isinstance(k, int) else tuple(k)
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values):
        raise ValueError(f"CodeExecution: k must be a positive integer or a list of them, got {k!r}")
    return tuple(sorted(set(values)))


def _responses(processed: Mapping[str, Any]) -> list[str]:
    if "responses" in processed:
        responses = processed["responses"]
        where = "processed['responses']"
        if isinstance(responses, str) or not isinstance(responses, (list, tuple)):
            raise ValueError(
                f"CodeExecution: {where} must be a list of strings, got {type(responses).__name__}"
            )
        if not responses:
            raise ValueError(f"CodeExecution: {where} is empty")
    else:
        responses = [processed.get("response")]
        where = "processed['response']"
    for i, response in enumerate(responses):
        if response is not None and not isinstance(response, str):
            raise ValueError(f"CodeExecution: {where}[{i}] must be a string, got {type(response).__name__}")
    return [r or "" for r in responses]


class Arguments(TypedDict):
    """CodeExecution's arguments as given: what it pickles as, and (less ``workers``) its cache key."""

    timeout: float
    k: int | Iterable[int]
    workers: int | None
    memory_mb: int
    calibrate: bool
    calibration_factor: float
    min_timeout: float
    disable: tuple[str, ...]


class SandboxError(RuntimeError):
    """A sample got no verdict through no fault of its own (the server died, the tests do not
    compile, another sample filled the shared file system): the row is an error, not a 0."""


class CodeExecution:
    """Runs generated code against the row's tests; ``pass_at_1`` is 1.0 when all of them pass.

    ``processed["response"]`` is one sample; ``processed["responses"]`` (a list) is ``n`` samples
    of the same problem, scored as the unbiased pass@k for every ``k`` in ``k`` that is at most
    ``n`` (fields ``pass_at_<k>``).  Each sample runs in a fresh sandboxed process (see
    ``docs/code.md``); ``workers`` of them at once (default: the CPUs available).  ``timeout``
    is wall-clock seconds per sample.  With ``calibrate``, a row that carries its reference
    solution (``canonical_solution``, MBPP's ``code``) gets ``calibration_factor`` times the
    reference's run time instead, at least ``min_timeout`` and at most ``timeout``.  ``disable``
    turns sandbox layers off by name (``netns``, ``mountns``, ``landlock``, ``seccomp``,
    ``unprivileged``).

    ``score`` is thread-safe and ``ascore`` awaits without blocking, so a runner's workers run
    samples in parallel through one warm sandbox server.
    """

    name = "CodeExecution"

    def __init__(
        self,
        timeout: float = 10.0,
        *,
        k: int | Iterable[int] = (1,),
        workers: int | None = None,
        memory_mb: int = 1024,
        calibrate: bool = False,
        calibration_factor: float = 10.0,
        min_timeout: float = 1.0,
        disable: Iterable[str] = (),
    ) -> None:
        for label, value in (
            ("timeout", timeout),
            ("calibration_factor", calibration_factor),
            ("min_timeout", min_timeout),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(
                    f"CodeExecution: {label} must be a positive number of seconds, got {value!r}"
                )
        if not isinstance(memory_mb, int) or memory_mb < 64:
            raise ValueError(f"CodeExecution: memory_mb must be an integer of at least 64, got {memory_mb!r}")
        self._config = Arguments(
            timeout=timeout,
            k=k,
            workers=workers,
            memory_mb=memory_mb,
            calibrate=calibrate,
            calibration_factor=calibration_factor,
            min_timeout=min_timeout,
            disable=tuple(disable),
        )
        self.timeout = float(timeout)
        self.k = _positive_ints(k)
        self.memory_mb = memory_mb
        self.calibrate = calibrate
        self.calibration_factor = float(calibration_factor)
        self.min_timeout = float(min_timeout)
        self.pool = SandboxPool(workers, self._config["disable"])
        self._references: dict[tuple[str, str], Future[SampleResult]] = {}
        self._references_lock = threading.Lock()

    def __reduce__(self) -> tuple[Callable[[Arguments], CodeExecution], tuple[Arguments]]:
        """Pickled as its configuration: an executor elsewhere starts its own sandbox server."""
        return (_rebuild, (self._config,))

    def config(self) -> dict[str, Any]:
        """What decides a verdict, for the run cache's key: the worker count does not."""
        return {key: value for key, value in self._config.items() if key != "workers"}

    def __repr__(self) -> str:
        return f"CodeExecution(timeout={self.timeout}, k={list(self.k)}, workers={self.pool.workers})"

    @property
    def layers(self) -> dict[str, str]:
        """The sandbox layers in force, each ``on ...`` or ``off: reason``."""
        return self.pool.layers

    def notices(self) -> list[str]:
        """What a run's summary says about this evaluator: the sandbox layers that are off here (the
        warning is printed once per process; a long run's report must say it too).  Asked of the
        run's own copy, which may not have scored a row itself (an executor's workers did), so it
        starts the sandbox server to ask when it has none."""
        message = missing_layers(self.pool.layers)
        return [message] if message else []

    # -- scoring -----------------------------------------------------------------------------

    def score(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        results = self.check(original, processed)
        return self._scores(results) if results is not None else {}

    async def ascore(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> dict[str, float]:
        problem = problem_of(original)
        if problem is None:
            return {}
        programs = self._programs(problem, _responses(processed))
        if not self.pool.started:  # the server boots in a thread while other rows prepare
            await asyncio.to_thread(self.pool.start)
        timeout = self.timeout
        reference = self._reference(problem)
        if reference is not None:
            timeout = self._calibrated(await asyncio.wrap_future(reference))
        pending = self._submit(problem, programs, timeout)
        results = [r if isinstance(r, SampleResult) else await asyncio.wrap_future(r) for r in pending]
        return self._scores(results)

    def check(self, original: Mapping[str, Any], processed: Mapping[str, Any]) -> list[SampleResult] | None:
        """Every sample's outcome (None when the row has no tests this evaluator understands)."""
        problem = problem_of(original)
        if problem is None:
            return None
        programs = self._programs(problem, _responses(processed))
        reference = self._reference(problem)
        timeout = self.timeout if reference is None else self._calibrated(reference.result())
        return [
            r if isinstance(r, SampleResult) else r.result() for r in self._submit(problem, programs, timeout)
        ]

    def close(self) -> None:
        """Stop the sandbox server (it also stops when the evaluator is collected)."""
        self.pool.close()

    # -- internals ---------------------------------------------------------------------------

    @staticmethod
    def _programs(problem: Problem, responses: list[str]) -> list[str | None]:
        """Each response's program (None: no valid Python in it); also compiles the tests once."""
        try:
            pack_tests(problem.tests)  # cached: the work happens here, before the server is needed
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # broken tests: submitting reports them as a sandbox error
        return [program_for(problem, response) for response in responses]

    def _submit(
        self, problem: Problem, programs: list[str | None], timeout: float
    ) -> list[SampleResult | Future[SampleResult]]:
        return [
            SampleResult("failed", "SyntaxError: no reading of the response is valid Python")
            if program is None
            else self.pool.submit(program, problem.tests, timeout, self.memory_mb)
            for program in programs
        ]

    def _reference(self, problem: Problem) -> Future[SampleResult] | None:
        """The reference solution's run, started once per problem when calibrating."""
        if not self.calibrate or problem.reference is None:
            return None
        key = (problem.reference, problem.tests)
        with self._references_lock:
            future = self._references.get(key)
            if future is None:
                future = self.pool.submit(problem.reference, problem.tests, self.timeout, self.memory_mb)
                self._references[key] = future
        return future

    def _calibrated(self, reference: SampleResult) -> float:
        if not reference.passed or reference.elapsed is None:
            return self.timeout
        return min(self.timeout, max(self.min_timeout, self.calibration_factor * reference.elapsed))

    def _scores(self, results: list[SampleResult]) -> dict[str, float]:
        n, c = len(results), sum(r.passed for r in results)
        scores = {f"pass_at_{k}": pass_at_k(n, c, k) for k in sorted({1, *self.k}) if k <= n}
        errors = [r.detail for r in results if r.status == "error"]
        if errors:  # no verdict on those samples: a pass@k over the others would be wrong too
            raise SandboxError(f"sandbox_error: {errors[0]} ({len(errors)} of {n} samples)")
        return scores


def _rebuild(config: Arguments) -> CodeExecution:
    return CodeExecution(**config)
