"""The free surface against closed forms: a floating box's draft, its heave period and its
hydrostatic roll stiffness at the surface, energy across the surface, the compiled path equal
to the reference on hulls cut by the surface, and sensors above the water."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from transforms3d.euler import euler2quat

from uvms_sim.dynamics import kinetic_energy, rnea
from uvms_sim.hydro.hull import buoyancy_potential, make_hull, shape_columns, submerged
from uvms_sim.model import load
from uvms_sim.sensors import P_ATM, absolute_pressure
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"

LX, LY, LZ, MASS, RHO = 0.5, 0.4, 0.2, 24.0, 1000.0
DRAFT = MASS / (RHO * LX * LY)  # 0.12 m: the box floats with this much of its height wet


def box(tmp_path, z0=0.0, added=(0.0, 0.0, 20.0, 0.0, 0.0, 0.0), damping=(0,) * 6, extra=""):
    """A 24 kg box hull 0.5 x 0.4 x 0.2 m (40 kg of displacement), CoG at its centre."""
    ixx, iyy, izz = (MASS / 12 * (b * b + c * c) for b, c in ((LY, LZ), (LX, LZ), (LX, LY)))
    path = tmp_path / "box.yaml"
    path.write_text(f"""environment: {{water_density: {RHO}{extra}}}
vehicles:
  - name: box
    initial_pose: {{position: [0, 0, {z0}]}}
    links:
      - name: hull
        mass: {MASS}
        inertia: [{ixx}, {iyy}, {izz}]
        hydrodynamics:
          hull: {{shape: box, size: [{LX}, {LY}, {LZ}]}}
          added_mass: {list(added)}
          linear_damping: {list(damping)}
