"""Dynamic time warping: the one distance the validation reports (``windows``, ``compare``).

The distance between two sequences is the mean point distance along their optimal monotone
alignment (the measure of Nielsen et al. 2018, section 4.2, Fig. 14/17: robust to the delay
between simulation and measurement). The alignment is held within a Sakoe-Chiba band (Sakoe
and Chiba 1978, the "adjustment window" condition ``|i - j| <= r``): without a band a warp may map
a whole stretch of one series onto a single sample of the other, and a model that gets the
timing of a manoeuvre wrong by seconds still scores well. The validation's band is
``WARP_BAND`` seconds, as wide as the delays between a logged command and the measured motion
of a thruster-driven vehicle (command delay and spin-up, 0-0.4 s on the grid of
``identify``) with some slack, and no wider.
"""

from __future__ import annotations

import numpy as np
from numba import njit

WARP_BAND = 0.6  # s, the half-width of the Sakoe-Chiba band of the validation metric


def band_samples(seconds: float, dt: float) -> int:
    """The band's half-width in samples for series sampled every ``dt`` s (at least one)."""
    if not (np.isfinite(seconds) and np.isfinite(dt) and seconds >= 0.0 and dt > 0.0):
        raise ValueError(f"a warp band of {seconds} s at a sample interval of {dt} s")
    return max(1, round(seconds / dt))


def dtw_distance(a: np.ndarray, b: np.ndarray, window: int | None = None) -> float:
    """Mean point distance along the optimal DTW alignment of two sequences (n x d, m x d, or
    1-D), within a Sakoe-Chiba band of half-width ``window`` samples (None: unconstrained;
    widened to ``|n - m|`` so that the two ends can meet). The step pattern is the symmetric
    one without slope constraint: D(i, j) = d(i, j) + min(D(i-1, j-1), D(i-1, j), D(i, j-1)),
    ties preferring the diagonal step, then the step from the previous row; the path length
    counts its points."""
    if not len(a) or not len(b):
        raise ValueError("DTW of an empty sequence")
    a = np.ascontiguousarray(np.asarray(a, dtype=float).reshape(len(a), -1))
    b = np.ascontiguousarray(np.asarray(b, dtype=float).reshape(len(b), -1))
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"DTW of sequences of {a.shape[1]} and {b.shape[1]} dimensions")
    if window is not None and window < 0:
        raise ValueError(f"a warp band of {window} samples")
    n, m = len(a), len(b)
    w = max(n, m) if window is None else max(int(window), abs(n - m))
    return float(_dtw(a, b, w))


@njit(cache=True)
def _dtw(a, b, w):
    """The DTW recursion (compiled: its loop over the band is the cost of a comparison), on
    two rolling rows of the cost and step-count tables: memory O(m), not O(n m)."""
    n, m = a.shape[0], b.shape[0]
    cost, steps = np.full(m + 1, np.inf), np.zeros(m + 1)  # row i - 1
    new_cost, new_steps = np.full(m + 1, np.inf), np.zeros(m + 1)  # row i
    cost[0] = 0.0
    for i in range(1, n + 1):
        new_cost[:] = np.inf
        new_steps[:] = 0.0
        for j in range(max(1, i - w), min(m, i + w) + 1):
            d = 0.0
            for k in range(a.shape[1]):
                d += (b[j - 1, k] - a[i - 1, k]) ** 2
            d = np.sqrt(d)
            diag, up, left = cost[j - 1], cost[j], new_cost[j - 1]
            if diag <= up and diag <= left:
                best, prev = diag, steps[j - 1]
            elif up <= left:
                best, prev = up, steps[j]
            else:
                best, prev = left, new_steps[j - 1]
            new_cost[j] = best + d
            new_steps[j] = prev + 1.0
        cost, new_cost = new_cost, cost
        steps, new_steps = new_steps, steps
    return cost[m] / steps[m]
