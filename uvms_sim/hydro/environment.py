"""The world a system moves in: gravity, water, current (world NED frame)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..spatial import Array
from .waves import WaveField

STANDARD_GRAVITY = 9.80665  # m/s^2, the standard value ArduPilot uses (GRAVITY_MSS)


class CurrentProfile(Protocol):
    """A time-varying uniform current (see ``uvms_sim.hydro.current``)."""

    def velocity(self, t: float) -> Array: ...

    def acceleration(self, t: float) -> Array: ...


@dataclass(frozen=True)
class Seafloor:
    """The seabed the acoustic sensors see (altimeter, DVL): a plane through NED z = ``depth``
    below the world origin, sloping by ``slope`` = (dz/dx, dz/dy) (NED: positive deeper to the
    north / east)."""

    depth: float
    slope: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        if not (np.isfinite(self.depth) and all(np.isfinite(s) for s in self.slope)):
            raise ValueError("seafloor depth and slope must be finite")

    @property
    def normal(self) -> Array:
        """Unit normal pointing up out of the seabed (NED)."""
        n = np.array([self.slope[0], self.slope[1], -1.0])
        return n / np.linalg.norm(n)

    def distance(self, p: Array) -> float:
        """Height of point ``p`` (NED) above the seabed along its normal (negative: below)."""
        s0, s1 = self.slope
        return float((s0 * p[0] + s1 * p[1] - (p[2] - self.depth)) / np.sqrt(1.0 + s0 * s0 + s1 * s1))


@dataclass
class Environment:
    """Gravity and fluid state, all in the world NED frame.

    ``current`` is the (irrotational, spatially uniform) water velocity and
    ``current_acceleration`` its time derivative ``a_f`` (McMillan et al. 1996 eqs. 5 and 8); for a current
    that changes with time give ``current_profile`` instead, whose acceleration is the exact
    derivative of its velocity. ``density`` is the water density in kg/m^3 (1000 fresh,
    1025 sea). ``surface`` is the world NED z of a flat free surface: above it a body's hull
    displaces no water (``hydro.hull``); None (the default of models built in code) means
    water everywhere, as in the papers' cases. Descriptions put the surface at z = 0.
    ``waves`` (``hydro.waves.WaveField``) move that surface and the water under it: their
    velocity and acceleration at each body add to the current's (``wave_state``).
    """

    gravity: float = STANDARD_GRAVITY
    density: float = 1000.0
    current: Array = field(default_factory=lambda: np.zeros(3))
    current_acceleration: Array = field(default_factory=lambda: np.zeros(3))
    current_profile: CurrentProfile | None = None
    surface: float | None = None  # NED depth of the free surface (0: sea level); None: water everywhere
    seafloor: Seafloor | None = None  # what the acoustic sensors see; None: no seabed in range
    waves: WaveField | None = None  # linear waves on the free surface (hydro.waves); need a surface

    def __post_init__(self) -> None:
        self.current = np.asarray(self.current, dtype=float).reshape(3)
        self.current_acceleration = np.asarray(self.current_acceleration, dtype=float).reshape(3)
        if not (np.isfinite(self.gravity) and self.gravity >= 0.0):
            raise ValueError(f"gravity must be a finite number >= 0, got {self.gravity}")
        if not (np.isfinite(self.density) and self.density > 0.0):
            raise ValueError(f"density must be a finite number > 0, got {self.density}")
        if self.surface is not None and not np.isfinite(self.surface):
            raise ValueError(f"surface must be a finite depth or None, got {self.surface}")
        if self.current_profile is not None and (self.current.any() or self.current_acceleration.any()):
            raise ValueError("give either a constant current or a current_profile, not both")

    @property
    def gravity_vector(self) -> Array:
        """Gravity acceleration in NED (down is +z)."""
        return np.array([0.0, 0.0, self.gravity])

    def wave_state(self, x: float, y: float, z: float, t: float) -> tuple[Array, Array]:
        """Water velocity and acceleration (current and waves) at the NED point (x, y, z) and
        time t: what a tether node or a sensor at that point feels."""
        v, a = self.fluid_state(t)
        if self.waves is None or self.surface is None or not len(self.waves):
            return v, a
        u, du = self.waves.kinematics(x, y, self.surface - z, t)
        return v + u, a + du

    def elevation(self, x: float, y: float, t: float) -> float:
        """The free surface's height above its mean (m, up) at (x, y) and time t (0 without waves)."""
        if self.waves is None or self.surface is None:
            return 0.0
        return self.waves.elevation(x, y, t)

    def fluid_state(self, t: float) -> tuple[Array, Array]:
        """Water velocity and acceleration ``(v_c, a_f)`` at time t (world NED)."""
        if self.current_profile is None:
            return self.current, self.current_acceleration
        return self.current_profile.velocity(t), self.current_profile.acceleration(t)
