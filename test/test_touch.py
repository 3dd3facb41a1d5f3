"""Contacts of the scene against physics (dynamics.touch, dynamics.contact): a sphere resting on
the seabed, a block on an incline sticking and sliding, a box pushed until it slides, a grasp
held against gravity and a current, energy with restitution 0 and 1, no tunnelling through a
thin panel, and the compiled law equal to the reference one."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh
from transforms3d.quaternions import quat2mat

from uvms_sim.dynamics.touch import damping_ratio
from uvms_sim.model.description import load
from uvms_sim.model.export import save_yaml
from uvms_sim.model.yaml_source import ConfigError
from uvms_sim.simulator import Simulator

G = 9.80665
RHO = 1000.0
DT = 0.001

POST = """
vehicles:
  - name: post
    base: fixed
    links: [{name: post, collision: []}]
"""


def _system(tmp_path: Path, text: str, name: str = "scene.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return load(path)


def _object_state(sim: Simulator, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position (NED), quaternion and velocity (body axes) of a free object."""
    m = sim.model
    i = m.body_index(name)
    iq, iv = m.idx_q[i], m.idx_v[i]
    return (
        sim.state.q[iq : iq + 3].copy(),
        sim.state.q[iq + 3 : iq + 7].copy(),
        sim.state.v[iv : iv + 6].copy(),
    )


def _added_mass(sim: Simulator, name: str) -> np.ndarray:
    return sim.model.M_A[sim.model.body_index(name)]


def test_restitution_damping_ratio():
    """ζ(e) inverts e = exp(-π ζ / sqrt(1 - ζ²)), the restitution of a linear spring-damper."""
    for e in (0.05, 0.2, 0.5, 0.9):
        z = damping_ratio(e)
        assert math.exp(-math.pi * z / math.sqrt(1 - z * z)) == pytest.approx(e, rel=1e-12)
    assert damping_ratio(0.0) == 1.0 and damping_ratio(1.0) == 0.0


def test_sphere_rests_where_weight_less_buoyancy_meets_the_stiffness(tmp_path):
    """A 2 kg sphere of 5 cm radius dropped on a seabed at 10 m rests with its centre at
    10 - r + (W - B) / k: to 1e-6 m (the damped contact has settled in 3 s: critically damped,
    restitution 0)."""
    k = 2.0e4
    system = _system(tmp_path, POST + f"""
scene:
  seabed: {{type: plane, depth: 10.0}}
  contact: {{stiffness: {k}, restitution: 0.0}}
  objects: [{{name: ball, shape: sphere, size: [0.05], mass: 2.0, xyz: [0, 0, 9.8]}}]
""")  # fmt: skip
    sim = Simulator.from_system(system)
    sim.advance(DT, 3000)
    p, _, v = _object_state(sim, "ball")
    volume = 4 / 3 * math.pi * 0.05**3
    rest = 10.0 - 0.05 + (2.0 - RHO * volume) * G / k
    assert p[2] == pytest.approx(rest, abs=1e-6)
    assert np.abs(v).max() < 1e-6
    assert p[0] == pytest.approx(0.0, abs=1e-9) and p[1] == pytest.approx(0.0, abs=1e-9)


def _incline(tmp_path, slope_deg: float, mu: float):
    """A 0.3 x 0.3 x 0.1 m box of 20 kg on a plane seabed sloping down to the north by
    ``slope_deg``, no drag (its added mass from its shape), resting on its face."""
    s = math.tan(math.radians(slope_deg))
    theta = math.radians(slope_deg)
    normal = np.array([s, 0.0, -1.0]) / math.hypot(s, 1.0)  # out of the seabed, NED
    centre = np.array([0.0, 0.0, 10.0]) + (0.05 + 1e-4) * normal
    volume = 0.3 * 0.3 * 0.1
    system = _system(tmp_path, POST + f"""
scene:
  seabed: {{type: plane, depth: 10.0, slope: [{s}, 0.0]}}
  contact: {{stiffness: 1.0e5, tangential_stiffness: 1.0e5, restitution: 0.1, friction: {mu}}}
  objects:
    - name: block
      shape: box
      size: [0.3, 0.3, 0.1]
      mass: 20.0
      xyz: {centre.tolist()}
      rpy: [0.0, {-theta}, 0.0]
      hydrodynamics:
        volume: {volume}
        added_mass: {{X_udot: -2.0, Y_vdot: -2.0, Z_wdot: -30.0, K_pdot: -0.1, M_qdot: -0.1, N_rdot: -0.2}}
""")  # fmt: skip
    return system, theta, volume


