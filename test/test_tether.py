"""The tether (``uvms_sim.tether``, MoorDyn) against closed forms and as the vehicle feels it:
the static shape and tension of the elastic catenary, the shape and tension of a neutrally
buoyant cable bowed by a current, both ways of the coupling, the reel, and MoorDyn kept quiet."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from uvms_sim.model import ConfigError, load
from uvms_sim.simulator import Simulator
from uvms_sim.tether.catenary import current_cable, elastic_catenary
from uvms_sim.tether.line import MoorDynLine
from uvms_sim.tether.properties import FATHOM, TetherSpec

CONFIG = Path(__file__).resolve().parent.parent / "config"
G = 9.80665


def _settle(line: MoorDynLine, end, seconds: float, dt: float = 0.002) -> None:
    """Hold the vehicle's end of the line still for ``seconds``."""
    t = 0.0
    for _ in range(round(seconds / dt)):
        line.step(end, np.zeros(3), t, dt)
        t += dt


def test_a_hanging_tether_takes_the_elastic_catenary():
    """A 50-segment line of the Fathom tether's diameter and stiffness, made to sink (0.3 kg/m:
    2.5 N/m in sea water, so the sag is large), hanging still between a surface point and a
    point 30 m away and 10 m down: its nodes lie within 0.5 % of the span of the elastic
    catenary (Irvine 1981) through the same ends and its end tensions are within 1 % (the
    lumped masses' discretisation of 50 segments; MoorDyn's own validation shows the same order,
    Hall & Goupee 2015), and EA stretches it as the closed form says."""
    props = dict(FATHOM, mass_per_length=0.3, normal_drag=1.2, internal_damping=1.0)
    anchor, end = np.zeros(3), np.array([30.0, 0.0, 10.0])  # NED: the end 10 m down
    spec = TetherSpec("t", "l", [0, 0, 0], anchor, 40.0, 50, props, max_length=100.0)
    line = MoorDynLine(spec, end, 1025.0, G, 1e4)
    try:
        _settle(line, end, 60.0)
        nodes = line.nodes()
        w = spec.wet_weight(1025.0, G)
        # the catenary from the end (bottom, A) up to the surface point (B): x horizontal, z up
        s = np.linspace(0.0, 40.0, 51)
        x, z, tension, _, _ = elastic_catenary(30.0, 10.0, 40.0, w, FATHOM["axial_stiffness"], s)
        # node k of MoorDyn counts from the anchor (the surface point): s = 40 - s_k from the end
        px = 30.0 - nodes[::-1, 0]
        pz = end[2] - nodes[::-1, 2]  # height above the end
        err = np.hypot(px - x, pz - z).max()
        assert err < 0.005 * 30.0, err
        assert np.linalg.norm(line.force) == pytest.approx(tension[0], rel=0.01)
        # MoorDyn's tension of a segment is the one at its middle: the reel's is at s = L - L/100
        top = elastic_catenary(30.0, 10.0, 40.0, w, FATHOM["axial_stiffness"], np.array([39.6]))[2][0]
        assert line.anchor_tension() == pytest.approx(top, rel=0.01)
        assert abs(nodes[:, 1]).max() < 1e-9
    finally:
        line.close()


