"""Entry point of cbench-ray: the ``ray`` executor and its flags.  Importing it imports no Ray."""

from __future__ import annotations

from collections.abc import Callable

from context_bench import ExecutorSpec, hookimpl
from context_bench.bounds import flag_type
from context_bench.hookspecs import OptionGroup

CBENCH_PLUGIN_API = 1


@hookimpl
def cbench_register_executors(register: Callable[[ExecutorSpec], None]) -> None:
    register(
        ExecutorSpec(
            "ray",
            "cbench_ray.executor:RayExecutor",
            "rows in batches on Ray workers (a local Ray with this machine's CPUs, or a cluster)",
            options=("ray_address", "ray_batch_size"),
        )
    )


@hookimpl
def cbench_add_options(group: OptionGroup) -> None:
    group.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="--executor ray: the cluster to join (auto: the one running here, ray://HOST:10001: a "
        "remote one; default: start a local Ray with this machine's CPUs)",
    )
    group.add_argument(
        "--ray-batch-size",
        type=flag_type("--ray-batch-size"),
        default=None,
        metavar="N",
        help="--executor ray: rows per Ray task (default: sized from the rows' own cost, ~0.25 s a task)",
    )


@hookimpl
def cbench_plugin_info() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return {"ray": version("ray")}
    except PackageNotFoundError:
        return {"ray": "not installed"}
