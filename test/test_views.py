"""What users see: the URDF with visuals (checked by a real URDF parser, yourdfpy), the node's
robot_description and markers over DDS, the RViz configuration, and the browser view (Rerun's
web viewer served by the node, loaded in a real headless Chromium and checked by its pixels;
its recordings read back with Rerun's own reader)."""

from __future__ import annotations

import io
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
import yourdfpy
from rclpy.qos import DurabilityPolicy, QoSProfile
from ros_helpers import simulator, spin_until
from std_msgs.msg import String, UInt16MultiArray
from visualization_msgs.msg import Marker, MarkerArray

from uvms_sim.model import ConfigError, load
from uvms_sim.model.naming import tf_names
from uvms_sim.model.urdf_writer import urdf_text
from uvms_sim.simulator import Simulator
from uvms_sim.viz.scene import ARROW_SCALE

ROOT = Path(__file__).resolve().parents[1]
BROWSER_WAIT = 240.0  # s: for the page's 43 MB of WebAssembly to compile and draw (a loaded machine)
LIVE_LAG = 5.0  # s: how far behind the simulation the viewer may be (it was 15-24 s before batching)
CONFIG = ROOT / "config"
DESCRIPTIONS = [
    *sorted(p for p in CONFIG.glob("*.yaml") if not p.stem.endswith("_node")),
    CONFIG / "urdf" / "bluerov2_light_arm.urdf.xacro",
]


def parse(text: str) -> yourdfpy.URDF:
    return yourdfpy.URDF.load(io.StringIO(text), build_scene_graph=True, load_meshes=False)


@pytest.mark.parametrize("path", DESCRIPTIONS, ids=lambda p: p.name)
def test_every_description_is_a_urdf_with_visuals_that_a_real_parser_accepts(path):
    """yourdfpy reads and validates the URDF of every shipped description (a tree with one
    root, every joint well formed); its links are exactly the TF frames the node publishes
    (world frame, each vehicle's base_link and base_link_frd, every link), every link with mass
    is drawn, and every thruster is a cylinder."""
    system = load(path)
    urdf = parse(urdf_text(system, "rov/", "rov/odom"))
    assert urdf.validate() and urdf.base_link == "rov/odom"
    names, vehicles = tf_names(system, "rov/")
    frames = {"rov/odom", *names, *(vf.flu for vf in vehicles), *(vf.frd for vf in vehicles)}
    assert set(urdf.link_map) == frames
    massive = {names[i] for i, b in enumerate(system.model.bodies) if b.mass > 0}
    assert all(urdf.link_map[n].visuals for n in massive)
    cylinders = sum(
        1 for link in urdf.robot.links for v in link.visuals
        if v.geometry.cylinder is not None and abs(v.geometry.cylinder.radius - 0.05) < 1e-12
    )  # fmt: skip
    assert cylinders >= len(system.thrusters)


