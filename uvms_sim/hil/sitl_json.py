"""ArduPilot SITL "JSON" physics backend: a real ArduSub SITL flies this simulator's physics.

Protocol (ArduPilot ``libraries/SITL/examples/JSON/readme.md`` and ``SIM_JSON.cpp``):

- SITL sends UDP datagrams to the physics backend's port 9002: little-endian
  ``uint16 magic, uint16 frame_rate, uint32 frame_count, uint16 pwm[16]`` with magic 18458
  (40 bytes), or ``pwm[32]`` with magic 29569 (72 bytes, ``SERVO_32_ENABLE = 1``).
- The backend answers to the datagram's source address with one JSON object framed by
  newlines: ``timestamp`` (s, absolute physics time), ``imu.gyro`` (rad/s, body) and
  ``imu.accel_body`` (m/s², body, specific force), ``position`` and ``velocity`` (NED, m and
  m/s) and ``quaternion`` (w, x, y, z). ArduSub derives its depth/pressure from ``position``.
- ``frame_count`` grows by one per frame: a repeated count is a resend (SITL re-sends every
  10 s while it gets no answer), a smaller one means SITL restarted, a jump means lost frames.

Here: each new frame moves the physics by ``1/frame_rate`` seconds (split into steps of at
most ``max_step``) with the servo PWM of that frame on the thrusters whose motor number is the
servo channel; a resend is answered with the last state, unstepped; a restart puts the
vehicle back to its initial state and time 0. Datagrams with a wrong magic or size, or a zero
frame rate, are counted and dropped. Binds to loopback unless told otherwise.
"""

from __future__ import annotations

import json
import socket
import struct
from dataclasses import dataclass, field

import numpy as np
from transforms3d.quaternions import quat2mat

from ..log import Throttle
from ..sensors import current_accelerations, specific_force
from ..simulator import Simulator

SERVO_16 = struct.Struct("<HHI16H")
SERVO_32 = struct.Struct("<HHI32H")
MAGIC_16, MAGIC_32 = 18458, 29569
DEFAULT_PORT = 9002


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
    """The datagram SITL sends (used by tests and tools that stand in for SITL)."""
    layout, magic = (SERVO_16, MAGIC_16) if len(pwm) <= 16 else (SERVO_32, MAGIC_32)
    n = 16 if layout is SERVO_16 else 32
    return layout.pack(magic, frame_rate, frame_count, *(list(pwm) + [0] * (n - len(pwm))))


@dataclass
class Counters:
    frames: int = 0
    resends: int = 0
    restarts: int = 0
    lost: int = 0
    dropped: dict[str, int] = field(default_factory=dict)


class SitlJsonBackend:
    """Lock-step physics for ArduPilot SITL (see module docstring)."""

    def __init__(
        self,
        sim: Simulator,
        vehicle: int = 0,
        bind: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        max_step: float = 0.0025,
    ) -> None:
        if sim.thrusters is None:
            raise ValueError("the SITL backend needs a system with thrusters")
        self.sim = sim
        self.max_step = max_step
        system = sim.system
        veh = system.vehicles[vehicle] if system is not None else None
        self.root = sim.model.body_index(veh.root) if veh is not None else 0
        names = {t.name for t in veh.thrusters} if veh is not None else set(sim.thrusters.names)
        self.thrusters = [k for k, n in enumerate(sim.thrusters.names) if n in names]  # this vehicle's
        self.initial = (sim.state.q.copy(), sim.state.v.copy())
        self.frame_count: int | None = None
        self.last_reply: bytes | None = None
        self.counters = Counters()
        self.throttle = Throttle()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((bind, port))
        self.port = self.sock.getsockname()[1]

    def close(self) -> None:
        self.sock.close()

    # -- one datagram -------------------------------------------------------------------------
    def handle(self, data: bytes) -> bytes | None:
        """Process one datagram; the JSON answer, or None for a dropped datagram."""
        try:
            packet = parse_servo_packet(data)
        except ValueError as exc:
            key = str(exc).split(" ")[0]
            self.counters.dropped[key] = self.counters.dropped.get(key, 0) + 1
            self.throttle.warn("bad", f"SITL datagram dropped: {exc}")
            return None
        last = self.frame_count
        if last is not None and packet.frame_count == last and self.last_reply is not None:
            self.counters.resends += 1
            return self.last_reply
        if last is not None and packet.frame_count < last:
            self.counters.restarts += 1
            self.throttle.warn(
                "restart", f"SITL restarted (frame {packet.frame_count} after {last}): physics reset"
            )
            q0, v0 = self.initial
            self.sim.reset(q0, v0)
        elif last is not None and packet.frame_count > last + 1:
            self.counters.lost += packet.frame_count - last - 1
        self.frame_count = packet.frame_count
        self.counters.frames += 1
        self.apply_pwm(packet.pwm)
        dt = 1.0 / packet.frame_rate
        n = max(1, int(np.ceil(dt / self.max_step - 1e-9)))
        for _ in range(n):
            self.sim.step(dt / n)
        self.last_reply = self.state_json()
        return self.last_reply

    def apply_pwm(self, pwm: tuple[int, ...]) -> None:
        """Servo n drives this vehicle's thruster with motor number n (0: output not set up)."""
        self.sim.thrusters.set_motor_pwm(pwm, self.thrusters)

    def state_json(self) -> bytes:
        """The JSON frame for the current state (physics time, IMU, NED position/velocity)."""
        sim = self.sim
        _, acc = current_accelerations(sim)
        i = self.root
        s = sim.model.q_slice(i)
        q = sim.state.q[s]
        v = sim.data.v[i]
        frame = {
            "timestamp": sim.state.t,
            "imu": {
                "gyro": [float(x) for x in v[3:6]],
                "accel_body": [float(x) for x in specific_force(sim.data, acc, i, sim.env.gravity)],
            },
            "position": [float(x) for x in q[:3]],
            "velocity": [float(x) for x in quat2mat(q[3:7]) @ v[:3]],
            "quaternion": [float(x) for x in q[3:7]],
        }
        return b"\n" + json.dumps(frame).encode() + b"\n"

    # -- the socket -----------------------------------------------------------------------------
    def serve_once(self, timeout: float = 0.1) -> bool:
        """Wait up to ``timeout`` for a datagram and answer it; True if one was stepped or resent."""
        self.sock.settimeout(timeout)
        try:
            data, addr = self.sock.recvfrom(65535)
        except TimeoutError:
            return False
        reply = self.handle(data)
        if reply is None:
            return False
        self.sock.sendto(reply, addr)
        return True