def test_a_current_bows_a_neutral_tether_as_the_closed_form_says():
    """A neutrally buoyant Fathom tether (its mass made ρ π d²/4) between a point 40 m down and
    one 10 m down right above it, in a 0.5 m/s current, with normal drag only (C_dt = 0): its
    tension is uniform and its shape the catenary of parameter T/R lying on its side (the
    closed form of ``tether.catenary.current_cable``): nodes within 1 % of the 30 m span and
    tension within 2 % (a current profile is built over 50 segments; the drag is lumped at the
    nodes with the mean of their segments' directions)."""
    rho, u = 1025.0, 0.5
    d = FATHOM["diameter"]
    props = dict(FATHOM, mass_per_length=rho * math.pi * d * d / 4.0, tangential_drag=0.0)
    bottom, top = np.array([0.0, 0.0, 40.0]), np.array([0.0, 0.0, 10.0])
    spec = TetherSpec("t", "l", [0, 0, 0], bottom, 35.0, 50, props, max_length=100.0)
    line = MoorDynLine(spec, top, rho, G, 1e4)
    try:
        points = line.water_points()
        line.set_water(np.tile([u, 0.0, 0.0], (len(points), 1)), np.zeros((len(points), 3)), 0.0)
        _settle(line, top, 120.0)
        nodes = line.nodes()
        R = 0.5 * rho * props["normal_drag"] * d * u * u
        s = np.linspace(0.0, 35.0, 51)
        x, z, T = current_cable(0.0, 30.0, 35.0, R, FATHOM["axial_stiffness"], s)
        err = np.hypot(nodes[:, 0] - x, (bottom[2] - nodes[:, 2]) - z).max()
        assert err < 0.01 * 30.0, err
        assert x.max() > 3.0  # a real bow, downstream
        tensions = line.tensions()
        assert np.allclose(tensions, T, rtol=0.02), (tensions.min(), tensions.max(), T)
    finally:
        line.close()


def _tethered(tmp_path, extra_env: str = "", length: float = 50.0, pose=(30.0, 0.0, 20.0), reel="") -> Path:
    data = yaml.safe_load((CONFIG / "bluerov2_tethered.yaml").read_text())
    data["environment"] = yaml.safe_load(f"{{water_density: 1025.0, current: [0.5, 0.0, 0.0]{extra_env}}}")
    data["vehicles"][0]["include"] = str(CONFIG / "bluerov2.yaml")
    data["vehicles"][0]["initial_pose"]["position"] = list(pose)
    data["tethers"][0]["length"] = length
    if reel:
        data["tethers"][0]["reel"] = yaml.safe_load(reel)
    path = tmp_path / "tethered.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_tether_holds_a_drifting_vehicle_and_the_vehicle_drags_its_tether(tmp_path):
    """A BlueROV2 without thrust in a 0.5 m/s current on 20 m of tether from the origin, 18 m
    from it: an untethered one drifts with the water, the tethered one is held (its downstream
    speed under 0.1 m/s after 30 s, rising on its positive buoyancy along the arc the tether
    allows: its attachment within the stretched length 20 (1 + T/EA)) by a tether that pulls it
    upstream with more than the current's 6.6 N of drag on the vehicle (the tether's own drag
    adds to it), streaming downstream behind it; the wrench the dynamics took from the tether
    is the line's force, both ways of the coupling."""
    pose = (14.0, 0.0, 12.0)
    free = Simulator.from_system(load(_tethered(tmp_path, length=20.0, pose=pose)))
    free.attach_tethers(())
    sim = Simulator.from_system(load(_tethered(tmp_path, length=20.0, pose=pose)))
    tether = sim.tethers[0]
    for _ in range(30_000):
        sim.step(0.001)
    free.advance(0.001, 30_000)
    assert free.state.v[0] > 0.45 and free.state.q[0] > 15.0
    _, end, velocity = sim.link_point(0, tether.spec.position)
    assert abs(velocity[0]) < 0.1
    tension = np.linalg.norm(tether.force)
    assert np.linalg.norm(end - tether.spec.anchor) <= 20.0 * (1 + tension / FATHOM["axial_stiffness"]) + 1e-3
    assert -60.0 < tether.force[0] < -6.6
    R, _, _ = sim.link_point(0, np.zeros(3))
    loads = np.zeros(6)
    tether.wrench(R, loads)
    assert np.allclose(R @ loads[:3], tether.force, rtol=0, atol=1e-12)
    assert np.allclose(loads[3:], np.cross(tether.spec.position, loads[:3]), atol=1e-12)
    nodes = tether.line.nodes()
    assert nodes[-1, 0] > nodes[0, 0] + 10.0  # downstream of the reel


