"""The scene (``uvms_sim.scene``): the seabed and the structures declared once in a description
and read by the acoustic sensors, the views and the description writer; bad scenes refused
with the file, the key and the reason."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh

from uvms_sim.model import ConfigError, load
from uvms_sim.model.export import save_yaml
from uvms_sim.model.sensor_specs import SensorSpec
from uvms_sim.scene import HeightmapSeabed, MeshSeabed, PlaneSeabed, Scene, SceneRays, Shape, Structure
from uvms_sim.scene.raycast import cone_rays
from uvms_sim.sensors.acoustic import Altimeter, Dvl
from uvms_sim.sensors.mount import Mount

CONFIG = Path(__file__).resolve().parents[1] / "config"
HEAVY = (CONFIG / "bluerov2_heavy.yaml").read_text()
DOWN = np.array([0.0, 0.0, 1.0])


class Pose:
    """The kinematic data a sensor reads, for one body placed by hand."""

    def __init__(self, p=(0.0, 0.0, 0.0)) -> None:
        self.R_world = np.array([np.eye(3)])
        self.p_world = np.array([p], dtype=float)
        self.v = np.zeros((1, 6))


def heavy_with(tmp_path: Path, scene: str, environment_extra: str = "") -> Path:
    """The shipped Heavy with its ``scene:`` replaced by ``scene`` (YAML text, indented)."""
    text = HEAVY.replace("scene:\n  seabed: {type: plane, depth: 20.0}", scene)
    if environment_extra:
        text = text.replace("  water_density: 1000.0\n", f"  water_density: 1000.0\n{environment_extra}")
    path = tmp_path / "heavy.yaml"
    path.write_text(text)
    return path


def altimeter() -> Altimeter:
    spec = SensorSpec("altimeter", "ping", "base", rpy=[0.0, -math.pi / 2, 0.0], noise=False)
    return Altimeter(spec, Mount.of(spec, 0), np.random.default_rng(0))


def dvl() -> Dvl:
    spec = SensorSpec("dvl", "dvl", "base", noise=False)
    return Dvl(spec, Mount.of(spec, 0), np.random.default_rng(0))


def test_the_shipped_heavy_has_one_seabed_for_sensors_views_and_tether():
    system = load(CONFIG / "bluerov2_heavy.yaml")
    assert system.scene == Scene(PlaneSeabed(20.0))
    assert system.environment.seafloor is not None and system.environment.seafloor.depth == 20.0


def test_rays_hit_a_plane_a_heightmap_a_mesh_and_a_structure_where_geometry_says(tmp_path):
    """Rays straight down from the origin: a plane 10 m down at 10 m (closed form); a flat
    heightmap at 7 m at 7 m; the top of a 2 m box mesh centred 16 m down at 15 m (Embree,
    single precision: 1e-5 relative); a horizontal pipe (radius 0.2 m, axis 8 m down) under
    the ray at 7.8 m, under a plane seabed; a ray that misses everything: inf. A ray cast
    sideways along a sloped plane's level line never meets it."""
    plane = SceneRays(Scene(PlaneSeabed(10.0)))
    assert plane.beam_range(np.zeros(3), DOWN) == 10.0
    grid = SceneRays(Scene(HeightmapSeabed(np.full((3, 4), 7.0), 5.0, (-5.0, -5.0))))
    assert grid.beam_range(np.zeros(3), DOWN) == pytest.approx(7.0, rel=1e-6)
    box = trimesh.creation.box(extents=(4.0, 4.0, 2.0))
    box.export(tmp_path / "rock.stl")
    rock = SceneRays(
        Scene(
            MeshSeabed(Shape("mesh", (1.0, 1.0, 1.0), xyz=[0.0, 0.0, 16.0], mesh=str(tmp_path / "rock.stl")))
        )
    )
    assert rock.beam_range(np.zeros(3), DOWN) == pytest.approx(15.0, rel=1e-5)
    assert rock.beam_range(np.array([10.0, 0.0, 0.0]), DOWN) == math.inf
    pipe = Structure("pipe", Shape("cylinder", (0.2, 10.0), xyz=[0.0, 0.0, 8.0], rpy=[math.pi / 2, 0.0, 0.0]))
    both = SceneRays(Scene(PlaneSeabed(10.0), (pipe,)))
    ranges = both.cast(np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]), np.array([DOWN, DOWN]))
    np.testing.assert_allclose(ranges, [7.8, 10.0], rtol=1e-5)
    level = SceneRays(Scene(PlaneSeabed(10.0, (0.2, 0.0))))
    assert level.beam_range(np.zeros(3), np.array([0.0, 1.0, 0.0])) == math.inf