def test_block_on_an_incline_sticks_below_the_friction_angle(tmp_path):
    """μ = 0.5 (friction angle 26.6°) at 20°: once it has settled (1 s) the block moves less
    than 1 µm in 4 s: static friction, no creep (what its springs hold stays held)."""
    system, _, _ = _incline(tmp_path, 20.0, 0.5)
    sim = Simulator.from_system(system)
    sim.advance(DT, 1000)
    settled = _object_state(sim, "block")[0]
    sim.advance(DT, 4000)
    end = _object_state(sim, "block")[0]
    assert np.linalg.norm(end - settled) < 1e-6


def test_block_on_an_incline_slides_above_it_with_the_corrected_acceleration(tmp_path):
    """At 35° with μ = 0.5 the block slides down with a = (m - ρV) g (sin θ - μ cos θ) /
    (m + m_a): buoyancy and the added mass along the slope (2 kg) included. Fitted over 0.5-2 s,
    to 0.5 % (the contact springs' ringing after the start, averaged out)."""
    system, theta, volume = _incline(tmp_path, 35.0, 0.5)
    sim = Simulator.from_system(system)
    along = np.array([math.cos(theta), 0.0, math.sin(theta)])
    times, places = [], []
    for _ in range(20):
        sim.advance(DT, 100)
        times.append(sim.state.t)
        places.append(_object_state(sim, "block")[0] @ along)
    t, x = np.array(times[4:]), np.array(places[4:])
    measured = 2.0 * np.polyfit(t, x, 2)[0]
    m_a = _added_mass(sim, "block")[0, 0]
    assert m_a == pytest.approx(2.0)
    expected = (20.0 - RHO * volume) * G * (math.sin(theta) - 0.5 * math.cos(theta)) / (20.0 + m_a)
    assert measured == pytest.approx(expected, rel=5e-3)


def _floor_box(tmp_path, mu: float = 0.4):
    return _system(tmp_path, POST + f"""
scene:
  seabed: {{type: plane, depth: 10.0}}
  contact: {{stiffness: 1.0e5, tangential_stiffness: 1.0e5, restitution: 0.1, friction: {mu}}}
  objects:
    - name: box
      shape: box
      size: [0.4, 0.4, 0.1]
      mass: 30.0
      xyz: [0.0, 0.0, 9.9499]
      hydrodynamics:
        volume: 0.016
        added_mass: {{X_udot: -3.0, Y_vdot: -3.0, Z_wdot: -40.0, K_pdot: -0.1, M_qdot: -0.1, N_rdot: -0.2}}
""")  # fmt: skip


@pytest.mark.parametrize("fraction", [0.95, 1.05])
def test_box_pushed_sideways_starts_to_slide_at_mu_n(tmp_path, fraction):
    """A horizontal push along the box's base (no tipping moment: its four corners bear alike),
    raised over 0.5 s: at 95 % of μ N the box stays, moved only by the tangential springs
    (F / k_t, to 2 %), then not at all; at 105 % it slides with a = (F - μ N) / (m + m_a) (to
    1 %)."""
    mu = 0.4
    sim = Simulator.from_system(_floor_box(tmp_path, mu))
    sim.advance(DT, 500)  # settled on the seabed
    normal = (30.0 - RHO * 0.016) * G
    push = fraction * mu * normal
    x0 = _object_state(sim, "box")[0][0]
    for k in range(1, 51):
        f = push * k / 50  # at the base, 5 cm below the centre (NED z down): moment r x f
        sim.set_body_wrench("box", [f, 0, 0, 0, 0.05 * f, 0])
        sim.advance(DT, 10)
    times, places = [], []
    for _ in range(15):
        sim.advance(DT, 100)
        times.append(sim.state.t)
        places.append(_object_state(sim, "box")[0][0] - x0)
    if fraction < 1.0:
        assert places[-1] == pytest.approx(push / 1.0e5, rel=0.02)
        assert abs(places[-1] - places[5]) < 1e-7
    else:
        measured = 2.0 * np.polyfit(times[3:], places[3:], 2)[0]
        expected = (push - mu * normal) / (30.0 + 3.0)
        assert measured == pytest.approx(expected, rel=0.01)