def test_descriptions_say_how_links_look_and_bad_visuals_are_named(tmp_path):
    """A YAML ``visual`` list (box, cylinder, sphere, mesh; origin; colour) and a URDF's
    ``<visual>`` elements (with a named material) reach the written URDF as given; a visual
    with two shapes or a negative size is a ConfigError naming the file, line and key."""
    text = (CONFIG / "bluerov2.yaml").read_text()
    custom = text.replace(
        "      - name: base_link\n",
        "      - name: base_link\n"
        "        visual:\n"
        "          - {box: [0.5, 0.3, 0.2], xyz: [0, 0, -0.1], color: [0, 0, 1, 1]}\n"
        "          - {cylinder: {radius: 0.1, length: 0.4}, rpy: [0, 1.5707963, 0]}\n"
        "          - {sphere: 0.05, xyz: [0.3, 0, 0]}\n"
        "          - {mesh: package://my_rov/meshes/frame.stl, scale: [0.001, 0.001, 0.001]}\n",
        1,
    )
    assert custom != text
    (tmp_path / "custom.yaml").write_text(custom)
    urdf = parse(urdf_text(load(tmp_path / "custom.yaml")))
    shapes = [v.geometry for v in urdf.link_map["base_link_frd"].visuals]
    assert shapes[0].box is not None and np.allclose(shapes[0].box.size, [0.5, 0.3, 0.2])
    assert shapes[1].cylinder.length == pytest.approx(0.4) and shapes[2].sphere.radius == pytest.approx(0.05)
    assert shapes[3].mesh.filename == "package://my_rov/meshes/frame.stl"
    assert np.allclose(urdf.link_map["base_link_frd"].visuals[0].material.color.rgba, [0, 0, 1, 1])
    from uvms_sim.model.export import save_yaml

    save_yaml(load(tmp_path / "custom.yaml"), tmp_path / "again.yaml")  # the visuals survive an export
    assert urdf_text(load(tmp_path / "again.yaml")) == urdf_text(load(tmp_path / "custom.yaml"))
    for bad, why in (
        ("{box: [0.5, 0.3, 0.2], sphere: 0.1}", "exactly one of"),
        ("{box: [0.5, -0.3, 0.2]}", "positive sizes"),
        ("{sphere: 0.1, color: [2, 0, 0, 1]}", "colour"),
    ):
        (tmp_path / "bad.yaml").write_text(
            text.replace(
                "      - name: base_link\n",
                f"      - name: base_link\n        visual:\n          - {bad}\n",
                1,
            )
        )
        with pytest.raises(ConfigError, match=why) as err:
            load(tmp_path / "bad.yaml")
        assert "bad.yaml:" in str(err.value) and "visual" in str(err.value)
    urdf_in = tmp_path / "rov.urdf"
    urdf_in.write_text(
        '<robot name="rov"><material name="red"><color rgba="1 0 0 1"/></material>'
        '<link name="base_link"><visual><origin xyz="0.1 0 0"/>'
        '<geometry><cylinder radius="0.2" length="0.6"/>'
        '</geometry><material name="red"/></visual><inertial><mass value="10"/>'
        '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>'
    )
    out = parse(urdf_text(load(urdf_in)))
    visual = out.link_map["base_link"].visuals[0]
    assert visual.geometry.cylinder.radius == pytest.approx(0.2) and np.allclose(
        visual.origin[:3, 3], [0.1, 0, 0]
    )
    assert np.allclose(visual.material.color.rgba, [1, 0, 0, 1])


def test_urdf_command_writes_what_the_node_publishes(tmp_path, capsys):
    from uvms_sim.cli import main

    out = tmp_path / "heavy.urdf"
    assert main(["urdf", "bluerov2_heavy", "--out", str(out), "--frame-prefix", "a/"]) == 0
    assert out.read_text() == urdf_text(load(CONFIG / "bluerov2_heavy.yaml"), "a/", "a/odom")
    assert main(["urdf", "no_such_vehicle"]) == 2
    assert "no_such_vehicle" in capsys.readouterr().err


def test_the_node_publishes_robot_description_and_markers():
    """A subscriber that joins late still gets ``robot_description`` (transient local, as from
    robot_state_publisher), equal to ``uvms-sim urdf``; ``markers`` carry one arrow per
    thruster whose length follows its thrust (ARROW_SCALE m/N), the water surface at z = 0 and the
    current arrow, in the world frame."""
    with simulator(real_time_factor=4.0, ardusub_frame="none", command_timeout=5.0, marker_rate=20.0) as (
        sim,
        user,
        executor,
    ):
        got: dict[str, object] = {}
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        time.sleep(0.5)  # join after the node published its description
        user.create_subscription(
            String, "robot_description", lambda m: got.__setitem__("urdf", m.data), latched
        )
        user.create_subscription(MarkerArray, "markers", lambda m: got.__setitem__("markers", m), 10)
        pwm = user.create_publisher(UInt16MultiArray, "thrusters/pwm", 10)
        forward = UInt16MultiArray(data=[1700] * 6)
        assert spin_until(executor, lambda: "urdf" in got and "markers" in got, timeout=15)
        assert got["urdf"] == urdf_text(sim.system, "", "odom")
        assert spin_until(
            executor,
            lambda: any(m.ns == "thrust" and m.color.g > 0.5 for m in got["markers"].markers),  # type: ignore[attr-defined]
            every=lambda: pwm.publish(forward),
            timeout=15,
        )
        markers = got["markers"].markers  # type: ignore[attr-defined]
        arrows = [m for m in markers if m.ns == "thrust"]
        assert len(arrows) == len(sim.system.thrusters) and all(m.header.frame_id == "odom" for m in markers)
        assert all(m.type == Marker.ARROW and len(m.points) == 2 for m in arrows)
        thrust = sim.sim.thrusters.thrust
        lengths = [np.linalg.norm([m.points[1].x - m.points[0].x, m.points[1].y - m.points[0].y,
                                   m.points[1].z - m.points[0].z]) for m in arrows]  # fmt: skip
        assert max(lengths) == pytest.approx(ARROW_SCALE * np.max(np.abs(thrust)), rel=0.3)
        surface = next(m for m in markers if m.ns == "water_surface")
        assert surface.type == Marker.CUBE and surface.pose.position.z == pytest.approx(0.0)
        assert any(m.ns == "current" for m in markers)


