"""MAVLink hardware/software in the loop with PX4: PX4 flies the simulated vehicle.

Two ways PX4 runs it, the same messages (PX4's ``simulator_mavlink`` in SITL and its
``mavlink_receiver`` in HITL read them alike):

- SITL, lock-step over TCP (``tcpin:127.0.0.1:4560``): PX4 SITL connects as a TCP client to
  port 4560 (``SimulatorMavlink::run``). Until it does, the physics does not move. PX4 takes its
  clock from ``HIL_SENSOR.time_usec`` (``px4_clock_settime``) and answers each sensor message
  with one ``HIL_ACTUATOR_CONTROLS`` whose ``flags`` bit 0 says it runs lock-step; from its
  first answer on, each physics step waits for the answer to the previous step's sensors (as
  Gazebo's MAVLink interface does), so simulated time moves exactly as fast as PX4 computes,
  never ahead. ``speed`` caps the real-time factor (1: real time, 0: as fast as both run).
  A dropped connection puts the vehicle back to its start and waits for PX4 again.
- HITL, paced (a Pixhawk on a serial port, or UDP): ``run(rate)`` steps at ``rate`` Hz of wall
  time and never waits; PX4 on the board keeps its own clock.

In: ``HIL_ACTUATOR_CONTROLS`` (PX4; ``controls[n-1]`` in [-1, 1] drives motor n at
``1500 + 400 s_n u`` us, ``s_n`` the output's sign in the motor map; all neutral while the
message's mode lacks the armed flag) or ``SERVO_OUTPUT_RAW`` (servo n in us, mirrored about 1500
for a reversed output). Controls outside [-1, 1] are clipped with a throttled warning; a message
with a non-finite control is counted and dropped. Only the autopilot heard first (its MAVLink
system id) drives the thrusters; other systems are counted in ``ignored``, one warning each.
``COMMAND_LONG`` ``MAV_CMD_SET_MESSAGE_INTERVAL`` for ``HIL_STATE_QUATERNION`` (PX4 SITL asks for
it every 5 ms as ground truth) sets its rate.

Out: ``HIL_SENSOR`` every step and ``HIL_GPS`` at its rate (``hil.hil_sensors``: noise, the
World Magnetic Model's field, pressure as PX4 reads it); ``HIL_STATE_QUATERNION`` only at a rate
asked for or given: in HITL PX4 publishes it as its own attitude and position, over its
estimator's (``MavlinkReceiver::handle_message_hil_state_quaternion``).

Motor map (``motor_map``): ``px4-1022`` / ``px4-60002`` (PX4's BlueROV2 Heavy airframes) or
``ardusub`` (the description's own numbering and directions: ArduSub's table); ``hil.px4``.

ArduSub does not take HIL (ArduPilot removed it in 2021, PR 17721): it flies this simulator
through ``hil.sitl_json`` instead.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import socket
import time

os.environ.setdefault("MAVLINK20", "1")  # pymavlink's dialects: MAVLink 2 unless the user says otherwise

import numpy as np
from pymavlink import mavutil
from transforms3d.quaternions import quat2mat

from ..actuators.bank import ThrusterBank
from ..hydro.environment import STANDARD_GRAVITY
from ..log import Throttle
from ..simulator import Simulator
from .hil_sensors import EARTH_RADIUS, GpsSpec, HilSensors
from .px4 import DEFAULT_HOME, LOCKSTEP_FLAG, MAV_MODE_FLAG_SAFETY_ARMED, motor_map

mavlink = mavutil.mavlink
ACTUATORS = ("SERVO_OUTPUT_RAW", "HIL_ACTUATOR_CONTROLS")


class TcpServer:
    """``tcpin:HOST:PORT``: one client at a time, blocking writes (a lock-step stream must not
    lose bytes), pymavlink for the bytes; ``connected`` False once the client has gone."""

    def __init__(self, host: str, port: int) -> None:
        self.listen = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listen.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.listen.bind((host, port))
        except OSError:
            self.listen.close()
            raise
        self.listen.listen(1)
        self.port = self.listen.getsockname()[1]
        self.conn: socket.socket | None = None
        self.mav = mavlink.MAVLink(self, srcSystem=1, srcComponent=200)
        self.mav.robust_parsing = True

    @property
    def connected(self) -> bool:
        return self.conn is not None

    def accept(self, timeout: float) -> bool:
        self.listen.settimeout(timeout)
        try:
            conn, _ = self.listen.accept()
        except (TimeoutError, OSError):
            return False
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.settimeout(5.0)
        self.conn = conn
        self.mav = mavlink.MAVLink(self, srcSystem=1, srcComponent=200)
        self.mav.robust_parsing = True
        return True

    def drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def write(self, buf: bytes) -> None:
        if self.conn is None:
            return
        try:
            self.conn.settimeout(5.0)
            self.conn.sendall(buf)
        except OSError:
            self.drop()

    def read(self, timeout: float) -> list:
        """The messages that arrive within ``timeout`` s (at least one read)."""
        if self.conn is None:
            return []
        self.conn.settimeout(timeout if timeout > 0.0 else 0.0)
        try:
            data = self.conn.recv(65536)
        except (TimeoutError, BlockingIOError):
            return []
        except OSError:
            self.drop()
            return []
        if not data:
            self.drop()
            return []
        return self.mav.parse_buffer(data) or []

    def close(self) -> None:
        self.drop()
        self.listen.close()


def open_link(connection: str, **kwargs):
    """A ``TcpServer`` for ``tcpin:HOST:PORT``, else pymavlink's connection (udpin, serial...)."""
    if connection.startswith("tcpin:"):
        host, _, port = connection[len("tcpin:") :].rpartition(":")
        if not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"{connection}: tcpin needs HOST:PORT with a port in 0-65535")
        return TcpServer(host or "127.0.0.1", int(port))
    return mavutil.mavlink_connection(connection, source_system=1, source_component=200, **kwargs)