GRIP = """
vehicles:
  - name: rig
    base: fixed
    links:
      - {name: palm, collision: []}
      - name: jaw_left
        mass: 0.3
        inertia: [1.0e-3, 1.0e-3, 1.0e-3]
        collision: [{box: [0.06, 0.02, 0.12]}]
        hydrodynamics: {volume: 1.0e-4}
      - name: jaw_right
        mass: 0.3
        inertia: [1.0e-3, 1.0e-3, 1.0e-3]
        collision: [{box: [0.06, 0.02, 0.12]}]
        hydrodynamics: {volume: 1.0e-4}
    joints:
      - name: left
        type: prismatic
        parent: palm
        child: jaw_left
        origin: {xyz: [0, -0.041, 0]}
        axis: [0, 1, 0]
        limits: {lower: -0.1, upper: 0.1}
      - name: right
        type: prismatic
        parent: palm
        child: jaw_right
        origin: {xyz: [0, 0.041, 0]}
        axis: [0, 1, 0]
        limits: {lower: -0.1, upper: 0.1}
environment:
  current: [0.3, 0.0, 0.0]
scene:
  seabed: {type: plane, depth: 1.0}
  contact: {stiffness: 5.0e4, tangential_stiffness: 5.0e4, restitution: 0.1, friction: 0.6}
  objects:
    - {name: can, shape: cylinder, size: [0.03, 0.15], mass: 1.0}
"""


def test_two_jaws_hold_a_cylinder_against_gravity_and_a_current_then_drop_it(tmp_path):
    """A 1 kg cylinder (weight in water 5.7 N) squeezed by two jaws with 30 N each, in a
    0.3 m/s current across it: it slips less than 1 mm in 60 s (issue's grasp). Opened, the
    jaws let it fall onto the seabed 1 m below, where it lies (on the seabed, not in it)."""
    system = _system(tmp_path, GRIP)
    sim = Simulator.from_system(system)
    m = sim.model
    left, right = m.idx_v[m.body_index("jaw_left")], m.idx_v[m.body_index("jaw_right")]
    tau = np.zeros(m.nv)
    tau[left], tau[right] = 30.0, -30.0
    sim.set_generalized_forces(tau)
    sim.advance(DT, 1000)  # the jaws close and the current has pushed
    held = _object_state(sim, "can")[0]
    for _ in range(59):
        sim.advance(DT, 1000)
    after = _object_state(sim, "can")[0]
    assert np.linalg.norm(after - held) < 1e-3
    assert abs(held[2]) < 2e-3  # caught where it was
    tau[left], tau[right] = -5.0, 5.0  # open
    sim.set_generalized_forces(tau)
    for _ in range(40):
        sim.advance(DT, 250)
    p, quat, v = _object_state(sim, "can")
    axis_down = abs(quat2mat(quat)[2, 2])  # |cos| of the can's axis from the vertical
    lowest = p[2] + 0.075 * axis_down + 0.03 * math.sqrt(max(0.0, 1.0 - axis_down**2))
    assert lowest == pytest.approx(1.0, abs=2e-3)  # on the seabed, standing or lying
    assert abs(v[2]) < 0.01


def _energy(sim: Simulator, name: str, k: float, depth: float, radius: float) -> float:
    p, _, v = _object_state(sim, name)
    m = sim.model.mass[sim.model.body_index(name)]
    d = max(0.0, p[2] + radius - depth)
    return 0.5 * m * float(v[:3] @ v[:3]) - m * G * p[2] + 0.5 * k * d * d


def _bouncer(tmp_path, restitution: float):
    return _system(tmp_path, POST + f"""
environment: {{water_density: 1.0e-3}}
scene:
  seabed: {{type: plane, depth: 10.0}}
  contact: {{stiffness: 2.0e4, restitution: {restitution}}}
  objects:
    - name: ball
      shape: sphere
      size: [0.05]
      mass: 2.0
      xyz: [0, 0, 9.5]
      hydrodynamics: {{volume: 1.0e-9}}
""")  # fmt: skip