def test_the_rviz_configuration_shows_the_robot_tf_odometry_markers_and_camera():
    """The shipped RViz configuration parses and names the topics the node publishes (the
    camera's: a camera named ``front``, as docs/config.md's example); every
    launch file opens it on ``rviz:=true``."""
    config = yaml.safe_load((CONFIG / "rviz" / "uvms_sim.rviz").read_text())
    displays = {d["Class"]: d for d in config["Visualization Manager"]["Displays"]}
    assert displays["rviz_default_plugins/RobotModel"]["Description Topic"]["Value"] == "/robot_description"
    assert displays["rviz_default_plugins/MarkerArray"]["Topic"]["Value"] == "/markers"
    assert displays["rviz_default_plugins/Odometry"]["Topic"]["Value"] == "/odom"
    assert displays["rviz_default_plugins/Image"]["Topic"]["Value"] == "/camera/front/image_raw"
    assert "rviz_default_plugins/TF" in displays
    assert config["Visualization Manager"]["Global Options"]["Fixed Frame"] == "odom"
    helper = (ROOT / "uvms_sim" / "ros" / "launch.py").read_text()
    assert 'DeclareLaunchArgument("rviz", default_value="false")' in helper
    assert 'executable="rviz2"' in helper and '"uvms_sim.rviz"' in helper
    for launch in sorted((ROOT / "launch").glob("*.launch.py")):
        text = launch.read_text()
        assert (
            "from uvms_sim.ros.launch import rviz" in text
            and '*rviz(get_package_share_directory("uvms_sim"))' in text
        )


