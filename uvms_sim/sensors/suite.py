"""All the sensors of a system, sampled at their rates in simulated time.

Each sensor's period is a whole number of physics steps, so that its samples fall exactly on
its period in simulated time; a rate whose period is not a whole number of steps is rounded to
the nearest one, with a warning that gives the rate it then has. ``every`` is the greatest
common divisor of the periods: the simulation loop stops there
(``SimulationLoop.sensor_every``) and ``sample`` reads the sensors that are due. The noise is
deterministic for a seed (each sensor has its own stream, from the seed and its place in the
description) and off with ``noise=False``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..log import logger
from ..model.sensor_specs import SensorSpec
from ..model.system import System
from ..scene import Scene, SceneRays
from .acoustic import Altimeter, Dvl
from .imu import Imu
from .magnetometer import Magnetometer
from .mount import Mount
from .pressure import PressureSensor
from .truth import current_accelerations

MODELS = {
    "imu": Imu,
    "pressure": PressureSensor,
    "magnetometer": Magnetometer,
    "altimeter": Altimeter,
    "dvl": Dvl,
}


@dataclass
class Sensor:
    vehicle: str
    spec: SensorSpec
    model: object
    period: int  # physics steps
    index: int  # its place in SensorSuite.sensors


@dataclass
class Reading:
    sensor: Sensor
    t: float
    value: object  # per type: (gyro, accel), pressure Pa, field T, range m, DvlReading


class SensorSuite:
    def __init__(self, system: System, dt: float, seed: int = 0, noise: bool = True) -> None:
        model = system.model
        self.system = system
        self.rays = SceneRays(system.scene or Scene())  # what the acoustic sensors see
        self.sensors: list[Sensor] = []
        for v in system.vehicles:
            for spec in v.sensors:
                if spec.type not in MODELS:  # a camera: rendered on its own (sensors.camera)
                    continue
                steps = 1.0 / (spec.rate * dt)
                if abs(steps - round(steps)) > 1e-9 * steps or round(steps) < 1:
                    period = max(1, round(steps))
                    logger.warning(
                        f"sensor {spec.name}: {spec.rate:g} Hz is not a whole number of {dt:g} s physics "
                        "steps: "
                        f"it samples every {period} steps ({1.0 / (period * dt):g} Hz); a rate that divides "
                        f"{1.0 / dt:g} Hz is exact"
                    )
                    steps = period
                rng = np.random.default_rng([seed, len(self.sensors)])
                spec = spec if noise else replace(spec, noise=False)
                mount = Mount.of(spec, model.body_index(spec.link))
                model_ = MODELS[spec.type](spec, mount, rng)
                self.sensors.append(Sensor(v.name, spec, model_, round(steps), len(self.sensors)))
        self.every = math.gcd(*(s.period for s in self.sensors)) if self.sensors else 0

    def sample(self, sim, step: int) -> list[Reading]:
        """The readings of the sensors due at physics step ``step`` (after it), at ``sim``'s
        state."""
        due = [s for s in self.sensors if step % s.period == 0]
        if not due:
            return []
        env = sim.env
        _, acc = current_accelerations(sim)  # also leaves the state's kinematics in sim.data
        data = sim.data
        out = []
        for s in due:
            m = s.model
            if isinstance(m, Imu):
                value: object = m.read(data, acc, env.gravity)
            elif isinstance(m, PressureSensor):
                value = m.read(data, env.surface, env.density, env.gravity)
            elif isinstance(m, Magnetometer):
                value = m.read(data)
            else:
                value = m.read(data, self.rays)  # type: ignore[attr-defined]
            out.append(Reading(s, sim.state.t, value))
        return out