def test_the_altimeter_and_dvl_see_a_structure_between_them_and_the_seabed():
    """Over a 20 m plane the Ping2 reads 20 m; with a 1 m thick slab 12-13 m down under the
    vehicle it reads 12 m (the slab's top), the DVL's four beams meet the slab (12 m / cos 22.5
    deg each) and its altitude is 12 m; moved 30 m away from the slab, 20 m again."""
    ping, a50 = altimeter(), dvl()
    plane = SceneRays(Scene(PlaneSeabed(20.0)))
    assert ping.read(Pose(), plane) == pytest.approx(20.0, rel=1e-12)
    slab = Structure("slab", Shape("box", (20.0, 20.0, 1.0), xyz=[0.0, 0.0, 12.5]))
    rays = SceneRays(Scene(PlaneSeabed(20.0), (slab,)))
    assert ping.read(Pose(), rays) == pytest.approx(12.0, rel=1e-5)
    reading = a50.read(Pose(), rays)
    np.testing.assert_allclose(reading.ranges, 12.0 / math.cos(math.radians(22.5)), rtol=1e-5)
    assert reading.valid and reading.altitude == pytest.approx(12.0, rel=1e-5)
    assert ping.read(Pose(p=(30.0, 0.0, 0.0)), rays) == pytest.approx(20.0, rel=1e-12)


def test_a_cone_sees_the_nearest_surface_inside_it():
    """The rays of a cone stay within its half angle, and an edge 2 m to the side of a 10 m deep
    narrow pipe is seen by a 25 degree cone (tan 12.5 deg x 10 = 2.2 m) but not by a 10 degree one."""
    axis = np.array([0.0, 0.0, 1.0])
    rays = cone_rays(axis, math.radians(12.5))
    assert np.all(rays @ axis >= math.cos(math.radians(12.5)) - 1e-12)
    np.testing.assert_allclose(np.linalg.norm(rays, axis=1), 1.0)
    pipe = Structure(
        "pipe", Shape("cylinder", (0.3, 50.0), xyz=[2.0, 0.0, 10.0], rpy=[math.pi / 2, 0.0, 0.0])
    )
    scene = SceneRays(Scene(None, (pipe,)))
    assert scene.cone_range(np.zeros(3), axis, math.radians(12.5)) < 10.0
    assert scene.cone_range(np.zeros(3), axis, math.radians(5.0)) == math.inf