def test_a_recording_of_the_view_reads_back_with_rerun(tmp_path):
    """A ``.rrd`` recording (``RerunView(save=...)``) read back with Rerun's own reader holds
    every link's pose at each logged instant, equal to the simulator's (ENU), the thrust arrows
    and plots, the vehicle's trail along the poses it passed through, and the world's planes:
    the water surface at z = 0 and the Heavy's seafloor (``environment.seafloor``) 20 m down."""
    import rerun as rr

    from uvms_sim.viz.rerun_view import TRAIL_STEP, RerunView

    system = load(CONFIG / "bluerov2_heavy.yaml")
    sim = Simulator.from_system(system)
    view = RerunView(system, save=tmp_path / "dive.rrd", rate=10.0)
    sim.thrusters.set_motor_pwm(np.array([1700.0, 1700.0, 1300.0, 1300.0, 1500.0, 1500.0, 1500.0, 1500.0]))
    poses = {}
    for _ in range(300):
        sim.step(0.01)
        if view.update(sim.state.t, sim.state.q, sim.thrusters.thrust):
            poses[round(sim.state.t, 6)] = np.array([sim.state.q[1], sim.state.q[0], -sim.state.q[2]])
    view.close()
    chunks = rr.chunk.RrdReader(tmp_path / "dive.rrd").stream().to_chunks()
    paths = {str(c.entity_path) for c in chunks}
    assert {
        "/world/base_link_frd",
        "/world/thrust",
        "/plots/depth/bluerov2_heavy",
        "/plots/thrust",
        "/world/scene/surface_0",
        "/world/scene/surface_0/grid",
        "/world/scene/seabed_0",
        "/world/trail/bluerov2_heavy/live",
    } <= paths, sorted(paths)

    def column(path: str, name: str, static: bool = False) -> list:
        out = []
        for c in chunks:
            if str(c.entity_path) == path and c.is_static == static:
                batch = c.to_record_batch()
                times = batch.column("sim").to_pylist() if not static else [None] * batch.num_rows
                out += list(zip(times, batch.column(name).to_pylist(), strict=True))
        return out

    logged = {}
    for t, xyz in column("/world/base_link_frd", "Transform3D:translation"):
        logged[round(t.total_seconds() if hasattr(t, "total_seconds") else t * 1e-9, 6)] = np.array(xyz[0])
    assert len(logged) == len(poses) == 30
    for t, xyz in poses.items():
        np.testing.assert_allclose(logged[t], xyz, atol=1e-5)
    # the planes: vertices of the surface at z = 0, of the seafloor at z = -20 (flat)
    surface = np.array(column("/world/scene/surface_0", "Mesh3D:vertex_positions", static=True)[-1][1])
    seabed = np.array(column("/world/scene/seabed_0", "Mesh3D:vertex_positions", static=True)[-1][1])
    np.testing.assert_allclose(surface[:, 2], 0.0) and np.testing.assert_allclose(seabed[:, 2], -20.0)
    # the trail's last piece: places TRAIL_STEP apart at least, each within a step of the path
    strip = np.array(column("/world/trail/bluerov2_heavy/live", "LineStrips3D:strips")[-1][1][0])
    path = np.array(list(poses.values()))
    assert len(strip) >= 2 and np.all(np.linalg.norm(np.diff(strip, axis=0), axis=1) >= TRAIL_STEP - 1e-9)
    assert max(np.min(np.linalg.norm(path - p, axis=1)) for p in strip) < 0.2


def test_objects_added_and_removed_at_run_time_are_drawn_and_cleared(tmp_path):
    """``RerunView.rebuild`` after ``Simulator.add_object``: the object's frame gets its visual
    and its poses (equal to the simulator's, ENU); after ``remove_object`` its path is cleared
    (a static Clear) and no pose of it is logged again."""
    import rerun as rr

    from uvms_sim.viz.rerun_view import RerunView

    (tmp_path / "scene.yaml").write_text(f"""
vehicles:
  - {{name: rov, include: {CONFIG / "bluerov2.yaml"}, initial_pose: {{position: [0.0, 0.0, 5.0]}}}}
scene:
  seabed: {{type: plane, depth: 10.0}}
""")
    system = load(tmp_path / "scene.yaml")
    sim = Simulator.from_system(system)
    view = RerunView(system, save=tmp_path / "objects.rrd", rate=10.0)
    sim.add_object({"name": "ball", "shape": "sphere", "size": [0.05], "mass": 2.0, "xyz": [1.0, 2.0, 9.0]})
    view.rebuild(sim.system)
    ball = sim.model.body_index("ball")
    poses = []
    for _ in range(30):
        sim.step(0.01)
        if view.update(sim.state.t, sim.state.q):
            poses.append(sim.state.q[sim.model.q_slice(ball)][:3].copy())
    sim.remove_object("ball")
    view.rebuild(sim.system)
    for _ in range(30):
        sim.step(0.01)
        view.update(sim.state.t, sim.state.q)
    view.close()
    chunks = rr.chunk.RrdReader(tmp_path / "objects.rrd").stream().to_chunks()
    ours = [c for c in chunks if str(c.entity_path).startswith("/world/ball_frd")]
    assert any(str(c.entity_path) == "/world/ball_frd/visual_0" and c.is_static for c in ours)
    logged = []
    for c in ours:
        batch = c.to_record_batch()
        if str(c.entity_path) == "/world/ball_frd" and "Transform3D:translation" in batch.schema.names:
            logged += [np.array(x[0]) for x in batch.column("Transform3D:translation").to_pylist() if x]
    assert len(logged) == len(poses) == 3
    for xyz, q in zip(logged, poses, strict=True):
        np.testing.assert_allclose(xyz, [q[1], q[0], -q[2]], atol=1e-5)
    cleared = [c for c in ours if c.is_static and "Clear:is_recursive" in c.to_record_batch().schema.names]
    assert cleared, sorted({str(c.entity_path) for c in ours})