def _bounce_1d(h: float, seconds: float) -> tuple[np.ndarray, float]:
    """The elastic ball's fall and bounces as one coordinate (depth of its lowest point below
    the start, m), integrated by classical RK4 here: (depths every 50 ms, energy gained, J)."""
    m, k, floor = 2.0, 2.0e4, 0.45

    def acc(x: float) -> float:
        return G - (k / m) * max(0.0, x - floor)

    x = v = 0.0
    out = []
    every = round(0.05 / h)
    for n in range(round(seconds / h)):
        k1x, k1v = v, acc(x)
        k2x, k2v = v + h / 2 * k1v, acc(x + h / 2 * k1x)
        k3x, k3v = v + h / 2 * k2v, acc(x + h / 2 * k2x)
        k4x, k4v = v + h * k3v, acc(x + h * k3x)
        x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
        v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        if (n + 1) % every == 0:
            out.append(x)
    energy = 0.5 * m * v * v - m * G * x + 0.5 * k * max(0.0, x - floor) ** 2
    return np.array(out), energy


def test_contacts_never_create_energy_elastic(tmp_path):
    """Restitution 1 in (almost) no water: the law is conservative, so the simulated ball
    follows, to 1e-9 m over 10 s (15 bounces), an independent RK4 integration of the same
    spring; what that integration gains or loses is RK4's error where the force starts and
    stops (a kink in the force), within 1e-3 of the fall's energy at 1 ms and shrinking with
    the step (h / 8: 10 times less)."""
    sim = Simulator.from_system(_bouncer(tmp_path, 1.0))
    depths = []
    for _ in range(200):
        sim.advance(DT, 50)
        depths.append(_object_state(sim, "ball")[0][2] - 9.5)
    reference, gained = _bounce_1d(DT, 10.0)
    np.testing.assert_allclose(depths, reference, atol=1e-9)
    scale = 2.0 * G * 0.45  # the energy of the fall
    assert abs(gained) / scale < 1e-3
    assert abs(_bounce_1d(DT / 8, 10.0)[1]) < abs(gained) / 10


def test_contacts_never_create_energy_inelastic(tmp_path):
    """Restitution 0: the ball stops at the first impact, and its energy never rises."""
    sim = Simulator.from_system(_bouncer(tmp_path, 0.0))
    energies = [_energy(sim, "ball", 2.0e4, 10.0, 0.05)]
    for _ in range(300):
        sim.advance(DT, 10)
        energies.append(_energy(sim, "ball", 2.0e4, 10.0, 0.05))
    rises = np.diff(energies)
    assert rises.max() < 1e-6 * 2.0 * G * 0.45
    assert abs(_object_state(sim, "ball")[2][2]) < 1e-3


def test_no_tunnelling_through_a_thin_panel_at_2_m_s(tmp_path):
    """A 2 kg box thrown at 2 m/s (a ROV's top speed) at a 1 cm panel bounces back (elastic):
    it never gets past the panel though it sinks 2 cm into it, as deep as sqrt(m v² / k) says
    (to 5 %)."""
    system = _system(tmp_path, POST + """
environment: {water_density: 1.0e-3, gravity: 0.0}
scene:
  structures: [{name: panel, shape: box, size: [0.01, 1.0, 1.0], xyz: [0.5, 0, 5.0]}]
  contact: {stiffness: 2.0e4, restitution: 1.0}
  objects:
    - name: brick
      shape: box
      size: [0.1, 0.1, 0.1]
      mass: 2.0
      xyz: [0, 0, 5.0]
      hydrodynamics: {volume: 1.0e-9}
""")  # fmt: skip
    sim = Simulator.from_system(system)
    v = np.zeros(sim.model.nv)
    v[sim.model.idx_v[sim.model.body_index("brick")]] = 2.0
    sim.reset(sim.state.q, v)
    front = []
    for _ in range(600):
        sim.advance(DT, 1)
        front.append(_object_state(sim, "brick")[0][0] + 0.05)
    deepest = max(front) - 0.495
    assert deepest == pytest.approx(math.sqrt(2.0 * 4.0 / 2.0e4), rel=0.05)
    assert front[-1] < 0.495 and _object_state(sim, "brick")[2][0] < 0.0


