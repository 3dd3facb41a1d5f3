"""The ArduPilot SITL JSON backend against a peer that speaks the protocol byte for byte over
real UDP sockets on loopback (ArduPilot's libraries/SITL/examples/JSON/readme.md)."""

from __future__ import annotations

import json
import socket
import struct

import numpy as np
import pytest

from uvms_sim.hil.sitl_json import (
    MAGIC_16,
    MAGIC_32,
    SitlJsonBackend,
    encode_servo_packet,
    parse_servo_packet,
)
from uvms_sim.model import load
from uvms_sim.simulator import Simulator


class SitlPeer:
    """What ArduSub SITL does on the wire: servo datagrams out, JSON frames in."""

    def __init__(self, port: int) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(2.0)
        self.target = ("127.0.0.1", port)

    def send(self, data: bytes) -> None:
        self.sock.sendto(data, self.target)

    def frame(self, backend, frame_rate: int, count: int, pwm: list[int]) -> dict:
        self.send(struct.pack("<HHI16H", MAGIC_16, frame_rate, count, *(pwm + [0] * (16 - len(pwm)))))
        assert backend.serve_once(1.0)
        text = self.sock.recv(65535)
        assert text.startswith(b"\n") and text.endswith(b"\n")
        return json.loads(text)


@pytest.fixture
def link():
    sim = Simulator.from_system(load("config/bluerov2_heavy.yaml"))
    backend = SitlJsonBackend(sim, port=0)
    peer = SitlPeer(backend.port)
    yield backend, peer
    backend.close()
    peer.sock.close()


def test_packet_layout_matches_the_readme():
    data = encode_servo_packet(400, 7, [1500] * 8)
    assert len(data) == 40 and struct.unpack_from("<HHI", data) == (MAGIC_16, 400, 7)
    assert parse_servo_packet(data).pwm[:8] == (1500,) * 8
    data32 = encode_servo_packet(400, 7, [1500] * 20)
    assert len(data32) == 72 and struct.unpack_from("<H", data32)[0] == MAGIC_32
    for bad, why in ((b"\x01", "too short"), (b"\x00\x00" * 20, "magic"), (data[:39], "needs 40 bytes")):
        with pytest.raises(ValueError, match=why):
            parse_servo_packet(bad)
    with pytest.raises(ValueError, match="frame_rate is 0"):
        parse_servo_packet(encode_servo_packet(0, 1, [1500]))


def test_lock_step_frames_units_and_resends(link):
    """Each new frame advances physics time by exactly 1/frame_rate; a resent frame (same
    count) gets the same answer without stepping; the fields are the readme's, in its units:
    at rest the accelerometer reads about -g along body z (FRD, specific force) and the
    quaternion is unit."""
    backend, peer = link
    rate = 400
    first = peer.frame(backend, rate, 1, [1500] * 8)
    assert set(first) == {"timestamp", "imu", "position", "velocity", "quaternion"}
    assert set(first["imu"]) == {"gyro", "accel_body"}
    assert first["timestamp"] == pytest.approx(1 / rate)
    assert first["imu"]["accel_body"][2] == pytest.approx(-9.81, abs=0.3)
    assert np.linalg.norm(first["quaternion"]) == pytest.approx(1.0)
    assert first["position"][2] == pytest.approx(2.0, abs=1e-3)  # the description's 2 m depth, NED
    times = [first["timestamp"]]
    for count in range(2, 200):
        times.append(peer.frame(backend, rate, count, [1500] * 8)["timestamp"])
    np.testing.assert_allclose(np.diff(times), 1 / rate, rtol=1e-9)
    again = peer.frame(backend, rate, 199, [1500] * 8)
    assert again["timestamp"] == times[-1] and backend.counters.resends == 1
    peer.frame(backend, rate, 205, [1500] * 8)
    assert backend.counters.lost == 5


def test_servo_pwm_drives_the_thrusters_and_restart_resets(link):
    """Servos 5-8 (the Heavy's vertical thrusters) above 1500 us push the vehicle down: NED z
    and down-velocity grow. Then SITL restarts (frame count back to 1): time and pose reset."""
    backend, peer = link
    pwm = [1500, 1500, 1500, 1500, 1700, 1700, 1700, 1700]
    out = [peer.frame(backend, 400, k, pwm) for k in range(1, 801)]
    assert out[-1]["position"][2] > out[0]["position"][2] + 0.3
    assert out[-1]["velocity"][2] > 0.2
    assert backend.sim.thrusters.thrust[4] > 5.0
    restarted = peer.frame(backend, 400, 1, [1500] * 8)
    assert backend.counters.restarts == 1
    assert restarted["timestamp"] == pytest.approx(1 / 400)
    assert restarted["position"][2] == pytest.approx(2.0, abs=1e-3)


def test_garbage_is_counted_and_dropped(link):
    """Random bytes, truncated and huge datagrams, wrong magic: counted, dropped, and the
    backend keeps answering good frames."""
    backend, peer = link
    rng = np.random.default_rng(0)
    good = encode_servo_packet(400, 1, [1500] * 8)
    garbage = [rng.bytes(int(n)) for n in rng.integers(0, 200, size=40)]
    garbage += [good[:20], good + b"x", rng.bytes(60000), struct.pack("<HHI16H", 1234, 400, 2, *[1500] * 16)]
    garbage.append(encode_servo_packet(0, 3, [1500] * 8))
    for data in garbage:
        peer.send(data)
        assert not backend.serve_once(1.0)
    assert sum(backend.counters.dropped.values()) == len(garbage)
    assert peer.frame(backend, 400, 1, [1500] * 8)["timestamp"] > 0
    assert np.all(np.isfinite(backend.sim.state.q))


def test_ros_node_runs_with_sitl():
    """The simulator node with sitl_port: SITL frames step the physics while the node publishes
    odometry of the same vehicle (ENU: the vertical thrusters pushing down lower odom z)."""
    from nav_msgs.msg import Odometry
    from ros_helpers import simulator, spin_until

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with simulator(description="bluerov2_heavy", sitl_port=port) as (sim, user, executor):
        assert sim.sitl is not None and sim.vehicles[0].shim is None
        odoms: list = []
        user.create_subscription(Odometry, "odom", odoms.append, 50)
        peer = SitlPeer(port)
        count = [0]

        def frames():
            for _ in range(20):
                count[0] += 1
                peer.send(encode_servo_packet(400, count[0], [1500] * 4 + [1700] * 4))
                peer.sock.recv(65535)

        assert spin_until(
            executor,
            lambda: len(odoms) > 5 and odoms[-1].pose.pose.position.z < -2.2,
            every=frames,
            timeout=30,
        )
        assert sim.sim.state.t == pytest.approx(count[0] / 400, rel=1e-9)
        peer.sock.close()
