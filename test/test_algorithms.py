"""ABA, RNEA and CRBA agree with each other on random trees (independent algorithms)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from random_models import random_state, random_tree

from uvms_sim.dynamics import aba, crba, nonlinear_effects, rnea
from uvms_sim.hydro import Environment
from uvms_sim.model import Model
from uvms_sim.model.library import bluerov2_with_arm, walker

FLOWING = Environment(current=[0.4, -0.3, 0.2], current_acceleration=[0.2, -0.1, 0.3])
# Both sides are O(N) sums of 6x6 products of O(1) numbers; double precision leaves ~1e-13.
REL_TOL = 1e-9


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("root", ["free", "fixed", "revolute", "spherical"])
@pytest.mark.parametrize("hydro", [False, True])
def test_aba_equals_crba_inverse_times_rnea_bias(seed: int, root: str, hydro: bool) -> None:
    rng = np.random.default_rng(seed)
    model = random_tree(rng, root=root, hydro=hydro)
    data = model.create_data()
    q, v = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    env = FLOWING if hydro else Environment(gravity=9.81)
    ddq = aba(model, data, q, v, tau, env)
    M = crba(model, data, q)
    h = nonlinear_effects(model, data, q, v, env)
    ref = np.linalg.solve(M, tau - h)
    assert np.linalg.norm(ddq - ref) <= REL_TOL * np.linalg.norm(ref)
    # and RNEA inverts ABA
    assert np.linalg.norm(rnea(model, data, q, v, ddq, env) - tau) <= REL_TOL * max(1.0, np.linalg.norm(tau))


@pytest.mark.parametrize("seed", range(4))
def test_crba_symmetric_positive_definite_and_includes_added_mass(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    wet = random_tree(rng, hydro=True)
    dry = Model([replace(b, hydro=None) for b in wet.bodies])
    q, _ = random_state(wet, rng)
    M_wet = crba(wet, wet.create_data(), q)
    M_dry = crba(dry, dry.create_data(), q)
    assert np.allclose(M_wet, M_wet.T, atol=1e-12)
    assert np.linalg.eigvalsh(M_dry).min() > 0
    # added mass is positive semi-definite, so it can only add inertia
    assert np.linalg.eigvalsh(M_wet - M_dry).min() > -1e-10
    assert np.linalg.norm(M_wet - M_dry) > 1e-3


@pytest.mark.parametrize("factory", [bluerov2_with_arm, walker])
def test_library_models_aba_matches_crba(factory) -> None:
    model = factory()
    data = model.create_data()
    rng = np.random.default_rng(7)
    q, v = random_state(model, rng, speed=0.5)
    tau = rng.normal(size=model.nv)
    ddq = aba(model, data, q, v, tau, FLOWING)
    ref = np.linalg.solve(crba(model, data, q), tau - nonlinear_effects(model, data, q, v, FLOWING))
    assert np.linalg.norm(ddq - ref) <= REL_TOL * np.linalg.norm(ref)


def test_reaction_wrenches_balance_each_body() -> None:
    """data.f[i] from RNEA: for each body, f_i - Σ_children X_cᵀ f_c = I_H a_i + p_i
    (McMillan et al. 1996 eq. 2)."""
    rng = np.random.default_rng(3)
    model = random_tree(rng)
    data = model.create_data()
    q, v = random_state(model, rng)
    a = rng.normal(size=model.nv)
    rnea(model, data, q, v, a, FLOWING)
    f = data.f.copy()
    for i in range(model.nbodies):
        net = f[i].copy()
        for c in model.children[i]:
            net -= data.X[c].T @ f[c]
        assert np.allclose(net, model.I_H[i] @ data.a[i] + data.bias[i], atol=1e-10)
    # a fixed joint carries a full wrench although it has no tau entry
    fixed = [i for i, j in enumerate(model.joints) if j.type == "fixed"]
    assert fixed and np.linalg.norm(f[fixed[0]]) > 0


def test_bad_inputs_are_rejected_with_names() -> None:
    model = bluerov2_with_arm()
    data = model.create_data()
    q, v = model.neutral(), np.zeros(model.nv)
    with pytest.raises(ValueError, match=r"tau has non-finite entries at indices \[2\]"):
        aba(model, data, q, v, np.array([0, 0, np.nan, 0, 0, 0, 0, 0, 0, 0.0]))
    with pytest.raises(ValueError, match=r"v must have shape \(10,\)"):
        aba(model, data, q, np.zeros(3), np.zeros(model.nv))


@pytest.mark.parametrize("seed", range(4))
def test_body_accelerations_of_chosen_bodies_equal_their_rows_of_all(seed: int) -> None:
    """``body_accelerations(..., bodies)`` (what the node's IMU topics ask for: the roots)
    computes the chosen bodies and their ancestors only, each row exactly as the whole
    recursion gives it; the rows it skips stay zero."""
    from uvms_sim.dynamics.kinematics import body_accelerations

    rng = np.random.default_rng(seed)
    model = random_tree(rng)
    data = model.create_data()
    q, v = random_state(model, rng)
    ddq = aba(model, data, q, v, rng.normal(size=model.nv), FLOWING)
    full = body_accelerations(model, data, ddq)
    chosen = [0, model.nbodies - 1]
    part = body_accelerations(model, data, ddq, chosen)
    chain = set()
    for i in chosen:
        while i >= 0:
            chain.add(i)
            i = int(model.parents[i])
    for i in range(model.nbodies):
        assert np.array_equal(part[i], full[i] if i in chain else np.zeros(6))