class MavlinkHil:
    """Step the simulation and exchange HIL messages with PX4 (see module docstring)."""

    def __init__(
        self,
        sim: Simulator,
        connection: str = "udpin:127.0.0.1:14560",
        home: tuple[float, float, float] = DEFAULT_HOME,
        date: dt.date | None = None,
        motors: str = "px4-60002",
        gps: GpsSpec | None = None,
        step: float = 0.004,
        state_rate: float = 0.0,
        seed: int = 0,
        noise: bool = True,
        **kwargs,
    ) -> None:
        if sim.thrusters is None:
            raise ValueError("MAVLink HIL needs a system with thrusters")
        if not (math.isfinite(step) and step > 0.0):
            raise ValueError(f"step must be a positive number of seconds, got {step!r}")
        self.sim = sim
        self.bank: ThrusterBank = sim.thrusters
        self.dt = step
        numbered = sorted({m for m in sim.thrusters.motors if m})
        self.motors = [m for m in numbered if m <= 16]
        geometry = {}
        for k, m in enumerate(self.bank.motors):
            if m in self.motors and m not in geometry:
                geometry[m] = (self.bank.position[k], self.bank.direction[k] * self.bank.sign[k])
        self.motor_map = motors
        self.signs = motor_map(motors, geometry)
        self.sensors = HilSensors(sim, step, home, date or dt.date.today(), gps or GpsSpec(), seed, noise)
        self.initial = (sim.state.q.copy(), sim.state.v.copy())
        sim.step(step)  # compile (or load) the physics kernels before an autopilot is served
        sim.reset(*self.initial)
        self.link = open_link(connection, **kwargs)
        self.lockstep = isinstance(self.link, TcpServer)
        self.mav = self.link.mav
        self.home = home
        self.state_period = 1.0 / state_rate if state_rate > 0.0 else 0.0
        self.state_next = 0.0
        self.steps = 0
        self.received = dict.fromkeys(ACTUATORS, 0)
        self.dropped = 0
        self.ignored: dict[int, int] = {}
        self.autopilot: int | None = None  # the MAVLink system id whose outputs are applied
        self.autopilot_address = None  # its UDP address, the only one the sensors go to
        self.sent = 0  # time_usec of the last HIL_SENSOR
        self.answered = 0  # the latest time_usec of PX4's answers (its clock when it answered)
        self.lockstep_peer = False  # the autopilot said it runs lock-step (flags bit 0)
        self.armed = False
        self.sessions = 0
        self.waits = 0.0  # wall seconds spent waiting for PX4's answers
        self.stop = False  # set from another thread to end serve()
        self.throttle = Throttle()
        if len(self.motors) < len(numbered):
            self.throttle.log.warning(
                f"MAVLink HIL carries 16 outputs: motors {[m for m in numbered if m > 16]} are not driven"
            )

    def close(self) -> None:
        self.link.close()

    # -- inputs ------------------------------------------------------------------------------
    def _pending(self, timeout: float = 0.0) -> list:
        if self.lockstep:
            return self.link.read(timeout)
        out: list = []
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
                return out
            out.append(msg)

    def poll(self, timeout: float = 0.0) -> int:
        """Apply the pending messages (waiting up to ``timeout`` s for some); how many
        actuator messages were applied."""
        applied = 0
        for msg in self._pending(timeout):
            kind = msg.get_type()
            if kind in ACTUATORS and not self._from_autopilot(msg):
                continue
            if kind == "BAD_DATA":
                self.dropped += 1
            elif kind == "SERVO_OUTPUT_RAW":
                self.received[kind] += 1
                applied += 1
                pwm = {m: getattr(msg, f"servo{m}_raw", 0) for m in self.motors}
                self.bank.set_motor_pwm({m: 1500.0 + self.signs[m] * (p - 1500.0) if p > 0 else 0.0
                                         for m, p in pwm.items()})  # fmt: skip
            elif kind == "HIL_ACTUATOR_CONTROLS":
                applied += self._controls(msg)
            elif kind == "COMMAND_LONG":
                self._command(msg)
        return applied

    def _controls(self, msg) -> int:
        controls = np.asarray(msg.controls, dtype=float)
        if not np.all(np.isfinite(controls)):
            self.dropped += 1
            self.throttle.warn("nan", "HIL_ACTUATOR_CONTROLS with non-finite controls dropped")
            return 0
        self.received["HIL_ACTUATOR_CONTROLS"] += 1
        if msg.time_usec <= self.sent:  # PX4's clock, set by our last HIL_SENSOR; a later one is bogus
            self.answered = max(self.answered, int(msg.time_usec))
        self.lockstep_peer = bool(msg.flags & LOCKSTEP_FLAG)
        self.armed = bool(msg.mode & MAV_MODE_FLAG_SAFETY_ARMED)
        used = controls[[m - 1 for m in self.motors]]
        if np.any(np.abs(used) > 1.0):
            self.throttle.warn("range", f"HIL_ACTUATOR_CONTROLS outside [-1, 1] clipped: {used.tolist()}")
        if not self.armed:
            used = np.zeros_like(used)
        self.bank.set_motor_pwm(
            {m: 1500.0 + 400.0 * self.signs[m] * float(np.clip(c, -1.0, 1.0))
             for m, c in zip(self.motors, used, strict=True)}
        )  # fmt: skip
        return 1

    def _command(self, msg) -> None:
        """MAV_CMD_SET_MESSAGE_INTERVAL for HIL_STATE_QUATERNION: param2 us (> 0 that interval,
        otherwise off); any other command, or a non-finite parameter, is ignored."""
        wanted = float(msg.param1) == mavlink.MAVLINK_MSG_ID_HIL_STATE_QUATERNION
        interval = float(msg.param2)
        if msg.command == mavlink.MAV_CMD_SET_MESSAGE_INTERVAL and wanted and math.isfinite(interval):
            self.state_period = max(interval * 1e-6, self.dt) if interval > 0 else 0.0

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
        t = sim.state.t
        t_us = round(t * 1e6)
        self.mav.hil_sensor_send(t_us, *self.sensors.hil_sensor(self.steps))
        if self.sensors.gps_due(t):
            self.mav.hil_gps_send(t_us, *self.sensors.hil_gps(t))
        if self.state_period and t >= self.state_next - 1e-9:
            self.state_next = t + self.state_period
            self.send_state(t_us)
        self.sent = t_us

    def send_state(self, t_us: int) -> None:
        """HIL_STATE_QUATERNION: the ground truth (PX4 SITL logs it as such)."""
        sim, home = self.sim, self.home
        q, v = sim.state.q[:7], sim.data.v[0]
        R = quat2mat(q[3:7])
        vel = R @ v[:3]
        lat = home[0] + math.degrees(q[0] / EARTH_RADIUS)
        lon = home[1] + math.degrees(q[1] / (EARTH_RADIUS * math.cos(math.radians(home[0]))))
        g_mg = [
            int(np.clip(x / STANDARD_GRAVITY * 1000.0, -32768, 32767)) for x in self.sensors.specific_force
        ]
        self.mav.hil_state_quaternion_send(
            t_us, [float(x) for x in q[3:7]], *map(float, v[3:6]), int(lat * 1e7), int(lon * 1e7),
            int((home[2] - q[2]) * 1000), *(int(np.clip(x * 100, -32768, 32767)) for x in vel), 0, 0, *g_mg,
        )  # fmt: skip

    # -- stepping ----------------------------------------------------------------------------
    def step(self, dt: float | None = None) -> None:
        """Read the actuators, advance the physics by one step, send the sensors (no waiting)."""
        self.poll()
        self.advance(dt or self.dt)

    def advance(self, dt: float) -> None:
        self.sim.step(dt)
        self.steps += 1
        self.send_sensors()

    def restart(self) -> None:
        """A new PX4 session: the vehicle back at its start, time 0."""
        q0, v0 = self.initial
        self.sim.reset(q0, v0)
        self.bank.set_pwm(np.full(len(self.bank), 1500.0))
        self.sensors.reset()
        self.steps, self.state_next, self.answered, self.sent = 0, 0.0, 0, 0
        self.autopilot, self.received = None, dict.fromkeys(ACTUATORS, 0)

    def wait_for_answer(self, timeout: float = 1.0) -> bool:
        """Lock-step: wait until PX4 has answered the last sensors: an actuator message stamped
        with PX4's clock, which the last HIL_SENSOR set (answers to older sensors, a backlog,
        do not count). False if the connection dropped; warns (throttled) after ``timeout`` s
        of silence."""
        t0 = last = time.monotonic()
        while self.answered < self.sent:
            if not self.link.connected or self.stop:
                return False
            if self.poll(timeout) == 0 and time.monotonic() - last > timeout:
                self.throttle.warn(
                    "silent", f"waiting for PX4's answer to HIL_SENSOR at t = {self.sim.state.t:.3f} s"
                )
                last = time.monotonic()
        self.waits += time.monotonic() - t0
        return True

    def serve(
        self, seconds: float | None = None, speed: float = 1.0, connect_timeout: float | None = None
    ) -> bool:
        """Lock-step over TCP for ``seconds`` of simulated time (None: until interrupted); False
        if no PX4 connected within ``connect_timeout`` s of wall time."""
        if not self.lockstep:
            raise ValueError("lock-step runs over tcpin: (PX4 SITL); use run() for a board")
        t0_wall = t0_sim = 0.0
        while (seconds is None or self.sim.state.t < seconds - 1e-9) and not self.stop:
            if not self.link.connected:
                if self.sessions:
                    self.throttle.log.warning("PX4 disconnected: vehicle back at its start, waiting for PX4")
                    self.restart()
                waiting = time.monotonic()
                while not self.link.accept(0.2):
                    late = connect_timeout is not None and time.monotonic() - waiting > connect_timeout
                    if late or self.stop:
                        return False
                self.sessions += 1
                t0_wall, t0_sim = time.monotonic(), self.sim.state.t
            self.advance(self.dt)
            if self.received["HIL_ACTUATOR_CONTROLS"] and not self.wait_for_answer():
                continue
            self.poll()
            pace = speed if self.received["HIL_ACTUATOR_CONTROLS"] else (speed or 1.0)
            if pace > 0.0:  # at most speed x real time; until PX4's first answer at most real time
                delay = t0_wall + (self.sim.state.t - t0_sim) / pace - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        return True

    def run(self, rate: float = 250.0, seconds: float | None = None) -> None:
        """Paced loop at ``rate`` Hz of wall time, never waiting for the autopilot (HITL)."""
        dt = 1.0 / rate
        t0 = time.monotonic()
        n = 0
        while seconds is None or n * dt < seconds:
            self.step(dt)
            n += 1
            delay = t0 + n * dt - time.monotonic()
            if delay > 0:
                time.sleep(delay)
