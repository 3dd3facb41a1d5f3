"""Model-vs-vehicle comparison measures of Nielsen et al. 2018 section 4.2: per-axis RMSE, the dynamic
time warping distance (robust to the time delay the paper observed between simulation and
measurement: the mean Euclidean distance along the optimal warping path, Fig. 14/17, within
the validation's warp band ``dtw.WARP_BAND``) and Pearson's R (Fig. 15)."""

from __future__ import annotations

import numpy as np

from .dtw import WARP_BAND, band_samples, dtw_distance


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]) or np.std(a) == 0.0 or np.std(b) == 0.0:
        return float("nan")  # R is undefined for a constant series
    return float(np.corrcoef(a, b)[0, 1])  # numpy's: scipy.stats costs 70 MB of imports per replay


DTW_SAMPLES = 1000  # longer series are resampled for DTW (its cost grows with length x band)


def compare(t: np.ndarray, predicted: np.ndarray, measured: np.ndarray) -> dict[str, dict[str, float]]:
    """Table of measures for position x, y, z, heading, speed and yaw rate (odometry rows).
    DTW runs on at most ``DTW_SAMPLES`` evenly spaced samples within the validation's warp band
    (``dtw.WARP_BAND`` seconds, at least one sample)."""
    from transforms3d.euler import quat2euler

    def series(rows):
        yaw = np.unwrap([quat2euler(r[3:7], axes="sxyz")[2] for r in rows])
        return {
            "x": rows[:, 0], "y": rows[:, 1], "z": rows[:, 2], "heading": yaw,
            "speed": np.linalg.norm(rows[:, 7:10], axis=1), "yaw_rate": rows[:, 12],
        }  # fmt: skip

    p, m = series(np.asarray(predicted)), series(np.asarray(measured))
    pick = np.unique(np.linspace(0, len(p["x"]) - 1, min(len(p["x"]), DTW_SAMPLES)).astype(int))
    t = np.asarray(t, dtype=float)
    span = float(t[pick[-1]] - t[pick[0]]) if len(pick) > 1 else 0.0
    band = band_samples(WARP_BAND, span / (len(pick) - 1)) if span > 0.0 else 0
    table = {}
    for key in p:
        table[key] = {
            "rmse": rmse(p[key], m[key]),
            "dtw": dtw_distance(p[key][pick], m[key][pick], window=band),
            "pearson_r": pearson(p[key], m[key]),
        }
    return table
