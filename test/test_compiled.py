"""The compiled kernels (``dynamics.compiled`` via ``dynamics.fast``) against the reference
implementation, on every shipped model: forward dynamics, integration steps, whole simulations
with thrusters, joint motors and a time-varying current, batch mode, and bad states.

Tolerance: 1e-10 relative to the size of the compared quantity (both paths evaluate the same
formulas in double precision, in a different order; measured differences are 1e-14 to 1e-13).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from uvms_sim.actuators.joints import JointMotors
from uvms_sim.dynamics import NonFiniteStateError, aba, integrate, step_rk4
from uvms_sim.dynamics.fast import BatchDynamics, FastDynamics
from uvms_sim.hydro.current import SinusoidalCurrent
from uvms_sim.model import load
from uvms_sim.simulator import Simulator, fast_dynamics

CONFIG = Path(__file__).resolve().parents[1] / "config"

CONFIGS = [
    "bluerov2", "bluerov2_heavy", "bluerov2_light_arm", "bluerov1", "bluerov1_pair",
    "heavy_four_arms", "walker",
]  # fmt: skip
TOL = 1e-10


def close(a, b, tol=TOL):
    assert np.shape(a) == np.shape(b)
    if not np.size(b):
        return
    scale = max(1.0, float(np.abs(b).max()))
    assert np.abs(np.asarray(a) - np.asarray(b)).max() <= tol * scale, np.abs(
        np.asarray(a) - np.asarray(b)
    ).max()


def random_state(model, rng, spread=0.6):
    q = integrate(model, model.neutral(), spread * rng.normal(size=model.nv))
    return q, rng.normal(size=model.nv)


def with_current(system, profile):
    env = replace(system.environment, current_profile=profile) if profile else system.environment
    if not profile:
        env = replace(
            env, current=np.array([0.3, -0.2, 0.1]), current_acceleration=np.array([0.05, 0.0, -0.02])
        )
    return replace(system, environment=env)


@pytest.mark.parametrize("name", CONFIGS)
def test_forward_dynamics_equals_the_reference(name):
    """q̈ from the compiled ABA equals the reference ABA at random states with random
    generalized forces, body wrenches, thruster shaft speeds and a current."""
    rng = np.random.default_rng(1)
    system = with_current(load(CONFIG / f"{name}.yaml"), None)
    model = system.model
    bank = Simulator.from_system(system).thrusters
    fast = FastDynamics(model, system.environment, bank)
    data = model.create_data()
    for _ in range(5):
        q, v = random_state(model, rng)
        tau = 5.0 * rng.normal(size=model.nv)
        f_ext = rng.normal(size=(model.nbodies, 6))
        if bank is not None:
            bank.n[:] = 40.0 * rng.normal(size=len(bank))

        def wrench(d, f_ext=f_ext):
            return f_ext + (bank.wrenches(d) if bank is not None else 0.0)

        reference = aba(model, data, q, v, tau, system.environment, wrench)
        close(fast.aba(q, v, tau, f_ext), reference)
        if bank is not None:
            close(fast.thrust, bank.thrust)


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("method", ["rk4", "semi_implicit_euler"])
def test_simulations_equal_the_reference(name, method):
    """Two seconds (RK4 at 10 ms; 0.4 s of semi-implicit Euler at 2 ms) of a simulation with
    thrusters at changing PWM (with spin-up lag), joint efforts and a sinusoidal current: the
    compiled and the reference simulator stay equal to 1e-10 at every step. (Joint efforts,
    not position control: the default PID at 10 ms limit-cycles on the light arm's small
    links, which amplifies round-off by 1e4 in 2 s and would test the controller, not the
    dynamics.)"""
    rng = np.random.default_rng(2)
    profile = SinusoidalCurrent(mean=[0.1, 0.0, 0.0], amplitude=[0.2, 0.1, 0.05], period=3.0)
    system = with_current(load(CONFIG / f"{name}.yaml"), profile)
    sims = []
    for compiled in (True, False):
        sim = Simulator.from_system(system)
        sim.method = method
        sim.compiled = compiled
        if sim.thrusters is not None:
            sim.thrusters.kinds = [replace(k, time_constant=0.05) for k in sim.thrusters.kinds]
        if system.model.nv > 6:
            sim.joint_motors = JointMotors(system.model, q=system.initial_q)
            efforts = {n: 0.005 * np.sin(k + 1.0) for k, n in enumerate(sim.joint_motors.names)}
            sim.joint_motors.command("effort", efforts)
        sims.append(sim)
    assert sims[0].fast_dynamics() is not None and sims[1].fast_dynamics() is None
    for k in range(200):
        if k % 50 == 0 and sims[0].thrusters is not None:
            pwm = rng.uniform(1200, 1800, size=len(sims[0].thrusters))
            for sim in sims:
                sim.set_thruster_pwm(pwm)
        for sim in sims:
            sim.step(0.01 if method == "rk4" else 0.002)  # explicit Euler needs the shorter step
        assert np.abs(sims[1].state.v).max() < 500.0  # no blow-up (the light wrist spins up to 50 rad/s)
        close(sims[0].state.q, sims[1].state.q)
        close(sims[0].state.v, sims[1].state.v)
    if sims[0].thrusters is not None:
        close(sims[0].thrusters.thrust, sims[1].thrusters.thrust)


def test_a_density_change_rebuilds_the_tables():
    """Buoyancy and drag depend on the density folded into the tables: changing the
    environment's density (fresh -> sea water) gives the reference result."""
    system = load(CONFIG / "bluerov2_light_arm.yaml")
    fast = FastDynamics(system.model, system.environment)
    q, v = random_state(system.model, np.random.default_rng(3))
    before = fast.aba(q, v)
    system.environment.density = 1025.0
    data = system.model.create_data()
    after = fast.aba(q, v)
    close(after, aba(system.model, data, q, v, np.zeros(system.model.nv), system.environment))
    assert np.abs(after - before).max() > 1e-3