def test_the_reel_pays_out_and_hauls_in_at_its_speed(tmp_path):
    """``Tether.command``: a target length reached at the reel's speed, clamped to its range;
    hauling in at 2 m/s against the vehicle 36 m away stalls the reel once the tension at the
    reel passes ``max_tension``; bad commands are ValueErrors and change nothing."""
    reel = "{speed: 2.0, min_length: 5.0, max_length: 80.0, max_tension: 300.0}"
    sim = Simulator.from_system(load(_tethered(tmp_path, length=40.0, reel=reel)))
    tether = sim.tethers[0]
    assert tether.command(42.0) == (42.0, 2.0)
    sim.advance(0.001, 500)  # the reel moves at each coupling (5 ms)
    assert tether.length == pytest.approx(41.0, abs=1e-9)
    sim.advance(0.001, 1500)
    assert tether.length == pytest.approx(42.0)
    assert tether.command(1000.0, 0.2) == (80.0, 0.2)
    assert tether.command(0.0, 7.0) == (5.0, 2.0)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            tether.command(bad)
    with pytest.raises(ValueError):
        tether.command(10.0, -0.1)
    assert (tether.target, tether.speed) == (5.0, 2.0)
    for _ in range(1200):  # haul in at 2 m/s: the tether tightens towards 36 m and the reel stalls
        sim.advance(0.001, 5)
        if tether.stalled:
            break
    assert tether.stalled
    assert 30.0 < tether.length < 38.0  # before it is straight: the pull of hauling through the water
    assert tether.line.anchor_tension() > 0.9 * 300.0  # it stalled on the tension before this step


def test_moordyn_prints_nothing(tmp_path, capfd):
    """MoorDyn writes to the process's standard output while it starts and on every step; none
    of it gets there."""
    sim = Simulator.from_system(load(_tethered(tmp_path)))
    for _ in range(200):
        sim.step(0.001)
    sim.tethers[0].close()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_bad_tethers_are_one_line_errors(tmp_path):
    """A tether shorter than the distance to its vehicle, negative or zero lengths and
    properties, an unknown link or type: one ConfigError naming the key."""
    base = yaml.safe_load(_tethered(tmp_path).read_text())
    cases = [
        ({"length": 10.0}, "tethers[tether].length", "shorter than the 35.8"),
        ({"length": -5.0}, "tethers[tether].length", "> 0"),
        ({"segments": 0}, "tethers[tether].segments", ">= 1"),
        ({"diameter": 0.0}, "tethers[tether].diameter", "> 0"),
        ({"axial_stiffness": -1.0}, "tethers[tether].axial_stiffness", ">= 0"),
        ({"link": "nope"}, "tethers[tether].link", "no link"),
        ({"type": "kevlar"}, "tethers[tether].type", "fathom"),
        ({"reel": {"min_length": 60.0}}, "tethers[tether]", "outside the reel"),
        ({"anchor": [0, 0]}, "tethers[tether].anchor", "3 numbers"),
    ]
    for change, where, words in cases:
        data = yaml.safe_load(yaml.safe_dump(base))
        data["tethers"][0].update(change)
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(ConfigError) as info:
            load(path)
        message = str(info.value)
        assert "\n" not in message and where in message and words in message, message


def test_a_written_description_keeps_its_tether_and_waves(tmp_path):
    """``uvms-sim convert`` / ``save_yaml`` writes the tethers and the waves: read back, the
    same sea (components equal) and the same tether."""
    from uvms_sim.model.export import save_yaml

    system = load(CONFIG / "bluerov2_tethered.yaml")
    save_yaml(system, tmp_path / "out.yaml")
    again = load(tmp_path / "out.yaml")
    a, b = system.environment.waves, again.environment.waves
    assert np.array_equal(a.amplitude, b.amplitude) and np.array_equal(a.omega, b.omega)
    assert np.array_equal(a.phase, b.phase)
    t, u = system.tethers[0], again.tethers[0]
    assert (t.name, t.link, t.length, t.segments, t.properties) == (u.name, u.link, u.length, u.segments,
                                                                     u.properties)  # fmt: skip
    assert np.array_equal(t.anchor, u.anchor) and np.array_equal(t.position, u.position)
    assert (t.reel_speed, t.min_length, t.max_length, t.max_tension) == (
        u.reel_speed, u.min_length, u.max_length, u.max_tension)  # fmt: skip


