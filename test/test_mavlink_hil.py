"""MAVLink HIL bridge against a pymavlink peer on UDP loopback (real MAVLink 2 bytes)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

os.environ.setdefault("MAVLINK20", "1")

import numpy as np
import pytest
from net_helpers import free_udp_port
from pymavlink import mavutil

from uvms_sim.hil.mavlink_hil import MavlinkHil
from uvms_sim.hil.px4_peer import px4_altitude
from uvms_sim.model import load
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"
ARMED = 128  # HIL_ACTUATOR_CONTROLS.mode: MAV_MODE_FLAG_SAFETY_ARMED


@pytest.fixture
def pair():
    port = free_udp_port()
    bridge = MavlinkHil(
        Simulator.from_system(load(CONFIG / "bluerov2_heavy.yaml")),
        f"udpin:127.0.0.1:{port}",
        motors="ardusub",
        state_rate=50.0,
    )
    board = mavutil.mavlink_connection(f"udpout:127.0.0.1:{port}", source_system=1, source_component=1)
    yield bridge, board, port
    bridge.close()
    board.close()


def sensors(board):
    """Every HIL message waiting on the board's socket, oldest first."""
    out = []
    msg = board.recv_match(type=["HIL_SENSOR", "HIL_STATE_QUATERNION"], blocking=True, timeout=2.0)
    while msg is not None:
        out.append(msg)
        msg = board.recv_match(type=["HIL_SENSOR", "HIL_STATE_QUATERNION"], blocking=True, timeout=0.2)
    return out


def test_hil_sensor_and_state_follow_the_physics(pair):
    """At rest: HIL_SENSOR reads about -g along body z (FRD specific force) and, as the
    air pressure PX4 reads, the height of the pressure sensor (1.9 m deep under a surface at
    488 m); then HIL_ACTUATOR_CONTROLS on the vertical thrusters (+0.5, armed) push the vehicle
    down and PX4's barometric altitude falls; SERVO_OUTPUT_RAW works too."""
    bridge, board, _ = pair
    board.mav.heartbeat_send(
        mavutil.mavlink.MAV_TYPE_SUBMARINE, mavutil.mavlink.MAV_AUTOPILOT_GENERIC, 0, 0, 0
    )
    bridge.step(0.004)  # learns where the board is
    for _ in range(5):
        bridge.step(0.004)
    first = [m for m in sensors(board) if m.get_type() == "HIL_SENSOR"][-1]
    assert first.zacc == pytest.approx(-9.81, abs=0.3)
    assert px4_altitude(first.abs_pressure * 100.0) == pytest.approx(488.0 - 1.9, abs=0.02)
    controls = [0.0] * 4 + [0.5] * 4 + [0.0] * 8
    for _ in range(500):
        board.mav.hil_actuator_controls_send(0, controls, ARMED, 0)
        bridge.step(0.004)
    drained = sensors(board)
    last = [m for m in drained if m.get_type() == "HIL_SENSOR"][-1]
    deeper = px4_altitude(first.abs_pressure * 100.0) - px4_altitude(last.abs_pressure * 100.0)
    assert deeper > 0.2  # more than 20 cm deeper in 2 s
    assert bridge.received["HIL_ACTUATOR_CONTROLS"] >= 400 and bridge.sim.thrusters.thrust[4] > 5.0
    board.mav.servo_output_raw_send(0, 0, *([1500] * 4 + [1300] * 4), *([0] * 8))
    bridge.step(0.004)
    assert bridge.received["SERVO_OUTPUT_RAW"] == 1 and bridge.sim.thrusters.pwm[4] == 1300.0
    quats = [m for m in drained if m.get_type() == "HIL_STATE_QUATERNION"]
    assert quats  # sent at 50 Hz (a UDP socket buffer may drop some of a 2 s burst)
    assert quats and np.linalg.norm(quats[-1].attitude_quaternion) == pytest.approx(1.0, abs=1e-6)