def test_a_description_declares_its_scene_and_writes_it_back(tmp_path):
    """A heightmap seabed from a .npy file, a mesh structure and a box: loaded, the sensors of
    a simulation see them, and save_yaml writes a description that loads to the same scene."""
    np.save(tmp_path / "bay.npy", np.linspace(15.0, 25.0, 30).reshape(5, 6))
    trimesh.creation.annulus(r_min=0.4, r_max=0.5, height=1.0).export(tmp_path / "ring.stl")
    path = heavy_with(
        tmp_path,
        """scene:
  seabed: {type: heightmap, file: bay.npy, spacing: 4.0, origin: [-8.0, -10.0]}
  structures:
    - {name: ring, shape: mesh, file: ring.stl, scale: [2.0, 2.0, 2.0], xyz: [5.0, 0.0, 10.0]}
    - {name: valve_panel, shape: box, size: [0.1, 1.0, 1.0], xyz: [2.0, 0.0, 3.0], rpy: [0.0, 0.0, 0.3]}
""",
    )
    system = load(path)
    scene = system.scene
    assert isinstance(scene.seabed, HeightmapSeabed) and scene.seabed.depths.shape == (5, 6)
    assert [s.name for s in scene.structures] == ["ring", "valve_panel"]
    assert system.environment.seafloor is None  # not a plane
    ring = next(v for name, v, _ in scene.surfaces() if name == "ring")
    np.testing.assert_allclose(ring.max(axis=0), [6.0, 1.0, 11.0], atol=1e-9)  # scaled x2, placed
    save_yaml(system, tmp_path / "again.yaml")
    again = load(tmp_path / "again.yaml").scene
    np.testing.assert_allclose(again.seabed.depths, scene.seabed.depths)
    assert again.seabed.spacing == 4.0 and again.seabed.origin == (-8.0, -10.0)
    assert again.structures == scene.structures
    for (n1, v1, f1), (n2, v2, f2) in zip(again.surfaces(), scene.surfaces(), strict=True):
        assert n1 == n2
        np.testing.assert_allclose(v1, v2) and np.testing.assert_array_equal(f1, f2)


def test_the_older_seafloor_key_is_the_scene_seabed(tmp_path):
    """``environment.seafloor`` (the key before scenes) is read as a plane seabed of the scene,
    equal to ``scene.seabed`` of type plane; both at once are refused at the key, as is a contact
    seabed that is not the scene's."""
    old = load(heavy_with(tmp_path, "", "  seafloor: {depth: 20.0, slope: [0.1, 0.0]}\n"))
    assert old.scene == Scene(PlaneSeabed(20.0, (0.1, 0.0)))
    with pytest.raises(ConfigError, match=r"environment\.seafloor.*declared twice"):
        load(
            heavy_with(
                tmp_path, "scene:\n  seabed: {type: plane, depth: 20.0}", "  seafloor: {depth: 20.0}\n"
            )
        )
    walker = (CONFIG / "bluerov2.yaml").read_text()
    contact = "contacts:\n  - {type: seabed, depth: 6.0, points: []}\n"
    text = walker + "scene:\n  seabed: {type: plane, depth: 5.0}\n" + contact
    (tmp_path / "two.yaml").write_text(text)
    with pytest.raises(ConfigError, match="not the scene's seabed"):
        load(tmp_path / "two.yaml")


BAD_SCENES = [
    ("  seabed: {type: sand, depth: 3}", r"scene\.seabed\.type.*expected"),
    ("  seabed: {type: plane, depth: .nan}", r"scene\.seabed\.depth.*finite"),
    ("  seabed: {type: plane, depth: 3, slope: [1000, 0]}", r"scene\.seabed.*slope"),
    ("  seabed: {type: heightmap, spacing: 1.0}", r"scene\.seabed.*exactly one of"),
    ("  seabed: {type: heightmap, spacing: 1.0, depths: [[1, 2]]}", r"scene\.seabed.*at least 2 x 2"),
    ("  seabed: {type: heightmap, spacing: -1.0, depths: [[1, 2], [3, 4]]}", r"scene\.seabed\.spacing.*> 0"),
    ("  seabed: {type: heightmap, spacing: 1.0, depths: [[1, 2], [3]]}", r"scene\.seabed\.depths"),
    ("  seabed: {type: heightmap, spacing: 1.0, file: missing.npy}", r"scene\.seabed\.file.*missing\.npy"),
    ("  seabed: {type: mesh, file: missing.stl}", r"scene\.seabed\.file.*no such mesh file"),
    ("  seabed: {type: mesh, file: garbage.stl}", r"scene\.seabed\.file.*garbage\.stl"),
    ("  seabed: {type: mesh, file: flat.stl}", r"scene\.seabed\.file.*degenerate"),
    (
        "  seabed: {type: mesh, file: rock.stl, scale: [1e9, 1, 1]}",
        r"scene\.seabed: a mesh needs 3 sizes in \(0",
    ),
    ("  seabed: {type: mesh, file: rock.txt}", r"scene\.seabed\.file.*one of \.stl"),
    (
        "  structures:\n    - {name: a, shape: box, size: [1, 1]}",
        r"scene\.structures\[a\]\.size: expected a list of 3 numbers",
    ),
    (
        "  structures:\n    - {name: a, shape: box, size: [1, 1, -1]}",
        r"scene\.structures\[a\]: a box needs 3 sizes in \(0",
    ),
    (
        "  structures:\n    - {name: a, shape: cone, size: [1, 1]}",
        r"scene\.structures\[a\]\.shape: expected one of",
    ),
    (
        "  structures:\n    - {name: a, shape: sphere}",
        r"scene\.structures\[a\]: a sphere needs `size`: \[radius\]",
    ),
    (
        "  structures:\n    - {name: a, shape: sphere, size: [1], xyz: [0, 0, 1e300]}",
        r"scene\.structures\[a\]\.xyz\[2\]: 1e\+300 is beyond",
    ),
    (
        "  structures:\n    - {name: a, shape: sphere, size: [1]}\n    - {name: a, shape: sphere, size: [2]}",
        r"scene\.structures\[a\]\.name: structure name 'a' is used twice",
    ),
    ("  weather: sunny", r"scene\.weather.*unknown key"),
]


