"""Noise processes of inertial sensors, per axis, sampled at a fixed rate (IEEE Std 952-1997
terms; El-Sheimy et al. 2008 for their Allan-variance signatures):

- white noise of density ``N`` (unit/sqrt(Hz)): each sample has standard deviation
  ``N sqrt(rate)``; its Allan deviation is ``N / sqrt(tau)``;
- bias instability ``B``: a first-order Gauss-Markov bias of correlation time ``T`` whose
  Allan deviation peaks at the floor IEEE Std 952 gives flicker noise, ``B sqrt(2 ln 2 / pi)``
  = 0.664 B (the peak of a Gauss-Markov process of standard deviation s is 0.6174 s, at
  tau = 1.89 T: ``GM_PEAK``);
- rate random walk ``K`` (unit/s/sqrt(Hz)): a random-walk bias, Allan deviation
  ``K sqrt(tau / 3)``.
"""

from __future__ import annotations

import math

import numpy as np

Array = np.ndarray
FLICKER_FLOOR = math.sqrt(2.0 * math.log(2.0) / math.pi)  # 0.664: Allan floor / bias instability
GM_PEAK = 0.617364  # max over tau of a Gauss-Markov process's Allan deviation / its std (at tau = 1.89 T)


def gauss_markov_allan(tau: Array, sigma: float, T: float) -> Array:
    """Allan deviation of a stationary first-order Gauss-Markov process (std ``sigma``,
    correlation time ``T``) at averaging times ``tau``."""
    x = np.asarray(tau, dtype=float) / T
    return sigma * np.sqrt((1.0 / x) * (2.0 - (1.0 / x) * (3.0 - 4.0 * np.exp(-x) + np.exp(-2.0 * x))))


class InertialNoise:
    """White noise + Gauss-Markov bias (instability) + random-walk bias on ``axes`` axes at
    ``rate`` Hz; ``sample()`` the error of the next reading."""

    def __init__(
        self,
        rate: float,
        density: float,
        instability: float,
        random_walk: float,
        correlation_time: float,
        rng: np.random.Generator,
        axes: int = 3,
    ) -> None:
        dt = 1.0 / rate
        self.rng = rng
        self.white = density * math.sqrt(rate)
        self.gm_sigma = instability * FLICKER_FLOOR / GM_PEAK
        self.phi = math.exp(-dt / correlation_time) if correlation_time > 0.0 else 0.0
        self.gm_step = self.gm_sigma * math.sqrt(1.0 - self.phi**2)
        self.rw_step = random_walk * math.sqrt(dt)
        self.gm = self.gm_sigma * rng.standard_normal(axes)  # from the stationary distribution
        self.rw = np.zeros(axes)
        self.axes = axes

    def sample(self) -> Array:
        xi = self.rng.standard_normal((3, self.axes))
        out = self.gm + self.rw + self.white * xi[0]
        self.gm = self.phi * self.gm + self.gm_step * xi[1]
        self.rw = self.rw + self.rw_step * xi[2]
        return out


def allan_deviation(x: Array, rate: float, taus: Array) -> Array:
    """Overlapping Allan deviation of samples ``x`` (taken at ``rate`` Hz) at averaging times
    ``taus`` (rounded to whole samples)."""
    x = np.asarray(x, dtype=float)
    theta = np.concatenate([[0.0], np.cumsum(x)]) / rate  # integral of the signal
    out = []
    for tau in taus:
        m = max(1, round(tau * rate))
        d = theta[2 * m :] - 2.0 * theta[m:-m] + theta[: -2 * m]
        out.append(math.sqrt(np.mean(d**2) / (2.0 * (m / rate) ** 2)))
    return np.array(out)
