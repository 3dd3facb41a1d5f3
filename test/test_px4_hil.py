"""The MAVLink HIL bridge against the strict PX4 stand-in (``uvms_sim.hil.px4_peer``) over real
TCP on loopback: lock-step as PX4 SITL's simulator_mavlink runs it, the barometer, stale-sensor,
GPS and compass facts of PX4's code, and the motor maps of PX4's BlueROV2 Heavy airframes."""

from __future__ import annotations

import datetime as dt
import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from uvms_sim.hil.hil_sensors import GpsSpec
from uvms_sim.hil.mavlink_hil import MavlinkHil
from uvms_sim.hil.px4 import AIRFRAMES, altitude_from_pressure, motor_map, pressure_for_altitude
from uvms_sim.hil.px4_peer import DataValidator, Px4Peer, px4_altitude
from uvms_sim.model import load
from uvms_sim.sensors.geomag import declination, wmm_field
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"
DATE = dt.date(2026, 6, 1)
HOME = (47.397742, 8.545594, 488.0)
# PX4 controls that push a BlueROV2 Heavy up in airframes 1022/60002: rotors 4 and 7 push along
# -z for +1, rotors 5 and 6 along +z
UP = [0.0] * 4 + [0.3, -0.3, -0.3, 0.3] + [0.0] * 8
DOWN = [0.0] * 4 + [-0.5, 0.5, 0.5, -0.5] + [0.0] * 8


def bluerov(depth: float = 2.0) -> Simulator:
    sim = Simulator.from_system(load(CONFIG / "bluerov2_heavy.yaml"))
    q = sim.state.q.copy()
    q[2] = depth
    sim.reset(q)
    return sim


class Session:
    """A lock-step bridge serving in a thread, and the PX4 stand-in connected to it."""

    def __init__(self, sim: Simulator, peer_kwargs: dict | None = None, **bridge) -> None:
        self.bridge = MavlinkHil(sim, "tcpin:127.0.0.1:0", HOME, DATE, **bridge)
        self.thread = threading.Thread(target=self.bridge.serve, kwargs={"speed": 0.0}, daemon=True)
        self.thread.start()
        self.peer = Px4Peer(self.bridge.link.port, date=DATE, **(peer_kwargs or {}))

    def close(self) -> None:
        self.peer.close()
        self.bridge.stop = True
        self.thread.join(5.0)
        self.bridge.close()


@pytest.fixture
def session_of():
    made = []

    def make(sim, peer_kwargs=None, **bridge):
        made.append(Session(sim, peer_kwargs, **bridge))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_pressure_is_sent_as_the_air_pressure_of_the_height():
    """PX4 turns HIL_SENSOR.abs_pressure into an altitude with the standard atmosphere
    (VehicleAirData.cpp): the bridge's pressure gives back the height metre for metre (float32,
    as PX4 computes: within 2 cm at 0-300 m deep under a surface at 488 m), while the water
    pressure of 1 m of fresh water reads as -786 m."""
    for depth in (0.0, 0.5, 1.0, 10.0, 100.0, 300.0):
        height = 488.0 - depth
        assert altitude_from_pressure(pressure_for_altitude(height)) == pytest.approx(height, abs=1e-9)
        assert px4_altitude(pressure_for_altitude(height)) == pytest.approx(height, abs=0.02)
    assert px4_altitude(101325.0 + 1000.0 * 9.80665 * 1.0) == pytest.approx(-786.2, abs=0.5)


def test_data_validator_counts_equal_values_over_the_axes():
    """DataValidator: the equal count grows by one per equal axis and any changed axis resets
    it, so 35 identical 3-axis samples (34 repeats, 102 > 100) are STALE, 34 are not; a changing
    last axis keeps the count at 0; 300 ms without data is TIMEOUT."""
    v = DataValidator(300_000)
    for k in range(35):
        v.put(1000 * (k + 1), (1.0, 2.0, 3.0))
        assert (v.confidence(1000 * (k + 1)) == 0.0) == (k == 34)
    assert v.failure("BARO", 35_000) == "BARO #0 failed:  STALE!"
    w = DataValidator(300_000)
    for k in range(500):
        w.put(1000 * (k + 1), (1.0, 2.0, float(k)))
    assert w.equal_count == 0 and w.confidence(500_000) == 1.0
    assert w.failure("MAG", 500_000 + 300_001) == "MAG #0 failed:  TIMEOUT!"


