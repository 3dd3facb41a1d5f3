"""The ArduPilot SITL JSON backend against a peer that reads the answers exactly as ArduPilot's
``libraries/SITL/SIM_JSON.cpp`` does (``uvms_sim.hil.sitl_peer``: the C library's own
``strstr``/``sscanf``/``atof``, ArduPilot's key table, buffer and resend rules) over real UDP
sockets on loopback."""

from __future__ import annotations

import json
import logging
import socket
import struct
import threading
from pathlib import Path

import numpy as np
import pytest
from transforms3d.quaternions import quat2mat

from uvms_sim.hil.sitl_json import (
    MAGIC_16,
    MAGIC_32,
    SitlJsonBackend,
    encode_servo_packet,
    parse_servo_packet,
)
from uvms_sim.hil.sitl_peer import MANDATORY, QUAT_ATT, SimJsonPeer, parse_sensors
from uvms_sim.model import load
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"


def lock_step(backend: SitlJsonBackend, peer: SimJsonPeer, pwm: list[int]) -> bool:
    """One SITL update served in this thread: the servos out, the backend answers, SITL parses."""
    peer.output_servos(pwm)
    assert backend.serve_once(1.0)
    return peer.recv_fdm(pwm)


@pytest.fixture
def link():
    sim = Simulator.from_system(load(CONFIG / "bluerov2_heavy.yaml"))
    backend = SitlJsonBackend(sim, port=0)
    peer = SimJsonPeer(("127.0.0.1", backend.port), rate_hz=400)
    yield backend, peer
    backend.close()
    peer.close()


def test_packet_layout_matches_sim_json():
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


def test_the_peer_fails_where_ardupilot_fails():
    """The peer is as strict as SIM_JSON.cpp: Python's default separators (a space after the
    colon) fail every vector with ArduPilot's own message; compact ones parse; a missing
    mandatory key gives 0; a frame with no attitude is reported."""
    frame = {"timestamp": 1.5, "imu": {"gyro": [0.0, 0.1, 0.2], "accel_body": [0.0, 0.0, -9.8]},
             "position": [1.0, 2.0, 3.0], "velocity": [0.0, 0.0, 0.0],
             "quaternion": [1.0, 0.0, 0.0, 0.0]}  # fmt: skip
    said: list[str] = []
    mask, _ = parse_sensors(json.dumps(frame).encode(), said)
    assert said == ["Failed to parse Vector3f for imu/gyro"] and not mask & QUAT_ATT
    mask, values = parse_sensors(json.dumps(frame, separators=(",", ":")).encode())
    assert mask == MANDATORY | QUAT_ATT
    assert values["position"] == [1.0, 2.0, 3.0] and values["imu/gyro"][1] == pytest.approx(0.1)
    del frame["velocity"]
    said.clear()
    assert parse_sensors(json.dumps(frame, separators=(",", ":")).encode(), said)[0] == 0
    assert said == ["Failed to find key /velocity"]


def test_frames_parse_in_sim_json_and_keep_lock_step(link):
    """Every answer of the backend parses with every mandatory field and the quaternion; SITL's
    clock moves by exactly 1/frame_rate per frame; the values are the physics state (float32
    where ArduPilot reads floats): at rest the accelerometer reads about -g along body z."""
    backend, peer = link
    for _ in range(200):
        assert lock_step(backend, peer, [1500] * 8)
    assert peer.messages == [
        "JSON received: timestamp, imu/gyro, imu/accel_body, position, quaternion, velocity"
    ]
    assert peer.frame_counter == 200 and peer.time_now_us == pytest.approx(200 / 400 * 1e6, rel=1e-9)
    sim, s = backend.sim, backend.sim.model.q_slice(backend.root)
    q = sim.state.q[s]
    assert peer.state["timestamp"] == sim.state.t
    assert peer.state["position"] == q[:3].tolist()  # doubles, exactly
    np.testing.assert_allclose(peer.state["quaternion"], q[3:7], rtol=1e-6)
    np.testing.assert_allclose(peer.state["velocity"], quat2mat(q[3:7]) @ sim.state.v[:3], atol=1e-6)
    assert peer.state["imu/accel_body"][2] == pytest.approx(-sim.env.gravity, abs=0.3)
    assert np.linalg.norm(peer.state["quaternion"]) == pytest.approx(1.0, abs=1e-6)