def test_compiled_contacts_equal_the_reference(tmp_path):
    """The compiled law (compiled.contacts) and the reference (dynamics.contact) over 0.5 s of
    the grasp (sticking and slipping points, pairs of bodies and of the scene): to 1e-9."""
    sims = []
    for compiled in (True, False):
        sim = Simulator.from_system(_system(tmp_path, GRIP))
        sim.compiled = compiled
        tau = np.zeros(sim.model.nv)
        tau[sim.model.idx_v[sim.model.body_index("jaw_left")]] = 30.0
        tau[sim.model.idx_v[sim.model.body_index("jaw_right")]] = -30.0
        sim.set_generalized_forces(tau)
        for _ in range(100):
            sim.step(DT)
        sims.append(sim)
    a, b = sims
    assert a.touch.pairs_touching >= 2
    np.testing.assert_allclose(a.state.q, b.state.q, atol=1e-9)
    np.testing.assert_allclose(a.state.v, b.state.v, atol=1e-9)


def test_bad_contact_laws_and_objects_are_one_line_errors(tmp_path):
    """Friction -1 or NaN, restitution 2, an object with both mass and density, an open mesh
    object, an object inside the seabed or inside another: one line naming file and key."""
    base = POST + "scene:\n  seabed: {type: plane, depth: 10.0}\n"
    trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], process=False).export(
        tmp_path / "sheet.stl"
    )
    cases = {
        "  contact: {friction: -1}\n": "friction",
        "  contact: {friction: .nan}\n": "friction",
        "  contact: {restitution: 2}\n": "restitution",
        "  contact: {margin: 0}\n": "margin",
        "  objects: [{name: a, shape: sphere, size: [0.1], mass: 1, density: 900}]\n": "exactly one of",
        "  objects: [{name: a, shape: sphere, size: [0.1]}]\n": "exactly one of",
        "  objects: [{name: a, shape: mesh, file: sheet.stl, mass: 1}]\n": "watertight",
        "  objects: [{name: a, shape: sphere, size: [0.1], mass: 1, xyz: [0, 0, 9.95]}]\n": "inside 'seabed'",
        "  objects: [{name: a, shape: box, size: [0.2, 0.2, 0.2], mass: 1, xyz: [0, 0, 5]},\n"
        "            {name: b, shape: box, size: [0.2, 0.2, 0.2], mass: 1, xyz: [0.05, 0, 5]}]\n": "inside",
        "  objects: [{name: post, shape: sphere, size: [0.1], mass: 1, xyz: [0, 0, 5]}]\n": "used",
    }
    for k, (text, words) in enumerate(cases.items()):
        path = tmp_path / f"bad{k}.yaml"
        path.write_text(base + text)
        with pytest.raises(ConfigError) as info:
            Simulator.from_system(load(path))
            pytest.fail(f"loaded: {text}")
        message = str(info.value)
        assert path.name in message and words in message and "\n" not in message, message


def test_objects_added_placed_and_removed_at_run_time(tmp_path):
    """Simulator.add_object / place_object / remove_object: the other bodies keep their state,
    a new object falls and rests on the seabed, a bad one changes nothing."""
    sim = Simulator.from_system(_system(tmp_path, GRIP))
    sim.advance(DT, 200)
    rig_q = sim.state.q[: sim.model.idx_q[sim.model.body_index("can")]].copy()
    sim.add_object(
        {"name": "pebble", "shape": "sphere", "size": [0.02], "density": 2600.0, "xyz": [0.3, 0, 0.5]}
    )
    assert sim.model.body_index("pebble") == sim.model.nbodies - 1
    np.testing.assert_array_equal(sim.state.q[: len(rig_q)], rig_q)
    sim.advance(DT, 1500)
    depths = []
    for _ in range(5):  # resting on the seabed (rolling in the current)
        sim.advance(DT, 100)
        depths.append(_object_state(sim, "pebble")[0][2])
    assert np.allclose(depths, 1.0 - 0.02, atol=1e-3)
    nq = sim.model.nq
    taken = {"name": "pebble", "shape": "sphere", "size": [0.02], "mass": 1.0}
    not_a_number = {"name": "x", "shape": "sphere", "size": [0.02], "mass": math.nan}
    in_the_seabed = {"name": "y", "shape": "sphere", "size": [0.1], "mass": 1.0, "xyz": [0.3, 0, 0.95]}
    for bad in (taken, not_a_number, in_the_seabed):
        with pytest.raises(ValueError):
            sim.add_object(bad)
        assert sim.model.nq == nq
    with pytest.raises(ValueError):
        sim.place_object("pebble", [0.3, 0, 1.01])  # 3 cm into the seabed
    sim.place_object("pebble", [0.3, 0.2, 0.5], velocity=[0, 0, 1.0, 0, 0, 0])
    assert _object_state(sim, "pebble")[0][1] == pytest.approx(0.2)
    sim.remove_object("pebble")
    assert "pebble" not in [b.name for b in sim.model.bodies]
    with pytest.raises(KeyError):
        sim.remove_object("pebble")
    sim.advance(DT, 100)
    assert np.all(np.isfinite(sim.state.q))


