"""Description files: shipped configs, YAML/URDF equivalence, export round trip, the papers'
numbers, and one clear error for each kind of broken file."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from uvms_sim.actuators.ardusub import FRAMES
from uvms_sim.cli import main as cli_main
from uvms_sim.dynamics import aba, crba
from uvms_sim.hydro import Environment
from uvms_sim.model import ConfigError, load
from uvms_sim.model.configs import resolve, shipped_configs
from uvms_sim.model.export import save_yaml
from uvms_sim.model.library import bluerov2, bluerov2_with_arm, walker
from uvms_sim.model.yaml_source import Cursor
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"
SHIPPED = sorted(p.stem for p in CONFIG.glob("*.yaml") if not p.name.endswith("_node.yaml"))


def random_state(model, rng):
    """A random configuration (unit quaternions) and velocity."""
    q = model.neutral()
    for i, j in enumerate(model.joints):
        s = model.q_slice(i)
        if j.type == "free":
            q[s][:3] = rng.normal(size=3)
            quat = rng.normal(size=4)
            q[s.start + 3 : s.stop] = quat / np.linalg.norm(quat)
        elif j.type == "spherical":
            quat = rng.normal(size=4)
            q[s] = quat / np.linalg.norm(quat)
        elif j.nq:
            q[s] = rng.uniform(-1.5, 1.5, size=j.nq)
    return q, rng.normal(size=model.nv)


def assert_same_dynamics(m1, m2, trials=3, rtol=1e-12):
    """ABA of two models agrees at random states, inputs and a current (relative to |q̈|)."""
    assert (m1.nq, m1.nv) == (m2.nq, m2.nv)
    rng = np.random.default_rng(7)
    env = Environment(current=[0.3, -0.2, 0.1])
    for _ in range(trials):
        q, v = random_state(m1, rng)
        tau = rng.normal(size=m1.nv)
        a1 = aba(m1, m1.create_data(), q, v, tau, env)
        a2 = aba(m2, m2.create_data(), q, v, tau, env)
        np.testing.assert_allclose(a1, a2, rtol=0, atol=rtol * np.abs(a1).max())


# -- shipped configs ------------------------------------------------------------------------
def test_every_config_is_shipped_and_found_by_name():
    assert set(SHIPPED) >= {
        "bluerov2",
        "bluerov2_heavy",
        "bluerov1",
        "bluerov1_pair",
        "heavy_four_arms",
        "bluerov2_light_arm",
        "walker",
    }
    assert set(shipped_configs()) == set(SHIPPED)
    assert resolve("bluerov2").resolve() == (CONFIG / "bluerov2.yaml").resolve()
    # load takes the shipped names as the command line, the node and the gym do
    by_name, by_path = load("bluerov2"), load(CONFIG / "bluerov2.yaml")
    assert by_name.model.nv == by_path.model.nv and by_name.vehicles[0].name == by_path.vehicles[0].name
    with pytest.raises(ConfigError, match="shipped"):
        load("no_such_vehicle")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_config_simulates_10s_and_drifts_with_its_net_buoyancy(name):
    """10 s from rest with no input (2 s of 2 ms steps for a scene with contacts): finite, and
    the vehicle rises if buoyancy exceeds weight and sinks otherwise (the net vertical force
    from rest has that sign, damping only slows it)."""
    system = load(CONFIG / f"{name}.yaml")
    text = (CONFIG / f"{name}.yaml").read_text()
    assert text.lstrip().startswith("#"), "every shipped config starts with its sources"
    m = system.model
    sim = Simulator.from_system(system)
    dt, seconds = (0.02 if m.nbodies < 20 else 0.05), 10.0
    if sim.touch is not None:  # a contact scene: steps its stiffest contact allows (contacts.md), 2 s
        dt, seconds = 0.002, 2.0
    for _ in range(round(seconds / dt)):
        sim.step(dt)
    assert np.all(np.isfinite(sim.state.q)) and np.all(np.isfinite(sim.state.v))
    g, rho = system.environment.gravity, system.environment.density
    net_down = float(m.mass.sum() - rho * m.volume.sum()) * g
    root = m.q_slice(0)
    dz = sim.state.q[root.start + 2] - system.initial_q[root.start + 2]
    assert np.sign(dz) == np.sign(net_down), (name, net_down, dz)


def test_configs_match_the_library_models():
    """The YAML files and the code models of uvms_sim.model.library are the same systems (Wu's
    2018 BlueROV2: the light arm's vehicle, and test/data's standalone description)."""
    assert_same_dynamics(load(Path(__file__).parent / "data" / "bluerov2_wu2018.yaml").model, bluerov2())
    assert_same_dynamics(load(CONFIG / "bluerov2_light_arm.yaml").model, bluerov2_with_arm())
    assert_same_dynamics(load(CONFIG / "walker.yaml").model, walker(), trials=2)


def test_walker_has_mcmillan1996_size():
    m = load(CONFIG / "walker.yaml").model
    assert (m.nbodies, m.nv) == (28, 45)


def test_urdf_xacro_and_yaml_describe_the_same_arm():
    """The xacro (REP-103 FLU axes, Gazebo hydrodynamics tags) and the YAML (FRD) light arm."""
    urdf = load(CONFIG / "urdf" / "bluerov2_light_arm.urdf.xacro")
    yml = load(CONFIG / "bluerov2_light_arm.yaml")
    assert urdf.model.bodies[0].name == "base_link_frd" and urdf.model.bodies[1].name == "base_link"
    assert urdf.model.joint_names[1:] == yml.model.joint_names[1:]
    assert_same_dynamics(urdf.model, yml.model)
    lim = [j.effort_limit for j in urdf.model.joints if j.type == "revolute"]
    assert lim == [10.0] * 4
    argued = load(CONFIG / "urdf" / "bluerov2_light_arm.urdf.xacro", xacro_args={"arm_effort": "2.5"})
    assert [j.effort_limit for j in argued.model.joints if j.type == "revolute"] == [2.5] * 4


def test_urdf_with_yaml_overlay(tmp_path):
    """A plain URDF (no hydrodynamics) plus an overlay equals the same robot written in YAML."""
    (tmp_path / "rov.urdf").write_text(
        """<robot name="rov">
          <link name="base_link"><inertial><origin xyz="0 0 -0.02"/><mass value="11.5"/>
            <inertia ixx="0.16" iyy="0.16" izz="0.16" ixy="0" ixz="0" iyz="0"/></inertial></link>
        </robot>"""
    )
    (tmp_path / "overlay.yaml").write_text(
        """hydrodynamics:
  base_link:
    volume: 0.011702344
    added_mass: {X_udot: -5.5, Y_vdot: -12.7, Z_wdot: -14.57, K_pdot: -0.12, M_qdot: -0.12, N_rdot: -0.12}
    linear_damping: {X_u: -4.03, Y_v: -6.22, Z_w: -5.18, K_p: -0.07, M_q: -0.07, N_r: -0.07}
    quadratic_damping: {X_uu: -18.18, Y_vv: -21.66, Z_ww: -36.99, K_pp: -1.55, M_qq: -1.55, N_rr: -1.55}