def test_frame_counts_resends_lost_frames_restarts_and_the_wrap(link):
    """A repeated count is answered unstepped; a jump counts lost frames; a count that moves
    back restarts the physics; the 32-bit wrap from 2^32-1 to 0 is neither."""
    backend, _ = link
    t = lambda data: json.loads(data)["timestamp"]  # noqa: E731
    first = backend.handle(encode_servo_packet(400, 5, [1500] * 8))
    assert backend.handle(encode_servo_packet(400, 5, [1500] * 8)) == first and backend.counters.resends == 1
    backend.handle(encode_servo_packet(400, 9, [1500] * 8))
    assert backend.counters.lost == 3
    restarted = backend.handle(encode_servo_packet(400, 2, [1500] * 8))
    assert backend.counters.restarts == 1 and t(restarted) == pytest.approx(1 / 400)
    backend.restart()  # a session that has run for 2^32 frames (124 days at 400 Hz)
    top = (1 << 32) - 2
    times = [t(backend.handle(encode_servo_packet(400, k, [1500] * 8))) for k in (top, top + 1, 0, 1, 3)]
    np.testing.assert_allclose(np.diff(times), 1 / 400, rtol=1e-9)
    assert backend.counters.restarts == 1 and backend.counters.lost == 3 + 1


def test_an_unanswered_frame_is_resent_after_a_second_and_answered_the_same(link):
    """SITL hears nothing for a second and sends the same servo frame again (its counter moves
    only on a parsed answer); the backend steps once and answers the resend unstepped."""
    backend, peer = link
    assert lock_step(backend, peer, [1500] * 8)
    peer.output_servos([1500] * 8)
    served = threading.Thread(target=lambda: [backend.serve_once(2.0) for _ in range(2)])
    timer = threading.Timer(1.3, served.start)
    timer.start()
    assert peer.recv_fdm([1500] * 8)
    served.join()
    assert "No JSON sensor message received, resending servos" in peer.messages
    assert backend.counters.frames == 2 and backend.counters.resends == 1
    assert peer.state["timestamp"] == pytest.approx(2 / 400)


def test_servo_pwm_drives_the_thrusters_and_a_restart_resets(link):
    """Servos 5-8 (the Heavy's vertical thrusters) above 1500 us push the vehicle down: NED z
    and down-velocity grow. Then SITL restarts (frame count back to 0): time and pose reset,
    and SITL detects the physics reset as ArduPilot prints it."""
    backend, peer = link
    pwm = [1500, 1500, 1500, 1500, 1700, 1700, 1700, 1700]
    z0 = None
    for _ in range(800):
        assert lock_step(backend, peer, pwm)
        z0 = peer.state["position"][2] if z0 is None else z0
    assert peer.state["position"][2] > z0 + 0.3
    assert peer.state["velocity"][2] > 0.2
    assert backend.sim.thrusters.thrust[4] > 5.0
    peer.frame_counter = 0
    assert lock_step(backend, peer, [1500] * 8)
    assert backend.counters.restarts == 1 and "Detected physics reset" in peer.messages
    assert peer.state["timestamp"] == pytest.approx(1 / 400)
    assert peer.state["position"][2] == pytest.approx(backend.initial[0][2], abs=1e-3)


def test_one_peer_per_session(link, caplog):
    """A second sender is ignored (counted, one warning) while the session's SITL is alive;
    once that one has been silent for peer_timeout, the next sender starts a new session from
    the initial state."""
    backend, peer = link
    backend.peer_timeout = 0.3
    for _ in range(40):
        assert lock_step(backend, peer, [1500, 1500, 1500, 1500, 1800, 1800, 1800, 1800])
    other = SimJsonPeer(("127.0.0.1", backend.port), rate_hz=400)
    try:
        with caplog.at_level(logging.WARNING, logger="uvms_sim"):
            for _k in range(5):
                other.output_servos([1900] * 8)
                assert not backend.serve_once(1.0)
        key = f"127.0.0.1:{other.sock.getsockname()[1]}"
        assert backend.counters.ignored == {key: 5}
        assert sum("ignored" in r.getMessage() for r in caplog.records) == 1
        assert lock_step(backend, peer, [1500] * 8)  # the session's peer is still served
        t_before = backend.sim.state.t
        import time

        time.sleep(0.4)
        assert lock_step(backend, other, [1500] * 8)
        assert backend.counters.sessions == 2 and backend.sim.state.t < t_before
        assert other.state["position"][2] == pytest.approx(backend.initial[0][2], abs=1e-3)
    finally:
        other.close()