@pytest.mark.parametrize(("scene", "message"), BAD_SCENES)
def test_a_bad_scene_is_one_error_naming_the_file_and_the_key(tmp_path, scene, message):
    """Each bad scene is a ConfigError whose one line names the file, the key and what was
    expected (degenerate, garbage, huge and missing meshes included)."""
    trimesh.creation.box(extents=(1.0, 1.0, 1.0)).export(tmp_path / "rock.stl")
    (tmp_path / "garbage.stl").write_bytes(b"solid x\nfacet normal nan\n" + bytes(range(256)) * 4)
    flat = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]], process=False)
    flat.export(tmp_path / "flat.stl")
    (tmp_path / "rock.txt").write_text("not a mesh")
    path = heavy_with(tmp_path, "scene:\n" + scene)
    with pytest.raises(ConfigError, match=message) as error:
        load(path)
    text = str(error.value)
    assert "heavy.yaml" in text and "\n" not in text.strip() and "Traceback" not in text


def test_the_node_draws_the_scene_in_its_markers(tmp_path):
    """Over DDS: the node's ``markers`` carry the scene, the seabed as a triangle list at its
    depth (ENU z = -20) and the structure as a triangle list where the description puts it."""
    from ros_helpers import simulator, spin_until
    from visualization_msgs.msg import Marker, MarkerArray

    path = heavy_with(
        tmp_path,
        """scene:
  seabed: {type: plane, depth: 20.0}
  structures:
    - {name: block, shape: box, size: [1.0, 2.0, 0.5], xyz: [3.0, 0.0, 10.0]}
""",
    )
    with simulator(description=str(path), ardusub_frame="none", marker_rate=20.0) as (_sim, user, executor):
        got: list = []
        user.create_subscription(MarkerArray, "markers", got.append, 10)
        assert spin_until(executor, lambda: bool(got), timeout=20)
    markers = got[-1].markers
    seabed = next(m for m in markers if m.ns == "seabed")
    block = next(m for m in markers if m.ns == "structure")
    assert seabed.type == block.type == Marker.TRIANGLE_LIST
    assert {round(p.z, 6) for p in seabed.points} == {-20.01}
    xyz = np.array([[p.x, p.y, p.z] for p in block.points])
    assert len(xyz) == 36  # 12 triangles
    np.testing.assert_allclose(xyz.min(axis=0), [-1.0, 2.5, -10.25]) and np.testing.assert_allclose(
        xyz.max(axis=0), [1.0, 3.5, -9.75]
    )


