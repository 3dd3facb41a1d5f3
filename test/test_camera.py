"""The underwater camera against geometry and optics: a point at a known pose projects to the
pixel the intrinsics give (sub-pixel), the depth image equals the ray-cast distance (through
the independent per-ray path of ``SceneRays.cast``), each channel's radiance falls with
distance as Akkaynak and Treibitz's (2018) model says, and the tilt moves the image as its
angle says."""

from __future__ import annotations

import math

import numpy as np
import pytest

from uvms_sim.scene import HeightmapSeabed, Scene, SceneRays, Shape, Structure
from uvms_sim.scene.seabed import PlaneSeabed
from uvms_sim.sensors.camera import Camera, Intrinsics, Water, image_formation

INTR = Intrinsics.from_fov(640, 480, math.radians(80.0))
BALL = 0.1  # m, radius of the marker sphere


def ball_scene(centre) -> SceneRays:
    return SceneRays(Scene(structures=(Structure("ball", Shape("sphere", (BALL,), xyz=tuple(centre))),)))


def centroid(depth: np.ndarray) -> np.ndarray:
    """(u, v) of the mean of the pixels that see a surface."""
    v, u = np.nonzero(np.isfinite(depth))
    assert len(u) > 50
    return np.array([u.mean(), v.mean()])


@pytest.mark.parametrize("point", [(4.0, 0.0, 0.0), (4.0, 0.7, -0.3), (6.0, -1.5, 1.2), (3.0, 1.1, 0.9)])
def test_a_point_projects_where_the_intrinsics_say(point):
    """The image of a small sphere centred on the point is centred on K's projection of it.
    0.2 px: the centroid of a 10-20 px disc of whole pixels is within a few hundredths of a
    pixel of the disc's centre, and a sphere's perspective image is shifted from its centre's
    projection by less than (r / d)^2 of the offset (0.1 px here)."""
    R = np.eye(3)  # camera axes = world NED: looking north
    camera = Camera(ball_scene(point), INTR)
    _, depth = camera.render(R, np.zeros(3))
    expected = INTR.project(np.array(point))
    assert np.abs(centroid(depth) - expected).max() < 0.2


def test_depth_image_is_the_ray_cast_distance():
    box = Shape("box", (2.0, 3.0, 4.0), xyz=(6.0, 1.0, 3.0), rpy=(0.1, 0.2, 0.7))
    rays = SceneRays(Scene(PlaneSeabed(8.0, (0.05, -0.02)), (Structure("box", box),)))
    small = Intrinsics.from_fov(64, 48, math.radians(90.0))
    camera = Camera(rays, small, max_range=100.0)
    p = np.array([1.0, -3.0, 2.0])
    _, depth = camera.render(np.eye(3), p, tilt=math.radians(-25.0))  # looking down
    c, s = math.cos(math.radians(-25.0)), math.sin(math.radians(-25.0))
    world = np.eye(3) @ np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    directions, cosines = small.rays()
    expected = rays.cast(p, directions @ world.T)  # one ray at a time, trimesh's locations
    got = depth.ravel().astype(float) / cosines
    seen = expected <= 100.0  # the camera's max_range
    assert seen.sum() > 0.7 * len(seen) and np.array_equal(np.isfinite(got), seen)
    # float32 depth image and Embree's single precision: 1e-5 relative
    assert np.allclose(got[seen], expected[seen], rtol=1e-5, atol=1e-5)


def test_radiance_falls_with_distance_per_channel():
    """A grey wall facing the camera at distances z: the centre pixel is J exp(-beta_D z) +
    B_inf (1 - exp(-beta_B z)) per channel (to the 8-bit step), and once the backscatter is
    taken off, ln of what is left falls with slope -beta_D,c (red first)."""
    water = Water()
    zs = np.array([1.0, 2.0, 3.0, 5.0])
    centre = []
    for z in zs:
        wall = Shape("box", (0.5, 20.0, 20.0), xyz=(z + 0.25, 0.0, 0.0))
        camera = Camera(SceneRays(Scene(structures=(Structure("wall", wall),))), INTR, water)
        image, depth = camera.render(np.eye(3), np.zeros(3))
        assert depth[240, 320] == pytest.approx(z, abs=1e-5)
        rgb, _ = camera.radiance(np.eye(3), np.zeros(3))
        centre.append(rgb[240 * 640 + 320])
        J = np.array([0.55, 0.55, 0.55]) * camera.ambient  # lit from above, a vertical face
        model = image_formation(J, np.array(z), water)
        assert np.allclose(image[240, 320] / 255.0, model, atol=0.5 / 255.0 + 1e-9)
    centre = np.array(centre)
    signal = centre - np.asarray(water.b_inf) * (1.0 - np.exp(-np.outer(zs, water.beta_b)))
    slopes = np.polyfit(zs, np.log(signal), 1)[0]
    assert np.allclose(slopes, -np.asarray(water.beta_d), atol=1e-9)
    assert slopes[0] < slopes[1] < 0 and slopes[0] < slopes[2] < 0