def test_no_physics_before_px4_connects_then_each_step_waits_for_its_answer(session_of):
    """Nothing moves until PX4 connects; then time_usec goes up by exactly one step per message
    and, PX4 answering each after 5 ms, then 20 ms (slower than real time), the bridge never
    sends the next sensors before the answer (the stand-in counts any that come early);
    HIL_STATE_QUATERNION comes every 5 ms as PX4 asked."""
    s = session_of(bluerov())
    time.sleep(0.5)
    assert s.bridge.sim.state.t == 0.0 and s.bridge.steps == 0
    s.peer.reply_delay = 0.005
    s.peer.connect()
    s.peer.spin(sensors=100)
    s.peer.reply_delay = 0.02
    s.peer.spin(sensors=20)
    assert s.peer.synced and s.peer.ran_ahead == 0 and s.peer.time_back == 0
    assert set(np.diff(s.peer.times)) == {4000} and s.peer.times[0] == 4000
    assert s.bridge.lockstep_peer and s.bridge.state_period == pytest.approx(0.005)
    assert s.peer.truth is not None


def test_the_stand_in_catches_a_bridge_that_does_not_wait():
    """The HITL loop (paced by the wall clock, never waiting) over PX4 SITL's link runs ahead of
    a PX4 that takes 20 ms per answer: the stand-in sees sensors sent before its answers."""
    bridge = MavlinkHil(bluerov(), "tcpin:127.0.0.1:0", HOME, DATE)
    peer = Px4Peer(bridge.link.port, date=DATE)
    peer.connect()
    assert bridge.link.accept(2.0)
    loop = threading.Thread(target=bridge.run, kwargs={"rate": 250.0, "seconds": 1.0}, daemon=True)
    loop.start()
    try:
        peer.spin(sensors=5)
        assert peer.synced
        peer.reply_delay = 0.02
        peer.spin(sensors=10)
        assert peer.ran_ahead > 0
    finally:
        loop.join(5.0)
        peer.close()
        bridge.close()


def test_a_new_px4_session_starts_the_vehicle_again(session_of):
    sim = bluerov()
    s = session_of(sim)
    s.peer.connect()
    s.peer.armed, s.peer.controls = True, DOWN
    s.peer.spin(sensors=300)
    assert sim.state.q[2] > 2.05
    s.peer.close()
    second = Px4Peer(s.bridge.link.port, date=DATE)
    second.connect()
    try:
        second.spin(sensors=5)
        assert second.times[0] == 4000 and s.bridge.sessions == 2
        assert sim.state.q[2] == pytest.approx(2.0, abs=0.01)
    finally:
        second.close()


def test_noise_keeps_px4s_validators_quiet_and_exact_values_go_stale(session_of):
    """At rest and level, exact sensors repeat: PX4 marks the gyro STALE after 35 samples and the
    magnetometer after 335 (7 s at 50 Hz); with the sensor models' noise none goes stale."""
    quiet = session_of(bluerov(), noise=False)
    quiet.peer.connect()
    quiet.peer.spin(sensors=1700)
    failures = quiet.peer.preflight()
    assert "GYRO #0 failed:  STALE!" in failures and "MAG #0 failed:  STALE!" in failures
    noisy = session_of(bluerov())
    noisy.peer.connect()
    noisy.peer.spin(sensors=1700)
    assert not [f for f in noisy.peer.preflight() if "#0 failed" in f]


def test_at_the_surface_px4_gets_gps_home_and_the_wmm_heading(session_of):
    """Held at the surface, HIL_GPS gives a 3D fix at 5 Hz that EKF2's checks pass for 10 s:
    nothing in the preflight list; the compass heading with the WMM declination at the fix is
    the true heading within 2 deg (noise); then driven down past 0.3 m the receiver has no fix
    (nofix) and PX4 loses its GPS."""
    sim = bluerov(0.0)
    s = session_of(sim)
    s.peer.connect()
    s.peer.armed, s.peer.controls = True, UP
    s.peer.spin(sensors=2600)
    assert s.peer.preflight() == []
    fixes = [m for _, m in s.peer.gps if m.fix_type == 3]
    assert len(fixes) == pytest.approx(2600 * 0.004 * 5, abs=2)
    assert abs(math.degrees(s.peer.heading_error())) < 2.0
    field = wmm_field(*HOME, DATE)
    assert math.degrees(declination(field)) == pytest.approx(3.5, abs=0.5)  # Zurich, 2026
    s.peer.controls = DOWN
    s.peer.spin(sensors=1000)
    assert sim.state.q[2] > 0.5
    assert s.peer.gps[-1][1].fix_type == 1 and not s.peer.gps_healthy
    assert any("GPS" in f for f in s.peer.preflight())


