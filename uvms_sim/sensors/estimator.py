"""What an autopilot believes from its sensors: the state estimate the emulated ArduSub reports
(over MAVROS) when the vehicle carries sensors, in place of the simulator's ground truth.

- Attitude: a Mahony complementary filter on the noisy IMU and magnetometer (Mahony et al.
  2008, the explicit complementary filter with gyro-bias estimation: the gyro rates corrected by
  ``KP`` times the error between the measured and the predicted gravity and field directions,
  the bias integrated with ``KI``), started at the true attitude as an autopilot aligns before
  it arms.
- Depth: the pressure sensor's depth, ``(p - p_atm) / (rho g)``, through a first-order low-pass
  of ``DEPTH_TIME_CONSTANT``; the vertical velocity is the filtered depth's rate.
- Horizontal position and velocity: with a DVL, its velocity over the seabed rotated by the
  estimated attitude and integrated (dead reckoning, as ArduSub with a Water Linked DVL); while
  the DVL has no lock the last velocity decays to zero over 1 s. Without a DVL nothing measures
  them: the position stays where it was (as ArduSub's EKF in constant-position mode) and the
  horizontal velocity is zero.

Everything the estimator has no sensor for keeps the ground truth (``update_truth``): a vehicle
without an IMU keeps its true attitude, one without a pressure sensor its true depth.
"""

from __future__ import annotations

import math

import numpy as np
from transforms3d.quaternions import axangle2quat, qmult, quat2mat

from ..spatial import cross
from .acoustic import DvlReading
from .magnetometer import earth_field
from .truth import P_ATM

Array = np.ndarray
KP, KI = 0.1, 0.01  # 1/s, 1/s^2: the filter's gains
DEPTH_TIME_CONSTANT = 0.2  # s


class Estimator:
    """One vehicle's estimate (module doc): ``q`` (NED position, FRD->NED quaternion), ``v``
    (FRD body velocity, angular rate)."""

    def __init__(self, sensors: list, density: float, gravity: float) -> None:
        types = {s.spec.type: s for s in sensors}
        self.has = set(types)
        self.rho_g = density * gravity
        mag = types.get("magnetometer")
        spec = mag.spec if mag is not None else None
        self.field = (
            earth_field(spec.value("field_strength"), spec.value("inclination"), spec.value("declination"))
            if spec is not None else None
        )  # fmt: skip
        dvl = types.get("dvl")
        self.dvl_R = dvl.model.mount.R if dvl is not None else np.eye(3)
        self.quat = np.array([1.0, 0.0, 0.0, 0.0])
        self.bias = np.zeros(3)
        self.rate = np.zeros(3)
        self.position = np.zeros(3)
        self.velocity_ned = np.zeros(3)
        self.depth_rate = 0.0
        self.mag: Array | None = None
        self.accel: Array | None = None  # the last specific force, vehicle axes
        self.started = False
        self.t_depth = self.t_dvl = math.nan

    def start(self, q: Array, v: Array) -> None:
        """Aligned with the truth (a free joint's ``q`` and ``v``) before the first reading."""
        self.quat = np.array(q[3:7], dtype=float)
        self.position = np.array(q[:3], dtype=float)
        self.velocity_ned = quat2mat(self.quat) @ v[:3]
        self.rate = np.array(v[3:6], dtype=float)
        if "dvl" not in self.has:
            self.velocity_ned[:2] = 0.0  # nothing measures it
        self.started = True

    def update_truth(self, q: Array, v: Array) -> None:
        """What no sensor measures follows the truth (module doc)."""
        if not self.started:
            self.start(q, v)
        if "imu" not in self.has:
            self.quat, self.rate = np.array(q[3:7], dtype=float), np.array(v[3:6], dtype=float)
        if "pressure" not in self.has:
            self.position[2] = q[2]
            self.velocity_ned[2] = (quat2mat(q[3:7]) @ v[:3])[2]

    def reading(self, reading, surface: float) -> None:
        """Take one sensor reading (``suite.Reading``), in the sensor's axes: rotated into the
        vehicle's (the sensor's mounting on the root link)."""
        s = reading.sensor
        R_mount = s.model.mount.R
        kind = s.spec.type
        if kind == "imu":
            gyro, accel = reading.value
            self.imu(R_mount @ gyro, R_mount @ accel, 1.0 / s.spec.rate)
        elif kind == "magnetometer":
            self.magnetometer(R_mount @ reading.value)
        elif kind == "pressure":
            offset = (quat2mat(self.quat) @ s.model.mount.position)[2]  # the sensor is not at the origin
            self.pressure(reading.value, reading.t, surface - offset)
        elif kind == "dvl":
            self.dvl(reading.value, reading.t)

    def imu(self, gyro: Array, accel: Array, dt: float) -> None:
        R = quat2mat(self.quat)
        self.accel = accel
        error = np.zeros(3)
        norm = np.linalg.norm(accel)
        if norm > 1e-6:  # gravity: measured "down" is -f / |f|, predicted R^T e_z
            error += cross(-accel / norm, R[2])
        if self.mag is not None and self.field is not None:
            m = self.mag / np.linalg.norm(self.mag)
            error += cross(m, R.T @ (self.field / np.linalg.norm(self.field)))
        self.bias -= KI * error * dt
        omega = gyro - self.bias + KP * error
        self.rate = gyro - self.bias
        angle = np.linalg.norm(omega) * dt
        if angle > 0.0:
            self.quat = qmult(self.quat, axangle2quat(omega, angle))
            self.quat /= np.linalg.norm(self.quat)

    def magnetometer(self, field: Array) -> None:
        self.mag = np.asarray(field, dtype=float)

    def pressure(self, p: float, t: float, surface: float) -> None:
        depth = (p - P_ATM) / self.rho_g + surface
        dt = t - self.t_depth if math.isfinite(self.t_depth) else 0.0
        self.t_depth = t
        if dt <= 0.0:
            self.position[2] = depth
            return
        alpha = dt / (DEPTH_TIME_CONSTANT + dt)
        new = self.position[2] + alpha * (depth - self.position[2])
        self.depth_rate = (new - self.position[2]) / dt
        self.position[2] = new
        if "dvl" not in self.has:
            self.velocity_ned[2] = self.depth_rate

    def dvl(self, reading: DvlReading, t: float) -> None:
        dt = t - self.t_dvl if math.isfinite(self.t_dvl) else 0.0
        self.t_dvl = t
        R = quat2mat(self.quat)
        if reading.valid:
            self.velocity_ned[:2] = (R @ self.dvl_R @ reading.velocity)[:2]
        else:
            self.velocity_ned[:2] *= math.exp(-dt)
        self.position[:2] += self.velocity_ned[:2] * dt

    def state(self) -> tuple[Array, Array]:
        """``(q, v)`` of the estimate as a free joint's: NED position and FRD->NED quaternion,
        FRD body velocity and rate."""
        v_body = quat2mat(self.quat).T @ self.velocity_ned
        return np.r_[self.position, self.quat], np.r_[v_body, self.rate]
