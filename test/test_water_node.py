"""The working water through the simulator node, over real DDS: the tether's and the waves'
topics, their markers, the reel's parameters set at run time, and a real recording of them."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
from nav_msgs.msg import Path
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from ros_helpers import call, simulator, spin_until
from std_msgs.msg import Float64, Float64MultiArray
from visualization_msgs.msg import Marker, MarkerArray


def _set(user, executor, name: str, value):
    """Set a parameter of the simulator through its parameter service (what ``ros2 param set`` does)."""
    client = user.create_client(SetParameters, "/simulator/set_parameters")
    msg = ParameterMsg(name=name)
    if isinstance(value, str):
        msg.value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)
    else:
        msg.value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=float(value))
    return call(executor, client, SetParameters.Request(parameters=[msg])).results[0]


def test_tether_and_waves_are_published_drawn_and_the_reel_obeys_its_parameters(tmp_path):
    """The shipped tethered BlueROV2 (50 m of Fathom tether, a current and a JONSWAP sea): the
    tether's path (51 nodes, ENU), tension (51 segments) and length, the waves' elevation over
    the vehicle, and the markers (the tether's line strip, the wave surface's triangles) arrive;
    ``tethers.tether.length`` set through the parameter service pays the tether out at its
    reel's speed; a negative length, a text and an unknown tether are refused with a reason;
    ``uvms-sim record`` records the tether's and the waves' topics into a real bag."""
    with simulator(description="bluerov2_tethered", ardusub_frame="none", physics_rate=1000.0,
                   real_time_factor=1.0, command_timeout=60.0,
                   marker_rate=10.0) as (sim, user, executor):  # fmt: skip
        got: dict[str, list] = {k: [] for k in ("path", "tension", "length", "elevation", "markers")}
        user.create_subscription(Path, "tether/tether/path", got["path"].append, 10)
        user.create_subscription(Float64MultiArray, "tether/tether/tension", got["tension"].append, 10)
        user.create_subscription(Float64, "tether/tether/length", got["length"].append, 10)
        user.create_subscription(Float64MultiArray, "waves/elevation", got["elevation"].append, 10)
        user.create_subscription(MarkerArray, "markers", got["markers"].append, 10)
        assert spin_until(executor, lambda: all(got.values()), timeout=30.0), {
            k: len(v) for k, v in got.items()
        }
        assert len(got["path"][-1].poses) == 51 and got["path"][-1].header.frame_id == "odom"
        first = got["path"][-1].poses[0].pose.position
        assert (first.x, first.y, first.z) == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)  # the reel
        assert len(got["tension"][-1].data) == 51 and min(got["tension"][-1].data) >= 0.0
        assert got["length"][-1].data == pytest.approx(50.0, abs=0.01)
        assert abs(got["elevation"][-1].data[0]) < 1.0
        markers = {m.ns: m for array in got["markers"] for m in array.markers}
        assert markers["tether"].type == Marker.LINE_STRIP and len(markers["tether"].points) == 51
        assert markers["water_surface"].type == Marker.TRIANGLE_LIST
        assert len(markers["water_surface"].points) == 3 * 2 * 12 * 12

        result = _set(user, executor, "tethers.tether.length", 51.0)
        assert result.successful, result.reason
        start = got["length"][-1].data
        assert spin_until(executor, lambda: got["length"][-1].data > start + 0.3, timeout=30.0)
        assert spin_until(executor, lambda: got["length"][-1].data == pytest.approx(51.0), timeout=30.0)
        for name, value, words in (("tethers.tether.length", -2.0, ">= 0"),
                                   ("tethers.tether.speed", "fast", "number"),
                                   ("tethers.rope.length", 3.0, "undeclared")):  # fmt: skip
            refused = _set(user, executor, name, value)
            assert not refused.successful and words in refused.reason, refused.reason
        assert sim.sim.tethers[0].target == 51.0

        bag = tmp_path / "bag"
        record = subprocess.run(
            [sys.executable, "-m", "uvms_sim.cli", "record", str(bag), "/tether/tether/tension",
             "/tether/tether/path", "/waves/elevation", "--duration", "4"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert record.returncode == 0, record.stderr
    from rosbags.rosbag2 import Reader

    with Reader(bag) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
    assert counts.get("/tether/tether/tension", 0) > 10 and counts.get("/waves/elevation", 0) > 10, counts
    assert counts.get("/tether/tether/path", 0) > 10, counts


def test_the_browser_view_records_the_tether_and_the_wave_surface(tmp_path):
    """A frame with the working water (``viz.water``) logged by the browser view and read back
    with Rerun's own reader: the tether's line strip through its 51 nodes, its tension plotted,
    and the wave surface as a mesh of 13 x 13 vertices at the sea's elevation."""
    import numpy as np
    import rerun as rr

    from uvms_sim.model import load
    from uvms_sim.simulator import Simulator
    from uvms_sim.viz.rerun_view import RerunView
    from uvms_sim.viz.scene import SceneState
    from uvms_sim.viz.water import tether_paths, wave_surface

    system = load(pathlib.Path(__file__).resolve().parent.parent / "config" / "bluerov2_tethered.yaml")
    sim = Simulator.from_system(system)
    view = RerunView(system, save=tmp_path / "water.rrd", rate=10.0)
    frame = SceneState(system).frame(sim.state.q, None)
    frame.tethers = tether_paths(sim.tethers)
    frame.surface = wave_surface(sim.env, 0.0, frame.p[0])
    vertices, triangles = frame.surface
    assert vertices.shape == (169, 3) and triangles.shape == (288, 3)
    eta = [sim.env.elevation(v[1], v[0], 0.0) for v in vertices[:5]]
    assert np.allclose(vertices[:5, 2], eta)
    view.log(0.0, frame)
    view.close()
    paths = {str(c.entity_path) for c in rr.chunk.RrdReader(tmp_path / "water.rrd").stream().to_chunks()}
    assert {"/world/tether/tether", "/plots/tether_tension/tether", "/world/water_surface"} <= paths
