"""A pressure sensor (Bar30 class): the absolute pressure at its position (``truth``), with
white noise and the output's resolution (quantisation)."""

from __future__ import annotations

import numpy as np

from ..model.sensor_specs import SensorSpec
from .mount import Mount
from .truth import absolute_pressure


class PressureSensor:
    def __init__(self, spec: SensorSpec, mount: Mount, rng: np.random.Generator) -> None:
        self.spec, self.mount, self.rng = spec, mount, rng
        self.sigma, self.step = spec.value("noise"), spec.value("resolution")
        self.variance = self.sigma**2 + (self.step**2 / 12.0 if self.step else 0.0)

    def read(self, data, surface: float | None, density: float, gravity: float) -> float:
        """Pressure (Pa) at the sensor."""
        _, p = self.mount.world(data)
        depth = float(p[2]) - (0.0 if surface is None else surface)
        value = absolute_pressure(depth, density, gravity)
        if self.spec.noise:
            value += self.sigma * float(self.rng.standard_normal())
            if self.step:
                value = round(value / self.step) * self.step
        return value