thrusters:
  - {name: t1, link: base_link, position: [0, 0, 0], direction: [1, 0, 0]}
"""
    )
    system = load(tmp_path / "rov.urdf", overlay=tmp_path / "overlay.yaml")
    assert system.name == "rov" and len(system.thrusters) == 1
    assert_same_dynamics(system.model, bluerov2())


@pytest.mark.parametrize("name", SHIPPED)
def test_yaml_export_round_trip(name, tmp_path):
    """save_yaml then load gives the same model, initial state, thrusters, sensors and seafloor
    (visuals: test_views.py)."""
    system = load(CONFIG / f"{name}.yaml")
    save_yaml(system, tmp_path / "out.yaml")
    again = load(tmp_path / "out.yaml")
    m1, m2 = system.model, again.model
    for attr in ("I_H", "D_lin", "d_quad", "volume", "cob", "parents"):
        np.testing.assert_array_equal(getattr(m1, attr), getattr(m2, attr))
    np.testing.assert_allclose(again.initial_q, system.initial_q, rtol=0, atol=1e-15)
    assert [(t.name, t.body, t.motor) for t in again.thrusters] == [
        (t.name, t.body, t.motor) for t in system.thrusters
    ]
    for t1, t2 in zip(system.thrusters, again.thrusters, strict=True):
        np.testing.assert_allclose(t1.unit_wrench, t2.unit_wrench, rtol=0, atol=1e-15)
    assert again.environment.seafloor == system.environment.seafloor
    for v1, v2 in zip(system.vehicles, again.vehicles, strict=True):
        assert [(s.type, s.name, s.link, s.params, s.noise) for s in v1.sensors] == [
            (s.type, s.name, s.link, s.params, s.noise) for s in v2.sensors
        ]
        for s1, s2 in zip(v1.sensors, v2.sensors, strict=True):
            np.testing.assert_allclose(
                np.r_[s1.position, s1.rpy], np.r_[s2.position, s2.rpy], rtol=0, atol=1e-15
            )


def test_cli_check_and_convert(tmp_path, capsys):
    assert cli_main(["check", "bluerov1_pair"]) == 0
    out = capsys.readouterr().out
    assert "vehicle connector" in out and "buoyancy" in out
    target = tmp_path / "arm.yaml"
    assert cli_main(["convert", str(CONFIG / "urdf" / "bluerov2_light_arm.urdf.xacro"), str(target)]) == 0
    assert_same_dynamics(load(target).model, load(CONFIG / "bluerov2_light_arm.yaml").model)
    assert cli_main(["check", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err


# -- the papers' numbers ---------------------------------------------------------------------
def test_heavy_thrust_configuration_matches_leon_gonzalez2024_eq38():
    """|T(α)| of León-González et al. 2024 eq. (38) (in mm for the moment rows; signs are lost
    in the text)."""
    B = load(CONFIG / "heavy_four_arms.yaml").allocation_matrix()
    expected = np.array(
        [
            [0.7071] * 4 + [0] * 4,
            [0.7071] * 4 + [0] * 4,
            [0] * 4 + [1] * 4,
            [60] * 4 + [218] * 4,
            [60] * 4 + [120] * 4,
            [188.8] * 4 + [0] * 4,
        ]
    )
    got = np.abs(B)
    got[3:] *= 1000.0
    np.testing.assert_allclose(got, expected, atol=0.15)  # eq. 38 rounds to 0.1 mm
    np.testing.assert_allclose(load(CONFIG / "bluerov2_heavy.yaml").allocation_matrix(), B, atol=1e-12)


# ArduSub AP_Motors6DOF factor tables: motor -> (roll, pitch, yaw, throttle, forward, lateral).
VECTORED = {
    1: (0, 0, 1, 0, -1, 1),
    2: (0, 0, -1, 0, -1, -1),
    3: (0, 0, -1, 0, 1, 1),
    4: (0, 0, 1, 0, 1, -1),
    5: (1, 0, 0, -1, 0, 0),
    6: (-1, 0, 0, -1, 0, 0),
}
VECTORED_6DOF = {
    **{k: v for k, v in VECTORED.items() if k <= 4},
    5: (1, -1, 0, -1, 0, 0),
    6: (-1, -1, 0, -1, 0, 0),
    7: (1, 1, 0, -1, 0, 0),
    8: (-1, 1, 0, -1, 0, 0),
}


@pytest.mark.parametrize(
    ("name", "table"),
    [("bluerov2", VECTORED), ("bluerov2_heavy", VECTORED_6DOF), ("bluerov1", FRAMES["bluerov1"])],
)
def test_motor_n_is_the_ardusub_thruster(name, table):
    """A positive command on motor n pushes the way ArduSub's factor table says: the signs of
    its forward/lateral force, its up force (throttle) and its roll/pitch/yaw moments."""
    system = load(CONFIG / f"{name}.yaml")
    B = system.allocation_matrix()
    for j, t in enumerate(system.thrusters):
        roll, pitch, yaw, throttle, forward, lateral = np.sign(table[t.motor])
        X, Y, Z, K, M, N = B[:, j]
        assert np.sign(round(X, 9)) == forward and np.sign(round(Y, 9)) == lateral, t.name
        assert np.sign(round(N, 9)) == yaw, t.name
        if roll:
            assert np.sign(K) == roll, t.name
        if pitch:
            assert np.sign(M) == pitch, t.name
        if throttle:  # ArduSub's throttle is up; a factor -1 means the motor pushes down (+z)
            assert np.sign(Z) == -throttle, t.name
    assert sorted(t.motor for t in system.thrusters) == sorted(table)


def test_nielsen2018_connection_piece_and_pair():
    pair = load(CONFIG / "bluerov1_pair.yaml")
    m = pair.model
    conn = m.bodies[m.body_index("connector/base_link")].hydro
    np.testing.assert_allclose(np.diag(conn.added_mass)[:3], [1.52, 0.52, 1.50])
    np.testing.assert_allclose(conn.quadratic_damping, [21.24, 11.19, 17.27, 0.152, 0.108, 0.065])
    rov = m.bodies[m.body_index("port/base_link")].hydro
    np.testing.assert_allclose(np.diag(rov.added_mass), [2.6, 18.5, 13.3, 0.054, 0.0173, 0.28])
    np.testing.assert_allclose(rov.quadratic_damping, [34.96, 103.25, 74.23, 0.084, 0.028, 0.43])
    assert m.nv == 6 and len(pair.vehicles) == 3 and len(pair.thrusters) == 12
    # the starboard vehicle sits 0.70 m to starboard of the port one
    from uvms_sim.model.kinematics import placements

    data = m.create_data()
    placements(m, data, pair.initial_q)
    d = data.p_world[m.body_index("starboard/base_link")] - data.p_world[m.body_index("port/base_link")]
    np.testing.assert_allclose(d, [0.0, 0.7, 0.0], atol=1e-12)


def test_leon_gonzalez2024_arm_geometry():
    """Joint 2 is perpendicular to joint 1 at the same origin; link 2 is 0.12 m long."""
    system = load(CONFIG / "heavy_four_arms.yaml")
    m = system.model
    from uvms_sim.model.kinematics import placements

    data = m.create_data()
    q = m.neutral()
    placements(m, data, q)
    for k in range(1, 5):
        i1, i2, i3 = (m.body_index(f"arm{k}_link{j}") for j in (1, 2, 3))
        z1 = data.R_world[i1][:, 2]
        z2 = data.R_world[i2][:, 2]
        assert abs(z1 @ z2) < 1e-12
        np.testing.assert_allclose(data.p_world[i1], data.p_world[i2], atol=1e-12)
        assert np.linalg.norm(data.p_world[i3] - data.p_world[i2]) == pytest.approx(0.12)
        assert m.bodies[i3].mass == 0.217
    M = crba(m, m.create_data(), q)
    assert np.linalg.eigvalsh(M).min() > 0


# -- validation errors -----------------------------------------------------------------------
GOOD = """\
name: test_rov
environment: {gravity: 9.81, water_density: 1000.0}
vehicles:
  - name: rov
    links:
      - name: base_link
        mass: 11.5
        center_of_mass: [0.0, 0.0, 0.02]
        inertia: {ixx: 0.16, iyy: 0.16, izz: 0.16}
        hydrodynamics:
          volume: 0.0117
          added_mass: {X_udot: -5.5, Y_vdot: -12.7, Z_wdot: -14.57, K_pdot: -0.12, M_qdot: -0.1, N_rdot: -0.1}
          quadratic_damping: {X_uu: -18.18}
      - name: arm_link
        mass: 0.3
        inertia: [0.001, 0.001, 0.001]
    joints:
      - {name: arm_joint, type: revolute, parent: base_link, child: arm_link, axis: [0, 0, 1]}
