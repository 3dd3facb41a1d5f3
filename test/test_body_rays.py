"""Rays that see the bodies where they are (sensors.body_rays): a sphere object in front of a
ray is hit at the distance its pose and radius give, moves with it, hides the seabed behind it,
and the body a sensor sits in is left out."""

from __future__ import annotations

import numpy as np
import pytest

from uvms_sim.model.description import load
from uvms_sim.scene.raycast import SceneRays
from uvms_sim.sensors.body_rays import BodyRays
from uvms_sim.simulator import Simulator

SCENE = """
vehicles:
  - name: post
    base: fixed
    links: [{name: post, visual: [{box: [0.2, 0.2, 0.2]}], collision: []}]
scene:
  seabed: {type: plane, depth: 10.0}
  objects: [{name: ball, shape: sphere, size: [0.5], mass: 1.0, xyz: [3.0, 0.0, 5.0]}]
"""


def _rays(tmp_path, skip=None):
    (tmp_path / "s.yaml").write_text(SCENE)
    system = load(tmp_path / "s.yaml")
    sim = Simulator.from_system(system)
    rays = BodyRays(SceneRays(system.scene), system.model, skip)
    rays.place(*sim.touch.poses(system.initial_q))
    return rays, sim


def test_a_body_is_hit_where_it_is_and_hides_the_seabed(tmp_path):
    rays, sim = _rays(tmp_path, skip={0})
    o = np.array([0.0, 0.0, 5.0])
    d, n, s = rays.trace(o, np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    # the sphere's icosphere surface: 3 - 0.5 to within the tessellation's sag (3 subdivisions)
    assert d[0] == pytest.approx(2.5, abs=0.01) and rays.surfaces()[s[0]] == "ball"
    assert n[0] @ np.array([1.0, 0.0, 0.0]) < -0.99  # facing the ray
    assert d[1] == pytest.approx(5.0) and rays.surfaces()[s[1]] == "seabed"
    q = sim.state.q.copy()
    i = sim.model.idx_q[sim.model.body_index("ball")]
    q[i : i + 3] = [0.0, 0.0, 8.0]  # under the sensor now: hides the seabed
    rays.place(*sim.touch.poses(q))
    d, _, s = rays.trace(o, np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    assert np.isinf(d[0]) and s[0] == -1
    assert d[1] == pytest.approx(2.5, abs=0.01) and rays.surfaces()[s[1]] == "ball"


def test_the_body_a_sensor_sits_in_is_left_out(tmp_path):
    inside, _ = _rays(tmp_path)  # the post's box around the origin
    d, _, s = inside.trace(np.zeros(3), np.array([[1.0, 0.0, 0.0]]))
    assert d[0] == pytest.approx(0.1) and inside.surfaces()[s[0]] == "post"
    skipped, _ = _rays(tmp_path, skip={0})
    d, _, s = skipped.trace(np.zeros(3), np.array([[1.0, 0.0, 0.0]]))
    assert np.isinf(d[0])
