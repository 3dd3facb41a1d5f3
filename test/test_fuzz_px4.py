"""Hostile MAVLink into the HIL bridge in lock-step mode (PX4 SITL's TCP link): thousands of
random frames, valid messages with non-finite, huge and out-of-range fields, bogus answer
times, message-interval requests, truncated frames, other systems and reconnections mid-frame.
What must hold: no crash (the serving thread lives on), nothing non-finite out (every float of
every HIL message the bridge sends), the physics finite, the thrusters within 1100-1900 us."""

from __future__ import annotations

import datetime as dt
import math
import os
import socket
import threading
import time
from pathlib import Path

os.environ.setdefault("MAVLINK20", "1")

import numpy as np
from pymavlink import mavutil

from uvms_sim.hil.mavlink_hil import MavlinkHil
from uvms_sim.model import load
from uvms_sim.simulator import Simulator

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
CONFIG = Path(__file__).resolve().parents[1] / "config"
mavlink = mavutil.mavlink
SPECIALS = [float("nan"), float("inf"), -float("inf"), -1e30, 1e30, 1e-30, 0.0, 1.0, -1.0, 7.5, -2.0]


class Frames:
    """pymavlink encoding into bytes (a ``file`` for MAVLink)."""

    def __init__(self, sysid: int) -> None:
        self.out = b""
        self.mav = mavlink.MAVLink(self, srcSystem=sysid, srcComponent=1)

    def write(self, buf: bytes) -> None:
        self.out += bytes(buf)

    def take(self) -> bytes:
        out, self.out = self.out, b""
        return out


def _finite(msg) -> bool:
    for name in msg.get_fieldnames():
        value = getattr(msg, name)
        values = value if isinstance(value, list | tuple) else [value]
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            return False
    return True


def test_hostile_mavlink_into_the_lockstep_bridge():
    sim = Simulator.from_system(load(CONFIG / "bluerov2_heavy.yaml"))
    bridge = MavlinkHil(sim, "tcpin:127.0.0.1:0", date=dt.date(2026, 6, 1))
    serving = threading.Thread(target=bridge.serve, kwargs={"speed": 0.0}, daemon=True)
    serving.start()
    rng = np.random.default_rng(41)
    ours, other = Frames(1), Frames(int(rng.integers(2, 255)))
    reader = mavlink.MAVLink(None)
    reader.robust_parsing = True
    seen = {"HIL_SENSOR": 0, "HIL_GPS": 0, "HIL_STATE_QUATERNION": 0, "bad": 0}
    last = 0
    sock = None

    def connect():
        s = socket.create_connection(("127.0.0.1", bridge.link.port), timeout=2.0)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def drain(s) -> None:
        nonlocal last
        s.settimeout(0.002)
        try:
            data = s.recv(1 << 16)
        except TimeoutError:
            return
        for msg in reader.parse_buffer(data) or []:
            kind = msg.get_type()
            if kind in seen:
                seen[kind] += 1
                assert _finite(msg), msg
                if kind == "HIL_SENSOR":
                    last = msg.time_usec
            else:
                seen["bad"] += 1

    try:
        sock = connect()
        for k in range(2000 * SCALE):
            if k % 700 == 699:  # reconnect, sometimes mid-frame
                sock.sendall(rng.bytes(int(rng.integers(0, 30))))
                sock.close()
                sock = connect()
                reader = mavlink.MAVLink(None)
                reader.robust_parsing = True
                last = 0
            drain(sock)
            roll = int(rng.integers(0, 8))
            controls = [SPECIALS[int(i)] for i in rng.integers(len(SPECIALS), size=16)]
            if roll == 0:
                sock.sendall(rng.bytes(int(rng.integers(1, 300))))
            elif roll in (1, 2):  # an answer in time (keeps the lock-step going), hostile controls
                ours.mav.hil_actuator_controls_send(
                    last, controls, int(rng.integers(0, 256)), int(rng.integers(0, 2**63))
                )
            elif roll == 3:  # an answer from the future or the past
                stamp = [0, 2**64 - 1, int(rng.integers(0, 2**63))][int(rng.integers(3))]
                ours.mav.hil_actuator_controls_send(stamp, controls, 128, 1)
            elif roll == 4:
                param1 = float(rng.choice([mavlink.MAVLINK_MSG_ID_HIL_STATE_QUATERNION, *SPECIALS]))
                ours.mav.command_long_send(0, 0, mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0, param1,
                                           float(rng.choice([*SPECIALS, 5e3])), *SPECIALS[:5])  # fmt: skip
            elif roll == 5:
                ours.mav.servo_output_raw_send(int(rng.integers(0, 2**32)), int(rng.integers(0, 256)),
                                               *rng.integers(0, 65536, size=16).tolist())  # fmt: skip
            elif roll == 6:  # a valid answer cut short
                ours.mav.hil_actuator_controls_send(last, [0.5] * 16, 128, 1)
                frame = ours.take()
                sock.sendall(frame[: int(rng.integers(1, len(frame)))])
            else:
                other.mav.hil_actuator_controls_send(last, [1.0] * 16, 128, 1)
                sock.sendall(other.take())
            sock.sendall(ours.take())
        for _ in range(20):
            drain(sock)
        assert serving.is_alive()
        hostile = seen["HIL_SENSOR"]
        # after the hostile input, a well-behaved PX4 (each HIL_SENSOR answered with its stamp)
        # still drives the lock-step: 200 more steps, however slow this machine is
        sock.close()
        sock = connect()
        reader = mavlink.MAVLink(None)
        reader.robust_parsing = True
        last, end = 0, time.monotonic() + 120.0
        while seen["HIL_SENSOR"] < hostile + 200 and time.monotonic() < end:
            answered = last
            drain(sock)
            if last != answered:
                ours.mav.hil_actuator_controls_send(last, [0.1] * 16, 128, 1)
                sock.sendall(ours.take())
        assert hostile > 0 and seen["HIL_SENSOR"] >= hostile + 200, seen
        assert seen["HIL_GPS"] > 0 and seen["HIL_STATE_QUATERNION"] > 0, seen
        assert np.all(np.isfinite(sim.state.q)) and np.all(np.isfinite(sim.state.v))
        pwm = sim.thrusters.pwm
        assert np.all((pwm >= 1100.0) & (pwm <= 1900.0))
        assert bridge.dropped > 0 and bridge.sessions >= 2
    finally:
        if sock is not None:
            sock.close()
        bridge.stop = True
        serving.join(5.0)
        bridge.close()
