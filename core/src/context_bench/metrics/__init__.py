"""Metrics over rows; ``context_bench.metrics.quality`` holds the token-overlap functions and
``context_bench.metrics.interval`` the confidence interval of a mean."""

from .aggregate import CostOfPass, Latency, MeanScore, PassRate, percentile
from .interval import Interval, mean_interval

__all__ = ["CostOfPass", "Interval", "Latency", "MeanScore", "PassRate", "mean_interval", "percentile"]
