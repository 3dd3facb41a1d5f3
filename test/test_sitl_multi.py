"""One physics for several ArduSub SITLs (``uvms_sim.hil.sitl_multi``), against peers that
behave as ``libraries/SITL/SIM_JSON.cpp`` does (``uvms_sim.hil.sitl_peer``: a frame is sent,
the answer waited for as long as it takes with the frame re-sent every second, and parsed
with the C library's own ``sscanf``) over real UDP sockets on loopback, one peer per SITL
instance, each in its own thread as each SITL is its own process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from uvms_sim.hil.sitl_multi import INSTANCE_PORT_STEP, SitlJsonMulti, autopilot_vehicles, sitl_backend
from uvms_sim.hil.sitl_peer import SimJsonPeer
from uvms_sim.model import load
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"
RATE = 400
PAIR_UP = [1500, 1500, 1500, 1500, 1700, 1500]  # bluerov1: motor 5 is the vertical thruster


class Served(threading.Thread):
    """The backend served in a thread, as ``uvms-sim sitl`` serves it."""

    def __init__(self, backend: SitlJsonMulti) -> None:
        super().__init__(daemon=True)
        self.backend = backend
        self.halt = threading.Event()
        self.steps = 0

    def run(self) -> None:
        while not self.halt.is_set():
            self.steps += self.backend.serve_once(0.05)

    def stop(self) -> None:
        self.halt.set()
        self.join(5.0)


class Flying(threading.Thread):
    """One SITL instance: ``frames`` lock-step updates (each ``JSON::update``), the
    timestamps it took recorded."""

    def __init__(self, peer: SimJsonPeer, frames: int, pwm: list[int]) -> None:
        super().__init__(daemon=True)
        self.peer, self.frames, self.pwm = peer, frames, pwm
        self.timestamps: list[float] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for _ in range(self.frames):
                if self.peer.update(self.pwm):
                    self.timestamps.append(self.peer.last_timestamp)
        except BaseException as exc:  # reported by the test
            self.error = exc


@pytest.fixture
def pair():
    sim = Simulator.from_system(load(CONFIG / "bluerov1_pair.yaml"))
    backend = SitlJsonMulti(sim, port=0, peer_timeout=1.5)
    served = Served(backend)
    served.start()
    peers: list[SimJsonPeer] = []

    def peer(k: int) -> SimJsonPeer:
        p = SimJsonPeer(("127.0.0.1", backend.ports[k]), rate_hz=RATE)
        peers.append(p)
        return p

    yield backend, served, peer
    served.stop()
    backend.close()
    for p in peers:
        p.close()


def test_one_instance_per_vehicle_with_thrusters_ten_ports_apart():
    """The connected pair: port is instance 0, starboard instance 1; the connection piece has
    no autopilot. Bound at 9002 the instances listen where ``sim_vehicle.py -I k`` sends."""
    sim = Simulator.from_system(load(CONFIG / "bluerov1_pair.yaml"))
    assert sim.system is not None
    assert [sim.system.vehicles[k].name for k in autopilot_vehicles(sim)] == ["port", "starboard"]
    from net_helpers import free_udp_port

    for _ in range(20):  # a base port whose +10 is free too
        base = free_udp_port()
        try:
            backend = SitlJsonMulti(sim, port=base)
        except ValueError:
            continue
        break
    try:
        assert backend.ports == [base, base + INSTANCE_PORT_STEP]
        assert [len(i.thrusters) for i in backend.instances] == [6, 6]
        assert not set(backend.instances[0].thrusters) & set(backend.instances[1].thrusters)
    finally:
        backend.close()
    one = sitl_backend(Simulator.from_system(load(CONFIG / "bluerov2_heavy.yaml")), port=0)
    assert not isinstance(one, SitlJsonMulti)
    one.close()


def test_two_instances_in_lock_step(pair):
    """Two SITLs flying at once: the physics steps once per frame of both (its time is exactly
    frames / rate), both take every frame with the same timestamps, each is told its own
    vehicle's position, and each one's servos drive only its vehicle's thrusters (only the
    starboard vehicle pushes: the pair rolls)."""
    backend, _, peer = pair
    a = Flying(peer(0), 400, [1500] * 6)
    b = Flying(peer(1), 400, PAIR_UP)
    a.start(), b.start()
    a.join(60), b.join(60)
    assert a.error is None and b.error is None
    assert a.peer.parsed == b.peer.parsed == 400
    assert a.timestamps == b.timestamps
    assert backend.sim.state.t == pytest.approx(400 / RATE, rel=1e-9)
    assert a.peer.messages[1:] == [] and b.peer.messages[1:] == []  # no re-sends, nothing failed
    port, starboard = (np.array(p.peer.state["position"]) for p in (a, b))
    assert port[1] < -0.2 and starboard[1] > 0.2
    assert abs(np.linalg.norm(starboard - port) - 0.70) < 0.005  # the rigid connection holds
    assert a.peer.state["imu/gyro"][0] != 0.0  # one side pushing: the pair rolls
    c = backend.counters
    assert (c.frames, c.resends, c.lost, c.restarts, c.sessions) == (800, 0, 0, 0, 2)


def test_a_frame_waits_for_the_other_instances_frame(pair):
    """As strict as SIM_JSON: an instance that sent its frame is not answered, however often
    it re-sends it, until the other instance's frame is there; then both are answered with
    the same physics time, one step later."""
    backend, _, peer = pair
    a, b = peer(0), peer(1)
    for _ in range(3):  # both take part
        ta = Flying(a, 1, [1500] * 6)
        ta.start()
        assert b.update([1500] * 6)
        ta.join(10)
    t = backend.sim.state.t
    a.output_servos([1500] * 6)
    a.sock.settimeout(0.3)
    with pytest.raises(TimeoutError):
        a.sock.recv(65535)
    a.output_servos([1500] * 6)  # SITL's re-send of the same frame: not answered either
    with pytest.raises(TimeoutError):
        a.sock.recv(65535)
    assert backend.sim.state.t == t
    a.sock.settimeout(0.1)
    assert b.update([1500] * 6)
    assert a.recv_fdm([1500] * 6)
    assert a.last_timestamp == b.last_timestamp == pytest.approx(t + 1 / RATE, rel=1e-12)


def test_a_silent_instance_stalls_the_others_only_for_its_timeout(pair):
    """One SITL stops (killed, restarting): the other waits at most peer_timeout (1.5 s here)
    and then flies on alone; the silent one's vehicle gets neutral thrusters."""
    backend, _, peer = pair
    a, b = peer(0), peer(1)
    fa, fb = Flying(a, 100, [1500] * 6), Flying(b, 100, PAIR_UP)
    fa.start(), fb.start()
    fa.join(30), fb.join(30)
    b_pwm = backend.bank.pwm[backend.instances[1].thrusters].copy()
    assert np.any(b_pwm != 1500.0)
    t0 = time.monotonic()
    gaps = []
    for _ in range(50):  # instance 1 is silent from now on
        s = time.monotonic()
        assert a.update([1500] * 6)
        gaps.append(time.monotonic() - s)
    # one stall of about peer_timeout, then none (the bounds leave room for a loaded machine)
    assert max(gaps) < backend.peer_timeout + 0.5 and sorted(gaps)[-2] < 0.5
    assert time.monotonic() - t0 < backend.peer_timeout + 2.0
    assert np.all(backend.bank.pwm[backend.instances[1].thrusters] == 1500.0)
    assert a.resends <= 1 and a.parsed == 150


