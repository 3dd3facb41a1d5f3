"""SNAME coefficients in Fossen's sign convention become positive matrices; bad keys are named."""

from __future__ import annotations

import numpy as np
import pytest

from uvms_sim.hydro import Hydrodynamics
from uvms_sim.model.library import bluerov2_body


def test_bluerov2_coefficients_convert_with_fossen_signs() -> None:
    h = bluerov2_body().hydro
    assert np.allclose(np.diag(h.added_mass), [5.5, 12.7, 14.57, 0.12, 0.12, 0.12])
    assert np.allclose(np.diag(h.linear_damping), [4.03, 6.22, 5.18, 0.07, 0.07, 0.07])
    assert np.allclose(h.quadratic_damping, [18.18, 21.66, 36.99, 1.55, 1.55, 1.55])
    assert h.volume * 1000.0 * 9.81 == pytest.approx(114.8)  # B = ρ g V


def test_coupled_added_mass_pair_is_symmetric_and_abs_notation_accepted() -> None:
    h = Hydrodynamics.from_fossen(
        {"X_udot": -5.0, "Z_wdot": -8.0, "M_qdot": -1.0, "Z_qdot": -0.5, "X_u|u|": -3.0}
    )
    assert h.added_mass[2, 4] == h.added_mass[4, 2] == 0.5
    assert h.quadratic_damping[0] == 3.0


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("Q_u", "not an SNAME coefficient"),
        ("X_vv", "not a diagonal SNAME quadratic damping coefficient"),
        ("X_aa", "not an SNAME coefficient"),
    ],
)
def test_bad_coefficient_names_are_rejected(key: str, message: str) -> None:
    """One reader of SNAME names for code and descriptions (``sname_term``): a coupled linear
    damping term such as X_v is a coefficient (as in a description), a non-diagonal quadratic
    one is not, nor is a name outside the notation."""
    with pytest.raises(KeyError, match=message):
        Hydrodynamics.from_fossen({key: -1.0})
    assert Hydrodynamics.from_fossen({"X_v": -0.5, "X_u": -4.0, "Y_v": -6.0}).linear_damping[0, 1] == 0.5
    with pytest.raises(ValueError, match="Fossen's sign convention"):
        Hydrodynamics.from_fossen({"X_u": 4.0})


def test_non_physical_matrices_are_rejected() -> None:
    with pytest.raises(ValueError, match="positive semi-definite"):
        Hydrodynamics(added_mass=-np.eye(6))
    with pytest.raises(ValueError, match="symmetric"):
        Hydrodynamics(added_mass=np.triu(np.ones((6, 6))))
    with pytest.raises(ValueError, match="dissipative"):
        Hydrodynamics(linear_damping=-np.eye(6))


def test_the_reader_and_hydrodynamics_refuse_the_same_matrices_in_the_same_words(tmp_path) -> None:
    """One law (``hydro_problem``): a matrix a description gives is refused, at its key, for the
    same reason ``Hydrodynamics`` refuses it; one that is non-physical only by rounding (1e-13
    of its largest entry) passes both."""
    from uvms_sim.model import ConfigError, load

    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    spd = A @ A.T
    skew = A - A.T
    cases = {
        "added_mass": [
            spd + 0.1 * skew,
            spd - 1.01 * np.linalg.eigvalsh(spd).min() * np.eye(6) - 1e-3 * np.eye(6),
        ],
        "linear_damping": [-np.eye(6) + 0.5 * skew],
    }
    for key, matrices in cases.items():
        for M in matrices:
            with pytest.raises(ValueError) as direct:
                Hydrodynamics(**{key: M})
            path = tmp_path / "d.yaml"
            rows = "[" + ", ".join("[" + ", ".join(repr(float(x)) for x in row) + "]" for row in M) + "]"
            path.write_text(
                "vehicles:\n  - name: rov\n    links:\n      - name: base_link\n        mass: 10.0\n"
                f"        inertia: [0.2, 0.2, 0.2]\n        hydrodynamics: {{volume: 0.01, {key}: {rows}}}\n"
            )
            with pytest.raises(ConfigError) as read:
                load(path)
            assert str(read.value).endswith(f"hydrodynamics.{key}: {direct.value}")
    rounding = spd - (np.linalg.eigvalsh(spd).min() + 1e-13 * np.abs(spd).max()) * np.eye(6)
    assert Hydrodynamics(added_mass=rounding).added_mass.shape == (6, 6)