def test_batch_copies_equal_single_steps():
    """N copies with different states and inputs, stepped together (over the threads), equal
    each copy stepped alone; a copy driven to a non-finite state is flagged and keeps its last
    finite state, the others go on."""
    system = load(CONFIG / "bluerov2_heavy.yaml")
    fast = fast_dynamics(system)
    rng = np.random.default_rng(4)
    N = 7
    batch = BatchDynamics(fast, N, system.initial_q)
    for k in range(N):
        batch.q[k], batch.v[k] = random_state(system.model, rng, 0.3)
    batch.n[:] = 30.0 * rng.normal(size=batch.n.shape)
    batch.tau[:] = rng.normal(size=batch.tau.shape)
    batch.tau[5, 0] = 1e308  # overflows: that copy must stop, not poison the others
    start_q, start_v = batch.q.copy(), batch.v.copy()
    batch.step(0.01, steps=20)
    assert batch.ok.tolist() == [True] * 5 + [False, True]
    for k in (0, 3, 6):
        q, v = start_q[k], start_v[k]
        for _ in range(20):
            q, v = fast.step(q, v, 0.01, tau=batch.tau[k], n=batch.n[k])
        close(batch.q[k], q)
        close(batch.v[k], v)
    assert np.all(np.isfinite(batch.q)) and np.all(np.isfinite(batch.v))
    close(batch.q[5], start_q[5])


# the reference path overflows on purpose here
@pytest.mark.filterwarnings(
    "ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning"
)
def test_a_non_finite_state_raises_and_leaves_the_state():
    """A force that overflows the accelerations: the compiled step raises NonFiniteStateError
    naming the quantity (from the reference re-run) and the simulator keeps its state."""
    sim = Simulator.from_system(load(CONFIG / "bluerov2_light_arm.yaml"))
    sim.step(0.01)
    q, v, t = sim.state.q.copy(), sim.state.v.copy(), sim.state.t
    sim.set_generalized_forces(np.full(sim.model.nv, 1e308))
    with pytest.raises(NonFiniteStateError, match="non-finite"):
        sim.step(0.01)
    assert np.array_equal(sim.state.q, q) and np.array_equal(sim.state.v, v) and sim.state.t == t


@pytest.mark.parametrize("name", ["bluerov2_light_arm", "walker"])
def test_sensor_quantities_equal_the_reference(name):
    """What the node publishes comes from ``current_accelerations``: with the compiled path,
    q̈, body accelerations, placements, world poses and velocities equal the reference."""
    from uvms_sim.sensors import current_accelerations

    system = with_current(load(CONFIG / f"{name}.yaml"), None)
    sims = [Simulator.from_system(system) for _ in range(2)]
    sims[1].compiled = False
    rng = np.random.default_rng(5)
    q, v = random_state(system.model, rng)
    out = []
    for sim in sims:
        sim.reset(q, v)
        if sim.thrusters is not None:
            sim.set_thruster_pwm(np.full(len(sim.thrusters), 1650.0))
            sim.thrusters.advance(1.0)
        out.append(current_accelerations(sim))
    close(out[0][0], out[1][0])
    close(out[0][1], out[1][1])
    for field in ("E", "r", "X", "R_world", "p_world", "v", "v_rel", "c", "bias", "a"):
        close(getattr(sims[0].data, field), getattr(sims[1].data, field))
    if sims[0].thrusters is not None:
        close(sims[0].thrusters.thrust, sims[1].thrusters.thrust)


# includes a step that blows up on purpose
@pytest.mark.filterwarnings(
    "ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning"
)
def test_advance_equals_repeated_steps():
    """``Simulator.advance(dt, k)`` (one compiled call for k steps when the inputs are held)
    gives exactly the state of k calls of ``step(dt)``, and stops at a non-finite state with
    the error and the last finite state."""
    system = with_current(load(CONFIG / "bluerov2_heavy.yaml"), None)
    a, b = Simulator.from_system(system), Simulator.from_system(system)
    for sim in (a, b):
        sim.set_thruster_pwm(np.linspace(1300, 1700, 8))
    a.advance(0.001, 37)
    for _ in range(37):
        b.step(0.001)
    assert np.array_equal(a.state.q, b.state.q) and np.array_equal(a.state.v, b.state.v)
    assert a.state.t == pytest.approx(b.state.t, abs=1e-12)
    a.set_generalized_forces(np.full(6, 1e308))
    with pytest.raises(NonFiniteStateError):
        a.advance(0.001, 5)
    assert np.array_equal(a.state.q, b.state.q)


LOOP = """vehicles:
{vehicles}
connections:
  - {{type: rigid, method: constraint, parent: A, child: B, origin: {{xyz: [1.0, 0.0, 0.0]}}}}
  - {{type: rigid, method: constraint, parent: B, child: C, origin: {{xyz: [-0.5, 0.866025403784438, 0]}}}}
  - {{type: rigid, method: constraint, parent: C, child: A, origin: {{xyz: [-0.5, -0.866025403784438, 0]}}}}
"""


