"""The video stream's and the camera mount's node parameters (``video_port``, ``video_host``,
``video_camera``, ``video_sdp``, ``mount_tilt_servo``, ``lights_servo``, ``mount_tilt_pwm``)
given by a hostile user: 2000 * ``FUZZ_SCALE`` values of every type through the node's check,
the SDP path and the stream's settings through ``VideoStream`` (opened, never sent to a random
port), servo frames of any PWMs through the mount, and 4 * ``FUZZ_SCALE`` node starts with
random sets of them. What must hold: a value is taken as its type or refused in one line
naming the parameter; nothing else is raised; the mount's tilt stays within the camera's
max_tilt and the lights within 0-1."""

from __future__ import annotations

import math
import os
import socket
import string

import numpy as np
import pytest

pytest.importorskip("av")

from uvms_sim.actuators.camera_mount import CameraMount
from uvms_sim.ros.parameters import PARAMETERS, check_parameter
from uvms_sim.viz.video import VideoStream

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
NAMES = [
    "video_port",
    "video_host",
    "video_camera",
    "video_sdp",
    "mount_tilt_servo",
    "lights_servo",
    "mount_tilt_pwm",
]
HOSTS = ["127.0.0.1", "localhost", "::1", "0.0.0.0", "::", "192.168.2.1", "239.0.0.1", "256.1.1.1",
         "1.2.3", "qgc", "", " 127.0.0.1", "127.0.0.1\x00", "fe80::1%eth0", "2001:db8::1",
         "127.0.0.1:5600"]  # fmt: skip


def random_value(rng: np.random.Generator):
    kind = rng.integers(10)
    if kind == 0:
        return int(rng.integers(-(2**40), 2**40))
    if kind == 1:
        return int(rng.integers(-5, 70000))
    if kind == 2:
        return float(rng.choice([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, 5600.5, 1100.0, 1900.0]))
    if kind == 3:
        return bool(rng.integers(2))
    if kind == 4:
        return str(rng.choice(HOSTS))
    if kind == 5:
        n = int(rng.integers(0, 40))
        return "".join(rng.choice(list(string.printable + "\x00é/"), n))
    if kind == 6:
        return [float(x) for x in rng.uniform(-3000.0, 3000.0, int(rng.integers(0, 4)))]
    if kind == 7:
        return [int(x) for x in rng.integers(400, 2600, int(rng.integers(0, 4)))]
    if kind == 8:
        return [str(x) for x in rng.integers(0, 9, 2)]
    return None


def test_stream_parameters_are_taken_or_refused_in_one_line():
    rng = np.random.default_rng(40)
    taken = 0
    for _ in range(2000 * SCALE):
        name = str(rng.choice(NAMES))
        value = random_value(rng)
        try:
            out = check_parameter(name, value)
        except ValueError as exc:
            text = str(exc)
            assert text.startswith(f"parameter {name}: ") and "\n" not in text, (name, value, text)
            continue
        taken += 1
        default = PARAMETERS[name]
        assert type(out) is type(default), (name, value, out)
        if name == "video_port":
            assert 0 <= out <= 65535
        if name == "mount_tilt_pwm":
            assert len(out) == 2 and all(500.0 <= x <= 2500.0 for x in out) and abs(out[1] - out[0]) >= 10.0
    assert taken > 100


def test_stream_settings_open_or_are_refused_in_one_line(tmp_path):
    rng = np.random.default_rng(41)
    for k in range(100 * SCALE):
        host = str(rng.choice(HOSTS))
        port = int(rng.choice([0, 1, 5600, 65535, 65536, -1, int(rng.integers(1, 65536))]))
        width, height = (int(x) for x in rng.integers(-2, 80, 2))
        rate = float(rng.choice([15.0, 0.5, 1000.0, 7.3]))
        name = "".join(rng.choice(list(string.ascii_letters + "/\x00. é"), int(rng.integers(0, 12))))
        path = str(
            rng.choice(
                [str(tmp_path / f"s{k}.sdp"), str(tmp_path / name), "/no/dir/x.sdp", "", str(tmp_path)]
            )
        )
        try:
            stream = VideoStream(host, port, width, height, rate, path or None)
        except ValueError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(("parameter video_", "video: ")), str(exc)
            continue
        assert stream.port == port and stream.width == width
        stream.container.close()  # nothing sent: a random port may be someone's


def test_servo_frames_of_any_pwm_keep_the_mount_in_range():
    rng = np.random.default_rng(42)
    for _ in range(2000 * SCALE):
        max_tilt = float(rng.uniform(0.0, math.pi / 2))
        lo, hi = rng.uniform(500.0, 2500.0, 2)
        if abs(hi - lo) < 10.0:
            continue
        mount = CameraMount(
            max_tilt, int(rng.integers(0, 33)), int(rng.integers(0, 33)), (float(lo), float(hi))
        )
        pwm = tuple(int(x) for x in rng.integers(0, 65536, int(rng.choice([16, 32]))))
        tilt, lights = mount.tilt(pwm), mount.lights(pwm)
        assert tilt is None or (math.isfinite(tilt) and abs(tilt) <= max_tilt + 1e-12)
        assert lights is None or 0.0 <= lights <= 1.0


def test_node_starts_with_random_stream_parameters_run_or_stop_in_one_line(tmp_path):
    from rclpy.parameter import Parameter
    from ros_helpers import ros_context
    from test_video import camera_description

    from uvms_sim.ros.node import SimulatorNode

    rng = np.random.default_rng(43)
    description = camera_description(tmp_path)
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    for _ in range(4 * SCALE):
        params = {
            str(n): random_value(rng) for n in rng.choice(NAMES, int(rng.integers(1, 4)), replace=False)
        }
        if isinstance(params.get("video_port"), int) and not isinstance(params["video_port"], bool):
            if 0 < params["video_port"] <= 65535:  # a stream that starts goes into this test's own socket
                params["video_port"], params["video_host"] = sink.getsockname()[1], "127.0.0.1"
        overrides = [Parameter("description", value=description), Parameter("ardusub_frame", value="none")]
        overrides += [Parameter(k, value=v) for k, v in params.items() if v is not None]
        with ros_context() as (ctx, _executor):
            try:
                node = SimulatorNode(context=ctx, parameter_overrides=overrides)
            except ValueError as exc:
                assert "\n" not in str(exc) and str(exc).startswith("parameter "), (params, str(exc))
                continue
            try:
                assert node.thread.is_alive()
            finally:
                node.destroy_node()
    sink.close()
