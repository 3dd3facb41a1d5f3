"""An IMU on a link: gyroscope and accelerometer in the sensor's axes, with the lever arm of
its position applied to the accelerometer (a point off the link origin feels the angular
acceleration and the centripetal acceleration: a_p = a_o + alpha x r + omega x (omega x r)),
and the noise of ``noise.InertialNoise`` on each (white, bias instability, rate random walk)."""

from __future__ import annotations

import numpy as np

from ..model.sensor_specs import SensorSpec
from ..spatial import cross
from .mount import Mount
from .noise import InertialNoise
from .truth import accelerometer

Array = np.ndarray


class Imu:
    def __init__(self, spec: SensorSpec, mount: Mount, rng: np.random.Generator) -> None:
        self.spec, self.mount = spec, mount
        p = dict(spec.params)
        T = p["bias_correlation_time"]
        self.gyro_noise = InertialNoise(p["rate"], p["gyro_noise_density"], p["gyro_bias_instability"],
                                        p["gyro_random_walk"], T, rng)  # fmt: skip
        self.accel_noise = InertialNoise(p["rate"], p["accel_noise_density"], p["accel_bias_instability"],
                                         p["accel_random_walk"], T, rng)  # fmt: skip
        self.gyro_variance = (p["gyro_noise_density"] ** 2) * p["rate"] + (p["gyro_bias_instability"]) ** 2
        self.accel_variance = (p["accel_noise_density"] ** 2) * p["rate"] + (p["accel_bias_instability"]) ** 2

    def read(self, data, accelerations: Array, gravity: float) -> tuple[Array, Array]:
        """``(angular velocity rad/s, specific force m/s^2)`` in the sensor's axes."""
        i, r = self.mount.link, self.mount.position
        v, a = data.v[i], accelerations[i]
        w = v[3:]
        f = accelerometer(data.R_world[i], v, a, gravity) + cross(a[3:], r) + cross(w, cross(w, r))
        gyro, accel = self.mount.R.T @ w, self.mount.R.T @ f
        if self.spec.noise:
            gyro = gyro + self.gyro_noise.sample()
            accel = accel + self.accel_noise.sample()
        return gyro, accel