""")
    return load(path)


def test_a_described_hull_sets_volume_and_centre_and_fills_the_columns(tmp_path):
    system = box(tmp_path)
    h = system.model.hull[0]
    assert system.model.volume[0] == pytest.approx(LX * LY * LZ, rel=1e-14)
    assert np.allclose(system.model.cob[0], 0.0, atol=1e-15)
    assert system.environment.surface == 0.0
    for shape, size, volume in (("cylinder", (0.1, 0.6), np.pi * 0.01 * 0.6),
                                ("ellipsoid", (0.3, 0.2, 0.1), 4 / 3 * np.pi * 0.006),
                                ("sphere", 0.2, 4 / 3 * np.pi * 0.008)):  # fmt: skip
        for axis in (0, 1, 2):
            cols = make_hull(shape_columns(shape, size, axis))
            assert cols.volume == pytest.approx(volume, rel=1e-6), (shape, axis)
    scaled = make_hull(shape_columns("box", (1.0, 1.0, 1.0)), 0.125, [0.1, 0.0, -0.2])
    assert scaled.volume == pytest.approx(0.125) and np.allclose(scaled.centroid, [0.1, 0.0, -0.2])
    assert 0.25 < h.radius <= 0.5 * np.sqrt(LX**2 + LY**2 + LZ**2)  # bounds the columns


def test_a_box_floats_at_the_draft_archimedes_gives(tmp_path):
    """Released below the surface with damping, the box settles with its bottom DRAFT below
    the surface (to 1e-6 m), on the compiled and the reference path."""
    system = box(tmp_path, z0=0.5, damping=(200, 200, 200, 5, 5, 5))
    for compiled in (True, False):
        sim = Simulator.from_system(system)
        sim.compiled = compiled
        for _ in range(4000 if compiled else 800):
            sim.step(0.01 if compiled else 0.05)
        bottom = sim.state.q[2] + LZ / 2
        assert bottom == pytest.approx(DRAFT, abs=1e-6), compiled
        assert np.abs(sim.state.v).max() < 1e-6


def test_heave_period_at_the_surface(tmp_path):
    """Undamped heave about the floating draft: ω² = ρ g A_wp / (m + Z_ẇ) (the box's sides are
    vertical, so the stiffness is exact). The period from zero crossings matches to 1e-5."""
    g = 9.80665
    period = 2 * np.pi / np.sqrt(RHO * g * LX * LY / (MASS + 20.0))
    z_eq = DRAFT - LZ / 2
    sim = Simulator.from_system(box(tmp_path, z0=z_eq + 0.01))
    t, z = [], []
    while sim.state.t < 3.2 * period:
        sim.step(0.001)
        t.append(sim.state.t)
        z.append(sim.state.q[2] - z_eq)
    t, z = np.array(t), np.array(z)
    k = np.flatnonzero(np.sign(z[1:]) != np.sign(z[:-1]))
    crossings = t[k] - z[k] * (t[k + 1] - t[k]) / (z[k + 1] - z[k])
    assert len(crossings) >= 5
    assert np.mean(np.diff(crossings[:5])) * 2 == pytest.approx(period, rel=1e-5)
    assert np.abs(z).max() == pytest.approx(0.01, rel=1e-3)  # no energy gained or lost


def test_hydrostatic_roll_stiffness_at_the_surface(tmp_path):
    """Floating at its draft and heeled by φ, the box needs the moment ρ g V_s GM sin φ to hold
    it, with GM = I_wp / V_s + (z_G - z_B) (z down): I_wp = L_x L_y³ / 12, z_B the centroid of
    the wet part. rnea at rest gives that moment to 1e-6 (relative, φ = 1e-3)."""
    system = box(tmp_path)
    model, data = system.model, system.model.create_data()
    env = system.environment
    Vs = LX * LY * DRAFT
    z_b = LZ / 2 - DRAFT / 2
    GM = (LX * LY**3 / 12) / Vs + (0.0 - z_b)
    for phi, axis in ((1e-3, 3), (-1e-3, 3)):
        q = model.neutral()
        q[2] = DRAFT - LZ / 2
        q[3:7] = euler2quat(phi, 0.0, 0.0, "sxyz")
        tau = rnea(model, data, q, np.zeros(6), np.zeros(6), env)
        expected = RHO * env.gravity * Vs * GM * np.sin(phi)
        assert tau[axis] == pytest.approx(expected, rel=1e-6)
    pitch_GM = (LY * LX**3 / 12) / Vs - z_b
    q[3:7] = euler2quat(0.0, 1e-3, 0.0, "sxyz")
    tau = rnea(model, data, q, np.zeros(6), np.zeros(6), env)
    assert tau[4] == pytest.approx(RHO * env.gravity * Vs * pitch_GM * np.sin(1e-3), rel=1e-6)


def energy(sim) -> float:
    m, data = sim.model, sim.data
    q, v = sim.state.q, sim.state.v
    T = kinetic_energy(m, data, q, v)
    R, p = data.R_world[0], data.p_world[0]
    g = sim.env.gravity
    U = -m.mass[0] * g * (p + R @ m.com[0])[2]
    return T + U + buoyancy_potential(m.hull[0], R, p, sim.env.surface, sim.env.density * g)


def test_crossing_the_surface_at_speed_creates_no_energy(tmp_path):
    """Released 2 m down with no damping, tumbling, the box leaves the water at 3.7 m/s, rises
    1.3 m above it, falls back and bobs: its energy (kinetic with added mass, gravity, the
    buoyancy potential of ``hydro.hull``) stays constant to 1e-5 (relative). The force is
    continuous but its derivative jumps where a column's end crosses the surface, which costs
    RK4 its order there: measured 6.6e-7 at 1 ms, 3.9e-7 at 0.5 ms."""
    system = box(tmp_path, z0=2.0)
    sim = Simulator.from_system(system)
    sim.state.v[3:6] = [0.8, -0.5, 0.3]
    sim.acceleration()
    e0 = energy(sim)
    top = 10.0
    energies = []
    for _ in range(6000):
        sim.step(0.001)
        sim.acceleration()
        top = min(top, sim.state.q[2])
        energies.append(energy(sim))
    assert top < -0.05  # it left the water
    assert np.max(np.abs(np.array(energies) - e0)) < 1e-5 * abs(e0)


def test_compiled_equals_the_reference_at_the_surface(tmp_path):
    """Random poses cutting the surface, random velocities, the shipped BlueROV2 and the box:
    the compiled ABA equals the reference to 1e-10."""
    rng = np.random.default_rng(3)
    for system in (
        box(tmp_path),
        load(CONFIG / "bluerov2_heavy.yaml"),
        load(CONFIG / "bluerov2_light_arm.yaml"),
    ):
        ref = Simulator.from_system(system)
        ref.compiled = False
        fast = Simulator.from_system(system)
        for _ in range(20):
            q = system.initial_q.copy()
            q[2] = rng.uniform(-0.3, 0.3)
            q[3:7] = euler2quat(*rng.uniform(-np.pi, np.pi, 3))
            v = rng.normal(size=system.model.nv)
            ref.reset(q, v)
            fast.reset(q, v)
            a, b = ref.acceleration(), fast.acceleration()
            assert np.allclose(a, b, rtol=0, atol=1e-10 * max(1.0, np.abs(a).max()))


def test_no_surface_means_water_everywhere(tmp_path):
    """``surface: null``: the box 1 m in the air still has its full buoyancy (the papers'
    unbounded water); with the surface it has none."""
    up = {}
    for extra in ("", ", surface: null"):
        sim = Simulator.from_system(box(tmp_path, z0=-1.0, added=(0,) * 6, extra=extra))
        up[extra] = sim.acceleration()[2]
    g = 9.80665
    assert up[""] == pytest.approx(g)
    assert up[", surface: null"] == pytest.approx(g - RHO * LX * LY * LZ * g / MASS)


def test_a_wet_part_exactly_at_full_submersion_is_the_description(tmp_path):
    system = box(tmp_path)
    h = system.model.hull[0]
    assert submerged(h, np.eye(3), np.array([0, 0, 5.0]), 0.0) is None
    V, c = submerged(h, np.eye(3), np.array([0, 0, LZ / 2 - 1e-9]), 0.0)
    assert V == pytest.approx(LX * LY * LZ, rel=1e-7) and np.allclose(c, 0.0, atol=1e-9)


def test_pressure_reads_atmospheric_above_the_surface():
    assert absolute_pressure(-3.0, 1000.0, 9.80665) == P_ATM
    assert absolute_pressure(2.0, 1000.0, 9.80665) == pytest.approx(P_ATM + 2 * 9806.65)