def test_the_link_point_is_the_forward_kinematics():
    """``Simulator.link_point`` (the tether's end, from q and v alone for a vehicle's root)
    equals the reference forward kinematics at a random state."""
    from uvms_sim.dynamics.kinematics import forward_kinematics

    system = load(CONFIG / "bluerov2_tethered.yaml")
    sim = Simulator.from_system(system)
    rng = np.random.default_rng(7)
    q = system.initial_q.copy()
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    sim.reset(q, rng.normal(size=6))
    r = np.array([-0.2, 0.1, -0.1])
    R, x, xd = sim.link_point(0, r)
    data = system.model.create_data()
    forward_kinematics(system.model, data, sim.state.q, sim.state.v, sim.env)
    assert np.allclose(R, data.R_world[0], atol=1e-14)
    assert np.allclose(x, data.p_world[0] + data.R_world[0] @ r, atol=1e-13)
    assert np.allclose(xd, data.R_world[0] @ (data.v[0][:3] + np.cross(data.v[0][3:], r)), atol=1e-13)


def test_steps_between_couplings_run_in_one_call_with_the_same_result():
    """With a tether, ``advance`` runs the steps between two couplings (every 5 ms) in one
    compiled call: the same state, time and tether force as the steps one by one, bit for bit."""
    system = load(CONFIG / "bluerov2_tethered.yaml")
    a, b = Simulator.from_system(system), Simulator.from_system(system)
    a.advance(0.001, 53)
    for _ in range(53):
        b.step(0.001)
    assert np.array_equal(a.state.q, b.state.q) and np.array_equal(a.state.v, b.state.v)
    assert a.state.t == b.state.t and np.array_equal(a.tethers[0].force, b.tethers[0].force)
    assert np.linalg.norm(a.tethers[0].force) > 0.0


def _plain_coupling(system, seconds: float) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The tether's coupling written out plainly, as a reference for ``Simulator``'s: the vehicle
    without its tether, stepped 5 ms at a time with the line's last wrench (numpy: ``Rᵀ F`` and
    ``r × Rᵀ F``) in ``f_ext``; the line stepped by MoorDyn's own call at its stable internal step
    written out as calls of one step each (the period in equal steps within MoorDyn's stable
    step, the end moved on at the end's velocity from its point at the end of the period, as
    MoorDyn moves it within one call), then a call of 1e-12 of the period: its force, computed
    at the middle of that step, is the force at the end of the period; the water at the nodes
    one point at a time
    (``WaveField.kinematics``), every 50 ms at the middle of the coming period. Returns the
    state and the line's force (NED) after each coupling."""
    from uvms_sim.tether.line import FLIP

    sim = Simulator.from_system(system)
    sim.attach_tethers(())
    spec, env = system.tethers[0], sim.env
    _, x0, _ = sim.link_point(0, spec.position)
    line = MoorDynLine(spec, x0, env.density, env.gravity, 1.0e4)
    md, handle = line._md, line._system

    def water(tm: float) -> None:
        points = line.water_points()
        kin = [env.waves.kinematics(p[0], p[1], env.surface - p[2], tm) for p in points]
        u, a = env.fluid_state(tm)
        line.set_water(np.array([k[0] for k in kin]) + u, np.array([k[1] for k in kin]) + a, tm)

    water(0.025)
    next_water, force, forces = 0.05, np.zeros(3), []
    try:
        for _ in range(round(seconds / 0.005)):
            R, _, _ = sim.link_point(0, np.zeros(3))
            f = R.T @ force
            sim.f_ext[0] = np.concatenate((f, np.cross(spec.position, f)))
            t = sim.state.t
            sim.advance(0.001, 5)
            if t >= next_water - 5e-8:  # a time short of it by a millionth of the 50 ms has reached it
                water(t + 0.025)
                next_water = t + 0.05
            _, x, v = sim.link_point(0, spec.position)
            period = sim.state.t - t
            n = math.ceil(period / line.dt - 1e-9)
            for k in range(n):
                md.step(handle, list((x + v * (k * period / n)) * FLIP), list(v * FLIP), t, period / n)
            ends = md.step(handle, list((x + v * period) * FLIP), list(v * FLIP), t, 1e-12 * period)
            force = np.array(ends) * FLIP
            forces.append(force)
    finally:
        line.close()
    return sim.state.q, sim.state.v, forces


