"""``--by FIELD[:BINS]`` (repeatable): each group's figures and comparisons per part of its rows
(:mod:`context_bench._by`)."""

from __future__ import annotations

import argparse


def add_by_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="FIELD[:BINS]",
        help="every figure and comparison again per value of the rows' FIELD (--by difficulty), or "
        "per numeric bin, LOW <= value < HIGH (--by length:0-4000,4000-8000,8000-) (repeatable)",
    )
