"""Spatial algebra identities (vector forms against matrix forms, duality, composition)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from uvms_sim.spatial import (
    compose,
    crf,
    crm,
    cross,
    force_cross,
    motion_cross,
    motion_matrix,
    spatial_inertia,
    transform_force_back,
    transform_motion,
)


def test_cross_products_and_transforms_agree_with_their_matrices() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        v, m, f = rng.normal(size=(3, 6))
        a, b = rng.normal(size=(2, 3))
        assert np.allclose(cross(a, b), np.cross(a, b))
        assert np.allclose(crm(v) @ m, motion_cross(v, m))
        assert np.allclose(crf(v) @ f, force_cross(v, f))
        # duality: power is invariant, (v x m) . f = -m . (v x* f)
        assert np.isclose(motion_cross(v, m) @ f, -(m @ force_cross(v, f)))
        E1, E2 = Rotation.random(2, random_state=rng).as_matrix()
        r1, r2 = rng.normal(size=(2, 3))
        X1 = motion_matrix(E1, r1)
        assert np.allclose(X1 @ m, transform_motion(E1, r1, m))
        assert np.allclose(X1.T @ f, transform_force_back(E1, r1, f))
        E, r = compose(E1, r1, E2, r2)
        assert np.allclose(motion_matrix(E, r), motion_matrix(E2, r2) @ X1)


def test_spatial_inertia_momentum_about_origin() -> None:
    """h = I v: linear m(v + ω×c), angular I_c ω + c × m(v + ω×c)."""
    rng = np.random.default_rng(1)
    m, c = 2.5, rng.normal(size=3)
    Ic = np.diag([0.3, 0.4, 0.5])
    v = rng.normal(size=6)
    h = spatial_inertia(m, c, Ic) @ v
    vc = v[:3] + np.cross(v[3:], c)
    assert np.allclose(h[:3], m * vc)
    assert np.allclose(h[3:], Ic @ v[3:] + np.cross(c, m * vc))
