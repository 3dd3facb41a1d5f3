"""A stand-in for ArduPilot SITL's JSON physics interface that reads answers exactly as
ArduPilot does, for tests, benchmarks and a smoke test of a backend without building ArduPilot.

What it reproduces of ``libraries/SITL/SIM_JSON.cpp`` (``JSON::output_servos``,
``JSON::recv_fdm``, ``JSON::parse_sensors``), with the C library's own ``strstr``, ``sscanf``,
``atof`` and ``strtoull`` called through ctypes, so a reply parses here if and only if it
parses there:

- the servo datagram of ``SRV_Channels`` (16 channels, magic 18458; 32 with magic 29569)
  carrying ``frame_rate`` and ``frame_counter``; the counter moves on only after an answer
  was parsed, so a lost or unreadable answer is followed by the same count again;
- receiving: ``recv`` with a 100 ms timeout, the servo datagram sent again after a second of
  silence; received bytes appended to a 65000-byte buffer with every ``\\n`` made a NUL; the
  text between the last two NULs is parsed, and the buffer keeps what follows the last one
  only when the parse succeeded (a buffer that fills up hangs ArduPilot: here it raises);
- the key table in ArduPilot's order (``timestamp``, ``imu``/``gyro``, ``imu``/``accel_body``,
  ``position``, ``attitude``, ``quaternion``, ``velocity``, ``rng_1..6``, ``windvane``/...,
  ``airspeed``, ``no_time_sync``): ``strstr`` for the section, then ``strlen(section) + 1``
  further on ``strstr`` for the key, then ``strlen(key) + 2`` further the value: ``atof``,
  ``strtoull`` or ``sscanf(p, "[%f, %f, %f]")`` (``%lf`` for ``position``,
  ``"[%f, %f, %f, %f]"`` for ``quaternion``); a vector that does not scan ends the parse with
  what was found so far; a missing mandatory key gives 0 ("Did not contain all mandatory
  fields"); neither ``attitude`` nor ``quaternion``: "Did not receive attitude or quaternion";
- time: ``deltat = timestamp - last_timestamp`` (0 when physics time went back: "Detected
  physics reset"), advancing SITL's clock.

Lines ArduPilot would print are collected in ``messages``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import socket
import time
from dataclasses import dataclass, field
from typing import cast

from .sitl_json import encode_servo_packet

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.strstr.restype = ctypes.c_void_p
_libc.strstr.argtypes = (ctypes.c_void_p, ctypes.c_char_p)
_libc.atof.restype = ctypes.c_double
_libc.atof.argtypes = (ctypes.c_void_p,)
_libc.strtoull.restype = ctypes.c_ulonglong
_libc.strtoull.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
_libc.sscanf.restype = ctypes.c_int

UDP_TIMEOUT_MS = 100
BUFFER_SIZE = 65000
UINT64, FLOAT, DOUBLE, VECTOR3F, VECTOR3D, QUATERNION, BOOLEAN = range(7)
# (section, key, type, required) in SIM_JSON.h's order: bit i of the mask is entry i
KEYTABLE = (
    ("", "timestamp", DOUBLE, True),
    ("imu", "gyro", VECTOR3F, True),
    ("imu", "accel_body", VECTOR3F, True),
    ("", "position", VECTOR3D, True),
    ("", "attitude", VECTOR3F, False),
    ("", "quaternion", QUATERNION, False),
    ("", "velocity", VECTOR3F, True),
    *(("", f"rng_{k}", FLOAT, False) for k in range(1, 7)),
    ("windvane", "direction", FLOAT, False),
    ("windvane", "speed", FLOAT, False),
    ("", "airspeed", FLOAT, False),
    ("", "no_time_sync", BOOLEAN, False),
)
EULER_ATT, QUAT_ATT = 1 << 4, 1 << 5
MANDATORY = sum(1 << i for i, entry in enumerate(KEYTABLE) if entry[3])


def _scan(p: int, fmt: bytes, ctype, n: int) -> list[float] | None:
    values = [ctype() for _ in range(n)]
    got = _libc.sscanf(ctypes.c_void_p(p), ctypes.c_char_p(fmt), *(ctypes.byref(x) for x in values))
    return [x.value for x in values] if got == n else None


def parse_sensors(row: bytes, messages: list[str] | None = None) -> tuple[int, dict[str, object]]:
    """``JSON::parse_sensors`` on one NUL-free row: the bitmask of keys found and their values."""
    out: dict[str, object] = {}
    say = messages.append if messages is not None else (lambda _: None)
    buf = ctypes.create_string_buffer(row)  # NUL-terminated copy
    base = ctypes.addressof(buf)
    mask = 0
    for i, (section, key, kind, required) in enumerate(KEYTABLE):
        p = _libc.strstr(base, section.encode())
        if not p:
            if required:
                say(f"Failed to find {section}")
                return 0, out
            continue
        p += len(section) + 1
        p = _libc.strstr(p, key.encode())
        if not p:
            if required:
                say(f"Failed to find key {section}/{key}")
                return 0, out
            continue
        mask |= 1 << i
        p += len(key) + 2
        name = f"{section}/{key}" if section else key
        if kind == UINT64:
            out[name] = int(_libc.strtoull(p, None, 10))
        elif kind in (FLOAT, DOUBLE):
            value = _libc.atof(p)
            out[name] = ctypes.c_float(value).value if kind == FLOAT else value
        elif kind == BOOLEAN:
            out[name] = _libc.strtoull(p, None, 10) != 0
        else:
            fmt, ctype, n = {
                VECTOR3F: (b"[%f, %f, %f]", ctypes.c_float, 3),
                VECTOR3D: (b"[%lf, %lf, %lf]", ctypes.c_double, 3),
                QUATERNION: (b"[%f, %f, %f, %f]", ctypes.c_float, 4),
            }[kind]
            values = _scan(p, fmt, ctype, n)
            if values is None:
                say(f"Failed to parse Vector{4 if kind == QUATERNION else 3}f for {section}/{key}")
                return mask, out
            out[name] = values
    return mask, out


class SensorBufferFullError(RuntimeError):
    """ArduPilot's receive buffer is full of unparsed text: its ``recv`` of 0 bytes then loops
    for ever (SITL hangs)."""


@dataclass
class SimJsonPeer:
    """ArduPilot SITL's side of the JSON interface (see module doc), on a real UDP socket."""

    target: tuple[str, int]
    rate_hz: int = 1200
    channels: int = 16
    bind: tuple[str, int] = ("127.0.0.1", 0)
    frame_counter: int = 0
    last_timestamp: float = 0.0
    time_now_us: float = 0.0
    state: dict[str, object] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    resends: int = 0
    parsed: int = 0
    check_every: int = 1  # scan every key of every k-th answer (benchmarks: SITL parses in C, fast)

    def __post_init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(self.bind)
        self.sock.settimeout(UDP_TIMEOUT_MS / 1000)  # SocketAPM::recv(buf, size, 100 ms)
        self.buffer = bytearray()
        self.last_bitmask = 0

    def close(self) -> None:
        self.sock.close()

    def output_servos(self, pwm: list[int]) -> None:
        pwm = list(pwm) + [0] * (self.channels - len(pwm))
        self.sock.sendto(encode_servo_packet(self.rate_hz, self.frame_counter, pwm), self.target)

    def _recv(self) -> bytes:
        if len(self.buffer) >= BUFFER_SIZE:
            raise SensorBufferFullError("65000 bytes of unparsed answers: ArduPilot would hang here")
        try:
            return self.sock.recv(BUFFER_SIZE - len(self.buffer))
        except (TimeoutError, ConnectionRefusedError):
            return b""

    def recv_fdm(self, pwm: list[int], give_up: float = 30.0) -> bool:
        """One ``JSON::recv_fdm``: wait for an answer (sending the servos again every second),
        then parse; True when a frame was taken (the clock and frame counter moved on).
        ``give_up`` (s) bounds the wait, which has no end in ArduPilot."""
        data = self._recv()
        wait_ms = UDP_TIMEOUT_MS
        start = time.monotonic()
        while not data:
            if time.monotonic() - start > give_up:
                raise TimeoutError(f"no answer from {self.target} in {give_up} s")
            data = self._recv()
            wait_ms += UDP_TIMEOUT_MS
            if wait_ms > 1000:
                wait_ms = 0
                self.messages.append("No JSON sensor message received, resending servos")
                self.resends += 1
                self.output_servos(pwm)
        self.buffer += data.replace(b"\n", b"\0")
        p2 = self.buffer.rfind(b"\0")
        if p2 <= 0:
            return False
        p1 = self.buffer.rfind(b"\0", 0, p2)
        if p1 < 0:
            return False
        row = bytes(self.buffer[p1 + 1 : p2])
        if self.check_every <= 1 or self.parsed % self.check_every == 0 or not self.last_bitmask:
            mask, values = parse_sensors(row, self.messages)
        else:  # the layout of the last scanned answer; only the timestamp is read (as atof would)
            k = row.find(b"timestamp") + len(b"timestamp") + 2
            mask, values = self.last_bitmask, {**self.state, "timestamp": _libc.atof(row[k:])}
        if mask == 0:
            self.messages.append("Did not contain all mandatory fields")
            return False
        if mask & (EULER_ATT | QUAT_ATT) == 0:
            self.messages.append("Did not receive attitude or quaternion")
            return False
        if mask != self.last_bitmask:
            self.messages.append("JSON received: " + ", ".join(k for k in values))
        self.last_bitmask = mask
        del self.buffer[:p2]
        self.state = values
        timestamp = float(cast(float, values["timestamp"]))
        if timestamp < self.last_timestamp:
            self.messages.append("Detected physics reset")
            deltat = 0.0
            self.last_bitmask = 0
        else:
            deltat = timestamp - self.last_timestamp
        self.time_now_us += deltat * 1e6
        self.last_timestamp = timestamp
        self.frame_counter = (self.frame_counter + 1) % (1 << 32)
        self.parsed += 1
        return True

    def update(self, pwm: list[int]) -> bool:
        """One SITL physics update: the servos out, an answer in (``JSON::update``)."""
        self.output_servos(pwm)
        return self.recv_fdm(pwm)
