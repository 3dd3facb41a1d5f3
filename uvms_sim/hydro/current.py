"""Time-varying, spatially uniform, irrotational currents (world NED), within the limits of
water (``MAX_SPEED``, ``MAX_ACCELERATION``, ``MIN_PERIOD``: a ``ValueError`` beyond them).

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

# What a current can be: water flows at most this fast (the fastest tidal races run at about
# 8 m/s), changes no faster than this, and a sinusoid repeats no faster than this. Beyond them
# the fluid acceleration (which the dynamics integrate as a force) overflows or aliases the
# integrator's steps, so they are refused where the profile is made.
MAX_SPEED = 10.0  # m/s, per axis
MAX_ACCELERATION = 1000.0  # m/s^2, per axis (a sinusoid within the limits reaches 2 pi 10 / 0.1 = 628)
MIN_PERIOD = 0.1  # s


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
        if not self.period >= MIN_PERIOD:  # NaN too
            raise ValueError(
                f"period must be at least {MIN_PERIOD:g} s (a current, not a vibration), got {self.period:g}"
            )
        if not np.all(np.abs(self.mean) + np.abs(self.amplitude) <= MAX_SPEED):
            raise ValueError(f"|mean| + |amplitude| must be at most {MAX_SPEED:g} m/s on each axis, got "
                             f"{(np.abs(self.mean) + np.abs(self.amplitude)).tolist()}")  # fmt: skip

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
        if not np.all(np.abs(v) <= MAX_SPEED):
            raise ValueError(f"velocities must be within +-{MAX_SPEED:g} m/s")
        slope = np.abs(np.diff(v, axis=0)) / np.diff(t)[:, None]
        if not np.all(slope <= MAX_ACCELERATION):
            k = int(np.argmax(slope.max(axis=1)))
            raise ValueError(f"the current changes by {slope[k].max():.3g} m/s^2 between t = {t[k]:g} and "
                             f"{t[k + 1]:g} s (at most {MAX_ACCELERATION:g})")  # fmt: skip
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
