"""MAVLink hardware in the loop: an autopilot board flies the simulated vehicle.

The bridge speaks MAVLink 2 with pymavlink over UDP or a serial port:

- in: ``SERVO_OUTPUT_RAW`` (servo n in us drives the thruster whose motor number is n) or
  ``HIL_ACTUATOR_CONTROLS`` (``controls[n-1]`` in [-1, 1] becomes ``1500 + 400 controls`` us;
  controls outside [-1, 1] are clipped with a throttled warning); a message with a
  non-finite control is counted and dropped. Only the autopilot heard first (its MAVLink
  system id) drives the thrusters: actuator messages from other systems are counted in
  ``ignored`` and dropped, with one warning per system. Both messages carry 16 outputs: a
  thruster numbered above 16 cannot be driven over HIL, which the constructor says once; over
  UDP the sensors go to the autopilot's address only, once it has been heard;
- out, every step: ``HIL_SENSOR`` (specific force and rates in body FRD, a constant earth
  field rotated into the body, absolute pressure in hPa from the depth, temperature), and at
  ``state_rate``: ``HIL_STATE_QUATERNION`` (attitude, rates, NED velocity in cm/s, position
  from a reference latitude/longitude).

Which autopilots accept it: PX4 in HITL mode does. ArduPilot removed its HIL support in 2021
(ArduPilot PR 17721, "Remove HIL support", Sub among the vehicles) and mavros does not load its
HIL plugin for ArduPilot: current ArduSub firmware on a Pixhawk ignores HIL_SENSOR. For
ArduSub use the SITL JSON backend (``uvms_sim.hil.sitl_json``) with the same firmware built
for SITL.
"""

from __future__ import annotations

import math
import os
import time

os.environ.setdefault("MAVLINK20", "1")  # pymavlink's dialects: MAVLink 2 unless the user says otherwise

import numpy as np
from pymavlink import mavutil
from transforms3d.quaternions import quat2mat

from ..actuators.bank import ThrusterBank
from ..hydro.environment import STANDARD_GRAVITY
from ..log import Throttle
from ..loop import Cadence
from ..sensors import absolute_pressure, current_accelerations, specific_force
from ..simulator import Simulator

EARTH_FIELD_NED = np.array([0.21, 0.0, 0.42])  # gauss: a mid-latitude field, for the compass
EARTH_RADIUS = 6378137.0