def test_a_restarted_instance_joins_the_running_physics(pair):
    """A SITL restarts (a new process: new source port, frame count from 0): after the old
    one's timeout it is served again, while the other keeps flying: the physics is not put
    back (the other SITL's time never goes back), and the new one takes the physics time as
    it stands. Its frame count going back on the same address is a restart too."""
    backend, _, peer = pair
    a, b = peer(0), peer(1)
    fa, fb = Flying(a, 200, [1500] * 6), Flying(b, 200, [1500] * 6)
    fa.start(), fb.start()
    fa.join(30), fb.join(30)
    b.close()
    t_before = backend.sim.state.t
    b2 = peer(1)
    fa, fb = Flying(a, 300, [1500] * 6), Flying(b2, 100, [1500] * 6)
    fa.start(), fb.start()
    fa.join(30), fb.join(30)
    assert fa.error is None and fb.error is None
    assert "Detected physics reset" not in a.messages
    assert np.all(np.diff(fa.timestamps) > 0)
    assert fb.timestamps[0] > t_before  # joined where the physics was
    assert backend.instances[1].counters.sessions == 2
    b2.frame_counter = 0  # the same address counting from 0 again
    fa, fb = Flying(a, 20, [1500] * 6), Flying(b2, 20, [1500] * 6)
    fa.start(), fb.start()
    fa.join(30), fb.join(30)
    assert backend.instances[1].counters.restarts == 1
    assert "Detected physics reset" not in a.messages


