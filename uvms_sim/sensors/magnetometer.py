"""A magnetometer: a constant Earth field (strength, inclination below the horizontal,
declination east of true north) seen in the sensor's axes, with white noise. Its heading is
``atan2(-m_y, m_x)`` minus the declination for a level sensor."""

from __future__ import annotations

import math

import numpy as np

from ..model.sensor_specs import SensorSpec
from .mount import Mount

Array = np.ndarray


def earth_field(strength: float, inclination: float, declination: float) -> Array:
    """The field in the world (NED), T."""
    h = strength * math.cos(inclination)
    return np.array([h * math.cos(declination), h * math.sin(declination), strength * math.sin(inclination)])


class Magnetometer:
    def __init__(self, spec: SensorSpec, mount: Mount, rng: np.random.Generator) -> None:
        self.spec, self.mount, self.rng = spec, mount, rng
        self.field = earth_field(
            spec.value("field_strength"), spec.value("inclination"), spec.value("declination")
        )
        self.sigma = spec.value("noise")
        self.variance = self.sigma**2

    def read(self, data) -> Array:
        R, _ = self.mount.world(data)
        m = R.T @ self.field
        return m + self.sigma * self.rng.standard_normal(3) if self.spec.noise else m