def test_no_surface_is_veiling_light():
    camera = Camera(SceneRays(Scene()), Intrinsics.from_fov(8, 6, 1.0))
    image, depth = camera.render(np.eye(3), np.zeros(3))
    assert np.all(np.isnan(depth))
    assert np.all(image == np.rint(255.0 * np.asarray(Water().b_inf)).astype(np.uint8))


@pytest.mark.parametrize("degrees", [-15.0, 10.0, 20.0])
def test_tilt_moves_the_image_as_its_angle_says(degrees):
    """Tilting the camera up by theta (right-handed about its y axis) moves a point straight
    ahead down the image to v = cy + fy tan(theta)."""
    camera = Camera(ball_scene((5.0, 0.0, 0.0)), INTR)
    _, depth = camera.render(np.eye(3), np.zeros(3), tilt=math.radians(degrees))
    u, v = centroid(depth)
    assert u == pytest.approx(INTR.cx, abs=0.2)
    assert v == pytest.approx(INTR.cy + INTR.fy * math.tan(math.radians(degrees)), abs=0.2)


def test_noise_is_white_and_as_large_as_asked():
    wall = Shape("box", (0.5, 20.0, 20.0), xyz=(2.25, 0.0, 0.0))
    rays = SceneRays(Scene(structures=(Structure("wall", wall),)))
    small = Intrinsics.from_fov(64, 48, 0.5)
    clean, _ = Camera(rays, small).render(np.eye(3), np.zeros(3))
    noisy, _ = Camera(rays, small, noise=0.02, rng=np.random.default_rng(1)).render(np.eye(3), np.zeros(3))
    diff = (noisy.astype(float) - clean.astype(float)) / 255.0
    assert abs(diff.mean()) < 0.002 and diff.std() == pytest.approx(0.02, rel=0.1)


def _scenes() -> dict[str, Scene]:
    """A sloping plane seabed (closed form) with a rotated box, a cylinder and a sphere crossing
    it or above it; and a heightmap seabed (triangles, through Embree) with the same three."""
    structures = (
        Structure("box", Shape("box", (2.0, 3.0, 4.0), xyz=(6.0, 1.0, 7.0), rpy=(0.1, 0.2, 0.7))),
        Structure("pile", Shape("cylinder", (0.4, 10.0), xyz=(5.0, -2.5, 4.0))),
        Structure("buoy", Shape("sphere", (0.5,), xyz=(4.0, 0.5, 3.0))),
    )
    x = np.linspace(0.0, 1.0, 41)
    depths = 8.0 + 0.4 * np.sin(6.0 * x)[:, None] * np.cos(5.0 * x)[None, :]
    return {
        "plane": Scene(PlaneSeabed(8.0, (0.05, -0.02)), structures),
        "heightmap": Scene(HeightmapSeabed(depths, 0.5, (-5.0, -10.0)), structures),
    }


SCENE_RAYS: dict[str, SceneRays] = {}
VIEWS = [  # (position, rpy of the camera's axes in NED, tilt, max_range)
    ((0.0, 0.0, 2.0), (0.0, 0.0, 0.0), -0.5, 30.0),  # outside every structure's box, looking down
    ((0.0, 0.0, 2.0), (0.0, 0.0, 0.0), 0.4, 30.0),  # up: half the image is veiling light
    ((5.0, -1.0, 5.0), (0.0, 0.0, 2.5), -0.2, 30.0),  # inside the box around the structures
    ((0.0, 0.0, 2.0), (0.1, 0.0, 0.3), -0.6, 6.0),  # max_range cuts the seabed and the box
    ((0.0, 3.0, 9.0), (0.0, 0.0, 0.0), 0.3, 30.0),  # under the seabed: the structures only
]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("noise", [0.0, 0.02])
@pytest.mark.parametrize("name", ["plane", "heightmap"])
def test_the_compiled_render_is_the_plain_one(name, view, noise):
    """``render`` (compiled, Embree asked only for the rays that can meet a triangle) gives
    ``render_plainly``'s image (numpy, every ray through ``SceneRays.trace``): within one 8-bit
    level in at most 0.1 % of the pixels (a float32 exponential or a ray grazing a triangle's
    edge rounded the other way; measured: none), the depth image to float32's rounding (1e-6
    relative) with its NaNs at the same pixels, and the same noise from generators in the same
    state. 160 x 120 pixels."""
    from transforms3d.euler import euler2mat

    if name not in SCENE_RAYS:
        SCENE_RAYS[name] = SceneRays(_scenes()[name])
    rays = SCENE_RAYS[name]
    small = Intrinsics.from_fov(160, 120, math.radians(80.0))
    p, rpy, tilt, max_range = view
    R = euler2mat(*rpy, axes="sxyz")
    fast, plain = (
        Camera(rays, small, max_range=max_range, noise=noise, rng=np.random.default_rng(7)) for _ in range(2)
    )
    for _ in range(2):  # the second frame: the generators' states have moved on alike
        image, depth = fast.render(R, np.array(p), tilt)
        ref_image, ref_depth = plain.render_plainly(R, np.array(p), tilt)
        diff = np.abs(image.astype(int) - ref_image.astype(int))
        assert diff.max() <= 1 and (diff > 0).mean() <= 1e-3
        assert np.array_equal(np.isnan(depth), np.isnan(ref_depth))
        seen = ~np.isnan(depth)
        assert 0 < seen.sum() and np.allclose(depth[seen], ref_depth[seen], rtol=1e-6, atol=0.0)