def test_garbage_and_nan_controls_do_not_stop_the_bridge(pair):
    bridge, board, port = pair
    rng = np.random.default_rng(1)
    raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for n in rng.integers(1, 600, size=30):
        raw.sendto(rng.bytes(int(n)), ("127.0.0.1", port))
    board.mav.hil_actuator_controls_send(0, [float("nan")] * 16, ARMED, 0)
    for _ in range(20):
        bridge.step(0.004)
    raw.close()
    assert bridge.dropped >= 1
    assert np.all(np.isfinite(bridge.sim.state.q))
    board.mav.hil_actuator_controls_send(0, [0.0] * 4 + [0.3] * 4 + [0.0] * 8, ARMED, 0)
    bridge.step(0.004)
    assert bridge.received["HIL_ACTUATOR_CONTROLS"] == 1


def test_only_the_first_autopilot_flies_and_out_of_range_controls_are_clipped(pair, caplog):
    """A second system's actuator messages are ignored (counted, one warning); controls of 3.0
    are clipped to full command with a warning; a thruster numbered 20 (HIL carries 16
    outputs) is reported at start and never indexes past the message."""
    import logging
    from dataclasses import replace

    bridge, board, port = pair
    intruder = mavutil.mavlink_connection(f"udpout:127.0.0.1:{port}", source_system=7, source_component=1)
    with caplog.at_level(logging.WARNING, logger="uvms_sim"):
        board.mav.hil_actuator_controls_send(0, [0.0] * 16, ARMED, 0)
        bridge.step(0.004)
        for _ in range(3):
            intruder.mav.hil_actuator_controls_send(0, [1.0] * 16, ARMED, 0)
            bridge.step(0.004)
        assert bridge.ignored == {7: 3} and bridge.autopilot == 1
        assert np.all(bridge.sim.thrusters.pwm == 1500.0)
        board.mav.hil_actuator_controls_send(0, [0.0] * 4 + [3.0] * 4 + [0.0] * 8, ARMED, 0)
        bridge.step(0.004)
    assert np.all(bridge.sim.thrusters.pwm[4:8] == 1900.0)
    said = [r.getMessage() for r in caplog.records]
    assert sum("system 7" in m for m in said) == 1 and any("clipped" in m for m in said)
    intruder.close()
    system = load(CONFIG / "bluerov2_heavy.yaml")
    veh = system.vehicles[0]
    far = replace(veh, thrusters=(*veh.thrusters[:-1], replace(veh.thrusters[-1], motor=20)))
    with caplog.at_level(logging.WARNING, logger="uvms_sim"):
        other = MavlinkHil(
            Simulator.from_system(replace(system, vehicles=(far,))),
            f"udpin:127.0.0.1:{free_udp_port()}",
            motors="ardusub",
        )
    assert any("motors [20]" in r.getMessage() for r in caplog.records)
    assert 20 not in other.motors
    other.close()


def test_cli_bad_rate_and_addresses_are_one_line_errors(capsys):
    from uvms_sim.cli import main

    for connection in ("/dev/ttyNOPE0", "udpin:nowhere.invalid:14560", "udpin:127.0.0.1:99999"):
        assert main(["hil", "--connection", connection]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"error: cannot open {connection!r}") and "\n" not in err
    with pytest.raises(SystemExit) as exc:
        main(["hil", "--rate", "0"])
    assert exc.value.code == 2 and "not a rate" in capsys.readouterr().err


def test_a_stray_udp_sender_is_not_fed_the_sensor_stream(pair):
    """Once the autopilot has sent its actuators, a stranger who sent one datagram gets no
    HIL_SENSOR messages (the bridge answers the autopilot's address only)."""
    bridge, board, port = pair
    board.mav.hil_actuator_controls_send(0, [0.0] * 16, ARMED, 0)
    bridge.step(0.004)
    stray = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stray.bind(("127.0.0.1", 0))
    stray.settimeout(0.2)
    stray.sendto(b"\x01", ("127.0.0.1", port))
    for _ in range(50):
        board.mav.hil_actuator_controls_send(0, [0.0] * 16, ARMED, 0)
        bridge.step(0.004)
    with pytest.raises(TimeoutError):
        stray.recv(4096)
    stray.close()
    assert [m for m in sensors(board) if m.get_type() == "HIL_SENSOR"]
