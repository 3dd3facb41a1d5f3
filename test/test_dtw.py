"""The validation's DTW (``uvms_sim.replay.dtw``) against a brute-force reference and cases
whose answer is known: a warp within the Sakoe-Chiba band costs nothing, one beyond it does,
and the band is never crossed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from uvms_sim.replay.dtw import WARP_BAND, band_samples, dtw_distance


def brute_force(a: np.ndarray, b: np.ndarray, window: int | None) -> float:
    """The least mean point distance over every monotone, continuous path from (0, 0) to
    (n-1, m-1) inside the band, enumerated path by path (small n and m only); among equal
    costs the path that the recursion's tie rule takes cannot be told apart by enumeration,
    so ties are avoided by random data."""
    a, b = a.reshape(len(a), -1), b.reshape(len(b), -1)
    n, m = len(a), len(b)
    w = max(n, m) if window is None else max(window, abs(n - m))
    d = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)
    best = (np.inf, 1)

    def walk(i: int, j: int, total: float, length: int) -> None:
        nonlocal best
        if abs(i - j) > w:
            return
        total, length = total + d[i, j], length + 1
        if (i, j) == (n - 1, m - 1):
            # the recursion minimises the summed cost, then divides by that path's length
            if total < best[0] - 1e-12:
                best = (total, length)
            return
        for di, dj in ((1, 1), (1, 0), (0, 1)):
            if i + di < n and j + dj < m:
                walk(i + di, j + dj, total, length)

    walk(0, 0, 0.0, 0)
    return best[0] / best[1]


@pytest.mark.parametrize(("n", "m", "window"), [(6, 6, None), (7, 5, None), (7, 7, 1), (8, 6, 2), (6, 8, 0)])
def test_equals_the_brute_force_minimum_over_all_paths(n, m, window):
    """Random 1-D and 2-D sequences: the compiled recursion's value is the enumerated optimum's
    (summed cost minimal, divided by that path's point count) to rounding."""
    rng = np.random.default_rng(n * 100 + m * 10 + (window or 0))
    for dims in (1, 2):
        a, b = rng.normal(size=(n, dims)), rng.normal(size=(m, dims))
        assert dtw_distance(a, b, window) == pytest.approx(brute_force(a, b, window), rel=1e-12, abs=1e-15)


def test_a_warp_within_the_band_costs_nothing():
    """Two clocks running over one strictly increasing signal s (60 samples): one holds s's last
    value 4 samples at the end, the other its first value 4 samples at the start. Every value
    of s is met by both, the second 4 samples later: the distance is exactly 0 with a band of
    4 or more (or none), and more than 0 with a band of 3 or less, which cannot pair them."""
    s = np.sin(np.linspace(0.0, 1.5, 60)) + np.linspace(0.0, 1.0, 60)
    a = s[np.r_[np.arange(60), np.full(4, 59)]]
    b = s[np.r_[np.zeros(4, dtype=int), np.arange(60)]]
    assert len(a) == len(b) == 64
    for band in (4, 5, 20, None):
        assert dtw_distance(a, b, window=band) == 0.0, band
    for band in (0, 1, 3):
        assert dtw_distance(a, b, window=band) > 0.0, band


def test_a_delay_is_absorbed_within_the_band_and_not_beyond():
    """A ramp delayed by k samples (held at its first value meanwhile): with a band of at least
    k the alignment pairs every sample with its delayed copy, and only the last k samples of
    the ramp cost (slope x 1..k); with a band of b < k every pair (i, j) with j >= k costs at
    least (k - b) x slope, and at most 2k + b of the path's at least n points have j < k."""
    slope, k = 0.01, 8
    a = slope * np.arange(200.0)
    b = np.r_[np.zeros(k), a[:-k]]
    n = len(a)
    assert dtw_distance(a, b, window=k) <= slope * k * (k + 1) / 2 / n
    for band in (0, 2, 5):
        beyond = dtw_distance(a, b, window=band)
        assert beyond >= slope * (k - band) * (1.0 - (2 * k + band) / n), band


def test_the_band_is_respected():
    """Two series whose only cheap alignment needs a warp of 10 samples: with a band of 9 or
    less the distance is that of the best path inside the band (brute force over the banded
    table equals the recursion), and it drops to the warp's cost once the band reaches 10."""
    n = 40
    a = np.zeros(n)
    a[5] = 1.0
    b = np.zeros(n)
    b[15] = 1.0
    assert dtw_distance(a, b, window=10) == 0.0
    for band in (0, 3, 9):
        # the peak of one meets only zeros of the other inside the band: cost 2 over the path
        value = dtw_distance(a, b, window=band)
        assert value > 0.0
        assert value == pytest.approx(_banded_table(a, b, band), rel=1e-12)


def _banded_table(a: np.ndarray, b: np.ndarray, band: int) -> float:
    """The full-table recursion with the band as a mask (cells outside it infinite)."""
    n, m = len(a), len(b)
    D = np.full((n + 1, m + 1), np.inf)
    L = np.zeros((n + 1, m + 1))
    D[0, 0] = 0.0
    for i, j in itertools.product(range(1, n + 1), range(1, m + 1)):
        if abs(i - j) > max(band, abs(n - m)):
            continue
        options = [(D[i - 1, j - 1], L[i - 1, j - 1]), (D[i - 1, j], L[i - 1, j]), (D[i, j - 1], L[i, j - 1])]
        best, length = min(options, key=lambda o: o[0])
        D[i, j] = best + abs(a[i - 1] - b[j - 1])
        L[i, j] = length + 1
    return float(D[n, m] / L[n, m])


def test_band_zero_on_equal_lengths_is_the_mean_absolute_error():
    """With no warp allowed the alignment is the identity: the mean point distance."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=50), rng.normal(size=50)
    assert dtw_distance(a, b, window=0) == pytest.approx(np.mean(np.abs(a - b)), rel=1e-12)


def test_the_validation_band_in_samples_and_bad_arguments():
    """0.6 s is 6 samples at 10 Hz and 60 at 100 Hz, never less than one; empty or mismatched
    sequences and negative bands are refused."""
    assert WARP_BAND == 0.6
    assert band_samples(WARP_BAND, 0.1) == 6
    assert band_samples(WARP_BAND, 0.01) == 60
    assert band_samples(WARP_BAND, 5.0) == 1
    for bad in ((WARP_BAND, 0.0), (-1.0, 0.1), (np.nan, 0.1)):
        with pytest.raises(ValueError):
            band_samples(*bad)
    with pytest.raises(ValueError, match="empty"):
        dtw_distance(np.zeros(0), np.zeros(3))
    with pytest.raises(ValueError, match="dimensions"):
        dtw_distance(np.zeros((3, 2)), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="band"):
        dtw_distance(np.zeros(3), np.zeros(3), window=-1)
