"""ArduPilot SITL "JSON" physics backend: a real ArduSub SITL flies this simulator's physics.

Protocol (ArduPilot ``libraries/SITL/SIM_JSON.cpp`` and ``libraries/SITL/examples/JSON/readme.md``):

- SITL sends UDP datagrams to the physics backend's port 9002: little-endian
  ``uint16 magic, uint16 frame_rate, uint32 frame_count, uint16 pwm[16]`` with magic 18458
  (40 bytes), or ``pwm[32]`` with magic 29569 (72 bytes, ``SERVO_32_ENABLE = 1``).
- The backend answers to the datagram's source address with one JSON object framed by
  newlines: ``timestamp`` (s, physics time), ``imu.gyro`` (rad/s, body) and ``imu.accel_body``
  (m/s², body, specific force), ``position`` and ``velocity`` (NED, m and m/s) and
  ``quaternion`` (w, x, y, z). ArduSub derives its depth/pressure from ``position``.
  These are the ground truth, whatever sensors the description declares
  (``vehicles[].sensors`` are for the ROS node): ArduPilot's SITL adds its own sensor models
  and noise (``SIM_GYR1_RND``, ``SIM_ACC1_RND``, ``SIM_BARO_RND``, ...) to what it receives.
- SIM_JSON does not use a JSON parser: it finds ``key`` by ``strstr``, skips the key and two
  characters (``":``) and runs ``sscanf(p, "[%f, %f, %f]")`` (or ``atof``) right there, so the
  object must be written with compact separators: ``"gyro":[1.0,2.0,3.0]``. A space after the
  colon fails every vector (``Failed to parse Vector3f``). ``hil.sitl_peer`` parses exactly so.
- SITL counts a frame only when it parsed the answer: it re-sends the same ``frame_count``
  when an answer was lost or unreadable (and every second while it hears nothing), so a
  repeated count is a resend; a count that moves back (other than the 32-bit wrap from
  2^32-1 to 0) means SITL restarted; a jump means frames were lost.

Here: each new frame moves the physics by ``1/frame_rate`` seconds (split into steps of at
most ``max_step``) with the servo PWM of that frame on the thrusters whose motor number is the
servo channel; a resend is answered with the last state, unstepped; a restart puts the
vehicle back to its initial state and time 0.

One SITL per session: the backend serves the first address it hears from and ignores
datagrams from any other address (counted, with one warning per address) until its peer has
been silent for ``peer_timeout`` seconds (a restarted SITL has a new source port and is then
served as a new session, from the initial state). Datagrams with a wrong magic or size, a
zero frame rate or source port 0 are counted and dropped; socket errors are counted and never
end the backend; a physics failure (a state that stops being finite) is logged and the
vehicle is put back to its initial state with time running on. Binds to loopback unless told
otherwise.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

import numpy as np
from transforms3d.quaternions import mat2quat, qmult

from ..actuators.bank import ThrusterBank
from ..log import Throttle
from ..sensors import accelerometer, current_accelerations
from ..simulator import Simulator
from ..spatial import Array

SERVO_16 = struct.Struct("<HHI16H")
SERVO_32 = struct.Struct("<HHI32H")
MAGIC_16, MAGIC_32 = 18458, 29569
DEFAULT_PORT = 9002
WRAP = 1 << 32


@dataclass(frozen=True)
class ServoPacket:
    frame_rate: int
    frame_count: int
    pwm: tuple[int, ...]


def parse_servo_packet(data: bytes) -> ServoPacket:
    """Decode one SITL output datagram; ValueError says what is wrong with it."""
    if len(data) < 2:
        raise ValueError(f"datagram of {len(data)} bytes is too short for a magic number")
    magic = struct.unpack_from("<H", data)[0]
    layout = {MAGIC_16: SERVO_16, MAGIC_32: SERVO_32}.get(magic)
    if layout is None:
        raise ValueError(f"magic {magic} is neither {MAGIC_16} (16 servos) nor {MAGIC_32} (32 servos)")
    if len(data) != layout.size:
        raise ValueError(f"magic {magic} needs {layout.size} bytes, got {len(data)}")
    _, frame_rate, frame_count, *pwm = layout.unpack(data)
    if frame_rate == 0:
        raise ValueError("frame_rate is 0")
    return ServoPacket(frame_rate, frame_count, tuple(pwm))


def encode_servo_packet(frame_rate: int, frame_count: int, pwm: list[int]) -> bytes:
    """The datagram SITL sends (used by ``hil.sitl_peer`` and tests that stand in for SITL)."""
    layout, magic = (SERVO_16, MAGIC_16) if len(pwm) <= 16 else (SERVO_32, MAGIC_32)
    n = 16 if layout is SERVO_16 else 32
    return layout.pack(magic, frame_rate, frame_count % WRAP, *(list(pwm) + [0] * (n - len(pwm))))


_D, _F = "%.17g", "%.9g"  # doubles (ArduPilot's %lf / atof) and floats (%f) to round-trip precision
_ANSWER = (
    '\n{"timestamp":' + _D + ',"imu":{"gyro":[' + ",".join([_F] * 3) + '],"accel_body":['
    + ",".join([_F] * 3) + ']},"position":[' + ",".join([_D] * 3) + '],"velocity":['
    + ",".join([_F] * 3) + '],"quaternion":[' + ",".join([_F] * 4) + "]}\n"
)  # fmt: skip


def encode_state(t: float, gyro, accel, position, velocity, quaternion) -> bytes:
    """One answer as SIM_JSON reads it: newline-framed, compact separators (see module doc),
    doubles with 17 significant digits and floats with 9 (each round-trips exactly). Every
    value must be finite (``sscanf`` would read ``nan`` and ArduPilot's EKF with it)."""
    return (_ANSWER % (t, *gyro, *accel, *position, *velocity, *quaternion)).encode()


def check_address(bind: str, port: int) -> None:
    """ValueError naming what is wrong with a bind address or a port."""
    try:
        ipaddress.IPv4Address(bind)
    except ValueError:
        raise ValueError(f"bind address {bind!r} is not an IPv4 address such as 127.0.0.1") from None
    if not (isinstance(port, int) and 0 <= port <= 65535):
        raise ValueError(f"port {port!r} is not in 0-65535")


def vehicle_state_json(
    sim: Simulator, root: int, q_root: slice, q_rel: Array | None = None, evaluate: bool = True
) -> bytes:
    """The answer for the current state of the vehicle whose root body is ``root``: physics
    time, IMU, NED position and velocity. ``q_root`` is the free joint's coordinates of that
    body, or, for a vehicle rigidly joined to another one (no free joint of its own), of the
    body that carries it, with ``q_rel`` the constant rotation from that body to this one
    (``rigid_offset``). ``evaluate=False``: the compiled dynamics were evaluated at this state
    already (for the answer of another vehicle of the same step). ValueError when a value is not finite."""
    fast = sim.fast_dynamics()
    st = sim.state
    if fast is None or sim.constraints:
        _, acc = current_accelerations(sim)
        R, v, a = sim.data.R_world[root], sim.data.v[root], acc[root]
        p = sim.data.p_world[root]
    else:  # one compiled evaluation; only this body's rows are read
        if evaluate:
            fast.aba(st.q, st.v, sim.tau, sim.f_ext, None, st.t)
        R, v, a = fast.body_frame(root)
        p = fast.body_position(root)
    q = st.q[q_root]
    position, quaternion = (q[:3], q[3:7]) if q_rel is None else (p, qmult(q[3:7], q_rel))
    accel = accelerometer(R, v, a, sim.env.gravity)
    values = np.concatenate(((st.t,), v[3:6], accel, position, R @ v[:3], quaternion))
    if not np.all(np.isfinite(values)):
        raise ValueError("the state is not finite")
    x = values.tolist()
    return encode_state(x[0], x[1:4], x[4:7], x[7:10], x[10:13], x[13:17])


def rigid_offset(sim: Simulator, body: int) -> tuple[int, Array | None]:
    """The body with a free joint that carries ``body`` (itself, if it has one) and the
    rotation from that body to ``body`` as a quaternion (None for itself), for a body held by
    fixed joints (vehicles joined by rigid connections)."""
    model = sim.model
    free = body
    while model.q_slice(free).stop - model.q_slice(free).start != 7 and model.parents[free] >= 0:
        free = int(model.parents[free])
    if free == body:
        return body, None
    current_accelerations(sim)  # the kinematics of the current state
    R = sim.data.R_world
    q_rel = mat2quat(R[free].T @ R[body])
    return free, q_rel / np.linalg.norm(q_rel)


@dataclass
class Counters:
    frames: int = 0
    resends: int = 0
    restarts: int = 0
    sessions: int = 0
    lost: int = 0
    physics_errors: int = 0
    socket_errors: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    ignored: dict[str, int] = field(default_factory=dict)  # other senders, by address

    def drop(self, key: str) -> None:
        self.dropped[key] = self.dropped.get(key, 0) + 1


def admit(
    addr: tuple[str, int],
    peer: tuple[str, int] | None,
    peer_seen: float,
    now: float,
    timeout: float,
    counters: Counters,
    throttle: Throttle,
    who: str,
) -> str:
    """The session rule of a SITL JSON port for a datagram from ``addr``: ``"peer"`` (the
    session's peer), ``"new"`` (no peer, or the peer silent for ``timeout``: a new session may
    start) or ``"dropped"`` (source port 0, or another sender while the peer is live; counted,
    and said once per sender). ``who`` starts the warnings ("SITL", "SITL instance 1:")."""
    if addr[1] == 0:
        counters.drop("source-port-0")
        throttle.warn("port0", f"SITL datagram from {addr[0]} port 0 dropped (no way to answer)")
        return "dropped"
    if addr == peer:
        return "peer"
    if peer is not None and now - peer_seen < timeout:
        key = f"{addr[0]}:{addr[1]}"
        first = key not in counters.ignored
        counters.ignored[key] = counters.ignored.get(key, 0) + 1
        if first:
            throttle.log.warning(
                f"{who} datagram from {key} ignored: serving {peer[0]}:{peer[1]} "
                f"(another sender is served once that one has been silent for {timeout} s)"
            )
        return "dropped"
    return "new"


@dataclass
class FrameTimes:
    """Wall time spent per stage over the frames served (s): waiting for and reading the
    datagram, stepping the physics, the answer (sensor accelerations, JSON, sending it)."""

    receive: float = 0.0
    physics: float = 0.0
    reply: float = 0.0
    frames: int = 0

    def split(self) -> dict[str, float]:
        """Mean microseconds per frame of each stage."""
        n = max(1, self.frames)
        return {
            "receive": 1e6 * self.receive / n,
            "physics": 1e6 * self.physics / n,
            "reply": 1e6 * (self.reply - self.physics) / n,
        }


class SitlJsonBackend:
    """Lock-step physics for ArduPilot SITL (see module docstring)."""

    def __init__(
        self,
        sim: Simulator,
        vehicle: int = 0,
        bind: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        max_step: float = 0.0025,
        peer_timeout: float = 2.0,
    ) -> None:
        if sim.thrusters is None:
            raise ValueError("the SITL backend needs a system with thrusters")
        check_address(bind, port)
        self.sim = sim
        self.bank: ThrusterBank = sim.thrusters
        self.max_step = max_step
        self.peer_timeout = peer_timeout
        self.vehicle = vehicle
        system = sim.system
        veh = system.vehicles[vehicle] if system is not None else None
        self.root = sim.model.body_index(veh.root) if veh is not None else 0
        self.q_root = sim.model.q_slice(self.root)
        names = {t.name for t in veh.thrusters} if veh is not None else set(sim.thrusters.names)
        self.thrusters = [k for k, n in enumerate(sim.thrusters.names) if n in names]  # this vehicle's
        self.initial = (sim.state.q.copy(), sim.state.v.copy())
        self.frame_count: int | None = None
        self.last_reply: bytes | None = None
        self.last_pwm: tuple[int, ...] | None = None
        self.peer: tuple[str, int] | None = None
        self.peer_seen = -np.inf
        self.counters = Counters()
        self.times = FrameTimes()
        self.throttle = Throttle()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.bind((bind, port))
        except OSError as exc:
            self.sock.close()
            raise ValueError(f"cannot listen on {bind}:{port}: {exc.strerror or exc}") from None
        self.port = self.sock.getsockname()[1]

    def close(self) -> None:
        self.sock.close()

    # -- one datagram -------------------------------------------------------------------------
    def handle(self, data: bytes) -> bytes | None:
        """Process one datagram of the current peer; the answer, or None for a dropped one."""
        try:
            packet = parse_servo_packet(data)
        except ValueError as exc:
            self.counters.drop(str(exc).split(" ")[0])
            self.throttle.warn("bad", f"SITL datagram dropped: {exc}")
            return None
        last = self.frame_count
        if last is not None:
            ahead = (packet.frame_count - last) % WRAP  # the count wraps from 2^32-1 to 0
            if ahead == 0 and self.last_reply is not None:
                self.counters.resends += 1
                return self.last_reply
            if ahead >= WRAP // 2:
                self.counters.restarts += 1
                self.throttle.warn(
                    "restart", f"SITL restarted (frame {packet.frame_count} after {last}): physics reset"
                )
                self.restart()
            elif ahead > 1:
                self.counters.lost += ahead - 1
        self.frame_count = packet.frame_count
        self.counters.frames += 1
        self.apply_pwm(packet.pwm)
        dt = 1.0 / packet.frame_rate
        n = max(1, int(np.ceil(dt / self.max_step - 1e-9)))
        try:
            t0 = time.perf_counter()
            for _ in range(n):
                self.sim.step(dt / n)
            self.times.physics += time.perf_counter() - t0
            self.last_reply = self.state_json()
        except (ValueError, FloatingPointError, ArithmeticError) as exc:
            self.counters.physics_errors += 1
            self.throttle.warn("physics", f"SITL physics failed ({exc}): vehicle back to its initial state")
            t = self.sim.state.t
            q0, v0 = self.initial
            self.sim.reset(q0, v0)
            self.sim.state.t = t + dt  # time keeps running for SITL's clock
            self.last_reply = self.state_json()
        return self.last_reply

    def restart(self) -> None:
        """A new SITL session: the initial state at time 0, nothing remembered of the frames."""
        q0, v0 = self.initial
        self.sim.reset(q0, v0)
        self.frame_count = None
        self.last_reply = None

    def apply_pwm(self, pwm: tuple[int, ...]) -> None:
        """Servo n drives this vehicle's thruster with motor number n (0: output not set up)."""
        if pwm != self.last_pwm:
            self.bank.set_motor_pwm(np.asarray(pwm, dtype=float), self.thrusters)
            self.last_pwm = pwm

    def servo_outputs(self, vehicle: int) -> tuple[int, ...] | None:
        """Every servo PWM of SITL's last frame (SERVO1 first: thrusters, camera mount, lights)
        for the description's vehicle ``vehicle``; None before the first frame, or for a vehicle
        this SITL does not fly."""
        return self.last_pwm if vehicle == self.vehicle else None

    def state_json(self) -> bytes:
        """The answer for the current state (physics time, IMU, NED position/velocity)."""
        return vehicle_state_json(self.sim, self.root, self.q_root)

    # -- the session ----------------------------------------------------------------------------
    def accept(self, addr: tuple[str, int], now: float) -> bool:
        """Whether a datagram from ``addr`` is served: the session's peer, or the first sender
        after the peer has been silent for ``peer_timeout`` (a new session)."""
        verdict = admit(
            addr, self.peer, self.peer_seen, now, self.peer_timeout, self.counters, self.throttle, "SITL"
        )
        if verdict == "peer":
            self.peer_seen = now
        if verdict != "new":
            return verdict == "peer"
        if self.peer is not None:
            self.throttle.log.warning(
                f"SITL peer {self.peer[0]}:{self.peer[1]} silent; new session with {addr[0]}:{addr[1]}"
            )
            self.restart()
        self.peer, self.peer_seen = addr, now
        self.counters.sessions += 1
        return True

    # -- the socket -----------------------------------------------------------------------------
    def serve_once(self, timeout: float = 0.1, lock: AbstractContextManager | None = None) -> bool:
        """Wait up to ``timeout`` for a datagram and answer it; True if one was stepped or resent.
        With ``lock``, only the answer (the physics step) is made holding it, not the wait."""
        times = self.times
        t0 = time.perf_counter()
        try:
            self.sock.settimeout(timeout)
            data, addr = self.sock.recvfrom(65535)
        except TimeoutError:
            return False
        except OSError as exc:  # e.g. ICMP port unreachable from an earlier answer
            self.counters.socket_errors += 1
            self.throttle.warn("socket", f"SITL socket error ignored: {exc}")
            return False
        t1 = time.perf_counter()
        with lock or nullcontext():
            reply = self.handle(data) if self.accept(addr, time.monotonic()) else None
        if reply is None:
            return False
        try:
            self.sock.sendto(reply, addr)
        except OSError as exc:
            self.counters.socket_errors += 1
            self.throttle.warn("socket", f"SITL answer to {addr} not sent: {exc}")
        times.receive += t1 - t0
        times.reply += time.perf_counter() - t1  # less the physics, in FrameTimes.split
        times.frames += 1
        return True
