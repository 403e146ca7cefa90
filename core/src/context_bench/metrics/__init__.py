"""Metrics over rows; ``context_bench.metrics.quality`` holds the token-overlap functions,
``context_bench.metrics.interval`` the t interval of a mean, ``intervals`` the report's interval
of a mean (Wilson, bootstrap or t), ``paired`` the paired comparison of two systems and
``agreement`` Krippendorff's alpha."""

from ._aggregate import CostOfPass, Latency, MeanScore, PassRate, percentile
from .interval import Interval, mean_interval

__all__ = ["CostOfPass", "Interval", "Latency", "MeanScore", "PassRate", "mean_interval", "percentile"]
