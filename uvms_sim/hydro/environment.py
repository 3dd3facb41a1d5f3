"""The world a system moves in: gravity, water, current (world NED frame)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..spatial import Array


@dataclass
class Environment:
    """Gravity and fluid state, all in the world NED frame.

    ``current`` is the (irrotational, spatially uniform) water velocity and
    ``current_acceleration`` its time derivative ``a_f`` (seed 000 eqs. 5 and 8).
    ``density`` is the water density in kg/m^3 (1000 fresh, 1025 sea).
    """

    gravity: float = 9.81
    density: float = 1000.0
    current: Array = field(default_factory=lambda: np.zeros(3))
    current_acceleration: Array = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        self.current = np.asarray(self.current, dtype=float).reshape(3)
        self.current_acceleration = np.asarray(self.current_acceleration, dtype=float).reshape(3)

    @property
    def gravity_vector(self) -> Array:
        """Gravity acceleration in NED (down is +z)."""
        return np.array([0.0, 0.0, self.gravity])