def test_the_node_publishes_image_depth_and_info(tmp_path):
    """Over DDS: a Heavy with a 64 x 48 camera 4.8 m from a wall publishes rgb8 images, a depth
    image whose centre is the wall's distance, and CameraInfo with the intrinsics; a tilt
    command turns the optical frame's transform by its angle."""
    from pathlib import Path

    from ros_helpers import simulator, spin_until
    from sensor_msgs.msg import CameraInfo, Image
    from std_msgs.msg import Float64
    from tf2_msgs.msg import TFMessage

    heavy = (Path(__file__).resolve().parents[1] / "uvms_sim/config/bluerov2_heavy.yaml").read_text()
    text = heavy.replace(
        "scene:\n  seabed: {type: plane, depth: 20.0}",
        "scene:\n  seabed: {type: plane, depth: 20.0}\n  structures:\n"
        "    - {name: wall, shape: box, size: [1.0, 20.0, 20.0], xyz: [5.5, 0.0, 2.0]}",
    ).replace(
        "      - {type: camera, name: front, position: [0.2, 0.0, 0.0]}",  # the shipped camera, smaller
        "      - {type: camera, name: front, position: [0.2, 0.0, 0.0], width: 64, height: 48, rate: 5,"
        " noise: false}",
    )
    path = tmp_path / "heavy_camera.yaml"
    path.write_text(text)
    with simulator(description=str(path), ardusub_frame="none") as (_sim, user, executor):
        images, depths, infos, tfs = [], [], [], []
        user.create_subscription(Image, "camera/front/image_raw", images.append, 10)
        user.create_subscription(Image, "camera/front/depth", depths.append, 10)
        user.create_subscription(CameraInfo, "camera/front/camera_info", infos.append, 10)
        user.create_subscription(TFMessage, "/tf", lambda m: tfs.extend(m.transforms), 100)
        assert spin_until(executor, lambda: bool(images and depths and infos), timeout=30)
        tilt = user.create_publisher(Float64, "camera/front/tilt", 10)
        tilt.publish(Float64(data=0.3))

        def tilted() -> bool:
            tilt.publish(Float64(data=0.3))
            return any(t.child_frame_id == "front_optical" and abs(t.transform.rotation.w - 1.0) > 1e-6
                       and _tilt_of(t) > 0.29 for t in tfs)  # fmt: skip

        assert spin_until(executor, tilted, timeout=30)
    image, depth, info = images[-1], depths[-1], infos[-1]
    assert (image.width, image.height, image.encoding, len(image.data)) == (64, 48, "rgb8", 64 * 48 * 3)
    assert depth.encoding == "32FC1" and image.header.frame_id == "front_optical"
    d = np.frombuffer(bytes(depths[0].data), dtype=np.float32).reshape(48, 64)
    assert d[23:25, 31:33].mean() == pytest.approx(4.8, abs=0.05)  # the vehicle barely moves in 1 s
    intr = Intrinsics.from_fov(64, 48, math.radians(80.0))
    assert np.allclose(info.k, intr.K.ravel())


def _tilt_of(t) -> float:
    """The camera's tilt from the optical frame's rotation in its link (optical z = camera x)."""
    from transforms3d.quaternions import quat2mat

    q = t.transform.rotation
    z = quat2mat([q.w, q.x, q.y, q.z])[:, 2]  # the optical axis in the link's axes (FRD)
    return math.atan2(-z[2], z[0])