def test_source_port_zero_and_garbage_never_end_the_backend(link):
    """Port 0 cannot be answered: dropped and counted. Random bytes, truncated and huge
    datagrams, wrong magic, zero rate: counted, dropped, and good frames are still answered."""
    backend, _peer = link
    assert not backend.accept(("127.0.0.1", 0), 0.0)
    assert backend.counters.dropped == {"source-port-0": 1}
    raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    raw.bind(("127.0.0.1", 0))
    backend.accept(raw.getsockname(), 0.0)  # the session's address (as after its first frame)
    rng = np.random.default_rng(0)
    good = encode_servo_packet(400, 1, [1500] * 8)
    garbage = [rng.bytes(int(n)) for n in rng.integers(0, 200, size=200)]
    garbage += [good[:20], good + b"x", rng.bytes(60000), struct.pack("<HHI16H", 1234, 400, 2, *[1500] * 16)]
    garbage.append(encode_servo_packet(0, 3, [1500] * 8))
    for data in garbage:
        raw.sendto(data, ("127.0.0.1", backend.port))
        assert not backend.serve_once(1.0)
    assert sum(backend.counters.dropped.values()) == len(garbage) + 1
    raw.sendto(good, ("127.0.0.1", backend.port))
    assert backend.serve_once(1.0) and raw.recv(65535).startswith(b'\n{"timestamp":')
    raw.close()
    assert np.all(np.isfinite(backend.sim.state.q))


def test_bad_addresses_are_one_line_errors():
    sim = Simulator.from_system(load(CONFIG / "bluerov2_heavy.yaml"))
    for bind, port, why in (("localhost:9", 9002, "not an IPv4"), ("127.0.0.1", 70000, "not in 0-65535"),
                            ("192.0.2.1", 0, "cannot listen")):  # fmt: skip
        with pytest.raises(ValueError, match=why):
            SitlJsonBackend(sim, bind=bind, port=port)


def test_cli_rejects_bad_options(capsys):
    from uvms_sim.cli import main

    assert main(["sitl", "--bind", "nowhere"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    with pytest.raises(SystemExit) as exc:
        main(["sitl", "--port", "99999"])
    assert exc.value.code == 2 and "99999 is not a port in [0, 65535]" in capsys.readouterr().err


def test_ros_node_runs_with_sitl():
    """The simulator node with sitl_port: SITL frames step the physics while the node publishes
    odometry of the same vehicle (ENU: the vertical thrusters pushing down lower odom z) and
    its declared sensors at their rates in the peer's simulated time."""
    from nav_msgs.msg import Odometry
    from net_helpers import free_udp_port
    from ros_helpers import simulator, spin_until
    from sensor_msgs.msg import Imu

    port = free_udp_port()
    with simulator(description="bluerov2_heavy", sitl_port=port) as (sim, user, executor):
        assert sim.sitl is not None and sim.vehicles[0].shim is None
        assert f"(8 thrusters, ArduSub SITL on 127.0.0.1:{port})" in sim.summary()
        odoms: list = []
        user.create_subscription(Odometry, "odom", odoms.append, 50)
        imus: list = []
        user.create_subscription(Imu, "sensors/imu", imus.append, 50)
        peer = SimJsonPeer(("127.0.0.1", port), rate_hz=400)
        z0 = -sim.system.initial_q[2]

        def frames():
            for _ in range(20):
                assert peer.update([1500] * 4 + [1700] * 4)

        assert spin_until(
            executor,
            lambda: len(odoms) > 5 and odoms[-1].pose.pose.position.z < z0 - 0.2 and len(imus) > 5,
            every=frames,
            timeout=30,
        )
        assert sim.sim.state.t == pytest.approx(peer.frame_counter / 400, rel=1e-9)
        (imu,) = [s for s in sim.sensor_topics.suite.sensors if s.spec.type == "imu"]
        assert len(imus) <= sim.loop.step_count // imu.period  # one per period of simulated time
        assert peer.messages[1:] == []
        peer.close()


def test_ros_node_with_a_bad_sitl_port_says_so_in_one_line():
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "-p", "sitl_port:=99999"]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == "simulator: error: parameter sitl_port: expected 0 to 65535, got 99999"
