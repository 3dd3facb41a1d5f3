"""A stand-in for PX4 SITL on the simulator link, strict where PX4 is, for tests and for a smoke
test of the bridge without building PX4. What it reproduces (PX4-Autopilot source, paths from
its root):

- the link (``src/modules/simulation/simulator_mavlink/SimulatorMavlink.cpp``, ``run``): PX4 is
  the TCP client of port 4560 and retries ``connect`` until the simulator listens; once
  connected it sends a HEARTBEAT and ``COMMAND_LONG`` ``MAV_CMD_SET_MESSAGE_INTERVAL`` asking for
  ``HIL_STATE_QUATERNION`` every 5000 us; MAVLink parsed byte by byte;
- time and lock-step (``handle_message_hil_sensor``, ``send_controls``,
  ``actuator_controls_from_outputs``): ``HIL_SENSOR`` with ``id`` 0 sets PX4's clock to its
  ``time_usec``; each such message is answered with one ``HIL_ACTUATOR_CONTROLS`` stamped with
  that clock, ``flags`` 1 (lock-step) and the armed bit in ``mode``, controls all zero while
  disarmed. A ``HIL_SENSOR`` whose bytes had arrived before PX4 sent its last answer was sent
  without waiting for it: once the stream is in lock-step (a sensor message has come after an
  answer; before PX4's first answer a simulator streams freely, as Gazebo's MAVLink interface
  does), that is a simulator running ahead of PX4 (counted in ``ran_ahead``);
- the sensors (``update_sensors``): ``fields_updated`` bits (PX4's SensorSource), baro
  ``abs_pressure`` hPa -> Pa; the barometric altitude of
  ``src/modules/sensors/vehicle_air_data/VehicleAirData.cpp`` (``getAltitudeFromPressure`` of
  ``src/lib/atmosphere/atmosphere.cpp`` with QNH 1013.25 hPa, in float32);
- the stale and timeout rules of ``src/modules/sensors/data_validator/DataValidator.cpp``: the
  count of equal values (``|a - b| < 1e-6``) accumulates over the axes of each sample and is
  reset by any axis that changed; more than 100 (1000 for magnetometers,
  ``VehicleMagnetometer.cpp``) marks the sensor STALE; no sample for 500 ms (gyro, accel:
  ``voted_sensors_update.cpp``) or 300 ms (mag, baro) marks it TIMEOUT. The baro validator
  takes (pressure, temperature, altitude) per sample, the magnetometer its three axes. The
  failure is reported as ``VehicleMagnetometer``/``VehicleAirData`` print it: ``"MAG #0 failed:
  STALE!"`` (PX4's format string has the two spaces);
- GPS (``handle_message_hil_gps``; EKF2's checks in ``src/modules/ekf2/EKF/aid_sources/gnss/gnss_checks.cpp``
  with the defaults of ``src/modules/ekf2/params_gnss.yaml``): HIL_GPS is PX4's only GPS input
  in SITL and HITL; a sample passes with ``fix_type`` >= 3, ``eph`` <= 3 m (EKF2_REQ_EPH),
  ``epv`` <= 5 m (EKF2_REQ_EPV) and >= 6 satellites (EKF2_REQ_NSATS), and the GPS is healthy
  after 10 s of passing samples (EKF2_REQ_GPS_H): no home position and no position modes before.
- height: EKF2 fuses baro and GPS height with a 5-sigma innovation gate (EKF2_BARO_GATE) on a
  baro noise of 3.5 m (EKF2_BARO_NOISE); a barometric altitude whose change since the start
  leaves the GPS altitude's change by more than that gate (with the GPS's epv) fails as PX4's
  "height estimate not stable". This is a proxy for EKF2's filter, not EKF2.

``preflight()`` lists what PX4 would refuse to arm or fly for; ``heading_error`` compares the
compass heading (declination from the World Magnetic Model at the GPS position, as PX4 applies
it) with the ground truth the simulator sends in HIL_STATE_QUATERNION.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("MAVLINK20", "1")

import numpy as np
from pymavlink import mavutil
from transforms3d.quaternions import quat2mat

from ..sensors.geomag import declination, wmm_field
from .hil_sensors import ACCEL, BARO, GYRO, MAG
from .px4 import LOCKSTEP_FLAG, MAV_MODE_FLAG_SAFETY_ARMED

mavlink = mavutil.mavlink
F32 = np.float32
# src/lib/atmosphere/atmosphere.h, in the float32 PX4 computes with
_T0, _LAPSE, _R, _G = F32(15.0 + 273.15), F32(-6.5 / 1000.0), F32(287.1), F32(9.80665)
MAV_MODE_FLAG_CUSTOM_MODE_ENABLED = 1
ERROR_FLAG_NO_DATA, ERROR_FLAG_STALE_DATA, ERROR_FLAG_TIMEOUT = 1, 2, 4
REQ_EPH, REQ_EPV, REQ_NSATS, REQ_GPS_H = 3.0, 5.0, 6, 10.0
BARO_NOISE, BARO_GATE = 3.5, 5.0


def px4_altitude(pressure_pa: float, qnh_pa: float = 101325.0) -> float:
    """``getAltitudeFromPressure`` in float32, as PX4 computes it."""
    ratio = F32(pressure_pa) / F32(qnh_pa)
    return float((np.power(ratio, -(_LAPSE * _R) / _G, dtype=F32) * _T0 - _T0) / _LAPSE)


class DataValidator:
    """``DataValidator::put`` and ``confidence``: the stale and timeout rules."""

    def __init__(self, timeout_us: int, equal_threshold: int = 100) -> None:
        self.timeout, self.threshold = timeout_us, equal_threshold
        self.value: list[float] = []
        self.equal_count = 0
        self.time_last = 0
        self.error = 0

    def put(self, timestamp: int, values) -> None:
        vals = [float(F32(v)) for v in values]
        if self.time_last != 0:
            for i, v in enumerate(vals):
                if math.isfinite(v):
                    if abs(self.value[i] - v) < 1e-6:
                        self.equal_count += 1
                    else:
                        self.equal_count = 0
        self.value = vals
        self.time_last = timestamp

    def confidence(self, timestamp: int) -> float:
        if self.time_last == 0:
            self.error |= ERROR_FLAG_NO_DATA
            return 0.0
        if timestamp > self.time_last + self.timeout:
            self.error |= ERROR_FLAG_TIMEOUT
            return 0.0
        if self.equal_count > self.threshold:
            self.error |= ERROR_FLAG_STALE_DATA
            return 0.0
        self.error = 0
        return 1.0

    def failure(self, name: str, timestamp: int) -> str | None:
        """The line PX4 prints when this sensor fails, or None."""
        if self.confidence(timestamp) > 0.0:
            return None
        f = self.error
        words = [
            (ERROR_FLAG_NO_DATA, " OFF"),
            (ERROR_FLAG_STALE_DATA, " STALE"),
            (ERROR_FLAG_TIMEOUT, " TIMEOUT"),
        ]
        return f"{name} #0 failed: " + "".join(w for bit, w in words if f & bit) + "!"


@dataclass
class Px4Peer:
    """PX4 SITL's side of the link (see module docstring). ``controls`` (16 values) are what
    its mixer outputs while ``armed``; ``reply_delay`` s of wall time before each answer."""

    port: int
    host: str = "127.0.0.1"
    sysid: int = 1
    armed: bool = False
    controls: list[float] = field(default_factory=lambda: [0.0] * 16)
    reply_delay: float = 0.0
    date: dt.date = field(default_factory=dt.date.today)

    def __post_init__(self) -> None:
        self.sock: socket.socket | None = None
        self.mav = mavlink.MAVLink(self, srcSystem=self.sysid, srcComponent=1)
        self.mav.robust_parsing = True
        self.clock = 0  # PX4's time, us (from HIL_SENSOR)
        self.time_back = 0  # HIL_SENSOR time_usec that did not move on
        self.sensors = 0
        self.answers = 0
        self.early = 0  # bytes received before the last answer, not parsed yet
        self.chunk_rest = 0  # bytes of the chunk being parsed after the current message
        self.ran_ahead = 0  # HIL_SENSOR messages sent before the simulator had the last answer
        self.synced = False  # a HIL_SENSOR came after an answer: the simulator waits (lock-step)
        self.validators = {
            "GYRO": DataValidator(500_000),
            "ACCEL": DataValidator(500_000),
            "MAG": DataValidator(300_000, 1000),
            "BARO": DataValidator(300_000),
        }
        self.baro_altitude: list[tuple[int, float]] = []
        self.gps: list[tuple[int, Any]] = []  # (PX4's clock, HIL_GPS)
        self.gps_healthy_since: int | None = None
        self.truth: Any = None  # the last HIL_STATE_QUATERNION
        self.mag: np.ndarray | None = None
        self.accel: np.ndarray | None = None
        self.bad = 0
        self.poll_timeouts = 0
        self.times: list[int] = []  # every HIL_SENSOR time_usec

    # -- the link -------------------------------------------------------------------------------
    def write(self, buf: bytes) -> None:
        assert self.sock is not None
        self.sock.sendall(buf)

    def connect(self, timeout: float = 5.0) -> None:
        """``connect`` until the simulator listens (PX4 retries every 500 us), then the
        heartbeat and the request for HIL_STATE_QUATERNION."""
        end = time.monotonic() + timeout
        while True:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                sock.connect((self.host, self.port))
                break
            except OSError:
                sock.close()
                if time.monotonic() > end:
                    raise TimeoutError(f"no simulator listening on {self.host}:{self.port}") from None
                time.sleep(0.0005)
        self.sock = sock
        self.mav.heartbeat_send(0, 12, 0, 0, 0)  # hb.autopilot = 12 (MAV_AUTOPILOT_PX4)
        hil_state = mavlink.MAVLINK_MSG_ID_HIL_STATE_QUATERNION
        self.mav.command_long_send(
            0, 0, mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0, hil_state, 5e3, 0, 0, 0, 0, 0
        )

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def spin(self, seconds: float = 0.0, sensors: int | None = None, timeout: float = 60.0) -> int:
        """Read and answer for ``seconds`` of wall time, or until ``sensors`` more HIL_SENSOR
        messages were handled (TimeoutError after ``timeout`` s); how many were. A second
        without data is counted in ``poll_timeouts`` (PX4 logs "poll timeout" and goes on)."""
        assert self.sock is not None
        start = self.sensors
        end = time.monotonic() + (timeout if sensors is not None else seconds)
        while sensors is None or self.sensors - start < sensors:
            left = end - time.monotonic()
            if left <= 0.0:
                if sensors is not None:
                    raise TimeoutError(
                        f"{self.sensors - start} of {sensors} HIL_SENSOR messages in {timeout} s"
                    )
                break
            self.sock.settimeout(min(1.0, left))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                self.poll_timeouts += 1
                continue
            if not data:
                raise ConnectionError("the simulator closed the connection")
            for i, byte in enumerate(data):  # one char at a time, as mavlink_parse_char
                early = self.early > 0  # this byte was sent before PX4's last answer
                self.early = max(0, self.early - 1)
                msg = self.mav.parse_char(bytes([byte]))
                if msg is None:
                    continue
                if msg.get_type() == "HIL_SENSOR":
                    if early and self.synced:
                        self.ran_ahead += 1
                    self.synced = self.synced or (not early and self.answers > 0)
                self.chunk_rest = len(data) - i - 1
                self.handle(msg)
        return self.sensors - start

    def _waiting(self) -> int:
        assert self.sock is not None
        timeout = self.sock.gettimeout()
        self.sock.settimeout(0.0)  # with a timeout set, recv would first wait for data
        try:
            return len(self.sock.recv(65536, socket.MSG_PEEK))
        except (BlockingIOError, InterruptedError):
            return 0
        finally:
            self.sock.settimeout(timeout)

    # -- messages -------------------------------------------------------------------------------
    def handle(self, msg) -> None:
        kind = msg.get_type()
        if kind == "HIL_SENSOR":
            self.hil_sensor(msg)
        elif kind == "HIL_GPS":
            self.hil_gps(msg)
        elif kind == "HIL_STATE_QUATERNION":
            self.truth = msg
        elif kind == "BAD_DATA":
            self.bad += 1

    def hil_sensor(self, msg) -> None:
        if msg.id != 0:
            return
        if msg.time_usec <= self.clock:
            self.time_back += 1
        self.clock = msg.time_usec
        self.times.append(msg.time_usec)
        self.sensors += 1
        now, f = self.clock, msg.fields_updated
        if f & ACCEL == ACCEL:
            self.accel = np.array([msg.xacc, msg.yacc, msg.zacc])
            self.validators["ACCEL"].put(now, self.accel)
        if f & GYRO == GYRO:
            self.validators["GYRO"].put(now, (msg.xgyro, msg.ygyro, msg.zgyro))
        if f & MAG == MAG:
            self.mag = np.array([msg.xmag, msg.ymag, msg.zmag])
            self.validators["MAG"].put(now, self.mag)
        if f & BARO == BARO:
            pressure = msg.abs_pressure * 100.0
            altitude = px4_altitude(pressure)
            self.validators["BARO"].put(now, (pressure, msg.temperature, altitude))
            self.baro_altitude.append((now, altitude))
        if self.reply_delay:
            time.sleep(self.reply_delay)
        self.answer()

    def answer(self) -> None:
        controls = self.controls if self.armed else [0.0] * 16
        mode = MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | (MAV_MODE_FLAG_SAFETY_ARMED if self.armed else 0)
        self.early = self.chunk_rest + self._waiting()  # what has arrived was sent before this answer
        self.mav.hil_actuator_controls_send(self.clock, [float(c) for c in controls], mode, LOCKSTEP_FLAG)
        self.answers += 1

    def hil_gps(self, msg) -> None:
        self.gps.append((self.clock, msg))
        ok = msg.fix_type >= 3 and msg.eph <= REQ_EPH * 100 and msg.epv <= REQ_EPV * 100
        ok = ok and msg.satellites_visible >= REQ_NSATS
        if not ok:
            self.gps_healthy_since = None
        elif self.gps_healthy_since is None:
            self.gps_healthy_since = self.clock

    # -- what PX4 concludes ---------------------------------------------------------------------
    @property
    def gps_healthy(self) -> bool:
        return self.gps_healthy_since is not None and self.clock - self.gps_healthy_since >= REQ_GPS_H * 1e6

    def height_consistent(self) -> bool:
        """Baro altitude change vs GPS altitude change since the first fix, within EKF2's gate."""
        fixes = [(t, m) for t, m in self.gps if m.fix_type >= 3]
        if len(fixes) < 2 or not self.baro_altitude:
            return True
        (t0, first), (t1, last) = fixes[0], fixes[-1]
        baro = dict(self.baro_altitude)

        def near(t: int) -> float:
            return baro[min(baro, key=lambda s: abs(s - t))]

        gate = BARO_GATE * math.hypot(BARO_NOISE, last.epv / 100.0)
        return abs((near(t1) - near(t0)) - (last.alt - first.alt) / 1000.0) <= gate

    def preflight(self) -> list[str]:
        """What PX4 would report before arming or entering a position mode."""
        out = [line for name, v in self.validators.items() if (line := v.failure(name, self.clock))]
        if not self.gps:
            out.append("no HIL_GPS: no GPS, no home position, position modes refused")
        elif not self.gps_healthy:
            out.append("GPS not healthy for EKF2 (fix, eph, epv, satellites, 10 s)")
        if not self.height_consistent():
            out.append("Preflight Fail: height estimate not stable")
        return out

    def heading_error(self) -> float:
        """Compass heading (tilt-compensated, with the WMM declination at the last GPS fix)
        minus the true heading of the last HIL_STATE_QUATERNION, rad."""
        fixes = [m for _, m in self.gps if m.fix_type >= 3]
        if self.mag is None or self.truth is None or not fixes:
            raise ValueError("needs a magnetometer sample, a GPS fix and HIL_STATE_QUATERNION")
        fix = fixes[-1]
        R = quat2mat(self.truth.attitude_quaternion)  # body -> NED, the truth's attitude
        roll = math.atan2(R[2, 1], R[2, 2])
        pitch = -math.asin(max(-1.0, min(1.0, R[2, 0])))
        cr, sr, cp, sp = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
        mx, my, mz = self.mag
        hx = mx * cp + my * sr * sp + mz * cr * sp
        hy = my * cr - mz * sr
        magnetic = math.atan2(-hy, hx)
        dec = declination(wmm_field(fix.lat * 1e-7, fix.lon * 1e-7, fix.alt * 1e-3, self.date))
        truth = math.atan2(R[1, 0], R[0, 0])
        return (magnetic + dec - truth + math.pi) % (2.0 * math.pi) - math.pi