def test_the_world_planes_come_from_the_description(tmp_path):
    """``world_planes``: the free surface and the scene's plane seabed (sloped as the description
    says, its normal up); ``scene_meshes``: the scene's other surfaces, in ENU."""
    from dataclasses import replace

    from uvms_sim.scene import PlaneSeabed, Scene, Shape, Structure
    from uvms_sim.viz.scene import scene_meshes, world_planes

    system = load(CONFIG / "bluerov2_heavy.yaml")
    kinds = [(p.kind, p.point[2]) for p in world_planes(system)]
    assert kinds == [("surface", 0.0), ("seabed", -20.0)] and scene_meshes(system) == []
    box = Structure("block", Shape("box", (1.0, 2.0, 0.5), xyz=[3.0, 0.0, 10.0]))
    sloped = replace(system, scene=Scene(PlaneSeabed(30.0, (0.1, 0.0)), (box,)))  # deeper to the north
    planes = world_planes(sloped)
    assert [p.kind for p in planes] == ["surface", "seabed"]
    assert planes[1].height(0.0, 10.0) == pytest.approx(-31.0)  # 10 m north (ENU y): 1 m deeper
    assert planes[1].height(10.0, 0.0) == pytest.approx(-30.0) and planes[1].normal[2] > 0.99
    ((kind, vertices, faces),) = scene_meshes(sloped)
    assert kind == "structure" and len(faces) == 12
    np.testing.assert_allclose(vertices.min(axis=0), [-1.0, 2.5, -10.25])  # ENU: x east, y north, z up
    np.testing.assert_allclose(vertices.max(axis=0), [1.0, 3.5, -9.75])


def _connects(host: str, port: int) -> bool:
    import socket

    try:
        socket.create_connection((host, port), timeout=2).close()
        return True
    except OSError:
        return False


def test_the_browser_view_listens_on_loopback_unless_told_otherwise():
    """By default the page, its data stream and Rerun's own gRPC server listen on 127.0.0.1
    only: a client addressing this machine by another address (127.0.0.2, also the loopback
    interface but not the bound address) is refused. ``bind`` moves both ports to another
    address (the old one refuses), and ``0.0.0.0`` opens them on every interface (and says so)."""
    from net_helpers import free_tcp_port_pair

    from uvms_sim.viz.rerun_view import RerunView
    from uvms_sim.viz.web_front import own_listening_tcp

    system = load(CONFIG / "bluerov2.yaml")
    before = own_listening_tcp()
    port = free_tcp_port_pair()
    view = RerunView(system, web_port=port)
    try:
        opened = own_listening_tcp() - before
        assert {a for a, _ in opened} == {"127.0.0.1"} and len(opened) == 3, opened  # page, stream, Rerun
        assert {("127.0.0.1", port), ("127.0.0.1", port + 1)} <= opened
        assert view.page.startswith(
            f"http://127.0.0.1:{port}/?url=rerun%2Bhttp%3A%2F%2F127.0.0.1%3A{port + 1}"
        )
        assert view.exposure == ""
        assert _connects("127.0.0.1", port) and _connects("127.0.0.1", port + 1)
        assert not _connects("127.0.0.2", port) and not _connects("127.0.0.2", port + 1)
    finally:
        view.close()
    for bind, reach, refused in (("127.0.0.2", "127.0.0.2", "127.0.0.1"), ("0.0.0.0", "127.0.0.3", None)):
        port = free_tcp_port_pair()
        view = RerunView(system, web_port=port, bind=bind)
        try:
            assert _connects(reach, port) and _connects(reach, port + 1)
            if refused:
                assert not _connects(refused, port) and view.page.startswith(f"http://{bind}:{port}/")
            else:
                assert "every network interface" in view.exposure and str(port) in view.exposure
        finally:
            view.close()