@pytest.mark.parametrize("case", ["pair", "loop"])
def test_rigid_connections_equal_the_reference(tmp_path, case):
    """The Udwadia-Kalaba correction compiled (CRBA, body Jacobians, quaternion pose error,
    Cholesky, pseudo-inverse): Nielsen et al.'s (2016) pair held by the constraint, driven off-centre in a
    current, and a redundant loop of three vehicles (18 rows of rank 12, so the
    pseudo-inverse matters) equal the reference over 1 s, started 1 mm / 1 mrad off so that
    the Baumgarte terms act."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from multibody_cases import case_a

    path = tmp_path / f"{case}.yaml"
    if case == "pair":
        path.write_text(case_a(2.0, damping=[5, 5, 5, 1, 1, 1], method="constraint"))
    else:
        vehicles = "\n".join(
            f"  - name: {n}\n    links: [{{name: {n}, mass: 20.0, inertia: [0.5, 0.6, 0.7], hydrodynamics: "
            "{volume: 0.02, added_mass: [10, 10, 10, 0.2, 0.2, 0.2], linear_damping: [10, 10, 10, 2, 2, 2]}}]"
            for n in "ABC"
        )
        path.write_text(LOOP.format(vehicles=vehicles))
    system = with_current(load(path), None)
    sims = [Simulator.from_system(system) for _ in range(2)]
    sims[1].compiled = False
    assert sims[0].constraints and sims[0].fast_dynamics() is not None
    q0 = sims[0].state.q.copy()
    q0[:3] += 1e-3
    q0 = integrate(system.model, q0, np.r_[np.zeros(3), 1e-3, -1e-3, 1e-3, np.zeros(system.model.nv - 6)])
    for sim in sims:
        sim.reset(q0)
        sim.set_body_wrench(0, [2.0, 0.0, 1.0, 0.5, 0.3, 0.2])
    close(sims[0].acceleration(), sims[1].acceleration())
    start = np.abs(sims[0].constraint_error()).max()
    for _ in range(50):
        for sim in sims:
            sim.step(0.02)
        close(sims[0].state.q, sims[1].state.q)
        close(sims[0].state.v, sims[1].state.v)
    assert np.abs(sims[0].constraint_error()).max() < 0.2 * start  # Baumgarte: (1 + 5t) e^-5t at 1 s


def test_joint_couplings_equal_the_reference():
    """The Alpha 5's fingers on its push rod (mimic joints), compiled (held by the ABA itself,
    ``flat.mimic_groups``), equal the reference (one joint-space row each and the
    Udwadia-Kalaba correction) over 1 s with the arm's joints driven, started 1 mrad off the
    couplings so that the Baumgarte terms act."""
    from uvms_sim.model.configs import resolve

    system = load(resolve("alpha5"))
    sims = [Simulator.from_system(system) for _ in range(2)]
    sims[1].compiled = False
    model = system.model
    assert len(sims[0].constraints) == 2 and sims[0].fast_dynamics() is not None
    q0 = system.initial_q.copy()
    rod = [b.joint_name for b in model.bodies].index("alpha_5_axis_a")
    q0[model.idx_q[rod]] = 0.007
    for c in sims[0].constraints:
        q0[model.idx_q[c.child]] = c.multiplier * 0.007 + 1e-3
    tau = np.zeros(model.nv)
    tau[: model.nv - 2] = [0.3, 0.5, 0.2, 0.01, 0.005]  # the rotate joints and the push rod
    for sim in sims:
        sim.reset(q0)
        sim.set_generalized_forces(tau)
    close(sims[0].acceleration(), sims[1].acceleration())
    start = np.abs(sims[0].constraint_error()).max()
    for _ in range(100):
        for sim in sims:
            sim.step(0.01)
        close(sims[0].state.q, sims[1].state.q)
        close(sims[0].state.v, sims[1].state.v)
    assert np.abs(sims[0].constraint_error()).max() < 0.1 * start


def test_the_aba_holds_a_grippers_couplings_as_the_correction_does():
    """``flat.mimic_groups``: the Alpha 5's fingers, siblings of their push rod, are held by the
    ABA itself, the three joints moving as one DOF with the couplings' Baumgarte terms
    (``aba._coupled_backward``). q̈ against the reference (the unconstrained ABA, then the
    Udwadia-Kalaba correction with M from the CRBA: an independent algorithm) and against the
    compiled correction without M (the same buffers with the marks cleared), at random states
    of the Alpha 5 alone, the Heavy with it and the grasp scene (ten free objects after the
    arm), off the couplings in position and velocity, with torques on every joint, the
    fingers' too: 1e-12 relative to the largest (``close``; measured 7e-16 and 4e-15: the
    algorithms round differently, and the reference solves with an M of condition number up
    to 1e5 here). The body accelerations the ABA leaves are then the constrained ones (the
    sensors read them). With a rigid connection among the rows, nothing is held and every row
    goes through the correction (1e-10, the connections' tolerance in this file)."""
    from uvms_sim.dynamics import flat
    from uvms_sim.dynamics.constraints import RigidConstraint, constrained_aba
    from uvms_sim.dynamics.kinematics import body_accelerations
    from uvms_sim.model.configs import resolve

    rng = np.random.default_rng(5)
    for name in ("alpha5", "bluerov2_heavy_alpha5", "bluerov2_heavy_alpha5_grasp"):
        system = load(resolve(name))
        model, env = system.model, system.environment
        constraints = Simulator.from_system(system).constraints
        fast = FastDynamics(model, env)
        fast.set_constraints(constraints)
        BI = fast.packed_tables[1]
        assert [BI[c.child, flat.MIMIC] for c in constraints] == [0, 1]
        assert [BI[c.parent, flat.LEADS] for c in constraints] == [1, 1] and BI[:, flat.LEADS].sum() == 1
        for _ in range(4):
            q, v = random_state(model, rng)
            tau = rng.normal(size=model.nv)
            want = constrained_aba(model, model.create_data(), q, v, tau, constraints, env)
            held = fast.aba(q, v, tau)
            data = model.create_data()
            fast.export(data)  # its body accelerations are the constrained ones: a_i = X a_λ + c + S q̈
            assert fast.exact_body_accelerations
            close(data.a, body_accelerations(model, data, held), 1e-12)
            BI[:, flat.MIMIC], BI[:, flat.LEADS] = -1, 0  # the correction's path, on the same buffers
            corrected = fast.aba(q, v, tau)
            assert flat.mimic_groups(BI, fast.CI)
            close(held, want, 1e-12)  # measured: 7e-16
            close(corrected, want, 1e-12)  # 4e-15
            follower, lead = model.idx_v[constraints[0].child], model.idx_v[constraints[0].parent]
            assert abs(held[follower] - 51.0 * held[lead]) > 1.0  # the Baumgarte terms act
        if name.endswith("grasp"):  # a connection among them: every row goes to the correction
            towed = [
                *constraints,
                RigidConstraint("tow", 0, model.body_index("can"), np.eye(3), np.r_[0.5, 0, 0.3]),
            ]
            fast.set_constraints(towed)
            assert not fast.exact_body_accelerations and (fast.packed_tables[1][:, flat.MIMIC] == -1).all()
            close(fast.aba(q, v, tau), constrained_aba(model, model.create_data(), q, v, tau, towed, env))


def test_contacts_equal_the_reference(tmp_path):
    """Seabed contacts (normal spring-damper that never pulls, regularised Coulomb friction)
    and an anchor, compiled: a lander dropped onto four feet while pushed sideways and moored
    equals the reference over 1 s (impact, sticking and sliding), normal forces included."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_constraints import foot_system

    extra = """  - {type: anchor, name: mooring, link: body, position: [0.1, 0, -0.1],
     anchor: [0.5, 0.2, 9.0], stiffness: 50.0, damping: 5.0}"""
    system = with_current(foot_system(tmp_path, extra), None)
    sims = [Simulator.from_system(system) for _ in range(2)]
    sims[1].compiled = False
    assert sims[0].contacts is not None and sims[0].fast_dynamics() is not None
    for sim in sims:
        sim.set_body_wrench("body", [15.0, 5.0, 0.0, 0.0, 0.0, 1.0])
    touched = False
    for _ in range(500):
        for sim in sims:
            sim.step(0.002)
        close(sims[0].state.q, sims[1].state.q)
        close(sims[0].state.v, sims[1].state.v)
        a, b = sims[0].contacts.normal_forces, sims[1].contacts.normal_forces
        assert a.keys() == b.keys()
        close(np.array(list(a.values())), np.array(list(b.values())))
        touched |= sum(b.values()) > 1.0
    assert touched


@pytest.mark.parametrize("root", ["free", "revolute", "spherical", "prismatic", "fixed"])
def test_every_joint_type_equals_the_reference(root):
    """The kernels take each joint's motion subspace S from the table and never branch on its
    type (outside its transform and its configuration space): random trees of every joint type,
    with fixed chains under the root (RIGID subtrees and FOLDED bodies with constant D⁻¹) and
    rigid leaves, give the reference q̈ and the reference RK4 step."""
    from random_models import random_tree

    rng = np.random.default_rng(5)
    env = with_current(load(CONFIG / "bluerov2.yaml"), None).environment
    for types in (("fixed", "fixed", "revolute", "fixed", "prismatic", "spherical", "fixed"),
                  ("revolute", "prismatic", "spherical", "fixed", "continuous"),
                  ("fixed", "fixed")):  # fmt: skip
        model = random_tree(rng, root=root, types=types)
        fast = FastDynamics(model, env)
        data = model.create_data()
        for _ in range(3):
            q, v = random_state(model, rng)
            tau = rng.normal(size=model.nv)
            f_ext = rng.normal(size=(model.nbodies, 6))

            def accel(q, v, t, tau=tau, f_ext=f_ext, model=model, data=data):
                return aba(model, data, q, v, tau, env, lambda d: f_ext)

            close(fast.aba(q, v, tau, f_ext), accel(q, v, 0.0))
            q1, v1 = fast.step(q, v, 0.01, "rk4", tau=tau, f_ext=f_ext)
            r1, w1 = step_rk4(model, q, v, 0.01, accel)
            close(q1, r1)
            close(v1, w1)


@pytest.mark.parametrize("name", CONFIGS)
def test_prepared_aba_reads_its_arrays_in_place(name):
    """``prepare_aba`` holds the state and inputs in the kernels' buffer: after writing new
    values into ``call.q``, ``.v``, ``.tau``, ``.f_ext`` and ``.n``, calling it gives what
    ``aba`` gives for those values (the same kernel: equal to the last bit), into the same
    output array."""
    rng = np.random.default_rng(3)
    system = with_current(load(CONFIG / f"{name}.yaml"), None)
    model = system.model
    sim = Simulator.from_system(system)
    fast = sim.fast_dynamics()
    q, v = random_state(model, rng)
    call = fast.prepare_aba(q, v)
    first = call()
    np.testing.assert_array_equal(first, fast.aba(q, v))
    for _ in range(3):
        call.q[:], call.v[:] = random_state(model, rng)
        call.tau[:] = rng.normal(size=model.nv)
        call.f_ext[:] = rng.normal(size=(model.nbodies, 6))
        call.n[:] = 30.0 * rng.normal(size=call.n.size)
        out = call()
        assert out is first
        np.testing.assert_array_equal(out, fast.aba(call.q, call.v, call.tau, call.f_ext, call.n))


def test_compiled_entry_points_refuse_arrays_they_would_misread():
    """The compiled functions read their arguments unchecked (the dispatch is skipped), so the
    Python side refuses what they would misread: an ``f_ext`` that is not 2-D or a 2-D ``q`` is
    a ValueError, not a wrong answer or a crash. Lists and other dtypes are converted."""
    system = load(CONFIG / "bluerov2.yaml")
    fast = fast_dynamics(system)
    model = system.model
    q, v = system.initial_q, np.zeros(model.nv)
    with pytest.raises(ValueError, match="2-dimensional"):
        fast.step(q, v, 0.01, f_ext=np.zeros(6 * model.nbodies))
    with pytest.raises(ValueError, match="1-dimensional"):
        fast.aba(q[None, :], v)
    np.testing.assert_array_equal(fast.aba(list(q), v.astype(np.float32)), fast.aba(q, v))
    np.testing.assert_array_equal(fast.aba(np.repeat(q, 2)[::2], v), fast.aba(q, v))


def test_the_kernels_buffers_follow_contacts_and_connections():
    """The two buffers the kernels take (``flat.pack``) are rebuilt when contacts or connections
    change, and what Python reads (workspace, thrusts, normal forces) are views of the new ones."""
    from uvms_sim.dynamics.contact import Contacts
    from uvms_sim.model.system import ContactPoint, Seabed

    system = load(CONFIG / "bluerov2.yaml")
    sim = Simulator.from_system(system)
    fast = sim.fast_dynamics()
    before = fast.FB
    assert np.shares_memory(fast.W, fast.FB) and np.shares_memory(fast.thrust, fast.FB)
    root = system.model.bodies[0].name
    points = tuple(ContactPoint(f"skid{k}", root, np.array([0.2 * k, 0.0, 0.15])) for k in (-1, 1))
    sim.contacts = Contacts(system.model, [Seabed(0.5, points)])
    sim.state.q[2] = 0.4  # skids 5 cm into the seabed
    fast = sim.fast_dynamics()
    assert fast.FB is not before and fast.KN.size == 2
    assert np.shares_memory(fast.KN, fast.FB) and np.shares_memory(fast.W, fast.FB)
    sim.step(0.001)
    assert set(sim.contacts.normal_forces) == {"skid-1", "skid1"}
    assert all(f > 0.0 for f in sim.contacts.normal_forces.values())


def test_the_kernels_cut_their_buffers_where_flat_lays_them_out():
    """The compiled views of a workspace (``buffers._carve``) and of the parts of the
    connections' scratch and a prepared call's inputs (``buffers._part``, ``_flat_part``) start
    where ``flat`` lays those fields out in Python and have their declared shapes: one
    declaration (``flat.workspace_fields``, ``connection_fields``, ``input_fields``)."""
    from numba import njit

    from uvms_sim.dynamics import flat
    from uvms_sim.dynamics.compiled.buffers import (
        _carve,
        _connection_fields,
        _flat_part,
        _input_fields,
        _part,
    )

    @njit
    def carved(W, nb, nq, nv, nt):
        WB, WQ, WV, thrust, S, CS = _carve(W, nb, nq, nv, nt)
        at = [
            WB.ctypes.data,
            WQ.ctypes.data,
            WV.ctypes.data,
            thrust.ctypes.data,
            S.ctypes.data,
            CS.ctypes.data,
        ]
        return [(x - W.ctypes.data) // 8 for x in at], [
            WB.size,
            WQ.size,
            WV.size,
            thrust.size,
            S.size,
            CS.size,
        ]

    @njit
    def parts(a, o, F):
        starts, shapes, sizes = [], [], []
        for k in range(len(F)):
            starts.append((_part(a, o, F, k).ctypes.data - a.ctypes.data) // 8)
            shapes.append(_part(a, o, F, k).shape)
            sizes.append(_flat_part(a, o, F, k).size)
        return starts, shapes, sizes

    @njit
    def fields(nb, nq, nv, nt, nc):
        return _connection_fields(nb, nv, nc), _input_fields(nb, nq, nv, nt)

    for nb, nq, nv, nt, nc in ((1, 7, 6, 8, 0), (2, 14, 12, 16, 1), (5, 11, 10, 6, 3)):
        starts, total = flat.workspace(nb, nq, nv, nt, nc)
        W = np.zeros(total)
        at, sizes = carved(W, nb, nq, nv, nt)
        assert at == list(starts) and sizes == [*np.diff([*starts, total])]
        buffer = np.zeros(total + 100)
        for F, expected in zip(
            fields(nb, nq, nv, nt, nc),
            (flat.connection_fields(nb, nv, nc), flat.input_fields(nb, nq, nv, nt)),
            strict=True,
        ):
            assert F == expected
            at, shapes, sizes = parts(buffer, 7, F)
            assert at == [7 + o for o in flat.laid_out(F)[0]]
            assert shapes == list(F) and sizes == [r * c for r, c in F]


def test_the_compiled_pseudo_inverse_is_numpys():
    """``compiled.constraints._pinv_solve`` (one-sided Jacobi SVD, no LAPACK, no allocation) gives
    ``numpy.linalg.pinv(G, rcond=1e-10) @ r`` for full-rank, rank-deficient and inconsistent
    systems (a least-squares, least-norm answer), wide and tall, to 1e-12 relative."""
    from numba import njit

    from uvms_sim.dynamics.compiled.constraints import _pinv_solve

    @njit
    def solve(G, r):
        m, n = G.shape
        z = np.zeros(n)
        _pinv_solve(G.copy(), np.empty((m, m)), r, z, 1e-10)
        return z

    rng = np.random.default_rng(11)
    cases = []
    for m, n in ((6, 12), (12, 12), (18, 24), (6, 6)):
        cases.append(rng.normal(size=(m, n)))  # full rank
        low = rng.normal(size=(m, m // 2)) @ rng.normal(size=(m // 2, n))  # rank m/2
        cases.append(low)
    cases.append(np.vstack([cases[0], cases[0][:3]]))  # duplicated rows (a redundant loop)
    for G in cases:
        for r in (rng.normal(size=G.shape[0]), G @ rng.normal(size=G.shape[1])):  # inconsistent, consistent
            expected = np.linalg.pinv(G, rcond=1e-10) @ r
            close(solve(G, r), expected, 1e-12)


def test_the_kernel_cache_follows_every_kernel_source(tmp_path, monkeypatch):
    """Numba keys a cached function on its own file only; the kernels' cache directory is named
    after a hash of every kernel module and ``flat.py``, so a change to a callee in another
    module, or to a layout offset, compiles anew instead of running stale machine code."""
    from uvms_sim.dynamics import compiled

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    callee, caller = tmp_path / "callee.py", tmp_path / "caller.py"
    callee.write_text("W = 3\n")
    caller.write_text("from callee import W\n")
    before = compiled.cache_dir([callee, caller])
    assert before.parent == tmp_path / "cache" and before.name.startswith("kernels-")
    callee.write_text("W = 4\n")
    assert compiled.cache_dir([callee, caller]) != before
    here = compiled.cache_dir()
    flat = Path(compiled.__file__).parent.parent / "flat.py"
    sources = sorted([*Path(compiled.__file__).parent.glob("*.py"), flat])
    assert here == compiled.cache_dir(sources) and len(sources) > 10
    assert here != compiled.cache_dir([s for s in sources if s != flat])


def test_the_message_kernels_cache_follows_frames_too():
    """The node's message kernels (``ros.message_kernels``) call ``frames.attitude``: their
    cache is named after a hash of both files, under a name of its own (the physics' older
    caches are removed by name, not theirs), and numba writes them there."""
    from uvms_sim import frames
    from uvms_sim.dynamics import compiled
    from uvms_sim.ros import message_kernels

    both = [Path(message_kernels.__file__), Path(frames.__file__)]
    assert message_kernels._CACHE == compiled.cache_dir(both, "message-kernels") != compiled.cache_dir()
    assert message_kernels._CACHE != compiled.cache_dir(both[:1], "message-kernels")
    assert message_kernels.odometry_numbers._cache._cache_path.startswith(str(message_kernels._CACHE))


_ALLOCATIONS = r"""
import sys
import numpy as np
from numba import njit
from numba.core.runtime import rtsys
sys.path.insert(0, sys.argv[1])
from multibody_cases import case_a
from uvms_sim.dynamics.compiled.entry import aba, aba_bound, step, step_joints, step_many
from uvms_sim.dynamics.contact import Contacts
from uvms_sim.dynamics.fast import BatchDynamics, JointTables
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.model.system import ContactPoint, Seabed
from uvms_sim.simulator import Simulator


@njit
def every_entry(FB, IB, q, v, tau, f_ext, n, q_out, v_out, thrust, ddq, SF, SI, LF, LI, X, impacts, times):
    for _ in range(times):
        aba(FB, IB, q, v, tau, f_ext, n, ddq)
        aba_bound(FB, IB)
        step(FB, IB, 0, q, v, tau, f_ext, n, 0.01, q_out, v_out, thrust)
        step(FB, IB, 1, q, v, tau, f_ext, n, 0.01, q_out, v_out, thrust)
        step_many(FB, IB, 0, q, v, tau, f_ext, n, 0.01, 3, q_out, v_out)
        step_joints(FB, IB, 0, q, v, tau, f_ext, n, 0.01, 3, q_out, v_out, SF, SI, LF, LI, X, impacts)


heavy = Simulator.from_system(load(resolve("bluerov2_heavy")))
root = heavy.model.bodies[0].name
skids = tuple(ContactPoint(f"skid{k}", root, np.array([0.2 * k, 0.0, 0.15])) for k in (-1, 1))
heavy.contacts = Contacts(heavy.model, [Seabed(0.5, skids)])
heavy.state.q[2] = 0.4  # in contact
path = sys.argv[2]
open(path, "w").write(case_a(2.0))
pair = Simulator.from_system(load(path))
for sim in (heavy, pair):
    fast = sim.fast_dynamics()
    sim.step(0.01)
    nb, nv, nt = sim.model.nbodies, sim.model.nv, fast.nt
    args = (fast.FB, fast.IB, sim.state.q.copy(), sim.state.v + 0.1, np.full(nv, 0.5), np.ones((nb, 6)),
            np.full(nt, 50.0), np.empty(sim.model.nq), np.empty(nv), np.empty(nt), np.empty(nv),
            *JointTables(sim.model).arrays())
    counts = []
    for times in (1, 1, 40):
        before = rtsys.get_allocation_stats().alloc
        every_entry(*args, times)
        counts.append(rtsys.get_allocation_stats().alloc - before)
    assert np.all(np.isfinite(args[7])), "a step failed"
    batch = BatchDynamics(fast, 4, sim.state.q, sim.state.v)
    for steps in (1, 1, 40):
        before = rtsys.get_allocation_stats().alloc
        batch.step(0.01, steps)
        counts.append(rtsys.get_allocation_stats().alloc - before)
    assert batch.ok.all(), "a copy failed"
    given = (*fast.packed_tables, fast.CI, fast.CF, fast.KI, fast.KF, fast.KN, fast.fluid, fast.WT, batch.W,
             batch.q, batch.v, batch.tau, batch.f_ext, batch.n, batch.ok)  # what BatchDynamics.step passes
    print(len(args), sum(isinstance(a, np.ndarray) for a in given), *counts)
"""


def test_no_entry_point_allocates_in_compiled_code(tmp_path):
    """Every entry point (aba, a prepared aba, an RK4 and a semi-implicit Euler step,
    step_many, step_joints), called once or 40 times from compiled code, and a batch of one or 40 steps make
    no allocation of numba's runtime but the one per array argument that unboxing it from
    Python makes (the Heavy on a seabed, with contacts; the pair held by a connection).
    Counted by numba's runtime (NUMBA_NRT_STATS, in a process of its own)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_NRT_STATS="1")
    here = str(Path(__file__).resolve().parent)
    out = subprocess.run([sys.executable, "-c", _ALLOCATIONS, here, str(tmp_path / "pair.yaml")],
                         check=False, env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    for line in out.stdout.split("\n")[-3:-1]:
        arrays, b_arrays, once, again, forty, b_once, b_again, b_forty = map(int, line.split())
        assert once == again == forty == arrays, line  # the arguments, unboxed from Python
        assert b_once == b_again == b_forty == b_arrays, line


def test_the_tree_factorisation_is_the_jsim():
    """``crba._ltl`` (Featherstone 2005's LTL) of the joint-space inertia of random trees with
    every joint type (several roots' subtrees, fixed bodies between moving ones, multi-DOF
    joints): M's entries off the tree's pattern are zero (the premise), L keeps that pattern
    (no fill-in) and Lᵀ L is M to 1e-12 relative (rounding of a factorisation whose inputs are
    O(1))."""
    from numba import njit
    from random_models import random_tree

    from uvms_sim.dynamics import flat
    from uvms_sim.dynamics.compiled.crba import _dof_parents, _ltl
    from uvms_sim.model.crba import crba

    @njit
    def factor(BI, M):
        P = np.zeros(M.shape[0])
        _dof_parents(BI, P)
        L = M.copy()
        _ltl(L, P, M.shape[0])
        return L, P

    rng = np.random.default_rng(17)
    for types in (("fixed", "revolute", "prismatic", "spherical", "fixed", "revolute", "continuous"),
                  ("revolute",) * 9, ("spherical", "spherical", "fixed", "prismatic")):  # fmt: skip
        model = random_tree(rng, root="free", types=types)
        q, _ = random_state(model, rng)
        M = crba(model, model.create_data(), q)
        L, P = factor(flat.flatten(model)[1], M)
        pattern = np.eye(model.nv, dtype=bool)
        for i in range(model.nv):
            j = int(P[i])
            while j >= 0:
                pattern[i, j] = pattern[j, i] = True
                j = int(P[j])
        assert np.all(M[~pattern] == 0.0)
        lower = np.where(np.tril(pattern), L, 0.0)
        assert np.allclose(lower.T @ lower, M, rtol=0.0, atol=1e-12 * np.abs(M).max())


def test_the_inverse_inertia_from_the_articulated_bodies_is_the_jsims_inverse():
    """``aba._inverse_inertia`` (M⁻¹ x from the U and D⁻¹ the ABA left, Featherstone 2008 §7.3)
    against solving with M from the CRBA (the independent algorithm), for random joint forces
    on random trees with every joint type and added mass, and on the Heavy with the Alpha 5
    (a free root with an arm): 1e-10 relative, the rounding of solving with an M whose
    condition number reaches 1e5 here. (The correction it serves, for couplings the ABA does
    not hold itself, is compared with the reference on the Alpha 5's buffers with the marks
    cleared, ``test_the_aba_holds_a_grippers_couplings_as_the_correction_does``.)"""
    from numba import njit
    from random_models import random_tree

    from uvms_sim.dynamics.compiled.aba import _inverse_inertia
    from uvms_sim.dynamics.compiled.buffers import _carve, _unpack
    from uvms_sim.dynamics.flat import H_NQ, H_NV
    from uvms_sim.model.configs import resolve
    from uvms_sim.model.crba import crba

    @njit
    def apply(FB, IB, x, y):
        parts = _unpack(FB, IB)
        BF, BI, TI, W = parts[0], parts[1], parts[3], parts[9]
        WB, _, _, _, S, _ = _carve(W, BI.shape[0], IB[H_NQ], IB[H_NV], TI.shape[0])
        nb = BI.shape[0]
        _inverse_inertia(BF, BI, WB, S, x, y, np.zeros((nb, 6)), np.zeros((nb, 6)))

    rng = np.random.default_rng(23)
    models = [
        random_tree(rng, root="free", types=types)
        for types in (("fixed", "revolute", "prismatic", "spherical", "fixed", "revolute", "continuous"),
                      ("revolute",) * 9, ("spherical", "spherical", "fixed", "prismatic"))
    ]  # fmt: skip
    heavy = load(resolve("bluerov2_heavy_alpha5"))
    models.append(heavy.model)
    for model in models:
        env = heavy.environment
        fast = FastDynamics(model, env)
        for _ in range(3):
            q, v = random_state(model, rng)
            fast.aba(q, v)  # the articulated quantities at q (velocity plays no part in them)
            M = crba(model, model.create_data(), q)
            x, y = rng.normal(size=model.nv), np.zeros(model.nv)
            apply(fast.FB, fast.IB, x, y)
            want = np.linalg.solve(M, x)
            np.testing.assert_allclose(y, want, rtol=0.0, atol=1e-10 * np.abs(want).max())


def test_couplings_alone_take_the_correction_without_m():
    """``constraints._couplings_only``: couplings alone (the Alpha 5's fingers, when the ABA
    does not hold them itself) take the path through ``aba._inverse_inertia``; a connection
    among them, a follower in two couplings or a follower that leads another coupling (A could
    lose rank) take the general one. ``flat.mimic_groups`` holds them in the ABA only as
    siblings after their leader: not with a connection among them, a follower twice, a chain,
    a follower elsewhere in the tree (the wrist) or before its leader."""
    from numba import njit

    from uvms_sim.dynamics import flat
    from uvms_sim.dynamics.compiled.constraints import _couplings_only as kernel
    from uvms_sim.model.configs import resolve

    @njit
    def _couplings_only(BI, CI):  # (the kernels have no Python wrapper of their own)
        return kernel(BI, CI)

    system = load(resolve("bluerov2_heavy_alpha5"))
    CI = Simulator.from_system(system).fast_dynamics().CI
    BI = flat.flatten(system.model)[1]
    assert CI.shape[0] == 2 and _couplings_only(BI, CI)
    connection = CI.copy()
    connection[1, 0] = 0  # a rigid connection's parent body, not a leader
    twice = CI.copy()
    twice[1, 1] = CI[0, 1]  # one finger in two couplings
    chained = CI.copy()
    chained[1, 0] = -1 - CI[0, 1]  # the second finger follows the first
    for rows in (connection, twice, chained):
        assert not _couplings_only(BI, rows)
    assert flat.mimic_groups(BI.copy(), CI)
    elsewhere = CI.copy()
    elsewhere[1, 1] = system.model.body_index("alpha_5_m1_link")  # not a sibling of the push rod
    before = CI[:1].copy()  # the push rod following a finger: siblings, the follower first
    before[0] = (-1 - CI[0, 1], -1 - CI[0, 0])
    for rows in (connection, twice, chained, elsewhere, before):
        marked = BI.copy()
        assert not flat.mimic_groups(marked, rows)
        assert (marked[:, flat.MIMIC] == -1).all() and not marked[:, flat.LEADS].any()


def test_the_limit_impulse_factorises_with_the_tree_only_where_couplings_keep_it():
    """``limits._tree_sparse``: the Alpha 5's finger couplings (leaf followers of the push rod's
    siblings' parent) keep the tree's sparsity; a coupling whose follower has descendants (the
    wrist following the push rod), or a follower in two couplings, does not, and the impulse
    then takes the dense Cholesky
    factor (test_arm_jaws and test_arm hold both against the reference impulse)."""
    from numba import njit

    from uvms_sim.dynamics import flat
    from uvms_sim.dynamics.compiled.crba import _dof_parents
    from uvms_sim.dynamics.compiled.limits import _tree_sparse

    @njit
    def sparse(BI, CI, nv):
        P = np.zeros(nv)
        _dof_parents(BI, P)
        return _tree_sparse(BI, CI, P, nv)

    system = load(CONFIG / "alpha5.yaml")
    sim = Simulator.from_system(system)
    fast = sim.fast_dynamics()
    CI = fast.CI.copy()
    model = system.model
    BI = flat.flatten(model)[1]
    assert (CI[:, 0] < 0).sum() == 2 and sparse(BI, CI, model.nv)
    wrist = model.body_index("alpha_5_m1_link")
    k = int(np.flatnonzero(CI[:, 0] < 0)[0])
    twice = CI.copy()
    second = int(np.flatnonzero(CI[:, 0] < 0)[1])
    twice[second, 1] = CI[k, 1]  # one finger in two couplings: their rows would meet
    assert not sparse(BI, twice, model.nv)
    CI[k, 1] = wrist  # the wrist, with the fingers below it, as a follower
    assert not sparse(BI, CI, model.nv)
