"""The camera sees the bodies where they are (``sensors.body_rays``: other vehicles, arm links,
free objects) in its compiled path: a box object at a known pose appears at the pixels the
intrinsics give with the depth its face's distance gives, the compiled image is the plain one
(every ray through ``BodyRays.trace``), the arm in front of a vehicle's camera is seen, and the
hull the camera sits in is not (``BodyRays``'s ``skip``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from transforms3d.euler import euler2mat

from uvms_sim.model.description import load
from uvms_sim.scene.raycast import SceneRays
from uvms_sim.sensors.body_rays import BodyRays
from uvms_sim.sensors.camera import Camera, Intrinsics, tilted
from uvms_sim.simulator import Simulator

INTR = Intrinsics.from_fov(160, 120, math.radians(80.0))
SCENE = """
vehicles:
  - name: post
    base: fixed
    links: [{name: post, visual: [{box: [0.4, 0.4, 0.4], color: [0.2, 0.4, 0.9, 1.0]}], collision: []}]
scene:
  seabed: {type: plane, depth: 10.0}
  objects: [{name: crate, shape: box, size: [0.5, 1.0, 0.8], mass: 1.0, xyz: [4.0, 0.5, 5.0]}]
"""


def _bodies(tmp_path, skip=None, q=None):
    (tmp_path / "s.yaml").write_text(SCENE)
    system = load(tmp_path / "s.yaml")
    sim = Simulator.from_system(system)
    rays = BodyRays(SceneRays(system.scene), system.model, skip)
    rays.place(*sim.touch.poses(system.initial_q if q is None else q))
    return rays, sim


def test_a_body_appears_where_the_intrinsics_say_at_its_distance(tmp_path):
    """The crate (0.5 x 1.0 x 0.8 m, centred 4 m ahead, 0.5 m right): its near face at x = 3.75
    m fills the pixels whose rays the intrinsics put inside the face's rectangle (projected
    corners: u = fx y / x + cx), and the depth there is 3.75 m (a plane face: exact, to
    float32 and Embree's single precision, 1e-5 relative); around it is the seabed 5 m below."""
    rays, _ = _bodies(tmp_path, skip={0})
    camera = Camera(rays, INTR)
    _, depth = camera.render(np.eye(3), np.array([0.0, 0.0, 5.0]))
    near = 3.75
    u0, v0 = INTR.project(np.array([near, 0.0, -0.4]))  # the face: y 0 to 1.0, z -0.4 to 0.4
    u1, v1 = INTR.project(np.array([near, 1.0, 0.4]))
    u, v = np.meshgrid(np.arange(INTR.width), np.arange(INTR.height))
    inside = (u > u0 + 0.5) & (u < u1 - 0.5) & (v > v0 + 0.5) & (v < v1 - 0.5)
    outside = (u < u0 - 0.5) | (u > u1 + 0.5) | (v < v0 - 0.5) | (v > v1 + 0.5)
    assert inside.sum() > 200
    assert np.allclose(depth[inside], near, rtol=1e-5)
    assert np.all(~(np.abs(depth[outside] - near) < 1e-3))  # nothing else at the face's depth
    # looking down from 5 m above the seabed: the crate's top (z = 4.6) over the seabed
    _, down = camera.render(np.eye(3), np.array([4.0, 0.5, 0.0]), tilt=-math.pi / 2)
    assert down[INTR.height // 2, INTR.width // 2] == pytest.approx(4.6, rel=1e-5)
    assert down[0, 0] == pytest.approx(10.0, rel=1e-5)


def test_a_body_moves_with_its_pose(tmp_path):
    rays, sim = _bodies(tmp_path, skip={0})
    camera = Camera(rays, INTR)
    p = np.array([0.0, 0.0, 5.0])
    _, before = camera.render(np.eye(3), p)
    q = sim.state.q.copy()
    i = sim.model.idx_q[sim.model.body_index("crate")]
    q[i : i + 3] = [6.0, -1.0, 5.0]  # the crate's centre moves: its face now at 5.75 m, left
    rays.place(*sim.touch.poses(q))
    _, after = camera.render(np.eye(3), p)
    u, v = INTR.project(np.array([5.75, -1.0, 0.0])).round().astype(int)
    assert after[v, u] == pytest.approx(5.75, rel=1e-5)
    assert not np.array_equal(before, after)


@pytest.mark.parametrize("view", [((0.0, 0.0, 5.0), (0.0, 0.0, 0.0), 0.0),
                                  ((1.0, 2.0, 3.0), (0.1, 0.0, -0.4), -0.5),
                                  ((4.0, 0.5, 2.0), (0.0, 0.0, 0.0), -1.4)])  # fmt: skip
def test_the_compiled_render_with_bodies_is_the_plain_one(tmp_path, view):
    """As ``test_camera``'s: within one 8-bit level in at most 0.1 % of the pixels and the
    depth to 1e-5 relative (the bodies' Embree scene is built about the camera, trimesh's about
    the bodies' corner: both single precision), NaNs at the same pixels but for at most 0.1 %
    (a ray grazing an edge); the post seen from outside (nothing skipped)."""
    rays, _ = _bodies(tmp_path)
    p, rpy, tilt = view
    R = euler2mat(*rpy, axes="sxyz")
    fast, plain = Camera(rays, INTR), Camera(rays, INTR)
    image, depth = fast.render(R, np.array(p), tilt)
    ref_image, ref_depth = plain.render_plainly(R, np.array(p), tilt)
    diff = np.abs(image.astype(int) - ref_image.astype(int))
    assert (diff > 1).mean() <= 1e-3 and (diff > 0).mean() <= 2e-3
    assert (np.isnan(depth) != np.isnan(ref_depth)).mean() <= 1e-3
    seen = ~np.isnan(depth) & ~np.isnan(ref_depth)
    close = np.isclose(depth[seen], ref_depth[seen], rtol=1e-5, atol=0.0)
    assert seen.sum() > 0 and (~close).mean() <= 1e-3


def test_the_post_is_seen_in_its_colour_and_not_from_inside(tmp_path):
    """From inside the post's box (the camera in its vehicle's hull): with the post skipped
    the camera sees past it (the seabed 10 m below), without the skip its wall 0.2 m away. Seen
    from outside, the post has its visual's colour (blue over red)."""
    p = np.zeros(3)
    rays, _ = _bodies(tmp_path, skip={0})
    _, depth = Camera(rays, INTR).render(np.eye(3), p)
    assert np.nanmin(depth) > 10.0  # the seabed, 10 m below
    inside, _ = _bodies(tmp_path)
    _, walls = Camera(inside, INTR).render(np.eye(3), p)
    assert walls[INTR.height // 2, INTR.width // 2] == pytest.approx(0.2, rel=1e-5)
    image, depth = Camera(inside, INTR).render(np.eye(3), np.array([-2.0, 0.0, 0.0]))
    centre = image[INTR.height // 2, INTR.width // 2].astype(int)
    assert depth[INTR.height // 2, INTR.width // 2] == pytest.approx(1.8, rel=1e-5)
    assert centre[2] > centre[0]


def test_the_arm_is_seen_by_the_vehicles_camera_and_the_hull_is_not():
    """The light arm under a BlueROV2's front, seen by a camera at the front of the hull
    looking 60 degrees down, the hull skipped: some pixels see the arm's links (each pixel's
    depth, the compiled path's, against ``BodyRays.trace``'s surface and distance, one ray at a
    time), none sees the hull."""
    from pathlib import Path

    from uvms_sim.model.kinematics import placements

    system = load(Path(__file__).resolve().parents[1] / "config" / "bluerov2_light_arm.yaml")
    sim = Simulator.from_system(system)
    hull = system.model.body_index("base_link")
    rays = BodyRays(SceneRays(system.scene), system.model, skip={hull})
    data = sim.model.create_data()
    placements(sim.model, data, sim.state.q)
    rays.place(data.R_world, data.p_world)
    R, p = data.R_world[hull], data.p_world[hull] + data.R_world[hull] @ np.array([0.2, 0.0, 0.0])
    camera = Camera(rays, INTR)
    tilt = math.radians(-60.0)
    _, depth = camera.render(R, p, tilt)
    directions, cosines = INTR.rays()
    d, _, s = rays.trace(p, directions @ (R @ tilted(tilt)).T)
    names = np.array([*rays.surfaces(), "none"])[s]
    arm = np.char.startswith(names.astype(str), "arm_link")
    assert arm.sum() > 100 and "base_link" not in names
    got = depth.ravel()[arm] / cosines[arm]
    assert np.allclose(got, d[arm], rtol=1e-4)


def test_a_body_casts_the_lamps_shadow_and_compiled_is_plain(tmp_path):
    """The crate moved to hang over the seabed (centre 8.6 m down, top at 8.2 m) under a lamp
    7.7 m down pointing down: its top face projected from the lamp, ``|x - 4| <= 0.25 s`` and
    ``|y - 0.5| <= 0.5 s`` with ``s = (10 - 7.7) / (8.2 - 7.7)``, is its shadow on the seabed:
    seabed pixels 5 cm inside it are as without the lamp (and lit with the crate moved away),
    those 5 cm outside it (within 40 degrees of the beam's axis) brighter. The compiled image
    is the plain one (within one level in 0.1 % of the pixels)."""
    from uvms_sim.sensors.camera import Lamp, lamp_rows

    rays, sim = _bodies(tmp_path, skip={0})
    q = sim.state.q.copy()
    i = sim.model.idx_q[sim.model.body_index("crate")]
    q[i : i + 3] = [4.0, 0.5, 8.6]
    rays.place(*sim.touch.poses(q))
    camera = Camera(rays, Intrinsics.from_fov(160, 120, 1.6))
    lamp = lamp_rows(
        [(Lamp(1500.0, math.radians(135.0)), np.array([4.0, 0.5, 7.7]), np.array([0.0, 0.0, 1.0]))], 1.0
    )
    R = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # looking down
    p = np.array([4.0, 2.0, 7.7])
    dark, _ = camera.render(R, p)
    lit, _ = camera.render(R, p, lamps=lamp)
    diff = np.abs(lit.astype(int) - camera.render_plainly(R, p, lamps=lamp)[0].astype(int))
    assert diff.max() <= 1 and (diff > 0).mean() <= 1e-3  # as test_camera_lights' other scenes
    distance, _, surface = rays.trace(p, camera.directions @ R.T)
    seabed = surface.reshape(dark.shape[:2]) == 0
    points = (p + distance[:, None] * (camera.directions @ R.T)).reshape(*dark.shape[:2], 3)
    s = (10.0 - 7.7) / (8.2 - 7.7)
    inside = np.minimum(0.25 * s - np.abs(points[..., 0] - 4.0), 0.5 * s - np.abs(points[..., 1] - 0.5))
    beam = np.hypot(points[..., 0] - 4.0, points[..., 1] - 0.5) < 2.3 * math.tan(math.radians(40.0))
    shadow, bright = seabed & (inside > 0.05), seabed & (inside < -0.05) & beam
    assert shadow.sum() > 100 and bright.sum() > 300
    assert np.array_equal(lit[shadow], dark[shadow])
    assert np.all(lit[bright].astype(int).sum(axis=-1) > dark[bright].astype(int).sum(axis=-1))
    q[i : i + 3] = [40.0, 0.5, 8.6]  # the crate out of the way: the same pixels are lit
    rays.place(*sim.touch.poses(q))
    unshaded, bare = camera.render(R, p, lamps=lamp)[0], camera.render(R, p)[0]
    assert np.all(unshaded[shadow].astype(int).sum(axis=-1) > bare[shadow].astype(int).sum(axis=-1))
