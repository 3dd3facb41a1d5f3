"""The Reach Alpha 5 descriptions (config/alpha5.yaml, config/bluerov2_heavy_alpha5.yaml) against
Blueprint Lab's published kinematic and dynamic properties (docs/arm.md): forward kinematics by
the standard Denavit-Hartenberg product (an independent algorithm), the inertias about each link
origin and the added mass at each origin as the tables print them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.model.kinematics import placements
from uvms_sim.spatial import shift_to_origin

# Blueprint Lab (2019), "Reach System 1 Kinematic and Dynamic Properties", Tables 1-5
THETA_A = math.atan(145.3 / 40.0)
DH_D = [0.0462, 0.0, 0.0, -0.180]
DH_A = [0.020, 0.15071, 0.020, 0.0]
DH_ALPHA = [math.pi / 2, math.pi, -math.pi / 2, math.pi / 2]
DH_OFFSET = [math.pi, -THETA_A, -THETA_A, math.pi / 2]
LINKS = ["m3_inline_link", "m2_1_1_link", "m2_joint_link", "m2_1_2_link", "m1_link"]
MASS = [0.341, 0.194, 0.429, 0.115, 0.333]
COM_MM = [[-75, -6, -3], [5, -1, 16], [73, 0, 0], [17, -26, -2], [0, 3, -98]]
# about each link's frame origin, kg mm^2; off-diagonals are products of inertia (integral x y dm)
INERTIA_ORIGIN = [
    [[99, 139, 115], [139, 2920, 3], [115, 3, 2934]],
    [[189, 5, 54], [5, 213, 3], [54, 3, 67]],
    [[87, -76, -10], [-76, 3190, 0], [-10, 0, 3213]],
    [[120, -61, -1], [-61, 62, 0], [-1, 0, 156]],
    [[3709, 2, -4], [2, 3734, 0], [-4, 0, 79]],
]
ADDED_TRANSLATION = [
    [0.017, 0.189, 0.189],
    [0.032, 0.032, 0.017],
    [0.017, 0.201, 0.201],
    [0.032, 0.017, 0.032],
    [0.226, 0.226, 0.017],
]
ADDED_ROTATION = [[0, 1414, 1414], [7, 7, 0], [0, 1716, 1716], [7, 0, 7], [2443, 2443, 0]]  # kg mm^2
VOLUME_L = [0.202, 0.018, 0.203, 0.025, 0.155]
COB_MM = [[-75, -6, -3], [-1, -3, 32], [73, 0, -2], [3, 1, -17], [0, 3, -98]]
DRAG = [[0.3, 1.5, 1.5], [0.26, 0.26, 0.3], [0.3, 1.6, 1.6], [0.26, 0.3, 0.26], [1.8, 1.8, 0.3]]
JOINTS = ["alpha_5_axis_e", "alpha_5_axis_d", "alpha_5_axis_c", "alpha_5_axis_b"]


def dh(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """Standard DH link transform Rz(theta) Tz(d) Tx(a) Rx(alpha)."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array(
        [[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st], [0, sa, ca, d], [0, 0, 0, 1]]
    )


def body(model, name: str) -> int:
    return [b.name for b in model.bodies].index(name)


@pytest.fixture(scope="module", params=["alpha5", "bluerov2_heavy_alpha5"])
def system(request):
    return load(resolve(request.param))


def test_forward_kinematics_is_blueprint_labs_dh_chain(system) -> None:
    """The tool point (DH frame 4's origin) and every joint axis, relative to the arm's base,
    agree with Blueprint Lab's Table 1 chain at random joint angles (1e-12 m: the same numbers
    through two algorithms)."""
    model = system.model
    data = model.create_data()
    rng = np.random.default_rng(0)
    base = body(model, "alpha_5_m3_inline_link")
    wrist = body(model, "alpha_5_m1_link")
    for _ in range(20):
        q = system.initial_q.copy()
        theta = rng.uniform(0.0, 3.5, 4)
        for name, value in zip(JOINTS, theta, strict=True):
            i = [b.joint_name for b in model.bodies].index(name)
            q[model.idx_q[i]] = value
        placements(model, data, q)
        R0, p0 = data.R_world[base], data.p_world[base]
        T = np.eye(4)
        axes = []
        for k in range(4):
            axes.append(T[:3, 2].copy())
            T = T @ dh(theta[k] + DH_OFFSET[k], DH_D[k], DH_A[k], DH_ALPHA[k])
        tool = R0.T @ (data.p_world[wrist] + data.R_world[wrist] @ np.array([0.0, 0.0, DH_D[3]]) - p0)
        assert np.allclose(tool, T[:3, 3], atol=1e-12)
        for k, name in enumerate(JOINTS):
            i = [b.joint_name for b in model.bodies].index(name)
            assert np.allclose(R0.T @ data.R_world[i][:, 2], axes[k], atol=1e-12)