def test_objects_round_trip_through_the_written_description(tmp_path):
    """save_yaml writes the objects into scene.objects (shape, mass, pose, hydrodynamics) and
    the contact law: loading it again gives the same bodies."""
    system = _system(tmp_path, GRIP)
    save_yaml(system, tmp_path / "again.yaml")
    again = load(tmp_path / "again.yaml")
    assert [v.kind for v in again.vehicles] == [v.kind for v in system.vehicles]
    assert again.scene.contact == system.scene.contact
    for a, b in zip(system.model.bodies, again.model.bodies, strict=True):
        assert a.name == b.name and a.mass == pytest.approx(b.mass)
        np.testing.assert_allclose(a.inertia, b.inertia, atol=1e-12)
    np.testing.assert_allclose(system.model.M_A, again.model.M_A, atol=1e-12)


def test_jaws_closing_on_nothing_stop_at_each_other(tmp_path):
    """Link against link of two branches (the jaws, children of one palm): closed on nothing,
    they meet and rest against each other, pressed by their 30 N: each moves 3.1 cm (inner
    faces 6.2 cm apart at first) and half the springs' 30 N / k more (they press into each other)."""
    sim = Simulator.from_system(_system(tmp_path, GRIP.split("  objects:", maxsplit=1)[0]))
    m = sim.model
    left, right = m.idx_v[m.body_index("jaw_left")], m.idx_v[m.body_index("jaw_right")]
    tau = np.zeros(m.nv)
    tau[left], tau[right] = 30.0, -30.0
    sim.set_generalized_forces(tau)
    sim.advance(DT, 1000)
    q = sim.state.q
    assert q[m.idx_q[m.body_index("jaw_left")]] == pytest.approx(0.031 + 0.5 * 30.0 / 5.0e4, abs=2e-5)
    assert q[m.idx_q[m.body_index("jaw_right")]] == pytest.approx(-0.031 - 0.5 * 30.0 / 5.0e4, abs=2e-5)
    assert abs(sim.state.v[left]) < 1e-4


def test_a_box_rests_on_a_box_on_a_fixed_structure(tmp_path):
    """Object on object on a bolted structure (a vehicle with base: fixed placed by its
    initial_pose): the stack rests where the sizes and the springs put it."""
    text = """
vehicles:
  - name: table
    base: fixed
    initial_pose: {position: [1.0, 0.0, 5.0]}
    links: [{name: top, collision: [{box: [1.0, 1.0, 0.1]}]}]
scene:
  contact: {stiffness: 1.0e5, restitution: 0.0}
  objects:
    - {name: lower, shape: box, size: [0.4, 0.4, 0.2], density: 2000.0, xyz: [1.0, 0.0, 4.849]}
    - {name: upper, shape: box, size: [0.2, 0.2, 0.1], density: 2000.0, xyz: [1.0, 0.0, 4.6985]}
"""
    sim = Simulator.from_system(_system(tmp_path, text))
    sim.advance(DT, 3000)
    lower, upper = _object_state(sim, "lower")[0], _object_state(sim, "upper")[0]
    w_upper = 1000.0 * G * 0.2 * 0.2 * 0.1  # (2000 - 1000) kg/m^3 x volume x g
    w_lower = 1000.0 * G * 0.4 * 0.4 * 0.2
    assert lower[2] == pytest.approx(5.0 - 0.05 - 0.1 + (w_lower + w_upper) / 1.0e5, abs=1e-5)
    assert upper[2] == pytest.approx(lower[2] - 0.1 - 0.05 + w_upper / 1.0e5, abs=1e-5)