def _node_error(*params: str) -> str:
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "-p", "ardusub_frame:=none"]
    for p in params:
        cmd += ["-p", p]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    line = out.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, line
    return line


def test_a_taken_port_or_a_bad_bind_is_a_one_line_error():
    """Another process holding the page's port, or only the next one (the data stream), or an
    address that is not an IP, or an unknown camera: the node stops at once with one line
    naming it (exit 2), never a traceback and never an address served by someone else."""
    import socket

    from net_helpers import free_tcp_port_pair

    port = free_tcp_port_pair()
    for taken, what in ((port, "the page"), (port + 1, "its data stream")):
        with socket.socket() as other:
            other.bind(("127.0.0.1", taken))
            other.listen()
            line = _node_error(f"web_view_port:={port}")
            assert line == (
                f"simulator: error: browser view: cannot listen on 127.0.0.1 port {taken} ({what}): "
                "in use by another process"
            ), line
    line = _node_error(f"web_view_port:={port}", "web_view_bind:=my-laptop")
    assert line.startswith("simulator: error: browser view: bind address 'my-laptop': expected an IP address")
    line = _node_error("web_view_camera:=top")
    assert line == "simulator: error: browser view: camera 'top': expected world or vehicle", line


def test_the_demo_refuses_a_bad_view_bind(capsys):
    from uvms_sim.demo import main

    with pytest.raises(SystemExit) as stop:
        main(["--view", "9090", "--view-bind", "every"])
    assert "--view-bind: browser view: bind address 'every'" in str(stop.value)


def test_the_browser_view_shows_the_vehicle_in_a_real_browser(tmp_path):
    """The node with ``web_view_port`` serves Rerun's web viewer from this machine (no internet);
    a real headless Chromium loads the page, the viewer connects to the node's stream, and a
    screenshot shows the orange hull beside the depth and thrust plots, in the world-fixed view
    (the vehicle-fixed one is the other tab); driven forward, the vehicle leaves its yellow
    trail; the newest simulated time the viewer holds is within LIVE_LAG of the node's.
    The screenshot is kept in docs/images when UVMS_SIM_SCREENSHOT is set."""
    import os

    from browser import headless_chromium, viewer_lag, viewer_views
    from net_helpers import free_tcp_port_pair
    from PIL import Image

    def pixels(shot: Path, rgb_range) -> int:
        rgb = np.asarray(Image.open(shot).convert("RGB")).astype(int)
        (r0, r1), (g0, g1), (b0, b1) = rgb_range
        mask = (rgb[..., 0] >= r0) & (rgb[..., 0] <= r1) & (rgb[..., 1] >= g0) & (rgb[..., 1] <= g1)
        return int((mask & (rgb[..., 2] >= b0) & (rgb[..., 2] <= b1)).sum())

    orange, yellow = ((151, 255), (61, 149), (0, 59)), ((200, 255), (160, 230), (0, 90))
    port = free_tcp_port_pair()
    with simulator(web_view_port=port, real_time_factor=1.0, ardusub_frame="none", command_timeout=5.0) as (
        sim,
        user,
        executor,
    ):
        assert sim.view is not None and f"browser view at {sim.view.page}" in sim.summary()
        pwm = user.create_publisher(UInt16MultiArray, "thrusters/pwm", 10)
        browser = headless_chromium(f"http://127.0.0.1:{port}/", tmp_path / "profile")
        browser.command_executor._client_config.timeout = 600  # a loaded machine compiles slowly
        try:
            shot = tmp_path / "view.png"
            hull = trail = 0
            end = time.monotonic() + BROWSER_WAIT
            while time.monotonic() < end and not (hull > 300 and trail > 50):
                # forward for 4 s (a trail of about 2 m), then stopped; the vertical pair holds the
                # depth against the BlueROV2's buoyancy (it would surface in 40 s, into the surface's
                # plane, and a slow browser shoots it late)
                ahead = sim.sim.state.t < 4.0
                horizontal = [1300, 1300, 1700, 1700] if ahead else [1500] * 4
                pwm.publish(UInt16MultiArray(data=[*horizontal, 1540, 1540]))
                spin_until(executor, lambda: False, timeout=2.0)
                browser.save_screenshot(str(shot))
                hull, trail = pixels(shot, orange), pixels(shot, yellow)
            assert hull > 300 and trail > 50, f"{hull} orange, {trail} yellow pixels in {shot}"
            views = {name: (kind, visible) for name, kind, visible in viewer_views(browser)}
            # both 3D views are there, the world-fixed one shown (the viewer may also report the
            # other tab as visible for a frame after switching: not checked)
            assert views["world"] == ("3D", True) and views["vehicle"][0] == "3D", views
            # live: once the page has compiled and drawn (late, on a slow machine), the viewer
            # catches up with the simulation and stays within LIVE_LAG of it
            lags: list[float] = []
            catch_up = time.monotonic() + 60.0
            while time.monotonic() < catch_up and not (lags and lags[-1] < LIVE_LAG):
                spin_until(executor, lambda: False, timeout=2.0)
                # at the moment the page read its state (its main thread may answer a second
                # after it was asked: that wait is not the view's lag)
                lag, _ = viewer_lag(browser, lambda: (sim.sim.state.t, time.time()))
                assert lag is not None, "the viewer holds no simulated time"
                lags.append(lag)
            assert lags[-1] < LIVE_LAG, (
                f"the viewer stays behind the simulation: {[round(x, 1) for x in lags]} s"
            )
            if os.environ.get("UVMS_SIM_SCREENSHOT"):
                shutil.copy(shot, ROOT / "docs" / "images" / "browser_view.png")
        finally:
            browser.quit()


