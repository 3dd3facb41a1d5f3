"""The noisy sensors of ``sensors.suite`` on their own topics, in standard messages, beside the
ground truth (``odom``, ``imu``, ``pressure``, ``depth`` stay exact). Under the vehicle's
namespace, ``sensors/<name>`` (the name from the description, default its type):

- imu: sensor_msgs/Imu (no orientation: ``orientation_covariance[0] = -1``; angular velocity
  and specific force with their variances);
- pressure: sensor_msgs/FluidPressure (Pa, with its variance);
- magnetometer: sensor_msgs/MagneticField (T, with its covariance);
- altimeter: sensor_msgs/Range (ULTRASOUND; +inf beyond ``max_range`` or without a return,
  -inf closer than ``min_range``, REP 117);
- dvl: ``sensors/<name>/twist`` (geometry_msgs/TwistWithCovarianceStamped, the velocity over
  the seabed in the DVL's axes, only while at least three beams are valid),
  ``sensors/<name>/altitude`` (sensor_msgs/Range) and ``sensors/<name>/beams``
  (std_msgs/Float64MultiArray, the four beam ranges, NaN for a beam that dropped).

Every message is stamped with the simulated time of its sample and framed in the sensor's own
frame, published on /tf_static under its link.
"""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import TwistWithCovarianceStamped
from rclpy.node import Node
from sensor_msgs.msg import FluidPressure, Imu, MagneticField, Range
from std_msgs.msg import Float64MultiArray
from transforms3d.quaternions import mat2quat

from ..model.system import System
from ..sensors.acoustic import DvlReading
from ..sensors.suite import Reading, Sensor, SensorSuite
from . import messages
from .messages import wanted


def _diag(values) -> list[float]:
    out = [0.0] * 9
    for k, v in enumerate(values):
        out[4 * k] = float(v)
    return out


class SensorTopics:
    def __init__(
        self, node: Node, system: System, suite: SensorSuite, prefix: str, link_frames: list[str]
    ) -> None:
        self.node, self.suite = node, suite
        many = sum(v.kind == "vehicle" for v in system.vehicles) > 1  # objects have no topics
        self.frames: list[str] = []
        self.pubs: list[dict] = []
        for s in suite.sensors:
            ns = f"{s.vehicle}/" if many else ""
            self.frames.append(prefix + (f"{s.vehicle}/" if many else "") + s.spec.name)
            base = f"{ns}sensors/{s.spec.name}"
            kind = s.spec.type
            if kind == "dvl":
                self.pubs.append(
                    {
                        "twist": node.create_publisher(TwistWithCovarianceStamped, f"{base}/twist", 10),
                        "altitude": node.create_publisher(Range, f"{base}/altitude", 10),
                        "beams": node.create_publisher(Float64MultiArray, f"{base}/beams", 10),
                    }
                )
            else:
                msg = {
                    "imu": Imu,
                    "pressure": FluidPressure,
                    "magnetometer": MagneticField,
                    "altimeter": Range,
                }[kind]
                self.pubs.append({"": node.create_publisher(msg, base, 10)})
        self.link_frames = link_frames

    def static_transforms(self, stamp) -> list:
        """Each sensor's frame under its link's TF frame."""
        out = []
        for s in self.suite.sensors:
            m = s.model.mount  # type: ignore[attr-defined]
            quat = mat2quat(m.R)
            out.append(
                messages.transform(
                    stamp, self.link_frames[m.link], self.frames[s.index], None, m.position, quat
                )
            )
        return out

    def publish(self, readings: list[Reading], stamp_of) -> None:
        """The readings on their topics; a sensor none of whose topics has a reader builds no
        message (its reading still reaches the estimator: the caller's)."""
        for r in readings:
            s = r.sensor
            pubs = self.pubs[s.index]
            if not any(wanted(pub) for pub in pubs.values()):
                continue
            stamp, frame = stamp_of(r.t), self.frames[s.index]
            getattr(self, "_" + s.spec.type)(s, r.value, stamp, frame, pubs)

    def _imu(self, s: Sensor, value, stamp, frame, pubs) -> None:
        gyro, accel = value
        msg = Imu()
        msg.header.stamp, msg.header.frame_id = stamp, frame
        msg.orientation_covariance[0] = -1.0
        messages.vector_msg(msg.angular_velocity, gyro)
        messages.vector_msg(msg.linear_acceleration, accel)
        model = s.model
        msg.angular_velocity_covariance = _diag([model.gyro_variance] * 3)  # type: ignore[attr-defined]
        msg.linear_acceleration_covariance = _diag([model.accel_variance] * 3)  # type: ignore[attr-defined]
        pubs[""].publish(msg)

    def _pressure(self, s: Sensor, value, stamp, frame, pubs) -> None:
        msg = FluidPressure()
        msg.header.stamp, msg.header.frame_id = stamp, frame
        msg.fluid_pressure = float(value)
        msg.variance = float(s.model.variance)  # type: ignore[attr-defined]
        pubs[""].publish(msg)

    def _magnetometer(self, s: Sensor, value, stamp, frame, pubs) -> None:
        msg = MagneticField()
        msg.header.stamp, msg.header.frame_id = stamp, frame
        messages.vector_msg(msg.magnetic_field, value)
        msg.magnetic_field_covariance = _diag([s.model.variance] * 3)  # type: ignore[attr-defined]
        pubs[""].publish(msg)

    def _range(self, value: float, stamp, frame, lo: float, hi: float, fov: float) -> Range:
        msg = Range()
        msg.header.stamp, msg.header.frame_id = stamp, frame
        msg.radiation_type = Range.ULTRASOUND
        msg.field_of_view, msg.min_range, msg.max_range = float(fov), float(lo), float(hi)
        msg.range = float(value)
        return msg

    def _altimeter(self, s: Sensor, value, stamp, frame, pubs) -> None:
        spec = s.spec
        lo, hi = spec.value("min_range"), spec.value("max_range")
        pubs[""].publish(self._range(value, stamp, frame, lo, hi, spec.value("beam_width")))

    def _dvl(self, s: Sensor, value: DvlReading, stamp, frame, pubs) -> None:
        spec = s.spec
        if value.valid:
            msg = TwistWithCovarianceStamped()
            msg.header.stamp, msg.header.frame_id = stamp, frame
            messages.vector_msg(msg.twist.twist.linear, value.velocity)
            cov = np.zeros((6, 6))
            cov[:3, :3] = value.covariance
            cov[3:, 3:] = -np.eye(3)  # no angular velocity from a DVL
            msg.twist.covariance = [float(x) for x in cov.reshape(-1)]
            pubs["twist"].publish(msg)
        altitude = value.altitude if math.isfinite(value.altitude) else math.inf
        lo, hi = spec.value("min_altitude"), spec.value("max_altitude")
        pubs["altitude"].publish(self._range(altitude, stamp, frame, lo, hi, 2 * spec.value("beam_angle")))
        pubs["beams"].publish(Float64MultiArray(data=[float(x) for x in value.ranges]))
