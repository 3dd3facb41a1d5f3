"""The Ping2 echosounder (Ping1D) and the Ping360 scanning sonar as Ping devices on UDP, as
their Ethernet versions are: a host (ping-viewer, BlueOS, the ``bluerobotics-ping`` client, the
ping360_sonar ROS driver) sends Ping protocol frames to the device's port and the device answers
to the address they came from; its streams (the Ping1D's ``continuous_start``, the Ping360's
``auto_transmit``) go to the last host that spoke.

The echoes come from the scene (``sensors.echo``): the transducer's pose is what ``pose()``
returns (sensor axes -> world NED, position; None before the first state), its beam along its
x axis. The Ping1D's beam is a 25 degree cone (its data sheet), its distance the nearest
surface in the cone (``SceneRays.cone_range``, as the altimeter's) with 0.5 % noise, its
profile 200 samples (``set_oss_profile_configuration``: 200-1200) over its scan range.
The Ping360's beam is 2 degrees wide and 25 degrees
high (data sheet), turned by the head ``angle`` (gradians, 400 a turn) about the sensor's z
axis from its x axis; sample ``i`` is at ``i * sample_period * 25 ns * c / 2`` with c = 1500
m/s. Settings out of the devices' ranges are clamped to them (the answer says what was used).
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Callable

import numpy as np

from ..log import Throttle
from ..scene import SceneRays
from ..sensors.echo import beam_rays, envelope, quantise
from . import ping_protocol as pp

Array = np.ndarray
Pose = Callable[[], "tuple[Array, Array] | None"]
SOUND_SPEED = 1500.0  # m/s
PING1D_PORT, PING360_PORT = 9090, 12345  # BlueOS's first Ping1D, the Ping360's Ethernet default
PROTOCOL = (1, 0, 0)
DEG = math.pi / 180.0


def _rot_z(angle: float) -> Array:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class PingDevice:
    """What both devices share: the common messages and the requests."""

    device_type, device_revision, firmware = 0, 0, (0, 0, 0)
    sends: frozenset[int] = frozenset()

    def __init__(self, rays: SceneRays, pose: Pose, noise: bool = True, seed: int = 0) -> None:
        self.rays, self.pose = rays, pose
        self.rng = np.random.default_rng(seed) if noise else None
        self.device_id = 1
        self.lock = threading.Lock()

    def handle(self, msg: pp.Message) -> list[bytes]:
        """The frames that answer ``msg``."""
        with self.lock:
            fields = msg.fields()
            if msg.id == pp.GENERAL_REQUEST and fields is not None:
                return self.answer(int(fields["requested_id"]), msg.src)
            if not msg.payload and msg.id in self.sends | {pp.DEVICE_INFORMATION, pp.PROTOCOL_VERSION}:
                return self.answer(msg.id, msg.src)
            if fields is None:
                return [
                    self.nack(msg, "unknown message" if msg.id not in pp.MESSAGES else "payload too short")
                ]
            return self.command(msg, fields)

    def answer(self, msg_id: int, to: int) -> list[bytes]:
        if msg_id == pp.DEVICE_INFORMATION:
            major, minor, patch = self.firmware
            return [
                pp.pack(
                    pp.DEVICE_INFORMATION, self.device_id, to, device_type=self.device_type,
                    device_revision=self.device_revision, firmware_version_major=major,
                    firmware_version_minor=minor, firmware_version_patch=patch,
                )
            ]  # fmt: skip
        if msg_id == pp.PROTOCOL_VERSION:
            v = PROTOCOL
            return [
                pp.pack(
                    pp.PROTOCOL_VERSION,
                    self.device_id,
                    to,
                    version_major=v[0],
                    version_minor=v[1],
                    version_patch=v[2],
                )
            ]
        if msg_id in self.sends:
            return [self.message(msg_id, to)]
        return [
            pp.pack(
                pp.NACK, self.device_id, to, nacked_id=pp.GENERAL_REQUEST, nack_message=b"cannot send that"
            )
        ]

    def nack(self, msg: pp.Message, why: str) -> bytes:
        return pp.pack(pp.NACK, self.device_id, msg.src, nacked_id=msg.id & 0xFFFF, nack_message=why.encode())

    def ack(self, msg: pp.Message) -> bytes:
        return pp.pack(pp.ACK, self.device_id, msg.src, acked_id=msg.id)

    def command(self, msg: pp.Message, fields: dict) -> list[bytes]:
        return [self.nack(msg, "not a command of this device")]

    def message(self, msg_id: int, to: int) -> bytes:
        raise NotImplementedError

    def stream(self, now: float) -> list[bytes]:
        """Frames due at time ``now`` (s, monotonic) on the device's own: none by default."""
        return []

    def period(self) -> float:
        return 0.05