def test_the_rows_of_a_pair_follow_the_matching_rules():
    """``compiled.touch_rows.pair_rows`` (the rows ``Touch`` writes) on a body A at the world's
    origin against the scene, by the rules of ``dynamics.touch``: a point found again at the
    same material point keeps its row as it was; one found 3 mm from a last point starts where
    coal finds it with that point's friction offset carried over (B's point moved by it); a
    new point starts from the witness points; a last point coal leaves out is kept while it
    presses (gap < 0) and dropped once apart; a corner found twice on a mesh counts once; the
    pair's stiffness and dampers are shared among its rows. A pair marked as at rest keeps all
    its rows as they were, and so does one whose normal turned round (driven through a thin
    body)."""
    from uvms_sim.dynamics import compiled
    from uvms_sim.dynamics.touch import KEEP, MATCH
    from uvms_sim.scene.collision import SAME

    up = [0.0, 0.0, -1.0]  # normal from the seabed (B) to A, NED
    old = np.zeros((4, 14))
    old[0, :3], old[0, 3:6] = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0005]  # found again in place
    old[1, :3], old[1, 3:6] = [0.1, 0.0, 0.0], [0.102, 0.0, 0.001]  # found again 3 mm on
    old[2, :3], old[2, 3:6] = [0.5, 0.0, 0.0], [0.5, 0.0, -0.001]  # left out, pressing
    old[3, :3], old[3, 3:6] = [0.9, 0.0, 0.0], [0.9, 0.0, 0.001]  # left out, apart
    old[:, 10:13] = up
    old[:, 6] = 123.0  # (constants of the last detection: replaced by the pair's)
    pts = np.array([
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0004, *up],
        [0.103, 0.0, 0.0, 0.103, 0.0, 0.0005, *up],
        [0.3, 0.2, 0.0, 0.3, 0.2, 0.0002, *up],
        [0.3, 0.2, 0.5 * SAME, 0.3, 0.2, 0.0002, *up],  # the same corner in a second triangle
    ])  # fmt: skip
    R, p, mass = np.eye(3)[None].copy(), np.zeros((1, 3)), np.array([2.0])
    law = np.array([1000.0, 500.0, 0.6, 0.5, MATCH, KEEP, SAME])

    def rows(keep: int, normal_sign: float = 1.0):
        pts_n = pts.copy()
        pts_n[:, 6:9] *= normal_sign
        out, counts = np.empty((8, 14)), np.zeros(1, dtype=np.int64)
        one = np.ones(1, dtype=np.int64)
        scratch = (np.empty((4, 7)), np.empty(4, dtype=np.int64), np.empty(4, dtype=np.int64))
        total = compiled.pair_rows(
            R, p, np.array([[0, -1]]), one * keep, one, np.array([0, 4]), pts_n, np.array([[0, 4]]), old,
            *scratch, mass, law, out, counts,
        )  # fmt: skip
        assert counts[0] == total
        return out[:total]

    got = rows(keep=0)
    assert len(got) == 4  # the row kept, the point moved on, the new point, the pressing one
    np.testing.assert_array_equal(got[0, :6], old[0, :6])  # as it was (not coal's 0.4 mm)
    np.testing.assert_allclose(got[1, :6], [0.103, 0.0, 0.0, 0.105, 0.0, 0.0005], atol=1e-15)
    np.testing.assert_allclose(got[2, :6], pts[2, :6], atol=0.0)
    np.testing.assert_array_equal(got[3, :6], old[2, :6])
    share = 1.0 / 4
    zeta, m = 0.5, 2.0
    np.testing.assert_allclose(got[:, 6], 1000.0 * share)
    np.testing.assert_allclose(got[:, 7], 2 * zeta * math.sqrt(1000.0 * m) * share)
    np.testing.assert_allclose(got[:, 8], 0.6)
    np.testing.assert_allclose(got[:, 9], 500.0 * share)
    np.testing.assert_allclose(got[:, 13], 2 * zeta * math.sqrt(500.0 * m) * share)
    np.testing.assert_allclose(got[:, 10:13], np.tile(up, (4, 1)))
    for keep, sign in ((1, 1.0), (0, -1.0)):  # at rest; a normal turned round
        got = rows(keep, sign)
        assert len(got) == 4
        np.testing.assert_array_equal(got[:, :6], old[:, :6])
        np.testing.assert_allclose(got[:, 6], 1000.0 / 4)
