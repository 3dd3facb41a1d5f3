"""The browser view: the simulation streamed to Rerun's web viewer, which the ``rerun-sdk``
wheel carries and serves from this machine (no ROS, no internet), or written to a ``.rrd``
recording that the Rerun viewer opens.

What is shown: every link of every vehicle with its visuals (``model.visual``: the
description's, else from its hull, drag cylinder or mass), placed at each frame; the thrust of
each thruster as an arrow (``viz.scene.ARROW_SCALE`` m per newton, green forward, red reverse);
the water surface and the seabeds as translucent plates; and time plots of each vehicle's depth
and each thruster's thrust. The 3D space is the ROS world frame (``odom``: ENU, z up); the
timeline ``sim`` is simulated time.

Cost: a frame is logged at most ``rate`` times per simulated second and, when served live, per
wall-clock second (30 by default), so a simulation running 50x real time pays for 30 frames a
second, not 1500.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat

from ..loop import Cadence
from ..model.naming import tf_names
from ..model.system import System
from ..model.urdf_writer import link_visuals
from ..model.visual import Visual, thruster_visual
from .scene import SURFACE_HALF_SIZE, Frame, SceneState

FORWARD, REVERSE = (40, 200, 60), (220, 50, 40)
ARROW_RADIUS = 0.012  # m


def page_address(web_port: int, stream: str) -> str:
    """The address of the viewer's page on ``web_port``, connected to the Rerun ``stream``
    (``rerun+http://127.0.0.1:<data port>/proxy``)."""
    from urllib.parse import quote

    return f"http://127.0.0.1:{web_port}/?url={quote(stream, safe='')}"


def _rgba(v: Visual) -> list[int]:
    return [round(255 * c) for c in v.color]


class RerunView:
    """A Rerun recording of a system, served to the browser (``web_port``: the viewer's page;
    ``data_port``: Rerun's gRPC stream, default ``web_port + 1``) or else saved to a ``.rrd``
    file (``save``); ``update`` with the state at each step (throttled, module doc)."""

    def __init__(
        self,
        system: System,
        web_port: int = 0,
        data_port: int = 0,
        save: str | Path | None = None,
        rate: float = 30.0,
        app: str = "uvms_sim",
    ) -> None:
        import rerun as rr

        self.rr = rr
        self.system = system
        self.scene = SceneState(system)
        self.rec = rr.RecordingStream(app)
        self.url = ""
        self.web_port = web_port
        self.names, vehicles = tf_names(system)
        self.roots = [self.names[vf.root] for vf in vehicles]
        blueprint = self._blueprint(self.roots)
        if web_port:
            self.url = rr.serve_grpc(
                grpc_port=data_port or web_port + 1, recording=self.rec, default_blueprint=blueprint
            )
            rr.serve_web_viewer(web_port=web_port, open_browser=False, connect_to=self.url)
        elif save:
            self.rec.save(str(save), default_blueprint=blueprint)
        # served live, also at most ``rate`` frames a wall-clock second
        self.cadence = Cadence(1.0 / rate, 1.0 / rate if web_port else 0.0)
        self._log_static()

    @property
    def page(self) -> str:
        """The address of the viewer's page, connected to this stream."""
        return page_address(self.web_port, self.url)

    def _blueprint(self, roots: list[str]):
        """A large 3D view seen from the first vehicle's frame (a chase view: the vehicle stays in
        the picture wherever it goes; everything in the world is drawn), beside the depth and
        thrust plots."""
        import rerun.blueprint as rrb

        origin = f"world/{roots[0]}" if roots else "world"
        # behind, to the right of and above the vehicle, in its FRD axes
        eye = rrb.EyeControls3D(
            position=[-1.6, 1.1, -0.7], look_target=[0.0, 0.0, 0.0], eye_up=[0.0, 0.0, -1.0]
        )
        return rrb.Blueprint(
            rrb.Horizontal(
                rrb.Spatial3DView(origin=origin, contents="/world/**", name="vehicles", eye_controls=eye),
                rrb.Vertical(
                    rrb.TimeSeriesView(origin="plots/depth", name="depth (m)"),
                    rrb.TimeSeriesView(origin="plots/thrust", name="thrust (N)"),
                ),
                column_shares=[3, 2],
            ),
            collapse_panels=True,
        )

    def _log_static(self) -> None:
        rr, rec = self.rr, self.rec
        rec.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
        for root in self.roots:  # the vehicles' frames are FRD: down is their z
            rec.log(f"world/{root}", rr.ViewCoordinates.FRD, static=True)
        for i, body in enumerate(self.system.model.bodies):
            shapes = list(link_visuals(body))
            shapes += [thruster_visual(t) for t in self.system.thrusters if t.body == body.name]
            for k, v in enumerate(shapes):
                path = f"world/{self.names[i]}/visual_{k}"
                rec.log(
                    path, rr.Transform3D(translation=v.xyz, mat3x3=euler2mat(*v.rpy, "sxyz")), static=True
                )
                rec.log(path, self._shape(v), static=True)
        half = SURFACE_HALF_SIZE
        surface = self.scene.surface_height()
        if surface is not None:
            plate = rr.Boxes3D(centers=[[0, 0, surface - 0.005]], half_sizes=[[half, half, 0.005]],
                               colors=[[60, 140, 220, 40]], fill_mode="solid")  # fmt: skip
            rec.log("world/water_surface", plate, static=True)
        for k, z in enumerate(self.scene.seabed_heights()):
            plate = rr.Boxes3D(centers=[[0, 0, z - 0.02]], half_sizes=[[half, half, 0.02]],
                               colors=[[150, 130, 90, 160]], fill_mode="solid")  # fmt: skip
            rec.log(f"world/seabed_{k}", plate, static=True)

    def _shape(self, v: Visual):
        rr = self.rr
        color = [_rgba(v)]
        if v.shape == "box":
            return rr.Boxes3D(half_sizes=[[s / 2 for s in v.size]], colors=color, fill_mode="solid")
        if v.shape == "cylinder":
            return rr.Cylinders3D(lengths=[v.size[1]], radii=[v.size[0]], colors=color, fill_mode="solid")
        if v.shape == "sphere":
            return rr.Ellipsoids3D(half_sizes=[[v.size[0]] * 3], colors=color, fill_mode="solid")
        path = Path(v.mesh.removeprefix("file://"))
        if path.is_file():
            return rr.Asset3D(path=path)
        return rr.Points3D([[0, 0, 0]], colors=color, radii=[0.05])  # a mesh this machine cannot resolve

    def update(self, t: float, q: np.ndarray, thrust: np.ndarray | None = None, force: bool = False) -> bool:
        """Log the state at simulated time ``t`` if its turn has come (module doc); whether it
        was logged."""
        if not self.cadence.due(t, force):
            return False
        self.log(t, self.scene.frame(q, thrust))
        return True

    def log(self, t: float, frame: Frame) -> None:
        """One frame of the scene (``viz.scene``) at simulated time ``t``."""
        rr, rec = self.rr, self.rec
        rec.set_time("sim", duration=float(t))
        for i, name in enumerate(self.names):
            rec.log(f"world/{name}", rr.Transform3D(translation=frame.p[i], mat3x3=frame.R[i]))
        if len(frame.arrows):
            colors = [FORWARD if f >= 0 else REVERSE for f in frame.thrust]
            arrows = rr.Arrows3D(
                origins=frame.arrow_origins, vectors=frame.arrows, colors=colors, radii=ARROW_RADIUS
            )
            rec.log("world/thrust", arrows)
            for name, f in zip((th.name for th in self.system.thrusters), frame.thrust, strict=True):
                rec.log(f"plots/thrust/{name}", rr.Scalars(float(f)))
        for v in self.system.vehicles:
            root = self.system.model.body_index(v.root)
            rec.log(f"plots/depth/{v.name}", rr.Scalars(float(-frame.p[root][2])))
        self._log_water(frame)

    def _log_water(self, frame: Frame) -> None:
        """The tethers (line strips, and their tension plotted) and the wave surface (a mesh)."""
        rr, rec = self.rr, self.rec
        for name, nodes, tension in frame.tethers:
            rec.log(f"world/tether/{name}", rr.LineStrips3D([nodes], colors=[[240, 200, 30]], radii=0.015))
            rec.log(f"plots/tether_tension/{name}", rr.Scalars(tension))
        if frame.surface is not None:
            vertices, triangles = frame.surface
            colors = [[64, 140, 217, 90]] * len(vertices)
            mesh = rr.Mesh3D(vertex_positions=vertices, triangle_indices=triangles, vertex_colors=colors)
            rec.log("world/water_surface", mesh)

    def close(self) -> None:
        self.rec.flush()
        self.rec.disconnect()
