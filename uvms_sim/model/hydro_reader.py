"""Reading a link's ``hydrodynamics`` block of a description (``docs/config.md``): added mass
and damping as SNAME coefficients (Fossen's signs), a diagonal list or a 6x6 matrix, moved from
their ``reference_point`` to the link origin; buoyancy from a volume or a hull shape; a drag
cylinder. Every value is checked where it is written (``ConfigError`` naming the key), the
physics of the whole once (``hydro.params.hydro_problem``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..hydro.drag import CylinderDrag
from ..hydro.hull import SHAPES, make_hull, shape_columns
from ..hydro.params import Hydrodynamics, hydro_problem, sname_term, sname_value
from ..spatial import Array, shift_to_origin
from .yaml_source import Cursor


def read_hydrodynamics(cur: Cursor) -> Hydrodynamics:
    """Added mass and linear damping are about ``reference_point`` (link axes; default the link
    origin) and moved to the link origin with ``Xᵀ M X``; quadratic damping acts at ``damping_center``
    (default the origin), which a ``reference_point`` with quadratic damping must name."""
    cur.mapping(
        optional=(
            "volume",
            "center_of_buoyancy",
            "reference_point",
            "added_mass",
            "linear_damping",
            "quadratic_damping",
            "drag",
            "hull",
            "damping_center",
        )
    )
    MA = _six_by_six(cur["added_mass"], "added_mass") if "added_mass" in cur else np.zeros((6, 6))
    Dl = _six_by_six(cur["linear_damping"], "linear_damping") if "linear_damping" in cur else np.zeros((6, 6))
    dq = _quadratic(cur["quadratic_damping"]) if "quadratic_damping" in cur else np.zeros(6)
    problem = hydro_problem(MA, Dl, dq)  # as written, before any reference_point
    if problem:
        key, message = problem
        raise (cur[key] if key in cur else cur).error(message)
    drag = _drag(cur["drag"]) if "drag" in cur else None
    if "reference_point" in cur:
        ref = cur["reference_point"].vector(3)
        if np.any(ref) and np.any(dq) and "damping_center" not in cur:
            raise cur["reference_point"].error(
                "quadratic damping is applied at the link origin (or at damping_center); a reference point "
                "other than the origin applies to added mass and linear damping only: give damping_center "
                "to say where the quadratic damping acts"
            )
        MA, Dl = shift_to_origin(MA, ref), shift_to_origin(Dl, ref)
    volume = cur["volume"].number(lo=0.0) if "volume" in cur else None
    cob = cur["center_of_buoyancy"].vector(3) if "center_of_buoyancy" in cur else None
    hull = None
    if "hull" in cur:
        columns, center = _hull(cur["hull"])
        spec = tuple((k, v) for k, v in cur["hull"].value.items() if k != "center")
        hull = make_hull(columns, volume if volume else None, center if cob is None else cob, spec)
        volume = volume if volume is not None else hull.volume
        cob = cob if cob is not None else hull.centroid
    try:
        return Hydrodynamics(
            added_mass=MA,
            linear_damping=Dl,
            quadratic_damping=dq,
            volume=volume or 0.0,
            center_of_buoyancy=np.zeros(3) if cob is None else cob,
            drag=drag,
            hull=hull,
            damping_center=cur["damping_center"].vector(3) if "damping_center" in cur else np.zeros(3),
        )
    except ValueError as exc:  # what only the assembled matrices show (e.g. after reference_point)
        raise cur.error(str(exc)) from None


_HULL_SIZES = {"box": ("size", 3), "ellipsoid": ("semi_axes", 3), "sphere": ("radius", 1)}


def _hull(cur: Cursor) -> tuple[Array, Array]:
    """``hull: {shape: box, size: [lx, ly, lz]}``, ``{shape: cylinder, radius, length, axis:
    x|y|z}``, ``{shape: ellipsoid, semi_axes: [a, b, c]}`` or ``{shape: sphere, radius}``, with an
    optional ``center`` (link axes): the columns about the origin and that centre."""
    cur.mapping(("shape",), ("size", "semi_axes", "radius", "length", "axis", "center"))
    shape = cur["shape"].choice(SHAPES)
    if shape == "cylinder":
        cur.mapping(("shape", "radius", "length"), ("axis", "center"))
        axis = cur["axis"].choice(("x", "y", "z")) if "axis" in cur else "x"
        size = np.array([cur["radius"].number(positive=True), cur["length"].number(positive=True)])
        columns = shape_columns("cylinder", size, "xyz".index(axis))
    else:
        key, n = _HULL_SIZES[shape]
        cur.mapping(("shape", key), ("center",))
        size = cur[key].vector(n) if n > 1 else np.array([cur[key].number(positive=True)])
        if not np.all(size > 0):
            raise cur[key].error(f"expected sizes > 0, got {size.tolist()}")
        columns = shape_columns(shape, size)
    center = cur["center"].vector(3) if "center" in cur else np.zeros(3)
    return columns, center


def _sname(cur: Cursor, key: str, kind: str, what: str) -> tuple[int, int, float]:
    """Row, column and stored value of the SNAME coefficient ``key`` of a ``kind`` block."""
    try:
        found, i, j = sname_term(str(key))
        if found != kind:
            raise KeyError(key)
        return i, j, sname_value(str(key), cur[key].number())
    except KeyError as exc:
        if kind == "quadratic_damping":
            raise cur[key].error(
                "not a diagonal SNAME quadratic damping coefficient such as X_uu, X_u|u| or N_rr "
                "(the quadratic damping model is diagonal)"
            ) from None
        example = "X_udot, Y_vdot, M_qdot or X_qdot" if kind == "added_mass" else "X_u, Y_v or N_r"
        raise cur[key].error(f"not an SNAME {what} coefficient such as {example}") from exc
    except ValueError as exc:
        raise cur[key].error(str(exc)) from None


def _six_by_six(cur: Cursor, kind: str) -> Array:
    """SNAME mapping (Fossen signs), a positive diagonal list of 6, or a positive 6x6 matrix."""
    what = kind.replace("_", " ")
    if isinstance(cur.value, dict):
        out = np.zeros((6, 6))
        given: dict[tuple[int, int], str] = {}
        for key in cur.value:
            i, j, out[i, j] = _sname(cur, key, kind, what)
            given[(i, j)] = key
        if what == "added mass":
            for (i, j), key in list(given.items()):
                if (j, i) in given and out[i, j] != out[j, i]:
                    raise cur[key].error(f"added mass is symmetric: {key} and {given[(j, i)]} differ")
                out[j, i] = out[i, j]
        return out
    if cur.is_matrix():
        return cur.matrix(6, 6)
    diag = cur.vector(6)
    if np.any(diag < 0.0):
        raise cur.error(
            f"a diagonal list gives positive {what} values (kg, kg m^2, N s/m, ...), got {diag.tolist()}"
        )
    return np.diag(diag)


def _quadratic(cur: Cursor) -> Array:
    if isinstance(cur.value, dict):
        out = np.zeros(6)
        for key in cur.value:
            i, _, out[i] = _sname(cur, key, "quadratic_damping", "quadratic damping")
        return out
    out = cur.vector(6)
    if np.any(out < 0.0):
        raise cur.error(f"quadratic damping values are positive (N s^2/m^2, N m s^2), got {out.tolist()}")
    return out


def _drag(cur: Cursor) -> CylinderDrag:
    cur.mapping(("model", "length", "radius"), ("axis", "start", "drag_coefficient", "points"))
    cur["model"].choice({"cylinder": "the one per-link drag model"})
    kwargs: dict[str, Any] = {
        "length": cur["length"].number(positive=True),
        "radius": cur["radius"].number(positive=True),
    }
    if "axis" in cur:
        kwargs["axis"] = cur["axis"].vector(3)
        if not np.linalg.norm(kwargs["axis"]) > 0.0:
            raise cur["axis"].error("the axis must be non-zero")
    if "start" in cur:
        kwargs["start"] = cur["start"].vector(3)
    if "drag_coefficient" in cur:
        kwargs["drag_coefficient"] = cur["drag_coefficient"].number(lo=0.0)
    if "points" in cur:
        kwargs["points"] = cur["points"].integer(lo=1)
    try:
        return CylinderDrag(**kwargs)
    except ValueError as exc:
        raise cur.error(str(exc)) from None