def test_links_declare_what_touches_with_defaults_from_their_hull(tmp_path):
    """``collision:`` per link (the visual's form, without colour) is kept as written, ``[]``
    means a link that touches nothing, and without it a link touches with its hull (the Heavy:
    its 0.457 x 0.575 x 0.254 m box) or its drag cylinder (the light arm's links). A URDF's
    ``<collision>`` is read the same way; both go back out in save_yaml and in the
    robot_description URDF."""
    from uvms_sim.model.urdf_writer import urdf_text
    from uvms_sim.model.visual import link_collisions

    heavy = load(CONFIG / "bluerov2_heavy.yaml").model.bodies[0]
    (hull,) = link_collisions(heavy)
    assert hull.shape == "box" and hull.size == (0.457, 0.575, 0.254)
    arm = load(CONFIG / "bluerov2_light_arm.yaml").model.bodies
    assert [v.shape for b in arm[1:] for v in link_collisions(b)] == ["cylinder"] * 4
    text = HEAVY.replace(
        "      - name: base_link\n",
        "      - name: base_link\n        collision:\n          - {sphere: 0.3, xyz: [0.1, 0.0, 0.0]}\n"
        "          - {box: [0.1, 0.2, 0.3], rpy: [0.0, 0.0, 0.5]}\n",
    )
    (tmp_path / "c.yaml").write_text(text)
    system = load(tmp_path / "c.yaml")
    shapes = link_collisions(system.model.bodies[0])
    assert [(v.shape, v.size) for v in shapes] == [("sphere", (0.3,)), ("box", (0.1, 0.2, 0.3))]
    np.testing.assert_allclose(shapes[0].xyz, [0.1, 0.0, 0.0]) and np.testing.assert_allclose(
        shapes[1].rpy[2], 0.5
    )
    save_yaml(system, tmp_path / "again.yaml")
    again = link_collisions(load(tmp_path / "again.yaml").model.bodies[0])
    assert [(v.shape, v.size) for v in again] == [("sphere", (0.3,)), ("box", (0.1, 0.2, 0.3))]
    assert urdf_text(system).count("<collision>") == 2
    (tmp_path / "none.yaml").write_text(
        HEAVY.replace("      - name: base_link\n", "      - name: base_link\n        collision: []\n")
    )
    assert link_collisions(load(tmp_path / "none.yaml").model.bodies[0]) == ()
    (tmp_path / "bad.yaml").write_text(
        HEAVY.replace(
            "      - name: base_link\n",
            "      - name: base_link\n        collision: [{sphere: 0.3, color: [1, 0, 0, 1]}]\n",
        )
    )
    with pytest.raises(ConfigError, match=r"collision\[0\]\.color: unknown key"):
        load(tmp_path / "bad.yaml")
    urdf = tmp_path / "r.urdf"
    urdf.write_text("""<robot name="r"><link name="base_link">
  <inertial><mass value="10"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
  <visual><geometry><box size="1 1 1"/></geometry></visual>
  <collision><origin xyz="0 0 0.1" rpy="0 0 0"/>
    <geometry><cylinder radius="0.2" length="0.6"/></geometry></collision>
</link></robot>""")
    bodies = load(urdf).model.bodies  # an FLU URDF: base_link hangs under base_link_frd
    (shape,) = link_collisions(next(b for b in bodies if b.name == "base_link"))
    assert shape.shape == "cylinder" and shape.size == (0.2, 0.6)
    np.testing.assert_allclose(shape.xyz, [0.0, 0.0, 0.1])


def test_check_names_the_scene(tmp_path, capsys):
    """``uvms-sim check`` says what the scene holds."""
    from uvms_sim.cli import main

    pipe = "    - {name: pipe, shape: cylinder, size: [0.2, 5.0], xyz: [0, 0, 11.8]}\n"
    path = heavy_with(tmp_path, "scene:\n  seabed: {type: plane, depth: 12.0}\n  structures:\n" + pipe)
    assert main(["check", str(path)]) == 0
    assert "scene: plane seabed, deepest 12 m, 1 structures (pipe)" in capsys.readouterr().out