def _clamp(value: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, int(value)))


class Ping1D(PingDevice):
    """The Ping2 echosounder (Ping1D messages)."""

    device_type, device_revision, firmware = 1, 2, (3, 29, 0)
    sends = frozenset(
        {1200, 1201, 1202, 1203, 1204, 1205, 1206, 1207, 1208, 1210, 1211, 1212, 1213, 1214, 1215, 1300, 1301}
    )
    HALF = 12.5 * DEG  # half of the 25 degree beam
    MIN_RANGE, MAX_RANGE = 0.3, 100.0  # m, data sheet (0.3-100 m)
    GAINS = (0.25, 0.4, 0.6, 1.0, 1.6, 2.5, 4.0)  # per gain_setting 0-6: this simulator's scale
    NOISE = 0.005  # of the range (1 sigma): resolution 0.5 % of the range, data sheet

    def __init__(self, rays: SceneRays, pose: Pose, noise: bool = True, seed: int = 0) -> None:
        super().__init__(rays, pose, noise, seed)
        self.speed_of_sound = 1500000  # mm/s
        self.mode_auto, self.gain_setting, self.ping_enabled = 1, 3, 1
        self.scan_start, self.scan_length = 0, 30000  # mm
        self.ping_interval = 100  # ms
        self.ping_number = 0
        self.continuous: set[int] = set()
        self.samples, self.normalization, self.enhance = 200, 0, 0  # profile points
        self.next_ping = 0.0
        self.directions = beam_rays(np.eye(3), self.HALF, self.HALF, 21, 21)

    def transmit_duration(self) -> int:
        return _clamp(5 + self.scan_length // 100, 5, 500)  # us, longer for longer ranges

    def command(self, msg: pp.Message, fields: dict) -> list[bytes]:
        f = fields
        if msg.id in (1000, pp.SET_DEVICE_ID):
            self.device_id = _clamp(f["device_id"], 0, 254)
        elif msg.id == 1001:
            self.scan_start = _clamp(f["scan_start"], 0, int(self.MAX_RANGE * 1000))
            self.scan_length = _clamp(f["scan_length"], 1000, int(self.MAX_RANGE * 1000) - self.scan_start)
            self.mode_auto = 0
        elif msg.id == 1002:
            self.speed_of_sound = _clamp(f["speed_of_sound"], 1000000, 2000000)
        elif msg.id == 1003:
            self.mode_auto = 1 if f["mode_auto"] else 0
        elif msg.id == 1004:
            self.ping_interval = _clamp(f["ping_interval"], 30, 65535)
        elif msg.id == 1005:
            self.gain_setting = _clamp(f["gain_setting"], 0, 6)
            self.mode_auto = 0
        elif msg.id == 1006:
            self.ping_enabled = 1 if f["ping_enabled"] else 0
        elif msg.id == 1007:
            self.samples = _clamp(f["number_of_points"], 200, 1200)
            self.normalization, self.enhance = (
                int(bool(f["normalization_enabled"])),
                int(bool(f["enhance_enabled"])),
            )
        elif msg.id == 1400:
            if f["id"] not in self.sends:
                return [self.nack(msg, "cannot stream that")]
            self.continuous.add(int(f["id"]))
        elif msg.id == 1401:
            self.continuous.discard(int(f["id"]))
        else:
            return super().command(msg, fields)
        return [self.ack(msg)]

    def measure(self) -> tuple[int, int, bytes]:
        """(distance mm, confidence %, profile samples) of one ping now."""
        self.ping_number += 1
        pose = self.pose()
        if pose is None or not self.ping_enabled:
            return 0, 0, bytes(self.samples)
        R, p = pose
        # the speed of sound the host set scales the ranges it is told (a wrong one, wrong ranges)
        scale = self.speed_of_sound / 1000.0 / SOUND_SPEED  # mm/s against the water's m/s
        r = self.rays.cone_range(p, R[:, 0], self.HALF)
        if self.rng is not None and math.isfinite(r):
            r += self.NOISE * r * float(self.rng.standard_normal())
        if self.mode_auto:
            want = 1.5 * r if math.isfinite(r) else 30.0
            self.scan_start, self.scan_length = 0, int(1000 * min(self.MAX_RANGE, max(2.0, math.ceil(want))))
        start, length = self.scan_start / 1000.0 / scale, self.scan_length / 1000.0 / scale
        directions, weights = self.directions
        echo = envelope(
            self.rays, p, directions @ R.T, weights, length / self.samples, self.samples,
            SOUND_SPEED * self.transmit_duration() * 0.5e-6, start,
        )  # fmt: skip
        data = quantise(echo, self.GAINS[self.gain_setting], 0.02, self.rng).tobytes()
        inside = math.isfinite(r) and self.MIN_RANGE <= r and start <= r <= start + length
        return (round(1000.0 * r * scale) if inside else 0), (100 if inside else 0), data

    def message(self, msg_id: int, to: int) -> bytes:
        d, src = self.device_id, self.device_id
        if msg_id in (1211, 1212, 1300):
            distance, confidence, data = self.measure()
            common = dict(
                distance=distance, confidence=confidence, transmit_duration=self.transmit_duration(),
                ping_number=self.ping_number, scan_start=self.scan_start, scan_length=self.scan_length,
                gain_setting=self.gain_setting,
            )  # fmt: skip
            if msg_id == 1211:
                return pp.pack(1211, src, to, distance=distance, confidence=confidence)
            if msg_id == 1212:
                return pp.pack(1212, src, to, **common)
            return pp.pack(1300, src, to, profile_data=data, **common)
        values = {
            1200: dict(device_type=1, device_model=self.device_revision,
                       firmware_version_major=self.firmware[0], firmware_version_minor=self.firmware[1]),
            1201: dict(device_id=d),
            1202: dict(voltage_5=5000),
            1203: dict(speed_of_sound=self.speed_of_sound),
            1204: dict(scan_start=self.scan_start, scan_length=self.scan_length),
            1205: dict(mode_auto=self.mode_auto),
            1206: dict(ping_interval=self.ping_interval),
            1207: dict(gain_setting=self.gain_setting),
            1208: dict(transmit_duration=self.transmit_duration()),
            1210: dict(firmware_version_major=self.firmware[0], firmware_version_minor=self.firmware[1],
                       voltage_5=5000, ping_interval=self.ping_interval, gain_setting=self.gain_setting,
                       mode_auto=self.mode_auto),
            1213: dict(processor_temperature=3500),  # cdeg C
            1214: dict(pcb_temperature=3000),
            1215: dict(ping_enabled=self.ping_enabled),
            1301: dict(number_of_points=self.samples, normalization_enabled=self.normalization,
                       enhance_enabled=self.enhance),
        }[msg_id]  # fmt: skip
        return pp.pack(msg_id, src, to, **values)

    def stream(self, now: float) -> list[bytes]:
        with self.lock:
            if not self.continuous or now < self.next_ping:
                return []
            self.next_ping = now + self.ping_interval / 1000.0
            return [self.message(i, 0) for i in sorted(self.continuous)]

    def period(self) -> float:
        return min(0.05, self.ping_interval / 1000.0)


class Ping360(PingDevice):
    """The Ping360 scanning sonar (Ping360 messages: ``transducer``, ``auto_transmit``)."""

    device_type, device_revision, firmware = 2, 1, (3, 3, 0)
    sends = frozenset({2300})
    HALF_H, HALF_V = 1.0 * DEG, 12.5 * DEG  # half of the 2 x 25 degree beam
    GAINS = (2.0, 4.0, 8.0)  # low, normal, high: this simulator's scale
    TICK = 25e-9  # s, the sample period's unit
    MOTOR_STEP = 2.4e-3  # s per gradian step of the head (this simulator's pacing)

    def __init__(self, rays: SceneRays, pose: Pose, noise: bool = True, seed: int = 0) -> None:
        super().__init__(rays, pose, noise, seed)
        self.directions = beam_rays(np.eye(3), self.HALF_H, self.HALF_V, 5, 41)
        self.defaults()

    def defaults(self) -> None:
        self.mode, self.gain_setting, self.angle = 1, 0, 0
        self.transmit_duration, self.sample_period, self.transmit_frequency = 32, 80, 740
        self.number_of_samples = 1200
        self.auto: dict | None = None  # start, stop, steps, delay, direction while auto-transmitting
        self.next_ping = 0.0

    def settings(self, f: dict) -> None:
        self.gain_setting = _clamp(f["gain_setting"], 0, 2)
        self.transmit_duration = _clamp(f["transmit_duration"], 1, 1000)
        self.sample_period = _clamp(f["sample_period"], 80, 40000)
        self.transmit_frequency = _clamp(f["transmit_frequency"], 500, 1000)
        self.number_of_samples = _clamp(f["number_of_samples"], 200, 1200)

    def command(self, msg: pp.Message, fields: dict) -> list[bytes]:
        f = fields
        if msg.id == 2601:
            self.settings(f)
            self.auto = None
            self.angle = int(f["angle"]) % 400
            data = self.ping() if f["transmit"] else b""
            return [self.device_data(2300, msg.src, data)]
        if msg.id == 2602:
            self.settings(f)
            start, stop = int(f["start_angle"]) % 400, int(f["stop_angle"]) % 400
            self.auto = dict(start=start, stop=stop, steps=_clamp(f["num_steps"], 1, 10),
                             delay=_clamp(f["delay"], 0, 100), direction=1)  # fmt: skip
            self.angle = start
            self.next_ping = 0.0
            return []
        if msg.id == 2903:
            self.auto = None
            return [self.ack(msg)]
        if msg.id == 2600:
            self.defaults()
            return [self.ack(msg)]
        if msg.id == 2000:
            self.device_id = _clamp(f["id"], 0, 254)
            return [self.ack(msg)]
        return super().command(msg, fields)

    def sample_length(self) -> float:
        """Range between samples (m)."""
        return self.sample_period * self.TICK * SOUND_SPEED / 2.0

    def ping(self) -> bytes:
        pose = self.pose()
        n = self.number_of_samples
        if pose is None:
            return bytes(n)
        R, p = pose
        head = R @ _rot_z(self.angle * 2.0 * math.pi / 400.0)
        directions, weights = self.directions
        echo = envelope(
            self.rays, p, directions @ head.T, weights, self.sample_length(), n,
            SOUND_SPEED * self.transmit_duration * 0.5e-6,
        )  # fmt: skip
        return quantise(echo, self.GAINS[self.gain_setting], 0.02, self.rng).tobytes()

    def device_data(self, msg_id: int, to: int, data: bytes) -> bytes:
        extra = {}
        if msg_id == 2301 and self.auto is not None:
            a = self.auto
            extra = dict(start_angle=a["start"], stop_angle=a["stop"], num_steps=a["steps"], delay=a["delay"])
        return pp.pack(
            msg_id, self.device_id, to, mode=self.mode, gain_setting=self.gain_setting, angle=self.angle,
            transmit_duration=self.transmit_duration, sample_period=self.sample_period,
            transmit_frequency=self.transmit_frequency, number_of_samples=self.number_of_samples, data=data,
            **extra,
        )  # fmt: skip

    def message(self, msg_id: int, to: int) -> bytes:
        return self.device_data(2300, to, b"")

    def stream(self, now: float) -> list[bytes]:
        """Auto-transmit: a ping at the current angle, then the head steps ``num_steps``
        towards ``stop_angle`` (round and round for a full circle, to and fro for a sector)."""
        with self.lock:
            a = self.auto
            if a is None or now < self.next_ping:
                return []
            out = self.device_data(2301, 0, self.ping())
            listen = self.number_of_samples * self.sample_period * self.TICK
            self.next_ping = now + listen + a["steps"] * self.MOTOR_STEP + a["delay"] / 1000.0
            if a["start"] == a["stop"]:
                self.angle = (self.angle + a["steps"]) % 400
            else:
                width = (a["stop"] - a["start"]) % 400
                offset = (self.angle - a["start"]) % 400 + a["direction"] * a["steps"]
                if offset > width:  # back from the sector's end
                    offset, a["direction"] = max(0, 2 * width - offset), -1
                elif offset < 0:
                    offset, a["direction"] = min(width, -offset), 1
                self.angle = (a["start"] + offset) % 400
            return [out]

    def period(self) -> float:
        return 0.002


class PingServer:
    """A Ping device on a UDP port: a thread that answers datagrams (each parsed on its own:
    a frame never spans two) and sends the device's streams to the last host."""

    def __init__(self, device: PingDevice, port: int, bind: str = "127.0.0.1") -> None:
        self.device = device
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((bind, port))
        self.port = self.sock.getsockname()[1]
        self.peer: tuple | None = None
        self.received = self.errors = 0
        self.throttle = Throttle(5.0)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, name=f"ping_{port}", daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop_event.is_set():
            self.sock.settimeout(self.device.period())
            try:
                data, peer = self.sock.recvfrom(65535)
            except TimeoutError:
                data, peer = b"", None
            except OSError:
                if self.stop_event.is_set():
                    return
                continue
            try:
                if peer is not None:
                    self.peer = peer
                    parser = pp.Parser()
                    for msg in parser.feed(data):
                        self.received += 1
                        for out in self.device.handle(msg):
                            self.sock.sendto(out, peer)
                    self.errors += parser.errors
                if self.peer is not None:
                    for out in self.device.stream(time.monotonic()):
                        self.sock.sendto(out, self.peer)
            except OSError as exc:  # the host went away: its streams wait for the next one
                self.throttle.warn("ping", f"Ping device on port {self.port}: {exc}")
            except Exception as exc:  # never the serving thread's end: said, and the next datagram served
                self.throttle.warn(
                    "ping-error", f"Ping device on port {self.port}: {type(exc).__name__}: {exc}"
                )

    def close(self) -> None:
        self.stop_event.set()
        self.sock.close()
        self.thread.join(timeout=2.0)
