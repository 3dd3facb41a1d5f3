"""What the views draw of the working water, in the ROS world frame (ENU, z up): each tether as
the polyline of its nodes with its tension, and the moving wave surface as a triangle mesh
around a point (``viz.scene.Frame.tethers`` and ``.surface``; RViz markers and the browser view
alike)."""

from __future__ import annotations

import numpy as np

from ..frames import NED_TO_ENU

WAVE_HALF_SIZE = 6.0  # m: the drawn patch of the wave surface around the first vehicle
WAVE_CELLS = 12  # cells per side of that patch (1 m: RViz's markers are built point by point)


def tether_paths(tethers) -> list[tuple[str, np.ndarray, float]]:
    """(name, node positions ENU (N+1 x 3) from the reel, tension at the vehicle N) of each
    running tether (``tether.tether.Tether``)."""
    return [(t.spec.name, t.line.nodes() @ NED_TO_ENU.T, float(np.linalg.norm(t.force))) for t in tethers]


def _grid(n: int) -> np.ndarray:
    """The triangles (2 n² x 3 vertex indices) of an (n+1) x (n+1) vertex grid."""
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    a = (i * (n + 1) + j).ravel()
    b, c, d = a + 1, a + n + 1, a + n + 2
    return np.concatenate((np.column_stack((a, c, b)), np.column_stack((b, c, d))))


def wave_surface(env, t: float, centre_enu: np.ndarray, half: float = WAVE_HALF_SIZE,
                 cells: int = WAVE_CELLS) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """Vertices (ENU) and triangles of the surface η(x, y, t) over a square of half-size
    ``half`` centred (horizontally) at ``centre_enu``; None without waves."""
    if env.waves is None or env.surface is None or not len(env.waves):
        return None
    s = np.linspace(-half, half, cells + 1)
    east, north = np.meshgrid(centre_enu[0] + s, centre_enu[1] + s, indexing="ij")
    x, y = north.ravel(), east.ravel()  # NED
    w = env.waves
    th = (
        np.outer(x, w.k * np.cos(w.direction))
        + np.outer(y, w.k * np.sin(w.direction))
        - w.omega * t
        + w.phase
    )
    eta = np.cos(th) @ w.amplitude
    vertices = np.column_stack((east.ravel(), north.ravel(), -env.surface + eta))
    return vertices, _grid(cells)
