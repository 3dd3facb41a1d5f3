"""The imaging sonar (``sensors.imaging_sonar``) against the geometry of the scene: a wall 5 m
ahead echoes in the bins at its range along each beam (within one bin) and in the beams whose
angles cover it; a post off the axis appears at the beam of its bearing; nothing echoes beyond
the range setting; spreading and absorption as the model states them; the speckle is
Rayleigh's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from uvms_sim.model.sensor_specs import SensorSpec
from uvms_sim.scene import Scene, SceneRays, Shape, Structure
from uvms_sim.sensors.imaging_sonar import FIRST_NULL, ImagingSonar, absorption, imaging_sonar_of, pattern

WALL = 5.0  # m from the sonar to the wall's face
HALF_WIDTH = 2.0  # m: the wall spans y in [-2, 2]
DEG = math.pi / 180.0
LEVEL = np.eye(3), np.zeros(3)


def wall_scene(distance: float = WALL, half_width: float = HALF_WIDTH) -> SceneRays:
    """A 1 m thick wall, 2 * half_width wide and 20 m high, its face ``distance`` m north."""
    wall = Shape("box", (1.0, 2.0 * half_width, 20.0), xyz=(distance + 0.5, 0.0, 0.0))
    return SceneRays(Scene(structures=(Structure("wall", wall),)))


def test_defaults_are_the_m750d_at_750_khz():
    spec = SensorSpec("imaging_sonar", "fls", "base")
    sonar = imaging_sonar_of(spec, wall_scene(), np.random.default_rng(0))
    assert sonar.beam_count == 512
    assert math.degrees(sonar.azimuths[-1] - sonar.azimuths[0]) == pytest.approx(130.0)
    assert sonar.vfov == pytest.approx(20.0 * DEG)
    assert len(sonar.ranges) == 1000 and sonar.ranges[-1] < 20.0 < sonar.ranges[-1] + 0.02
    assert sonar.rng is not None and sonar.noise == 0.02  # speckle and noise on by default
    exact = imaging_sonar_of(SensorSpec("imaging_sonar", "fls", "base", noise=False), wall_scene(), None)
    assert exact.rng is None and exact.noise == 0.0


def leading_edge(column: np.ndarray, ranges: np.ndarray) -> float:
    """Where an echo starts: the first bin at half its peak or more (the bin's near edge)."""
    assert column.max() > 0.0, "no echo"
    i = int(np.argmax(column >= 0.5 * column.max()))
    return float(ranges[i] - 0.5 * (ranges[1] - ranges[0]))


def test_wall_at_5_m_in_its_bins_and_beams():
    sonar = ImagingSonar(wall_scene(), range_resolution=0.02)
    image = sonar.echo(*LEVEL)
    res = sonar.resolution
    cover = math.atan(HALF_WIDTH / WALL)  # the wall's half angle seen from the sonar
    peak_beam = image.max(axis=0)
    inside = np.abs(sonar.azimuths) < cover - 2 * sonar.beam_width
    outside = np.abs(sonar.azimuths) > cover + 2 * sonar.beam_width
    assert inside.sum() > 50 and outside.sum() > 50
    # in the beams that cover it: the echo starts at the wall's range along the beam
    for b in np.flatnonzero(inside):
        expected = WALL / math.cos(sonar.azimuths[b])
        found = leading_edge(image[:, b], sonar.ranges)
        assert abs(found - expected) <= res, (b, found, expected)
    centre = np.argmin(np.abs(sonar.azimuths))
    assert abs(leading_edge(image[:, centre], sonar.ranges) - WALL) <= res
    # and lasts as long as the vertical aperture's rays take to reach it (to its first nulls)
    last = sonar.ranges[np.flatnonzero(image[:, centre])[-1]]
    assert WALL < last <= WALL / math.cos(FIRST_NULL * 0.5 * sonar.vfov) + res
    # its energy: Lambert's cos of the incidence of each ray, weighted by the vertical pattern
    psi = np.arcsin(-sonar.local[: len(sonar.local) // sonar.n_az, 2])
    w = pattern(psi, sonar.vfov)
    assert image[:, centre].sum() == pytest.approx((w * np.cos(psi)).sum() / w.sum(), rel=1e-3)
    # beyond two beam widths of its edges only side lobes (below -13 dB) and nothing past SIDE
    assert peak_beam[outside].max() < 0.05 * peak_beam[inside].min()
    far = np.abs(sonar.azimuths) > cover + 3.5 * sonar.beam_width
    assert np.all(peak_beam[far] == 0.0)
    # no echo before the wall
    assert np.all(image[sonar.ranges < WALL - res] == 0.0)


def test_post_appears_at_the_beam_of_its_bearing():
    bearing, distance, radius = 30.0 * DEG, 8.0, 0.1
    centre = distance * np.array([math.cos(bearing), math.sin(bearing), 0.0])
    post = Shape("cylinder", (radius, 10.0), xyz=tuple(centre))  # vertical: along NED z
    sonar = ImagingSonar(SceneRays(Scene(structures=(Structure("post", post),))), range_resolution=0.02)
    image = sonar.echo(*LEVEL)
    beam = np.argmax(image.max(axis=0))
    spacing = sonar.azimuths[1] - sonar.azimuths[0]
    assert abs(sonar.azimuths[beam] - bearing) <= spacing
    assert abs(leading_edge(image[:, beam], sonar.ranges) - (distance - radius)) <= sonar.resolution
    # the sonar turned 30 degrees to starboard sees it dead ahead
    c, s = math.cos(bearing), math.sin(bearing)
    turned = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    beam = np.argmax(sonar.echo(turned, np.zeros(3)).max(axis=0))
    assert abs(sonar.azimuths[beam]) <= spacing


def test_nothing_beyond_max_range():
    sonar = ImagingSonar(wall_scene(25.0), max_range=20.0, range_resolution=0.05)
    assert not sonar.echo(*LEVEL).any()
    near = ImagingSonar(wall_scene(19.9), max_range=20.0, range_resolution=0.05)
    image = near.echo(*LEVEL)
    assert image.any() and np.all(image[near.ranges < 19.9 - 0.05] == 0.0)


def test_spreading_and_absorption_without_time_varied_gain():
    """tvg 0: the centre beam's echo energy of a wall falls as r^-2 10^(-alpha r / 5) between 4
    and 12 m."""
    echoes = {}
    for r in (4.0, 12.0):
        sonar = ImagingSonar(wall_scene(r, half_width=6.0), tvg=0.0, range_resolution=0.05, max_range=15.0)
        centre = np.argmin(np.abs(sonar.azimuths))
        echoes[r] = sonar.echo(*LEVEL)[:, centre].sum()
    alpha = absorption(750e3)
    expected = (4.0 / 12.0) ** 2 * 10.0 ** (-alpha * (12.0 - 4.0) / 5.0)
    # the off-normal rays of the vertical fan see the wall a little farther (1/cos): 2 %
    assert echoes[12.0] / echoes[4.0] == pytest.approx(expected, rel=0.02)


def test_absorption_is_ainslie_and_mccolm():
    """Ainslie and McColm (1998) at 10 degC, 35 PSU, pH 8, the surface: about 0.24 dB/m at
    750 kHz, mostly pure water's 0.00049 f^2 exp(-T/27) dB/km; below 1 dB/km at 10 kHz."""
    assert absorption(750e3) == pytest.approx(0.00049 * 750**2 * math.exp(-10 / 27) / 1000 + 0.048, rel=0.02)
    assert absorption(10e3) < 1e-3


def test_beam_pattern_is_half_power_at_half_width():
    assert pattern(np.array([0.0, 0.5 * DEG]), 1.0 * DEG) == pytest.approx([1.0, 0.5], rel=1e-6)
    first_side_lobe = pattern(np.array([4.4934 / 1.3915573 * 0.5 * DEG]), 1.0 * DEG)[0]
    assert 10 * math.log10(first_side_lobe) == pytest.approx(-13.26, abs=0.02)


def test_speckle_is_rayleigh():
    """The 8-bit image over the noiseless echo (pixels of 25-60 counts: no clipping, little
    rounding; 20 pings) is Rayleigh with mean one: variance / mean^2 = 4 / pi - 1, and a KS test."""
    sonar = ImagingSonar(
        wall_scene(half_width=20.0), gain=0.5, noise=0.0, rng=np.random.default_rng(3), range_resolution=0.02
    )
    clean = 255.0 * sonar.gain * sonar.echo(*LEVEL)
    ratios = []
    for _ in range(20):
        image = sonar.ping(*LEVEL).astype(float)
        keep = (clean > 25.0) & (clean < 60.0)
        ratios.append(image[keep] / clean[keep])
    x = np.concatenate(ratios)
    assert len(x) > 5000
    # rounding to whole counts adds at most 1/12 / 25^2 to the variance
    assert x.mean() == pytest.approx(1.0, abs=4 * 0.52 / math.sqrt(len(x)) + 0.01)
    assert x.var() / x.mean() ** 2 == pytest.approx(4.0 / math.pi - 1.0, rel=0.05)
    assert stats.kstest(x, stats.rayleigh(scale=math.sqrt(2.0 / math.pi)).cdf).statistic < 0.03


def test_seabed_fills_its_bins_at_grazing_incidence():
    """Looking 10 degrees down 3 m above a flat seabed: the seabed's echo runs without gaps from
    where the aperture's lower edge meets it to the range setting."""
    from uvms_sim.scene.seabed import PlaneSeabed

    sonar = ImagingSonar(SceneRays(Scene(seabed=PlaneSeabed(depth=3.0))), range_resolution=0.05)
    tilt = 10.0 * DEG
    c, s = math.cos(tilt), math.sin(tilt)
    down = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])  # x forward and 10 deg down
    image = sonar.echo(down, np.zeros(3))
    centre = image[:, np.argmin(np.abs(sonar.azimuths))]
    start = 3.0 / math.sin(tilt + 10.0 * DEG)  # the lower -3 dB edge meets the seabed
    band = (sonar.ranges > start) & (sonar.ranges < 19.0)
    assert np.all(centre[band] > 0.0)
    assert np.all(centre[sonar.ranges < 3.0] == 0.0)  # nothing nearer than the seabed below


# RIHS01 type hashes of marine_acoustic_msgs 2.1.0's own definitions (its ROS 2 branch), as
# rosbags computes them: equal hashes mean the same names, types and constants
UPSTREAM = {
    "PingInfo": "RIHS01_6158894db5c1e6738766228704e9b198001f58cf62b02aef41e04ae6a4f50989",
    "SonarImageData": "RIHS01_50fb28a428282c0c372a897399651836892fa13d8d56cb67bfeffac8803e58f7",
    "ProjectedSonarImage": "RIHS01_e9d0b934ee8332c9f79e04c361de0793c165b2dee14f2c0d25c3227cd50d46f1",
}


def test_the_shipped_definitions_are_upstreams_field_for_field():
    from pathlib import Path

    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    folder = Path(__file__).resolve().parents[1] / "uvms_sim/interfaces/marine_acoustic_msgs/msg"
    store = get_typestore(Stores.ROS2_JAZZY)
    types: dict = {}
    for name in UPSTREAM:
        types.update(
            get_types_from_msg((folder / f"{name}.msg").read_text(), f"marine_acoustic_msgs/msg/{name}")
        )
    store.register(types)
    assert {name: store.hash_rihs01(f"marine_acoustic_msgs/msg/{name}") for name in UPSTREAM} == UPSTREAM


def test_the_node_publishes_projected_sonar_images(tmp_path):
    """Over DDS: a Heavy with a 64-beam sonar 4.8 m from a wall publishes
    marine_acoustic_msgs/ProjectedSonarImage whose sizes agree (beams x ranges bytes, one
    direction per beam), whose geometry is the sonar's, and whose wall echo is at 4.8 m; its
    frame (x up, z forward) is on /tf_static under the vehicle."""
    from pathlib import Path

    from marine_acoustic_msgs.msg import ProjectedSonarImage, SonarImageData
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from ros_helpers import simulator, spin_until
    from tf2_msgs.msg import TFMessage
    from transforms3d.quaternions import quat2mat

    heavy = (Path(__file__).resolve().parents[1] / "uvms_sim/config/bluerov2_heavy.yaml").read_text()
    text = heavy.replace(
        "scene:\n  seabed: {type: plane, depth: 20.0}",
        "scene:\n  seabed: {type: plane, depth: 20.0}\n  structures:\n"
        "    - {name: wall, shape: box, size: [1.0, 20.0, 20.0], xyz: [5.5, 0.0, 2.0]}",
    ).replace(
        "      - {type: dvl,",
        "      - {type: imaging_sonar, name: fls, position: [0.2, 0.0, 0.0], beams: 64, max_range: 10,"
        " range_resolution: 0.05, rate: 5, noise: false}\n      - {type: dvl,",
    )
    assert "imaging_sonar" in text
    path = tmp_path / "heavy_sonar.yaml"
    path.write_text(text)
    with simulator(description=str(path), ardusub_frame="none") as (_sim, user, executor):
        pings, statics = [], []
        user.create_subscription(ProjectedSonarImage, "sensors/fls", pings.append, 10)
        latched = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        user.create_subscription(TFMessage, "/tf_static", lambda m: statics.extend(m.transforms), latched)
        assert spin_until(executor, lambda: len(pings) >= 2 and statics, timeout=30)
        info = user.get_publishers_info_by_topic("/sensors/fls")
        assert info and str(info[0].topic_type_hash) == UPSTREAM["ProjectedSonarImage"]
    msg = pings[0]
    beams, ranges = 64, 200
    assert msg.header.frame_id == "fls"
    assert msg.image.beam_count == beams and msg.image.dtype == SonarImageData.DTYPE_UINT8
    assert len(msg.beam_directions) == beams and len(msg.ranges) == ranges
    assert len(msg.image.data) == beams * ranges
    assert msg.ping_info.frequency == pytest.approx(750e3) and msg.ping_info.sound_speed == 1500.0
    directions = np.array([[d.x, d.y, d.z] for d in msg.beam_directions])
    assert np.allclose(np.linalg.norm(directions, axis=1), 1.0)
    azimuth = np.arctan2(directions[:, 1], directions[:, 2])  # to starboard
    assert math.degrees(azimuth[-1] - azimuth[0]) == pytest.approx(130.0, abs=1e-3)
    image = np.frombuffer(bytes(msg.image.data), dtype=np.uint8).reshape(ranges, beams)
    centre = np.argmin(np.abs(azimuth))
    assert msg.ranges[np.argmax(image[:, centre])] == pytest.approx(4.8, abs=0.05 + 0.02)
    frame = next(t for t in statics if t.child_frame_id == "fls")
    q = frame.transform.rotation
    R = quat2mat([q.w, q.x, q.y, q.z])  # sonar message axes -> link axes (FRD)
    assert np.allclose(R[:, 2], [1.0, 0.0, 0.0]) and np.allclose(R[:, 0], [0.0, 0.0, -1.0])
    assert frame.transform.translation.x == pytest.approx(0.2)


def test_the_fan_shows_the_wall_where_it_is():
    """The image drawn as its fan seen from above (the browser view's): the wall 5 m ahead is
    the row 5 m above the sonar (within a bin and a pixel), across the angles it covers."""
    from uvms_sim.sensors.imaging_sonar import fan, fan_lookup

    sonar = ImagingSonar(wall_scene(), max_range=10.0, range_resolution=0.02)
    image = sonar.echo(*LEVEL)
    lookup = fan_lookup(sonar.ranges, sonar.azimuths, 400)
    picture = fan(image, lookup)
    height, width = picture.shape
    scale = 10.0 / height  # m per pixel
    assert width == 400 and scale * width == pytest.approx(2 * 10.0 * math.sin(65 * DEG), rel=0.01)
    middle = picture[:, width // 2]
    row = np.flatnonzero(middle >= 0.5 * middle.max()).max()  # the nearest (lowest) row of the echo
    assert (height - row - 0.5) * scale == pytest.approx(WALL, abs=0.02 + scale)
    assert not picture[-1, 0] and not picture[0, 0]  # outside the fan: its corners


def test_the_browser_view_shows_the_camera_image_and_the_sonar_fan(tmp_path):
    """The browser view (Rerun) has a 2D view of each camera's image and each sonar's fan: a
    recording read back with Rerun's reader holds them as images (JPEG) on ``camera/<name>``
    and ``sonar/<name>``; and the node, its browser view on, sends both there."""
    from pathlib import Path

    import rerun as rr
    from net_helpers import free_tcp_port_pair
    from ros_helpers import simulator, spin_until

    from uvms_sim.model import load
    from uvms_sim.viz.rerun_view import RerunView

    heavy = (Path(__file__).resolve().parents[1] / "uvms_sim/config/bluerov2_heavy.yaml").read_text()
    text = heavy.replace(
        "      - {type: camera, name: front, position: [0.2, 0.0, 0.0]}",  # the shipped camera, smaller
        "      - {type: camera, name: front, width: 64, height: 48, rate: 5}\n"
        "      - {type: imaging_sonar, name: fls, beams: 64, max_range: 10, range_resolution: 0.05,"
        " rate: 5}",
    )
    path = tmp_path / "heavy_views.yaml"
    path.write_text(text)
    view = RerunView(load(path), save=tmp_path / "pictures.rrd")
    assert view.pictures == ["camera/front", "sonar/fls"]
    sonar = ImagingSonar(wall_scene(), beams=64, max_range=10.0, range_resolution=0.05)
    from uvms_sim.sensors.imaging_sonar import fan, fan_lookup

    picture = fan(sonar.ping(*LEVEL), fan_lookup(sonar.ranges, sonar.azimuths, 120))
    assert view.log_picture("sonar/fls", 0.5, picture)
    assert view.log_picture("camera/front", 0.5, np.full((48, 64, 3), 90, dtype=np.uint8))
    assert not view.log_picture("camera/front", 0.6, np.zeros((48, 64, 3), dtype=np.uint8))  # too soon
    view.close()
    chunks = rr.chunk.RrdReader(tmp_path / "pictures.rrd").stream().to_chunks()
    images = {
        str(c.entity_path)
        for c in chunks
        if any("EncodedImage" in f for f in c.to_record_batch().schema.names)
    }
    assert {"/camera/front", "/sonar/fls"} <= images, images
    with simulator(description=str(path), ardusub_frame="none", web_view_port=free_tcp_port_pair()) as (
        node,
        _u,
        ex,
    ):
        from sensor_msgs.msg import Image  # the camera renders while someone looks

        _u.create_subscription(Image, "camera/front/image_raw", lambda m: None, 2)
        assert spin_until(ex, lambda: {"camera/front", "sonar/fls"} <= set(node.view.picture_due), timeout=60)


def test_the_sonar_sees_bodies_where_they_are(tmp_path):
    """Through ``BodyRays`` (as the node pings): a free ball 3 m ahead (radius 0.5) echoes from
    2.5 m in the middle beam, centred on its bearing (within a beam width), and moved 2 m to
    starboard, on its new bearing."""
    from uvms_sim.model.description import load
    from uvms_sim.sensors.body_rays import BodyRays
    from uvms_sim.simulator import Simulator

    (tmp_path / "s.yaml").write_text(
        "vehicles:\n  - name: post\n    base: fixed\n"
        "    links: [{name: post, visual: [{box: [0.2, 0.2, 0.2]}], collision: []}]\n"
        "scene:\n  objects: [{name: ball, shape: sphere, size: [0.5], mass: 1.0, xyz: [3.0, 0.0, 5.0]}]\n"
    )
    system = load(tmp_path / "s.yaml")
    sim = Simulator.from_system(system)
    rays = BodyRays(SceneRays(system.scene), system.model, skip={0})
    sonar = ImagingSonar(rays, max_range=10.0, range_resolution=0.02)
    origin = np.array([0.0, 0.0, 5.0])
    rays.place(*sim.touch.poses(system.initial_q))
    image = sonar.echo(np.eye(3), origin)
    centre = np.argmin(np.abs(sonar.azimuths))

    def bearing(image: np.ndarray) -> float:  # the echo's centroid across the beams
        energy = image.sum(axis=0)
        return float(energy @ sonar.azimuths / energy.sum())

    assert bearing(image) == pytest.approx(0.0, abs=sonar.beam_width)
    assert leading_edge(image[:, centre], sonar.ranges) == pytest.approx(2.5, abs=0.02 + 0.01)
    q = system.initial_q.copy()
    i = sim.model.idx_q[sim.model.body_index("ball")]
    q[i : i + 3] = [3.0, 2.0, 5.0]
    rays.place(*sim.touch.poses(q))
    assert bearing(sonar.echo(np.eye(3), origin)) == pytest.approx(math.atan2(2.0, 3.0), abs=sonar.beam_width)
