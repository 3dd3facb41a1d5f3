"""Time-varying, spatially uniform, irrotational currents (world NED).

A profile gives the water velocity ``v_c(t)`` and its derivative ``a_f(t) = v̇_c(t)``; the
dynamics use both, ``v_c`` in the relative velocity (McMillan et al. 1996 eq. 9) and ``a_f`` in the fluid
acceleration force and the added-mass term (McMillan et al. 1996 eqs. 5 and 8). A profile's acceleration
is the exact derivative of its velocity, so a body that should drift with the water does so
to integrator accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spatial import Array


def _vec3(name: str, x) -> Array:
    arr = np.asarray(x, dtype=float)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be 3 finite numbers, got {x!r}")
    return arr


@dataclass(frozen=True)
class SinusoidalCurrent:
    """``v_c(t) = mean + amplitude ⊙ sin(2π t / period + phase)`` (per axis, NED, m/s)."""

    mean: Array
    amplitude: Array
    period: float
    phase: Array | float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", _vec3("mean", self.mean))
        object.__setattr__(self, "amplitude", _vec3("amplitude", self.amplitude))
        object.__setattr__(self, "phase", _vec3("phase", np.broadcast_to(self.phase, 3)))
        if not self.period > 0.0:
            raise ValueError(f"period must be > 0, got {self.period}")

    def velocity(self, t: float) -> Array:
        return self.mean + self.amplitude * np.sin(2.0 * np.pi * t / self.period + self.phase)

    def acceleration(self, t: float) -> Array:
        w = 2.0 * np.pi / self.period
        return self.amplitude * w * np.cos(w * t + self.phase)


class TabulatedCurrent:
    """A measured or scripted current: velocities at increasing times, interpolated by a
    shape-preserving C¹ cubic (PCHIP, no overshoot between samples) whose derivative is the
    fluid acceleration. Before the first and after the last sample the end values hold and
    the acceleration is zero."""

    def __init__(self, times, velocities) -> None:
        t = np.asarray(times, dtype=float)
        v = np.asarray(velocities, dtype=float)
        if t.ndim != 1 or t.size < 2:
            raise ValueError("times must be a list of at least 2 numbers")
        if v.shape != (t.size, 3):
            raise ValueError(f"velocities must be {t.size} rows of 3 numbers, got shape {v.shape}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(v))):
            raise ValueError("times and velocities must be finite")
        if np.any(np.diff(t) <= 0.0):
            raise ValueError("times must be strictly increasing")
        self.times = t
        self.velocities = v
        from scipy.interpolate import PchipInterpolator  # only where a profile is used: a heavy import

        self._v = PchipInterpolator(t, v, axis=0)
        self._a = self._v.derivative()

    def velocity(self, t: float) -> Array:
        return self._v(min(max(t, self.times[0]), self.times[-1]))

    def acceleration(self, t: float) -> Array:
        if t < self.times[0] or t > self.times[-1]:
            return np.zeros(3)
        return self._a(t)
