"""A small timeit-style harness: calibrated loops, interleaved repeats, best and median."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["OpTiming", "loop_overhead", "time_ops"]


@dataclass(frozen=True, slots=True)
class OpTiming:
    """Seconds per operation of one contender.

    Attributes:
        loops: operations per sample.
        samples: seconds per operation of each repeat.
    """

    loops: int
    samples: list[float]

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def as_json(self) -> dict[str, Any]:
        return {
            "loops": self.loops,
            "repeats": len(self.samples),
            "best_s": self.best,
            "median_s": self.median,
            "samples_s": self.samples,
        }


def _run(op: Callable[[], object], loops: int) -> float:
    rng = range(loops)
    start = time.perf_counter()
    for _ in rng:
        op()
    return time.perf_counter() - start


def _calibrate(op: Callable[[], object], sample_s: float) -> int:
    """Loops needed for one sample to take about ``sample_s`` seconds."""
    loops = 1
    while True:
        elapsed = _run(op, loops)
        if elapsed >= min(0.02, sample_s / 2) or loops >= 1 << 24:
            return max(1, round(loops * sample_s / max(elapsed, 1e-9)))
        loops *= 4


def time_ops(
    ops: Mapping[str, Callable[[], object]], *, sample_s: float, repeats: int
) -> dict[str, OpTiming]:
    """Time every op: calibrate each, then take ``repeats`` samples round-robin (so that a
    slow moment of the machine is spread over all contenders, not pinned on one).

    The garbage collector stays enabled, as in a running server.
    """
    loops = {name: _calibrate(op, sample_s) for name, op in ops.items()}
    samples: dict[str, list[float]] = {name: [] for name in ops}
    for _ in range(repeats):
        for name, op in ops.items():
            samples[name].append(_run(op, loops[name]) / loops[name])
    return {name: OpTiming(loops[name], samples[name]) for name in ops}


def _noop() -> None:
    return None


def loop_overhead(sample_s: float, repeats: int) -> float:
    """Seconds per op the harness itself costs (calling an empty function), best of repeats."""
    return time_ops({"noop": _noop}, sample_s=sample_s, repeats=repeats)["noop"].best
