"""Model-vs-vehicle comparison measures of Nielsen et al. 2018 section 4.2: per-axis RMSE, the dynamic
time warping distance (robust to the time delay the paper observed between simulation and
measurement: the mean Euclidean distance along the optimal warping path, Fig. 14/17) and
Pearson's R (Fig. 15)."""

from __future__ import annotations

import numpy as np
from numba import njit


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


def dtw_distance(a: np.ndarray, b: np.ndarray, window: int | None = None) -> float:
    """Mean point distance along the optimal DTW alignment of two sequences (n x d, m x d),
    with an optional Sakoe-Chiba band of half-width ``window`` samples. Ties prefer the
    diagonal step, then the step from the previous row."""
    a = np.ascontiguousarray(np.asarray(a, dtype=float).reshape(len(a), -1))
    b = np.ascontiguousarray(np.asarray(b, dtype=float).reshape(len(b), -1))
    n, m = len(a), len(b)
    w = max(n, m) if window is None else max(window, abs(n - m))
    return float(_dtw(a, b, w))


@njit(cache=True)
def _dtw(a, b, w):
    """The DTW recursion (compiled: its loop over the band is the cost of ``compare``), on two
    rolling rows of the cost and step-count tables: memory O(m), not O(n m)."""
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


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]) or np.std(a) == 0.0 or np.std(b) == 0.0:
        return float("nan")  # R is undefined for a constant series
    return float(np.corrcoef(a, b)[0, 1])  # numpy's: scipy.stats costs 70 MB of imports per replay


DTW_SAMPLES = 1000  # longer series are resampled for DTW (its cost grows with length x band)


def compare(t: np.ndarray, predicted: np.ndarray, measured: np.ndarray) -> dict[str, dict[str, float]]:
    """Table of measures for position x, y, z, heading, speed and yaw rate (odometry rows).
    DTW runs on at most ``DTW_SAMPLES`` evenly spaced samples with a band of 5 % of them."""
    from transforms3d.euler import quat2euler

    def series(rows):
        yaw = np.unwrap([quat2euler(r[3:7], axes="sxyz")[2] for r in rows])
        return {
            "x": rows[:, 0], "y": rows[:, 1], "z": rows[:, 2], "heading": yaw,
            "speed": np.linalg.norm(rows[:, 7:10], axis=1), "yaw_rate": rows[:, 12],
        }  # fmt: skip

    p, m = series(np.asarray(predicted)), series(np.asarray(measured))
    pick = np.unique(np.linspace(0, len(p["x"]) - 1, min(len(p["x"]), DTW_SAMPLES)).astype(int))
    band = max(5, len(pick) // 20)
    table = {}
    for key in p:
        table[key] = {
            "rmse": rmse(p[key], m[key]),
            "dtw": dtw_distance(p[key][pick], m[key][pick], window=band),
            "pearson_r": pearson(p[key], m[key]),
        }
    return table
