"""The Reach Alpha 5's jaws (config/alpha5.yaml): two fingers on the push rod's linkage (mimic
joints held by a joint coupling, ``dynamics.constraints.JointCoupling``), driven by the jaws'
firmware servo, closing on a free object, holding it against gravity and a current, and
dropping it when opened (docs/arm.md, "The jaws")."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from uvms_sim.actuators.servo import JointServos, alpha5_specs, hold_loaded
from uvms_sim.dynamics.constraints import constrained_aba
from uvms_sim.dynamics.rnea import rnea
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator

DT = 0.001
RATIO = 51.0  # rad of each finger per m of push rod (Reach Robotics' standard_jaws mimic)
FINGERS = ("alpha_5_standard_jaws_rs1_130_joint", "alpha_5_standard_jaws_rs1_139_joint")
ROD_FORCE = 10.0  # N: the push rod's effort limit (reach_alpha_description)
# the object: a 30 mm x 100 mm cylinder, 0.15 kg (71 g of water displaced: 0.78 N heavy in water),
# held at the tool point with its axis across the fingers' plane
RADIUS, LENGTH, MASS = 0.015, 0.1, 0.15
# the fingers' inner faces touch it at 0.3215 rad (push rod 6.3 mm): they start 0.5 mm of rod
# (1.2 mm at the object) open, so that it falls 5 mm at most before they close on it
OPEN = 0.0068
TOOL = 0.1897  # m from the wrist link's origin along the jaws: where the fingers hold it


def _index(model, joint: str) -> int:
    return [b.joint_name for b in model.bodies].index(joint)


def _scene(tmp_path: Path, current: list[float]) -> Simulator:
    """The fixed Alpha 5 of alpha5.yaml, jaws pointing down (its initial pose), just open
    (``OPEN``), over the cylinder lying across the fingers' plane on a pedestal (a fixed box of
    the scene) at the tool point, in a current; the servos hold the pose with the static load
    taken up (as the node starts)."""
    from uvms_sim.model.kinematics import placements

    desc = yaml.safe_load(Path(resolve("alpha5")).read_text())
    desc["vehicles"][0]["initial_positions"]["alpha_5_axis_a"] = OPEN
    path = tmp_path / "jaws.yaml"
    path.write_text(yaml.safe_dump(desc))
    system = load(path)
    model, data = system.model, system.model.create_data()
    placements(model, data, system.initial_q)
    wrist = model.body_index("alpha_5_m1_link")
    tool = data.p_world[wrist] + data.R_world[wrist] @ np.array([0.0, 0.0, -TOOL])
    along = data.R_world[wrist] @ np.array([1.0, 0.0, 0.0])  # the fingers' pivot axis
    yaw = math.atan2(along[1], along[0])
    top = float(tool[2]) + RADIUS  # the pedestal's top: under the cylinder
    desc["environment"]["current"] = current
    desc["scene"] = {
        "seabed": {"type": "plane", "depth": top + 0.3},
        "contact": {},
        "structures": [
            {  # narrower than the cylinder across the fingers (they straddle it), as long along it
                "name": "pedestal",
                "shape": "box",
                "size": [0.06, 0.016, 0.3],
                "xyz": [float(tool[0]), float(tool[1]), top + 0.15],
                "rpy": [0.0, 0.0, yaw],
            }
        ],
        "objects": [
            {
                "name": "cylinder",
                "shape": "cylinder",
                "size": [RADIUS, LENGTH],
                "mass": MASS,
                "xyz": [float(x) for x in tool],
                "rpy": [0.0, math.pi / 2, yaw],  # its axis along the pivot axis
            }
        ],
    }
    path.write_text(yaml.safe_dump(desc))
    system = load(path)
    sim = Simulator.from_system(system)
    model, q0 = sim.model, system.initial_q
    servos = JointServos(model, alpha5_specs(model), q=q0)
    hold_loaded(servos, model, sim.env, q0)
    sim.joint_motors = servos
    return sim


def _grip(sim: Simulator) -> list[tuple[float, float]]:
    """Per finger: the normal force of its contact points on the cylinder (N) and the bound the
    linkage sets on it, ``(τ_max + μ N |y|) / z`` (the finger's torque about its pivot from the
    points' normal forces, at distance z along it, is at most the linkage's τ_max = F / (2 x 51)
    plus the friction's moment at the face's offset y from the pivot)."""
    c, m = sim.contacts, sim.model
    obj = m.body_index("cylinder")
    mu = sim.touch.law.friction
    out = []
    for f in ("alpha_5_standard_jaws_rs1_130_link", "alpha_5_standard_jaws_rs1_139_link"):
        i = m.body_index(f)
        rows = [k for k in range(c.KI.shape[0]) if c.KI[k, 1] == 2 and {c.KI[k, 0], c.KI[k, 2]} == {i, obj}]
        normal = sum(float(c.KN[k]) for k in rows)
        moment = sum(float(c.KN[k]) * abs(c.KF[k, 2] if c.KI[k, 0] == i else 0.0) for k in rows)
        friction = sum(mu * float(c.KN[k]) * abs(c.KF[k, 1] if c.KI[k, 0] == i else 0.0) for k in rows)
        out.append((normal, moment - friction))
    return out


def _servos(sim: Simulator) -> JointServos:
    servos = sim.joint_motors
    assert isinstance(servos, JointServos)
    return servos


def _rod(sim: Simulator) -> float:
    return float(sim.state.q[sim.model.idx_q[_index(sim.model, "alpha_5_axis_a")]])


def _object(sim: Simulator) -> np.ndarray:
    i = sim.model.body_index("cylinder")
    return sim.state.q[sim.model.idx_q[i] : sim.model.idx_q[i] + 3].copy()


def _in_wrist(sim: Simulator) -> np.ndarray:
    """The object's centre in the wrist link's axes (what slips between the fingers)."""
    from uvms_sim.model.kinematics import placements

    placements(sim.model, sim.data, sim.state.q)
    w = sim.model.body_index("alpha_5_m1_link")
    return sim.data.R_world[w].T @ (_object(sim) - sim.data.p_world[w])


def test_the_fingers_follow_the_push_rod_and_carry_its_reaction() -> None:
    """The coupling is an ideal linkage: the constrained accelerations keep each finger at 51
    times the push rod's (no drift of the rows), and a torque on a finger is felt by the push
    rod as 51 times that torque as a force (virtual work): with the rod's joint force F and a
    finger torque τ that balance (F = 51 τ), the jaws do not accelerate."""
    system = load(resolve("alpha5"))
    model = system.model
    sim = Simulator.from_system(system)
    data = model.create_data()
    q, v = system.initial_q.copy(), np.zeros(model.nv)
    rod = model.idx_v[_index(model, "alpha_5_axis_a")]
    fingers = [model.idx_v[_index(model, f)] for f in FINGERS]
    q[model.idx_q[_index(model, "alpha_5_axis_a")]] = 0.005
    for f in FINGERS:
        q[model.idx_q[_index(model, f)]] = RATIO * 0.005
    tau = rnea(model, data, q, v, np.zeros(model.nv), sim.env)  # the static load, all joints held
    tau_free = tau.copy()
    tau_free[rod] += RATIO * (tau[fingers[0]] + tau[fingers[1]])  # the fingers' load on the rod
    tau_free[fingers] = 0.0  # the fingers driven through the linkage only
    qdd = constrained_aba(model, data, q, v, tau_free, sim.constraints, sim.env)
    assert np.abs(qdd).max() < 1e-9
    extra = tau_free.copy()
    extra[fingers[0]] += 0.05  # a torque opening one finger: the rod is pushed open
    qdd = constrained_aba(model, data, q, v, extra, sim.constraints, sim.env)
    assert qdd[rod] > 0.0
    for f in fingers:
        assert qdd[f] == pytest.approx(RATIO * qdd[rod], rel=1e-9, abs=1e-12)
    extra[rod] -= 0.05 * RATIO  # the rod's force that balances it
    assert np.abs(constrained_aba(model, data, q, v, extra, sim.constraints, sim.env)).max() < 1e-9


def test_the_servo_opens_and_closes_the_fingers(tmp_path) -> None:
    """Position commands to the push rod open and close both fingers together at the firmware's
    10 mm/s; closed on nothing, the fingers meet (the rod at its stop)."""
    system = load(resolve("alpha5"))
    sim = Simulator.from_system(system)
    model = sim.model
    servos = JointServos(model, alpha5_specs(model), q=system.initial_q)
    sim.joint_motors = servos
    assert "alpha_5_axis_a" in servos.names and not set(FINGERS) & set(servos.names)
    servos.command("position", {"alpha_5_axis_a": 0.012})
    sim.advance(DT, 2000)
    assert _rod(sim) == pytest.approx(0.012, abs=2e-4)
    for f in FINGERS:
        assert sim.state.q[model.idx_q[_index(model, f)]] == pytest.approx(RATIO * _rod(sim), abs=1e-6)
    servos.command("position", {"alpha_5_axis_a": 0.0})
    sim.advance(DT, 600)  # 0.6 s: 6 mm at the firmware's 10 mm/s
    assert _rod(sim) == pytest.approx(0.006, abs=1e-3)
    sim.advance(DT, 1500)
    assert _rod(sim) < 2e-4
    for f in FINGERS:
        assert sim.state.q[model.idx_q[_index(model, f)]] == pytest.approx(RATIO * _rod(sim), abs=1e-6)


def test_jaws_hold_a_cylinder_against_gravity_and_a_current_then_drop_it(tmp_path) -> None:
    """The Alpha 5 on its fixed base, jaws down, closes on a 0.15 kg cylinder (0.78 N heavy in
    water) resting on a pedestal, lifts it 2.9 cm and holds it in a 0.3 m/s current (across
    the fingers and along the cylinder, 45° between): it moves less than 1 mm relative to the
    wrist in 60 s (sticking: 0 measured), and the push rod's force
    never exceeds its 10 N limit (the grip force bound: each finger's torque is at most
    10 N / (2 x 51) = 0.098 N m). Opened, the jaws let it fall: it lies on the seabed, no
    finger touching it."""
    c = 0.3 / math.sqrt(2.0)
    sim = _scene(tmp_path, [c, c, 0.0])
    servos = _servos(sim)
    k = servos.names.index("alpha_5_axis_a")
    servos.command("position", {"alpha_5_axis_a": 0.0})  # close: the firmware stalls on the object
    peak = 0.0
    for _ in range(40):
        sim.advance(DT, 100)
        peak = max(peak, abs(servos.effort[k]))
    # lift it off the pedestal: shoulder and elbow together keep the jaws vertical (2.9 cm up)
    servos.command("position", {"alpha_5_axis_d": 1.3, "alpha_5_axis_c": 1.3})
    for _ in range(20):
        sim.advance(DT, 100)
        peak = max(peak, abs(servos.effort[k]))
    held = _in_wrist(sim)
    rod = _rod(sim)
    assert 0.003 < rod < 0.009  # stopped by the cylinder, not closed
    assert abs(held[2] + 0.19) < 0.02  # still between the fingers
    for _ in range(120):  # 60 s
        sim.advance(DT, 500)
        peak = max(peak, abs(servos.effort[k]))
    slip = float(np.linalg.norm(_in_wrist(sim) - held))
    assert slip < 1e-3, slip
    assert np.abs(sim.constraint_error()).max() < 1e-6  # the fingers on the linkage
    assert peak <= ROD_FORCE * (1.0 + 1e-9)
    tau_max = ROD_FORCE / (2.0 * RATIO)
    for normal, moment in _grip(sim):
        assert normal > 1.0  # it is the fingers that hold it
        assert moment <= tau_max * 1.02  # 2 %: the fingers' own weight and inertia
    servos.command("position", {"alpha_5_axis_a": 0.015})  # open
    for _ in range(30):
        sim.advance(DT, 100)
    assert np.linalg.norm(_in_wrist(sim) - held) > 0.02  # it fell out of the jaws
    for _ in range(50):  # 5 s more: it lies on the seabed, rolled along by the current
        sim.advance(DT, 100)
    assert all(normal == 0.0 for normal, _ in _grip(sim))  # no finger touches it
    # on the seabed (the pedestal's top is 0.3 m above it): its centre one radius above it,
    # within 3 mm: rolling in the current, its axis wobbles by about 1.5° (measured), which
    # lifts the centre by up to (L/2) sin 1.5° = 1.3 mm; the contact's sink is 0.04 mm
    # (0.78 N on 2e4 N/m)
    seabed = sim.touch.static[0][1]
    rest = -float(seabed.geometry.d) - RADIUS  # the half-space's depth (level seabed), less a radius
    assert abs(float(_object(sim)[2]) - rest) < 3e-3


@pytest.mark.parametrize(
    ("mimic", "message"),
    [
        ({"joint": "alpha_5_nothing", "multiplier": 51.0}, "no 1-DOF joint named 'alpha_5_nothing'"),
        ({"joint": "alpha_5_standard_jaws_rs1_139_joint"}, "mimics a joint itself"),
        ({"joint": "alpha_5_axis_a", "multiplier": 0.0}, "multiplier must be non-zero"),
        ({"joint": "alpha_5_axis_a", "multiplier": float("nan")}, "finite number"),
        ({"multiplier": 51.0}, "joint"),
    ],
)
def test_bad_mimics_are_one_line_errors(tmp_path, mimic, message) -> None:
    from uvms_sim.model.yaml_source import ConfigError

    desc = yaml.safe_load(Path(resolve("alpha5")).read_text())
    joint = next(j for j in desc["vehicles"][0]["joints"] if j["name"] == FINGERS[0])
    joint["mimic"] = mimic
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(desc))
    with pytest.raises(ConfigError, match=message) as err:
        load(path)
    assert "\n" not in str(err.value)
    assert "mimic" in str(err.value)