class MavlinkHil:
    """Step the simulation and exchange HIL messages with an autopilot (see module docstring)."""

    def __init__(
        self,
        sim: Simulator,
        connection: str = "udpin:127.0.0.1:14560",
        home: tuple[float, float] = (47.397742, 8.545594),
        state_rate: float = 50.0,
        **kwargs,
    ) -> None:
        if sim.thrusters is None:
            raise ValueError("MAVLink HIL needs a system with thrusters")
        self.sim = sim
        self.bank: ThrusterBank = sim.thrusters
        self.link = mavutil.mavlink_connection(connection, source_system=1, source_component=200, **kwargs)
        self.home = home
        self.state_cadence = Cadence(1.0 / state_rate)  # HIL_STATE_QUATERNION
        numbered = sorted({m for m in sim.thrusters.motors if m})
        self.motors = [m for m in numbered if m <= 16]
        self.received = {"SERVO_OUTPUT_RAW": 0, "HIL_ACTUATOR_CONTROLS": 0}
        self.dropped = 0
        self.ignored: dict[int, int] = {}
        self.autopilot: int | None = None  # the MAVLink system id whose outputs are applied
        self.autopilot_address = None  # its UDP address, the only one the sensors go to
        self.throttle = Throttle()
        if len(self.motors) < len(numbered):
            self.throttle.log.warning(
                f"MAVLink HIL carries 16 outputs: motors {[m for m in numbered if m > 16]} are not driven"
            )

    def close(self) -> None:
        self.link.close()

    # -- inputs ------------------------------------------------------------------------------
    def poll(self) -> None:
        """Apply every pending actuator message."""
        while True:
            try:
                msg = self.link.recv_match(blocking=False)
            except Exception as exc:  # pymavlink raises on malformed bytes in some versions
                self.dropped += 1
                self.throttle.warn("mavlink", f"MAVLink input dropped: {exc}")
                continue
            if msg is None:
                clients = getattr(self.link, "clients", None)
                if clients is not None and self.autopilot_address is not None:
                    clients.intersection_update({self.autopilot_address})
                return
            kind = msg.get_type()
            if kind in self.received and not self._from_autopilot(msg):
                continue
            if kind == "BAD_DATA":
                self.dropped += 1
            elif kind == "SERVO_OUTPUT_RAW":
                self.received[kind] += 1
                self.bank.set_motor_pwm({m: getattr(msg, f"servo{m}_raw", 0) for m in self.motors if m <= 16})
            elif kind == "HIL_ACTUATOR_CONTROLS":
                controls = np.asarray(msg.controls, dtype=float)
                if not np.all(np.isfinite(controls)):
                    self.dropped += 1
                    self.throttle.warn("nan", "HIL_ACTUATOR_CONTROLS with non-finite controls dropped")
                    continue
                self.received[kind] += 1
                used = controls[[m - 1 for m in self.motors]]
                if np.any(np.abs(used) > 1.0):
                    self.throttle.warn(
                        "range", f"HIL_ACTUATOR_CONTROLS outside [-1, 1] clipped: {used.tolist()}"
                    )
                self.bank.set_motor_pwm(
                    {
                        m: 1500.0 + 400.0 * float(np.clip(c, -1.0, 1.0))
                        for m, c in zip(self.motors, used, strict=True)
                    }
                )

    def _from_autopilot(self, msg) -> bool:
        """Whether an actuator message comes from the session's autopilot (the first system
        heard sending one); others are counted and warned about once each."""
        sysid = msg.get_srcSystem()
        if self.autopilot is None:
            self.autopilot = sysid
        if sysid == self.autopilot:
            # over UDP, answer that address only: any other sender would otherwise become a
            # client of pymavlink's udpin socket, fed the sensor stream at the step rate
            alive = getattr(self.link, "clients_last_alive", None)  # updated by each datagram read
            if alive:
                self.autopilot_address = max(alive, key=alive.get)
            return True
        first = sysid not in self.ignored
        self.ignored[sysid] = self.ignored.get(sysid, 0) + 1
        if first:
            self.throttle.log.warning(
                f"MAVLink HIL: actuator messages of system {sysid} ignored (system {self.autopilot} flies it)"
            )
        return False

    # -- outputs -----------------------------------------------------------------------------
    def send_sensors(self) -> None:
        sim = self.sim
        _, acc = current_accelerations(sim)
        q, v = sim.state.q[:7], sim.data.v[0]
        R = quat2mat(q[3:7])
        f = specific_force(sim.data, acc, 0, sim.env.gravity)
        mag = R.T @ EARTH_FIELD_NED
        t_us = int(sim.state.t * 1e6)
        pressure = absolute_pressure(float(q[2]), sim.env.density, sim.env.gravity) / 100.0  # hPa
        self.link.mav.hil_sensor_send(
            t_us,
            *map(float, f),
            *map(float, v[3:6]),
            *map(float, mag),
            pressure,
            0.0,
            -float(q[2]),
            15.0,
            0x1FFF,
        )
        if self.state_cadence.due(sim.state.t):
            vel = R @ v[:3]
            lat = self.home[0] + math.degrees(q[0] / EARTH_RADIUS)
            lon = self.home[1] + math.degrees(q[1] / (EARTH_RADIUS * math.cos(math.radians(self.home[0]))))
            g_mg = [int(np.clip(x / STANDARD_GRAVITY * 1000.0, -32768, 32767)) for x in f]
            self.link.mav.hil_state_quaternion_send(
                t_us, [float(x) for x in q[3:7]], *map(float, v[3:6]), int(lat * 1e7), int(lon * 1e7),
                int(-q[2] * 1000), *(int(np.clip(x * 100, -32768, 32767)) for x in vel), 0, 0, *g_mg,
            )  # fmt: skip

    def step(self, dt: float) -> None:
        """Read the actuators, advance the physics by dt, send the sensors."""
        self.poll()
        self.sim.step(dt)
        self.send_sensors()

    def run(self, rate: float = 250.0, seconds: float | None = None) -> None:
        """Real-time loop at ``rate`` Hz (for a board on a serial port or UDP)."""
        dt = 1.0 / rate
        t0 = time.monotonic()
        n = 0
        while seconds is None or n * dt < seconds:
            self.step(dt)
            n += 1
            delay = t0 + n * dt - time.monotonic()
            if delay > 0:
                time.sleep(delay)