def test_a_lost_answer_is_answered_again(pair):
    """The answer to a frame is lost: SITL re-sends the frame a second later and gets the same
    answer (no step)."""
    backend, _, peer = pair
    a = peer(0)  # alone: it steps by itself
    assert a.update([1500] * 6)
    a.output_servos([1500] * 6)
    first = a.sock.recv(65535)  # taken and dropped: "lost"
    a.output_servos([1500] * 6)  # the re-send
    assert a.sock.recv(65535) == first
    assert backend.instances[0].counters.resends == 1


def test_garbage_and_strangers_never_end_the_backend(pair):
    backend, served, peer = pair
    import socket

    a, b = peer(0), peer(1)
    fa = Flying(a, 1, [1500] * 6)
    fa.start()
    assert b.update([1500] * 6)  # both SITLs are the instances' peers before any stranger
    fa.join(5)
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger.bind(("127.0.0.1", 0))
    rng = np.random.default_rng(3)
    try:
        for k in range(200):
            stranger.sendto(rng.bytes(int(rng.integers(0, 100))), ("127.0.0.1", backend.ports[k % 2]))
            fa = Flying(a, 1, [1500] * 6)
            fa.start()
            assert b.update([1500] * 6)
            fa.join(5)
    finally:
        stranger.close()
    assert served.is_alive() and a.parsed == b.parsed == 201
    assert np.all(np.isfinite(backend.sim.state.q))


def test_cli_serves_one_port_per_vehicle():
    """``uvms-sim sitl bluerov1_pair --port P`` serves instance 0 on P and instance 1 on P + 10."""
    from net_helpers import free_udp_port

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for _ in range(20):
        base = free_udp_port()
        cmd = [sys.executable, "-m", "uvms_sim.cli", "sitl", "bluerov1_pair", "--port", str(base)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        first = proc.stdout.readline() if proc.stdout else ""
        if "start ArduSub" in first:
            break
        proc.wait(10)
    try:
        second = proc.stdout.readline() if proc.stdout else ""
        assert f"port on 127.0.0.1:{base}: start ArduSub with -I 0" in first
        assert f"starboard on 127.0.0.1:{base + 10}: start ArduSub with -I 1" in second
        peers = [SimJsonPeer(("127.0.0.1", base + 10 * k), rate_hz=RATE) for k in range(2)]
        fly = [Flying(p, 50, [1500] * 6) for p in peers]
        for f in fly:
            f.start()
        for f in fly:
            f.join(30)
        assert [f.peer.parsed for f in fly] == [50, 50] and fly[0].timestamps == fly[1].timestamps
        for p in peers:
            p.close()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(10)


def test_ros_node_flies_the_pair_with_two_sitl_instances():
    """The simulator node with sitl_port and the connected pair: two SITL instances (ports P and
    P + 10) step the physics in lock-step while the node publishes odometry in their time; the
    starboard instance's vertical thruster pushing down sinks the pair."""
    from nav_msgs.msg import Odometry
    from net_helpers import free_udp_port
    from ros_helpers import simulator, spin_until

    port = free_udp_port()
    while port + 10 > 65535:
        port = free_udp_port()
    with simulator(description="bluerov1_pair", sitl_port=port, ardusub_frame="none") as (
        sim,
        user,
        executor,
    ):
        assert isinstance(sim.sitl, SitlJsonMulti) and sim.sitl.ports == [port, port + 10]
        odoms: list = []
        user.create_subscription(Odometry, "odom", odoms.append, 50)
        peers = [SimJsonPeer(("127.0.0.1", port + 10 * k), rate_hz=RATE) for k in range(2)]
        down = [1500] * 4 + [1300, 1500]
        z0 = None

        def frames():
            fly = [Flying(peers[0], 20, [1500] * 6), Flying(peers[1], 20, down)]
            for f in fly:
                f.start()
            for f in fly:
                f.join(30)
                assert f.error is None

        def sunk() -> bool:
            nonlocal z0
            if odoms and z0 is None:
                z0 = odoms[0].pose.pose.position.z
            return z0 is not None and len(odoms) > 5 and odoms[-1].pose.pose.position.z < z0 - 0.05

        assert spin_until(executor, sunk, every=frames, timeout=60)
        assert peers[0].parsed == peers[1].parsed
        # one step per frame of both, but for the first ones of the first SITL heard (alone)
        assert 0 <= sim.sim.state.t - peers[0].frame_counter / RATE < 25 / RATE
        said = peers[0].messages + peers[1].messages  # waiting for the other may take a re-send
        assert not [m for m in said if "Failed" in m or "Did not" in m or "reset" in m]
        for p in peers:
            p.close()
