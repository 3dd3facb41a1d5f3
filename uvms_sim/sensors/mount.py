"""Where a sensor sits: its link, its position in the link's axes and the rotation of its own
frame (``rpy`` as a URDF ``<origin>``), and its pose in the world at a state."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from transforms3d.euler import euler2mat

from ..model.sensor_specs import SensorSpec
from ..spatial import cross

Array = np.ndarray


@dataclass(frozen=True)
class Mount:
    link: int
    position: Array  # link axes, m
    R: Array  # sensor axes -> link axes

    @classmethod
    def of(cls, spec: SensorSpec, link: int) -> Mount:
        return cls(link, np.asarray(spec.position, dtype=float), euler2mat(*spec.rpy, "sxyz"))

    def world(self, data) -> tuple[Array, Array]:
        """``(R, p)``: sensor axes -> world NED, and the sensor's position in the world."""
        R_link = data.R_world[self.link]
        return R_link @ self.R, data.p_world[self.link] + R_link @ self.position

    def point_velocity(self, data) -> Array:
        """Velocity of the sensor's point (m/s) in the sensor's axes (relative to the ground)."""
        v = data.v[self.link]
        return self.R.T @ (v[:3] + cross(v[3:], self.position))