def test_acoustic_positioning_keeps_a_fix_under_water(session_of):
    sim = bluerov(3.0)
    s = session_of(sim, gps=GpsSpec(underwater="acoustic"))
    s.peer.connect()
    s.peer.spin(sensors=500)
    fixes = [m for _, m in s.peer.gps]
    assert fixes and all(m.fix_type == 3 for m in fixes)
    assert len(fixes) == pytest.approx(500 * 0.004 * 2.0, abs=1)  # 2 Hz
    assert all(m.eph == pytest.approx(2 * (30 + 3), abs=2) for m in fixes)  # 0.3 m + 1 % of 3 m, x2


def test_height_from_water_pressure_fails_as_px4_does():
    """The stand-in's height check fails on the water pressure PX4 used to get (1 cm of depth
    reads as 8 m of altitude) and passes on the bridge's mapping."""
    peer = Px4Peer(0)

    class Fix:
        def __init__(self, alt_mm: int) -> None:
            self.fix_type, self.alt, self.epv, self.eph, self.satellites_visible = 3, alt_mm, 150, 100, 12

    peer.gps = [(0, Fix(488000)), (1_000_000, Fix(487000))]  # 1 m deeper
    peer.baro_altitude = [
        (0, px4_altitude(101325.0 + 9806.65)),
        (1_000_000, px4_altitude(101325.0 + 2 * 9806.65)),
    ]
    assert not peer.height_consistent()
    peer.baro_altitude = [(0, px4_altitude(pressure_for_altitude(488.0))),
                          (1_000_000, px4_altitude(pressure_for_altitude(487.0)))]  # fmt: skip
    assert peer.height_consistent()


def test_motor_maps_follow_px4s_airframes():
    """Both PX4 BlueROV2 Heavy airframes reverse motors 1, 2, 5 and 8 against ArduSub's table
    (the shipped description), so PWM_MAIN_REV is not needed; a yaw torque or a heave force
    allocated as PX4 does (pseudo-inverse of its airframe's effectiveness) is what the simulated
    vehicle gets with a PX4 map, and not with ArduSub's (a yaw command becomes a sideways push
    and a roll, a heave command cancels out); a description that does not fit is refused."""
    sim = bluerov()
    bank = sim.thrusters
    geometry = {m: (bank.position[k], bank.direction[k] * bank.sign[k]) for k, m in enumerate(bank.motors)}
    expected = {1: -1.0, 2: -1.0, 3: 1.0, 4: 1.0, 5: -1.0, 6: 1.0, 7: 1.0, 8: -1.0}
    for name in AIRFRAMES:
        assert motor_map(name, geometry) == expected
    assert motor_map("ardusub", geometry) == dict.fromkeys(range(1, 9), 1.0)
    frame = AIRFRAMES["px4-1022"]
    axes = np.array(frame.axes, dtype=float)
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    arms = bank.position[np.argsort(bank.motors)]
    effectiveness = np.vstack([np.cross(arms, axes).T, axes.T])  # torque rows, then force rows
    for wanted in ([0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]):  # yaw, heave
        u = np.linalg.pinv(effectiveness) @ np.array(wanted)  # PX4's allocation: (torque, force)
        for name, fits in (("px4-1022", True), ("ardusub", False)):
            signs = motor_map(name, geometry)
            thrust = np.array([signs[m] * u[m - 1] for m in bank.motors])  # along each direction
            force_torque = bank.unit_wrench.T @ (thrust * bank.sign)
            got = np.concatenate([force_torque[3:], force_torque[:3]])  # (torque, force)
            cosine = got @ wanted / np.linalg.norm(got)
            assert (cosine > 0.99) == fits, (name, wanted, got.round(3))
    other = load(CONFIG / "bluerov2.yaml")
    sim6 = Simulator.from_system(other)
    with pytest.raises(ValueError, match="motor"):
        MavlinkHil(sim6, "tcpin:127.0.0.1:0", motors="px4-1022")