def test_replay_writes_recordings_that_the_viewers_open(tmp_path):
    """``uvms-sim replay BAG --out DIR --storage mcap --rrd FILE``: the MCAP carries the predicted
    vehicle as a robot model (``/robot_description`` with links prefixed ``predicted/``, every
    link placed by ``/tf`` and ``/tf_static``), which Rerun's own MCAP loader turns into the
    hull and thruster geometry; the ``.rrd`` holds the vehicle and its path for the Rerun
    viewer."""
    import rerun as rr
    from rosbags.highlevel import AnyReader
    from test_replay import record

    from uvms_sim.cli import main
    from uvms_sim.replay.bag import typestore

    record(tmp_path / "dive", "mcap", seconds=10.0)
    out, rrd = tmp_path / "predicted", tmp_path / "dive.rrd"
    args = ["replay", str(tmp_path / "dive"), "--config", "bluerov2_heavy", "--dt", "0.01"]
    assert main([*args, "--out", str(out), "--storage", "mcap", "--rrd", str(rrd)]) == 0
    children: set[str] = set()
    with AnyReader([out], default_typestore=typestore()) as reader:
        for conn, _, raw in reader.messages():
            msg = reader.deserialize(raw, conn.msgtype)
            if conn.topic == "/robot_description":
                urdf = parse(msg.data)
            elif conn.topic in ("/tf", "/tf_static"):
                children |= {t.child_frame_id for t in msg.transforms}
    assert urdf.validate() and set(urdf.link_map) - {"odom"} <= children
    assert {"predicted/base_link", "predicted/base_link_frd"} <= set(urdf.link_map)
    mcap = next(out.glob("*.mcap"))
    entities = {str(c.entity_path) for c in rr.chunk.McapReader(mcap).stream().to_chunks()}
    geometry = [e for e in entities if "visual_geometries" in e and "base_link_frd" in e]
    assert len(geometry) == 1 + 8, sorted(entities)  # the hull and the Heavy's eight thrusters
    recorded = {str(c.entity_path) for c in rr.chunk.RrdReader(rrd).stream().to_chunks()}
    expected = {"/world/base_link_frd", "/world/base_link_frd/visual_0", "/plots/depth/bluerov2_heavy"}
    assert expected <= recorded