def test_the_coupling_is_the_plain_coupling_to_rounding():
    """``Simulator``'s coupling of the tether (its glue in floats, the water at the nodes as matrix
    products, MoorDyn's internal step set to divide the 5 ms period and end on a step of 5e-15 s)
    against the same coupling written out plainly (``_plain_coupling``), the shipped tethered
    BlueROV2 in its JONSWAP sea and 0.5 m/s current for 2 s, advanced in the node's groups of steps
    (its autopilot at 200 Hz and /clock at 250 Hz). The two differ only in rounding (one MoorDyn
    call against eleven, sums in another order), which the coupled line and vehicle grow to 1e-9 N
    over the 400 couplings (measured). The line's force after every coupling (0.02-4 N) agrees to
    1e-7 N, a hundred times that growth, and the vehicle's state to 1e-10; a change of the physics
    as small as returning the line's force at the middle of its last 0.5 ms step (0.25 ms before
    the coupling's instant) instead of at the instant differs by 0.04 N here, 4e5 times the
    tolerance."""
    system = load(CONFIG / "bluerov2_tethered.yaml")
    q_ref, v_ref, forces_ref = _plain_coupling(system, 2.0)
    sim = Simulator.from_system(system)
    forces = []
    for _ in range(100):
        for group in (4, 1, 3, 2, 2, 3, 1, 4):
            sim.advance(0.001, group)
            if sim._tether_due == 0.0:  # a coupling ended this group
                forces.append(sim.tethers[0].force.copy())
    assert len(forces) == len(forces_ref) == 400
    diff = np.abs(np.array(forces) - np.array(forces_ref)).max()
    assert diff < 1e-7, diff
    assert 0.05 < np.linalg.norm(forces_ref[-1]) < 10.0
    assert np.allclose(sim.state.q, q_ref, rtol=0, atol=1e-10) and np.allclose(
        sim.state.v, v_ref, rtol=0, atol=1e-10
    )


def test_moordyns_internal_step_divides_the_coupling_period():
    """MoorDyn's step for calls of dt: dt/n for the fewest n steps within the stable step (a
    relative 1e-12 under it: its last step, 1e-12 dt, computes the force at the end of the call),
    and it follows a new dt."""
    from uvms_sim.tether.line import time_step

    spec = TetherSpec("t", "l", [0, 0, 0], np.zeros(3), 37.0, 50, dict(FATHOM), max_length=100.0)
    line = MoorDynLine(spec, np.array([20.0, 0.0, 10.0]), 1025.0, G, 1e4)
    try:
        stable = time_step(spec, 37.0)
        for dt in (0.005, 0.002, 0.005, 0.0001):
            line.step(np.array([20.0, 0.0, 10.0]), np.zeros(3), 0.0, dt)
            n = math.ceil(dt / stable)
            assert line._md.get_dt(line._system) == pytest.approx(dt / n, rel=2e-12)
            assert line._md.get_dt(line._system) <= stable
    finally:
        line.close()
