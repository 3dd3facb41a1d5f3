"""The browser view: the simulation streamed to Rerun's web viewer, which the ``rerun-sdk``
wheel carries and this machine serves (no ROS, no internet), or written to a ``.rrd`` recording
that the Rerun viewer opens.

What is shown: every link of every vehicle with its visuals (``model.visual``: the
description's, else from its hull, drag cylinder or mass), placed at each frame; the thrust of
each thruster as an arrow (``viz.scene.ARROW_SCALE`` m per newton, green forward, red reverse);
each vehicle's path as a trail (the last ``TRAIL_POINTS`` places, one every ``TRAIL_STEP`` m);
the world's planes (``viz.scene.world_planes``: the water surface and the seabeds, drawn by
``draw_world``); time plots of each vehicle's depth and of the thrusts; and the image of each
camera and the fan of each imaging sonar (``log_picture``), a 2D view each. The 3D space is the
ROS world frame (``odom``: ENU, z up); the timeline ``sim`` is simulated time. Two 3D views,
as tabs: ``world`` (a camera fixed in the world: the vehicle moves through it) and ``vehicle``
(a chase camera fixed to the first vehicle: the world moves around it); ``camera`` picks the
one shown first.

Served live (``web_port``), the page and the stream are this process's own sockets on ``bind``
(127.0.0.1 unless told otherwise: ``viz.web_front``, which bounds what clients send), and
Rerun's gRPC server listens on loopback only, behind it. Cost: a frame is logged at most
``rate`` times per simulated second and, when served live, ``WALL_RATE`` (5) times per
wall-clock second: a browser rendering in software on two cores then keeps up (measured lag
0.5-0.9 s, docs/views.md; at 15 frames a second it stayed 6-8 s behind), and a simulation running 50x real
time pays for 5 frames a second, not 1500.
Rerun's server keeps the last ``SERVER_MEMORY`` of the stream for a browser that opens the page
later, newest first, so it starts live.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat

from ..log import logger
from ..loop import Cadence
from ..model.naming import tf_names
from ..model.system import System
from ..model.urdf_writer import link_visuals
from ..model.visual import Visual, thruster_visual
from .scene import Frame, Plane, SceneState, scene_meshes, world_planes
from .web_front import ServeError, WebFront, check_bind, is_loopback, own_listening_tcp

FORWARD, REVERSE = (40, 200, 60), (220, 50, 40)
ARROW_RADIUS = 0.012  # m
WALL_RATE = 5.0  # Hz: frames a wall-clock second, at most, when served live (module doc)
FLUSH_TICK = 0.1  # s: what was logged is sent this often (a chunk per entity holds a few frames)
TRAIL_POINTS = 2000  # places kept per vehicle trail (100 m at TRAIL_STEP)
TRAIL_PIECE = 50  # places per logged piece of it
TRAIL_STEP = 0.05  # m: a place is added when the vehicle has moved this far
TRAIL_JUMP, TRAIL_SPEED = 1.0, 10.0  # m, m/s: a move farther than both (per frame) is a jump
TRAIL_COLOR, TRAIL_RADIUS = (255, 200, 40), 0.015
WORLD_HALF_SIZE = 25.0  # m: the drawn patch of each plane around the origin
GRID_STEP = 1.0  # m
PLANE_COLORS = {
    "surface": (60, 140, 220, 50),
    "seabed": (150, 130, 90, 200),
    "structure": (160, 160, 150, 255),
}
GRID_COLORS = {"surface": (120, 180, 240, 90), "seabed": (90, 75, 50, 255)}
SERVER_MEMORY = "32MiB"  # what Rerun's gRPC server keeps for a browser that connects late
CAMERAS = ("world", "vehicle")
PICTURE_RATE = 4.0  # Hz: camera images and sonar fans a wall-clock second, at most, each
JPEG_QUALITY = 80
LOOPBACK = "127.0.0.1"
BACKEND_START = 10.0  # s: for Rerun's gRPC server to listen


def page_address(web_port: int, stream: str, host: str = LOOPBACK) -> str:
    """The address of the viewer's page on ``host``:``web_port``, connected to the Rerun
    ``stream`` (``rerun+http://<host>:<data port>/proxy``)."""
    from urllib.parse import quote

    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{web_port}/?url={quote(stream, safe='')}"


def check_camera(camera: str) -> str:
    """``camera`` if it names a 3D view (``CAMERAS``), else ValueError saying what was expected."""
    if camera not in CAMERAS:
        raise ValueError(f"browser view: camera {camera!r}: expected {' or '.join(CAMERAS)}")
    return camera


def picture_paths(system: System) -> list[str]:
    """Where the cameras' images and the imaging sonars' fans are logged: ``camera/<name>`` and
    ``sonar/<name>`` (under the vehicle's name when there are several), one 2D view each."""
    many = len(system.vehicles) > 1
    kinds = {"camera": "camera", "imaging_sonar": "sonar"}
    return [
        f"{kinds[s.type]}/{v.name + '/' if many else ''}{s.name}"
        for v in system.vehicles
        for s in v.sensors
        if s.type in kinds
    ]


def _rgba(v: Visual) -> list[int]:
    return [round(255 * c) for c in v.color]


Mesh = tuple[str, np.ndarray, np.ndarray]  # kind, vertices (world ENU), triangle indices


def draw_world(rec, planes: Sequence[Plane], meshes: Sequence[Mesh] = ()) -> None:
    """The world's fixed geometry in the recording ``rec`` (static, under ``world/scene``):
    each plane (``viz.scene.Plane``) as a translucent square of ``2 WORLD_HALF_SIZE`` m around
    the origin with a grid every ``GRID_STEP`` m (the grid shows motion in any view), each mesh
    (kind, vertices world ENU, triangle indices) as a surface of its kind's colour."""
    import rerun as rr

    h, n = WORLD_HALF_SIZE, round(2 * WORLD_HALF_SIZE / GRID_STEP)
    ticks = np.linspace(-h, h, n + 1)
    counts: dict[str, int] = {}
    for plane in planes:
        k = counts[plane.kind] = counts.get(plane.kind, -1) + 1
        path = f"world/scene/{plane.kind}_{k}"
        corners = np.array([[x, y, plane.height(x, y)] for x, y in ((-h, -h), (h, -h), (h, h), (-h, h))])
        rec.log(path, rr.Mesh3D(vertex_positions=corners, triangle_indices=[[0, 1, 2], [0, 2, 3]],
                                albedo_factor=PLANE_COLORS[plane.kind]), static=True)  # fmt: skip
        lines = [[[x, -h, plane.height(x, -h)], [x, h, plane.height(x, h)]] for x in ticks]
        lines += [[[-h, y, plane.height(-h, y)], [h, y, plane.height(h, y)]] for y in ticks]
        rec.log(
            f"{path}/grid", rr.LineStrips3D(lines, colors=GRID_COLORS[plane.kind], radii=0.01), static=True
        )
    for k, (kind, vertices, triangles) in enumerate(meshes):
        mesh = rr.Mesh3D(
            vertex_positions=vertices, triangle_indices=triangles, albedo_factor=PLANE_COLORS[kind]
        )
        rec.log(f"world/scene/mesh_{k}", mesh, static=True)


class Trail:
    """A vehicle's recent path, logged in pieces so that each frame sends a few points, not the
    whole path: a place every ``TRAIL_STEP`` m, gathered in a live piece (logged as it grows);
    a piece of ``TRAIL_PIECE`` places is sealed into one of ``TRAIL_POINTS / TRAIL_PIECE``
    slots, reused in turn (the oldest piece gives way). A jump farther than a vehicle could
    move (a teleport, a reset) starts the path again."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.live: list[np.ndarray] = []
        self.sealed = 0
        self.last_t = -np.inf

    def add(self, rec, t: float, p: np.ndarray) -> None:
        import rerun as rr

        if self.live:
            step = float(np.linalg.norm(p - self.live[-1]))
            if step > max(TRAIL_JUMP, TRAIL_SPEED * (t - self.last_t)):
                rec.log(self.path, rr.Clear(recursive=True))
                self.live, self.sealed = [], 0
            elif step < TRAIL_STEP:
                return
        self.live.append(np.array(p, dtype=float))
        self.last_t = t
        if len(self.live) < 2:
            return
        strip = rr.LineStrips3D([np.array(self.live)], colors=TRAIL_COLOR, radii=TRAIL_RADIUS)
        if len(self.live) < TRAIL_PIECE:
            rec.log(f"{self.path}/live", strip)
            return
        rec.log(f"{self.path}/piece_{self.sealed % (TRAIL_POINTS // TRAIL_PIECE)}", strip)
        self.sealed += 1
        self.live = [self.live[-1]]


class RerunView:
    """A Rerun recording of a system, served to the browser (``web_port``: the viewer's page;
    ``data_port``: its data stream, default ``web_port + 1``; both on ``bind``) or else saved
    to a ``.rrd`` file (``save``); ``update`` with the state at each step (throttled, module
    doc); ``camera`` (``world`` or ``vehicle``): the 3D view shown first."""

    def __init__(
        self,
        system: System,
        web_port: int = 0,
        data_port: int = 0,
        save: str | Path | None = None,
        rate: float = 30.0,
        app: str = "uvms_sim",
        bind: str = LOOPBACK,
        camera: str = "world",
    ) -> None:
        import rerun as rr

        check_camera(camera)
        self.rr = rr
        self.system = system
        self.scene = SceneState(system)
        self.names, vehicles = tf_names(system)
        self.roots = [self.names[vf.root] for vf in vehicles]
        self.root_index = [system.model.body_index(v.root) for v in system.vehicles]
        self.trails = [Trail(f"world/trail/{v.name}") for v in system.vehicles]
        self.front: WebFront | None = None
        self.pictures = picture_paths(system)
        self.picture_due: dict[str, float] = {}
        # the SDK sends what was logged every FLUSH_TICK: one chunk per entity for a few frames
        # rather than one per frame (the viewer's cost is per chunk; module doc)
        batcher = rr.ChunkBatcherConfig(flush_tick=FLUSH_TICK)
        self.rec = rr.RecordingStream(app, batcher_config=batcher)
        blueprint = self._blueprint(camera)
        if web_port:
            self._serve(blueprint, bind, web_port, data_port or web_port + 1)
        elif save:
            self.rec.save(str(save), default_blueprint=blueprint)
        # served live, also at most WALL_RATE frames a wall-clock second
        self.cadence = Cadence(1.0 / rate, 1.0 / min(rate, WALL_RATE) if web_port else 0.0)
        self._log_static()

    def _serve(self, blueprint, bind: str, web_port: int, data_port: int) -> None:
        """The front on ``bind`` (ports checked first: a taken one is a ServeError naming it),
        Rerun's gRPC server behind it on loopback."""
        from .viewer_assets import viewer_assets

        bind = check_bind(bind)
        front = WebFront(bind, web_port, data_port, {}, (LOOPBACK, 0))
        try:
            front.assets = viewer_assets()
            # browsers of other machines load the page from this machine's address: their
            # origin is let through Rerun's CORS check (loopback origins are by default)
            origins = [] if is_loopback(bind) else [f"http://*:{front.page_port}"]
            sink = self.rr.GrpcServerSink(
                bind_ip=LOOPBACK, port=0, server_memory_limit=SERVER_MEMORY, newest_first=True,
                cors_allow_origin=origins,
            )  # fmt: skip
            # the port the system gave Rerun's server: the loopback socket this process listens
            # on now and did not before (Rerun does not say it, nor raise when it cannot listen)
            before = own_listening_tcp()
            self.rec.set_sinks(sink, default_blueprint=blueprint)
            end = time.monotonic() + BACKEND_START
            while not (new := {a for a in own_listening_tcp() - before if a[0] == LOOPBACK}):
                if time.monotonic() > end:
                    raise ServeError("browser view: Rerun's gRPC server did not start on 127.0.0.1")
                time.sleep(0.02)
            front.backend = (LOOPBACK, min(port for _, port in new))
        except BaseException:
            front.close()
            raise
        self.front = front

    @property
    def page(self) -> str:
        """The address of the viewer's page, connected to this stream (the bound address;
        127.0.0.1 when bound to every interface)."""
        if self.front is None:
            return ""
        host = self.front.host if self.front.host not in ("0.0.0.0", "::") else LOOPBACK
        return page_address(self.front.page_port, self.front.stream_url(), host)

    @property
    def exposure(self) -> str:
        """Where the page and the stream listen, when that is not this machine only."""
        if self.front is None or is_loopback(self.front.host):
            return ""
        every = self.front.host in ("0.0.0.0", "::")
        where = "every network interface" if every else "a network interface"
        return (
            f" (listening on {self.front.host} ports {self.front.page_port} and "
            f"{self.front.data_port}: {where}, anyone who reaches this machine can watch)"
        )

    @property
    def url(self) -> str:
        """The data stream's address (``rerun+http://.../proxy``), "" when not served."""
        return "" if self.front is None else self.front.stream_url()

    def _blueprint(self, camera: str):
        """Two 3D views as tabs (``world`` and ``vehicle``, module doc), beside the depth and
        thrust plots."""
        import rerun.blueprint as rrb

        start = (
            self.scene.frame(self.system.initial_q, None).p[self.root_index[0]] if self.roots else np.zeros(3)
        )
        world_eye = rrb.EyeControls3D(
            position=start + np.array([-3.0, -3.0, 1.8]), look_target=start, eye_up=[0.0, 0.0, 1.0]
        )
        # behind, to the right of and above the vehicle, in its FRD axes
        chase_eye = rrb.EyeControls3D(
            position=[-1.6, 1.1, -0.7], look_target=[0.0, 0.0, 0.0], eye_up=[0.0, 0.0, -1.0]
        )
        chase_origin = f"world/{self.roots[0]}" if self.roots else "world"
        pictures = [rrb.Spatial2DView(origin=path, name=path) for path in self.pictures]
        views = rrb.Tabs(
            rrb.Spatial3DView(origin="world", contents="/world/**", name="world", eye_controls=world_eye),
            rrb.Spatial3DView(
                origin=chase_origin, contents="/world/**", name="vehicle", eye_controls=chase_eye
            ),
            active_tab=CAMERAS.index(camera),
        )
        return rrb.Blueprint(
            rrb.Horizontal(
                views,
                rrb.Vertical(
                    *pictures,
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
        for i in range(self.system.model.nbodies):
            self._log_body(i)
        waves = self.system.environment.waves  # a wave surface is drawn each frame instead
        flat = [
            p
            for p in world_planes(self.system)
            if not (p.kind == "surface" and waves is not None and len(waves))
        ]
        draw_world(rec, flat, scene_meshes(self.system))
        names = [th.name for th in self.system.thrusters]
        if names:
            rec.log("plots/thrust", rr.SeriesLines(names=names), static=True)

    def _log_body(self, i: int) -> None:
        """Body ``i``'s visuals (and its thrusters'), fixed in its frame."""
        rr, rec = self.rr, self.rec
        body = self.system.model.bodies[i]
        shapes = list(link_visuals(body))
        shapes += [thruster_visual(t) for t in self.system.thrusters if t.body == body.name]
        for k, v in enumerate(shapes):
            path = f"world/{self.names[i]}/visual_{k}"
            rec.log(path, rr.Transform3D(translation=v.xyz, mat3x3=euler2mat(*v.rpy, "sxyz")), static=True)
            rec.log(path, self._shape(v), static=True)

    def rebuild(self, system: System) -> None:
        """Follow ``system`` (the same description with other free objects, added or removed
        at run time): the bodies it no longer has are cleared, its new ones drawn."""
        rr, rec = self.rr, self.rec
        old = set(self.names)
        trails = {t.path: t for t in self.trails}
        self.system = system
        self.scene = SceneState(system)
        self.names, vehicles = tf_names(system)
        self.roots = [self.names[vf.root] for vf in vehicles]
        self.root_index = [system.model.body_index(v.root) for v in system.vehicles]
        self.trails = [
            trails.get(f"world/trail/{v.name}") or Trail(f"world/trail/{v.name}") for v in system.vehicles
        ]
        for name in sorted(old - set(self.names)):
            rec.log(f"world/{name}", rr.Clear(recursive=True), static=True)
        for path in sorted(set(trails) - {t.path for t in self.trails}):  # and its depth plot
            rec.log(path, rr.Clear(recursive=True), static=True)
            rec.log(path.replace("world/trail/", "plots/depth/"), rr.Clear(recursive=True), static=True)
        for i, name in enumerate(self.names):
            if name not in old:
                if name in self.roots:
                    rec.log(f"world/{name}", rr.ViewCoordinates.FRD, static=True)
                self._log_body(i)

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
            rec.log("plots/thrust", rr.Scalars(np.asarray(frame.thrust, dtype=float)))
        for v, root, trail in zip(self.system.vehicles, self.root_index, self.trails, strict=True):
            rec.log(f"plots/depth/{v.name}", rr.Scalars(float(-frame.p[root][2])))
            trail.add(rec, t, frame.p[root])
        self._log_water(frame)

    def log_picture(self, path: str, t: float, picture: np.ndarray) -> bool:
        """A camera's image (H x W x 3) or a sonar's fan (H x W, ``sensors.imaging_sonar.fan``)
        at simulated time ``t`` on ``path`` (``picture_paths``), at most ``PICTURE_RATE`` a
        wall-clock second each (JPEG); whether it was logged. Called from the sensors' threads."""
        now = time.monotonic()
        if now < self.picture_due.get(path, 0.0):
            return False
        self.picture_due[path] = now + 1.0 / PICTURE_RATE
        rr, rec = self.rr, self.rec
        rec.set_time("sim", duration=float(t))  # per thread: the sensors' own
        rec.log(path, rr.Image(picture).compress(jpeg_quality=JPEG_QUALITY))
        return True

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
        """Send what is pending (a recording: all of it; served: at most 2 s more), then close
        the file or the ports."""
        try:
            self.rec.flush(timeout_sec=2.0 if self.front is not None else 1e38)
        except Exception as exc:  # a browser that stopped reading: nothing more to give it
            logger.debug(f"browser view: flush at close: {exc}")
        self.rec.disconnect()
        if self.front is not None:
            self.front.close()
            self.front = None