"""


def broken(tmp_path, old, new):
    assert old in GOOD
    path = tmp_path / "rov.yaml"
    path.write_text(GOOD.replace(old, new, 1))
    return path


def test_good_file_loads(tmp_path):
    system = load(broken(tmp_path, "name: test_rov", "name: test_rov"))
    assert system.model.nv == 7


@pytest.mark.parametrize(
    ("old", "new", "line", "path", "expected"),
    [
        (
            "        center_of_mass: [0.0, 0.0, 0.02]",
            "        centre_of_mass: [0.0, 0.0, 0.02]",
            8,
            "vehicles[rov].links[base_link].centre_of_mass",
            "unknown key (did you mean 'center_of_mass'?)",
        ),
        (
            "[0.0, 0.0, 0.02]",
            "[0.0, 0.02]",
            8,
            "vehicles[rov].links[base_link].center_of_mass",
            "expected a list of 3 numbers, got a list of 2",
        ),
        (
            "inertia: {ixx: 0.16, iyy: 0.16, izz: 0.16}",
            "inertia: {ixx: 0.16, iyy: -0.16, izz: 0.16}",
            9,
            "vehicles[rov].links[base_link].inertia",
            "the inertia must be positive (semi-)definite",
        ),
        (
            "inertia: {ixx: 0.16, iyy: 0.16, izz: 0.16}",
            "inertia: {ixx: 0.01, iyy: 0.01, izz: 0.16}",
            9,
            "vehicles[rov].links[base_link].inertia",
            "violate the triangle inequality",
        ),
        (
            "added_mass: {X_udot: -5.5,",
            "added_mass: {X_qdot: 3.0, M_udot: 3.0, X_udot: -5.5,",
            12,
            "vehicles[rov].links[base_link].hydrodynamics.added_mass",
            "the added mass must be positive (semi-)definite",
        ),
        (
            "X_udot: -5.5",
            "X_udot: 5.5",
            12,
            "vehicles[rov].links[base_link].hydrodynamics.added_mass.X_udot",
            "Fossen's sign convention",
        ),
        (
            "mass: 11.5",
            "mass: -11.5",
            7,
            "vehicles[rov].links[base_link].mass",
            "expected a number >= 0, got -11.5",
        ),
        (
            "parent: base_link, child",
            "parent: base_lnk, child",
            18,
            "vehicles[rov].joints[arm_joint].parent",
            "no link named 'base_lnk'",
        ),
        (
            "  - name: rov\n",
            "  - name: rov\n    frame: fru\n",
            5,
            "vehicles[rov].frame",
            "expected 'frd' (x forward, y right, z down) or 'flu' (REP-103), got 'fru'",
        ),
        (
            "  - name: rov\n",
            "  - name: rov\n    base: [fixed]\n",
            5,
            "vehicles[rov].base",
            "expected 'free' (a floating vehicle) or 'fixed' (bolted to the world), got ['fixed']",
        ),
        (
            "type: revolute",
            "type: hinge",
            18,
            "vehicles[rov].joints[arm_joint].type",
            "expected one of",
        ),
        (
            "{X_uu: -18.18}",
            "{X_vv: -18.18}",
            13,
            "vehicles[rov].links[base_link].hydrodynamics.quadratic_damping.X_vv",
            "not a diagonal SNAME quadratic damping coefficient",
        ),
        (
            "        mass: 0.3\n",
            "        mass: 0.3\n        mass: 0.4\n",
            16,
            "mass",
            "duplicate key (first on line 15)",
        ),
        (
            "environment: {gravity: 9.81, water_density: 1000.0}",
            "environment: {gravity: 9.81, water_density: 0}",
            2,
            "environment.water_density",
            "expected a number > 0",
        ),
        (
            "        inertia: [0.001, 0.001, 0.001]\n",
            "",
            14,
            "vehicles[rov].links[arm_link]",
            "a link with mass needs an inertia",
        ),
    ],
)
def test_broken_file_gives_one_clear_error(tmp_path, old, new, line, path, expected):
    bad = broken(tmp_path, old, new)
    with pytest.raises(ConfigError) as info:
        load(bad)
    msg = str(info.value)
    assert msg.startswith(f"{bad}:{line}: {path}: "), msg
    assert expected in msg, msg


@pytest.mark.parametrize("value", ["xy", "", ["x"], {"x": 1}, None, 1])
def test_a_choice_is_one_whole_option(value):
    """``Cursor.choice`` takes an option only as a whole text: not a substring, not a list or
    mapping that holds it, not a missing value."""
    assert Cursor("y", "f.yaml", "axis").choice(("x", "y", "z")) == "y"
    with pytest.raises(ConfigError, match=r"^f\.yaml: axis: expected one of \['x', 'y', 'z'\], got "):
        Cursor(value, "f.yaml", "axis").choice(("x", "y", "z"))
    with pytest.raises(ConfigError, match=r"expected 'rigid', got "):
        Cursor(value, "f.yaml", "type").choice({"rigid": ""})


def test_yaml_syntax_error_names_the_line(tmp_path):
    bad = broken(tmp_path, "mass: 11.5", "mass: [11.5")
    with pytest.raises(ConfigError, match=r"rov\.yaml:\d+: <top>: not valid YAML"):
        load(bad)


def test_massless_joint_is_a_singular_mass_matrix(tmp_path):
    bad = broken(
        tmp_path, "        mass: 0.3\n        inertia: [0.001, 0.001, 0.001]\n", "        mass: 0.0\n"
    )
    with pytest.raises(ConfigError, match="mass matrix is singular"):
        load(bad)


def test_include_and_urdf_errors(tmp_path):
    inc = tmp_path / "sys.yaml"
    inc.write_text("vehicles:\n  - name: a\n    include: nowhere.urdf\n")
    with pytest.raises(ConfigError, match=r"sys\.yaml:3: vehicles\[a\]\.include: no such file"):
        load(inc)
    urdf = tmp_path / "r.urdf"
    urdf.write_text(
        '<robot name="r"><link name="a"><inertial><mass value="heavy"/></inertial></link></robot>'
    )
    with pytest.raises(
        ConfigError, match=re.escape("link[a].inertial.mass: expected 1 numbers, got 'heavy'")
    ):
        load(urdf)
    urdf.write_text(
        '<robot name="r"><link name="a"/><gazebo><plugin name="gz::sim::systems::Hydrodynamics">'
        "<link_name>a</link_name><xUabsV>-1</xUabsV></plugin></gazebo></robot>"
    )
    with pytest.raises(ConfigError, match="only diagonal quadratic damping"):
        load(urdf)
    with pytest.raises(ConfigError, match="unknown description type"):
        load(tmp_path / "r.sdf")


def test_a_urdf_with_bytes_of_another_encoding(tmp_path, capsys):
    """A URDF with a byte 0xff (not UTF-8) is one line naming the file, line and column from
    ``uvms-sim check`` (exit 2); the same byte in a file that declares Latin-1 is read as the
    XML declaration says; a YAML file with a NUL character is one line too."""
    bad = tmp_path / "bad.urdf"
    bad.write_bytes(b'<?xml version="1.0"?>\n<robot name="r">\xff<link name="a"/></robot>\n')
    assert cli_main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.urdf" in err and "not valid XML" in err and "line 2" in err
    latin = tmp_path / "latin.urdf"
    latin.write_bytes(b'<?xml version="1.0" encoding="ISO-8859-1"?>\n<robot name="r\xff"><link name="a">'
                      b'<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
                      b"</inertial></link></robot>")  # fmt: skip
    assert load(latin).name == "r\u00ff"
    nul = tmp_path / "nul.yaml"  # a character YAML does not allow: refused where the parser starts
    nul.write_bytes(b"vehicles: []\x00\n")
    assert cli_main(["check", str(nul)]) == 2
    assert "nul.yaml: <top>: not valid YAML: special characters are not allowed" in capsys.readouterr().err


def test_connection_errors(tmp_path):
    text = """vehicles:
  - name: a
    links: [{name: a_link, mass: 1.0, inertia: [0.1, 0.1, 0.1]}]
  - name: b
    links: [{name: b_link, mass: 1.0, inertia: [0.1, 0.1, 0.1]}]
