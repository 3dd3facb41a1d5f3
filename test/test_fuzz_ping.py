"""Hostile Ping protocol frames into the emulated Ping1D and Ping360: random bytes, frames with
random ids and payloads, valid messages with extreme fields, truncated and over-long payloads,
bad checksums, frames split and glued. What must hold: no exception out of the devices, every
answer a well-formed frame whose checksum holds, the settings within the devices' ranges, and
the UDP server still answering a real client (``bluerobotics-ping``) afterwards."""

from __future__ import annotations

import os
import socket
import struct

import numpy as np
from brping import Ping360

from uvms_sim.hil import ping_protocol as pp
from uvms_sim.hil.ping_devices import Ping1D, PingServer
from uvms_sim.hil.ping_devices import Ping360 as Ping360Device
from uvms_sim.scene import Scene, SceneRays, Shape, Structure
from uvms_sim.scene.seabed import PlaneSeabed

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
EXTREMES = [0, 1, 2, 199, 200, 399, 400, 1200, 40000, 65535, 2**31 - 1, 2**32 - 1]


def rays() -> SceneRays:
    box = Shape("box", (1.0, 4.0, 4.0), xyz=(3.0, 0.0, 0.0))
    return SceneRays(Scene(PlaneSeabed(10.0), (Structure("box", box),)))


def pose():
    return np.eye(3), np.array([0.0, 0.0, 2.0])


def hostile(rng: np.random.Generator, devices) -> bytes:
    kind = rng.integers(6)
    if kind == 0:
        return rng.bytes(int(rng.integers(0, 300)))
    ids = [*sorted(pp.MESSAGES), 0, 7, 1100, 65535, int(rng.integers(0, 65536))]
    msg_id = int(rng.choice(ids))
    if kind == 1:  # a known message with extreme fields
        if msg_id not in pp.MESSAGES:
            return pp.frame(msg_id, rng.bytes(int(rng.integers(0, 40))))
        _, fmt, _ = pp.MESSAGES[msg_id]
        values = []
        for code in fmt:
            top = {"B": 255, "H": 65535, "I": 2**32 - 1}[code]
            values.append(
                min(top, int(rng.choice(EXTREMES))) if rng.random() < 0.7 else int(rng.integers(0, top + 1))
            )
        tail = rng.bytes(int(rng.integers(0, 20))) if rng.random() < 0.3 else b""
        return pp.frame(
            msg_id, struct.pack("<" + fmt, *values) + tail, int(rng.integers(256)), int(rng.integers(256))
        )
    if kind == 2:  # truncated payload
        return pp.frame(msg_id, rng.bytes(int(rng.integers(0, 3))))
    if kind == 3:  # a bad checksum, or a length past the datagram
        good = bytearray(pp.frame(msg_id, rng.bytes(int(rng.integers(0, 30)))))
        if rng.random() < 0.5:
            good[-1] ^= 0xFF
        else:
            good[2:4] = struct.pack("<H", int(rng.integers(0, 65536)))
        return bytes(good)
    if kind == 4:  # a request for anything
        return pp.pack(pp.GENERAL_REQUEST, requested_id=msg_id) if rng.random() < 0.5 else pp.frame(msg_id)
    # several frames glued, one cut short
    parts = [hostile(rng, devices) for _ in range(int(rng.integers(2, 5)))]
    cut = parts[-1][: int(rng.integers(0, len(parts[-1]) + 1))]
    return b"".join(parts[:-1]) + cut


def check_frames(frames: list[bytes]) -> None:
    for f in frames:
        (msg,) = pp.Parser().feed(f)
        assert msg.fields() is not None, msg
        assert len(f) == 8 + len(msg.payload) + 2


def check_settings(d1: Ping1D, d360: Ping360Device) -> None:
    assert 0 <= d1.gain_setting <= 6 and 0 <= d1.scan_start <= 100000 and 1000 <= d1.scan_length <= 100000
    assert 200 <= d1.samples <= 1200 and 30 <= d1.ping_interval and 1000000 <= d1.speed_of_sound <= 2000000
    assert 0 <= d360.gain_setting <= 2 and 0 <= d360.angle < 400 and 80 <= d360.sample_period <= 40000
    assert 200 <= d360.number_of_samples <= 1200 and 1 <= d360.transmit_duration <= 1000


def test_hostile_frames_into_the_devices():
    rng = np.random.default_rng(40)
    scene = rays()
    d1, d360 = Ping1D(scene, pose, seed=1), Ping360Device(scene, pose, seed=2)
    t = 0.0
    for _ in range(1500 * SCALE):
        data = hostile(rng, (d1, d360))
        for device in (d1, d360):
            parser = pp.Parser()
            for msg in parser.feed(data):
                check_frames(device.handle(msg))
            t += 0.01
            check_frames(device.stream(t))
        check_settings(d1, d360)


def test_server_survives_hostile_datagrams():
    server = PingServer(Ping360Device(rays(), pose), 0)
    try:
        rng = np.random.default_rng(41)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(300 * SCALE):
            sock.sendto(hostile(rng, ()), ("127.0.0.1", server.port))
        sock.close()
        client = Ping360()
        client.connect_udp("127.0.0.1", server.port)
        assert client.initialize()
        reply = client.transmitAngle(0)
        assert reply is not None and len(reply.data) == reply.number_of_samples
        assert server.thread.is_alive()
    finally:
        server.close()