def test_inertias_are_table_2_about_the_link_origins(system) -> None:
    """The inertia about the centre of mass plus the parallel-axis term gives Table 2 (kg mm^2,
    products of inertia as integral(x y dm)) to the 0.005 kg mm^2 of the rounding in the files."""
    model = system.model
    for k, link in enumerate(LINKS):
        b = model.bodies[body(model, f"alpha_5_{link}")]
        assert b.mass == MASS[k]
        c = np.array(COM_MM[k]) * 1e-3
        assert np.allclose(b.com, c)
        tensor = b.inertia + MASS[k] * (c @ c * np.eye(3) - np.outer(c, c))
        table = np.diag(np.diag(tensor)) - (tensor - np.diag(np.diag(tensor)))
        assert np.allclose(table * 1e6, INERTIA_ORIGIN[k], atol=0.006)


def test_hydrodynamics_are_tables_3_to_5(system) -> None:
    """Volume, centre of buoyancy and drag as printed; the added mass at the origin has Table 3's
    translational terms and, where Table 3 is a rigid shift of terms at the centre of buoyancy
    (links 0, 2, 4), its non-zero rotational diagonal terms to 0.5 kg mm^2."""
    model = system.model
    for k, link in enumerate(LINKS):
        h = model.bodies[body(model, f"alpha_5_{link}")].hydro
        cob = np.array(COB_MM[k]) * 1e-3
        assert h.volume == pytest.approx(VOLUME_L[k] * 1e-3)
        assert np.allclose(h.center_of_buoyancy, cob) and np.allclose(h.damping_center, cob)
        assert np.allclose(h.quadratic_damping, [*DRAG[k], 0, 0, 0])
        at_cob = shift_to_origin(h.added_mass, -cob)  # back to the centre of buoyancy
        assert np.allclose(np.diag(at_cob)[:3], ADDED_TRANSLATION[k])
        printed = np.array(ADDED_ROTATION[k], dtype=float)
        if k in (0, 2, 4):  # the non-zero entries (a zero is smaller than its parallel-axis part)
            got = np.diag(h.added_mass)[3:] * 1e6
            assert np.allclose(got[printed > 0], printed[printed > 0], atol=0.5)


@pytest.mark.parametrize("other", ["bluerov2_heavy_alpha5", "bluerov2_heavy_alpha5_grasp"])
def test_arm_is_the_same_in_both_descriptions(other: str) -> None:
    a, b = load(resolve("alpha5")).model, load(resolve(other)).model
    for link in [*LINKS, "push_rod", "standard_jaws_rs1_130_link", "standard_jaws_rs1_139_link"]:
        x, y = a.bodies[body(a, f"alpha_5_{link}")], b.bodies[body(b, f"alpha_5_{link}")]
        assert x.mass == y.mass and np.array_equal(x.inertia, y.inertia) and np.array_equal(x.com, y.com)
        if link != "m3_inline_link":  # the arm's base: bolted to the world or to the vehicle
            assert x.joint_name == y.joint_name and x.joint.type == y.joint.type
            assert np.array_equal(x.origin_xyz, y.origin_xyz) and np.array_equal(x.origin_rpy, y.origin_rpy)
            assert np.array_equal(x.joint.axis, y.joint.axis) and x.joint.mimic == y.joint.mimic
        assert (x.hydro is None) == (y.hydro is None)
        if x.hydro is not None:
            assert np.array_equal(x.hydro.added_mass, y.hydro.added_mass)
        assert x.collisions is not None and y.collisions is not None  # what touches the scene
        shapes = [
            [(v.shape, v.size, tuple(v.xyz), tuple(v.rpy)) for v in c] for c in (x.collisions, y.collisions)
        ]
        assert shapes[0] == shapes[1]


def test_weight_and_buoyancy_of_the_arm() -> None:
    """1.412 kg and 0.603 L in Blueprint Lab's tables, plus the 10 g push rod and the jaws' two
    55 g fingers (0.02 L each): 8.7 N heavy in fresh water."""
    model = load(resolve("alpha5")).model
    mass = sum(b.mass for b in model.bodies)
    volume = sum(b.hydro.volume for b in model.bodies if b.hydro is not None)
    assert mass == pytest.approx(1.532)
    assert volume == pytest.approx(0.643e-3)
    assert (mass - 1000.0 * volume) * 9.80665 == pytest.approx(8.72, abs=0.01)