connections:
  - {type: rigid, parent: a_link, child: b_link}
  - {type: rigid, parent: b_link, child: a_link}
"""
    p = tmp_path / "loop.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError, match="rigid connections form a loop"):
        load(p)
    p.write_text(
        text.replace("  - {type: rigid, parent: b_link, child: a_link}\n", "").replace("rigid", "glued")
    )
    with pytest.raises(ConfigError, match=r"connections\[0\]\.type: expected 'rigid'"):
        load(p)


def test_likely_unit_slips_are_warned_about(tmp_path, caplog):
    """A volume in litres, angles in degrees, a density that is no water's, a URDF vehicle with
    no volume and a Gazebo thruster plugin: each loads (it could be meant) with a warning that
    says what is likely wrong; the shipped descriptions load without any."""
    import logging

    p = tmp_path / "slips.yaml"
    p.write_text(
        """environment: {water_density: 1.0}
vehicles:
  - name: rov
    initial_pose: {position: [0, 0, 2], rpy: [0, 0, 90]}
    links:
      - {name: base_link, mass: 10, inertia: [0.1, 0.1, 0.1], hydrodynamics: {volume: 11.7}}
  - name: litres
    initial_pose: {position: [3, 0, 2]}
    links:
      - {name: body, mass: 10, inertia: [0.1, 0.1, 0.1], hydrodynamics: {volume: 11.7}}
"""
    )
    with caplog.at_level(logging.WARNING, logger="uvms_sim"):
        load(p)
    said = " | ".join(r.getMessage() for r in caplog.records)
    assert "radians are expected (degrees?)" in said and "is no water's" in said
    u = tmp_path / "bare.urdf"
    u.write_text(
        '<robot name="r"><link name="base_link"><inertial><mass value="1"/><inertia ixx="1" iyy="1" '
        'izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><gazebo><plugin '
        'filename="gz-sim-thruster-system" name="gz::sim::systems::Thruster"/></gazebo></robot>'
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="uvms_sim"):
        load(u)
    said = " | ".join(r.getMessage() for r in caplog.records)
    assert "has no volume" in said and "Thruster' ignored" in said
    p.write_text(p.read_text().replace("water_density: 1.0", "water_density: 1000.0"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="uvms_sim"):
        load(p)
    assert "a volume in litres?" in " | ".join(r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="uvms_sim"):
        for path in sorted(CONFIG.glob("*.yaml")):
            if not path.name.endswith("_node.yaml"):  # those are node parameter files
                load(path)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
