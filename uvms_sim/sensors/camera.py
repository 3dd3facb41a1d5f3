"""A pinhole camera that sees the scene through water: one ray per pixel cast by Embree
(``scene.SceneRays``), and the revised underwater image-formation model of Akkaynak and
Treibitz (2018, eq. 3) for each colour channel c at range z along the pixel's ray:

    I_c = J_c exp(-beta_D,c z) + B_inf,c (1 - exp(-beta_B,c z))

the direct signal (the surface's radiance J_c, attenuated by the wideband attenuation
coefficient beta_D,c) plus backscatter that grows towards the veiling light B_inf,c with its
own coefficient beta_B,c. A pixel that meets no surface within ``max_range`` is veiling light.
J_c is the surface's albedo (``ALBEDO``) lit by light from above: ``albedo (ambient + (1 -
ambient) max(0, n . up))``. Optional sensor noise: white Gaussian, ``noise`` of full scale,
before the 8-bit quantisation.

The vehicle's lights (``Lamp``: a Lumen's luminous flux and beam) add to J the light they put
on the surface, as the direct (non-scattered) source term of McGlamery (1980) and Jaffe (1990):
a point source of intensity ``I(theta)`` (cd) at distance ``r_s`` from a Lambertian
surface whose normal makes the angle ``phi`` with the way back to the source lights it with
``E_c = I(theta) cos(phi) exp(-beta_D,c r_s) / r_s^2`` per channel (inverse square and the
attenuation along the source-to-surface path), and the surface sends ``albedo_c exposure E_c``
towards the camera, attenuated on the way there as J is. ``theta`` is the angle off the lamp's
axis: ``I(theta) = I_0 cos(theta)^m`` (zero behind it), ``m`` such that the intensity is half
the axis' at half the beam width, and ``I_0 = lumens (m + 1) / (2 pi)`` so that the beam
carries the lamp's luminous flux; each lamp's times its level (0: off to 1: full, ArduSub's
lights output). ``exposure`` (1/lux) puts the illuminance on the scale of the ambient term
(1: full scale for a white surface). A surface point lit by a lamp is in its shadow when a
structure, the seabed's triangles or a body lies on the straight path between them (a shadow
ray cast from the lamp). The lamps' backscatter (the light the water between scatters back
into the camera, Jaffe's third term) is not modelled: the backscatter term stays Akkaynak and
Treibitz's ambient one. With every lamp at 0 the image is
the one without lamps, bit for bit.

Axes: the camera's own axes are those of the mount (``rpy`` on its link): x along the optical
axis, y to the right of the image, z down the image; ``tilt`` turns it about its y axis,
right-handed (a positive tilt looks up in an FRD link: the pitch of the BlueROV2's tilt mount,
as ArduSub's mount angles count it). Images follow
ROS's optical frame: u (columns) along y, v (rows) along z, pixel centres at whole numbers,
``u = fx y / x + cx``, ``v = fy z / x + cy`` (sensor_msgs/CameraInfo's K). The depth image is
the distance along the optical axis (REP 118: metres, NaN where no surface is).

Speed: ``render`` runs compiled (``camera_kernels``), Embree asked only for the rays that can
meet a triangle; ``render_plainly`` is the same in plain numpy, the reference it is tested
against (the same image, bit for bit, in the tests' scenes unlit; lit, within one level in
0.1 % of the pixels). docs/performance.md has the
frames per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..scene import SceneRays
from .body_rays import BodyRays
from .camera_kernels import box_rays, expose, lamp_geometry, lamp_rays, nearest, shade, world_rays

Array = np.ndarray
# camera axes (x forward, y right, z down) from optical axes (x right, y down, z forward)
OPTICAL = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
SAND, GREY = (0.76, 0.70, 0.50), (0.55, 0.55, 0.55)
FAR = 1.0e6  # m: the range of a ray that meets nothing (its direct signal is zero)
# a lamp's shadow ray stops this fraction of its length short of the surface it lights, so that
# the surface does not shadow itself: Embree works in single precision in a scene scaled to a
# 100-unit box, an error of about 1e-7 of the scene's size, against a clearance of SHADOW_GAP r
# cos(incidence) from the surface (0.4 mm at 4 m and 0.2 cos: enough for scenes up to some
# hundreds of metres; a kilometre of terrain lit at grazing incidence could speckle)
SHADOW_GAP = 1.0e-4
EXPOSURE = 1.0e-3  # 1/lux: 1000 lux on a white surface is full scale (this project's choice)


@dataclass(frozen=True)
class Lamp:
    """A light's beam (module doc): ``lumens`` (lm) and ``beam_width`` (rad, the full angle at
    half the axis' intensity)."""

    lumens: float
    beam_width: float

    @property
    def exponent(self) -> float:
        """``m`` of ``I_0 cos(theta)^m``: half the axis' intensity at half the beam width."""
        return math.log(0.5) / math.log(math.cos(0.5 * self.beam_width))

    @property
    def intensity(self) -> float:
        """``I_0`` (cd): the axis' luminous intensity that carries ``lumens`` over the beam."""
        return self.lumens * (self.exponent + 1.0) / (2.0 * math.pi)


def lamp_rows(lamps: list[tuple[Lamp, Array, Array]], level: float, exposure: float = EXPOSURE) -> Array:
    """The rows ``render`` takes for lamps at world positions and unit axes ``(lamp, position,
    axis)``, all at ``level`` (0-1): position (3), axis (3), ``level exposure I_0``, ``m``."""
    rows = np.zeros((len(lamps), 8))
    for k, (lamp, position, axis) in enumerate(lamps):
        rows[k, :3], rows[k, 3:6] = position, axis
        rows[k, 6], rows[k, 7] = float(level) * exposure * lamp.intensity, lamp.exponent
    return rows


def from_lamp(points: Array, normals: Array, row: Array) -> tuple[Array, Array, Array, Array, Array]:
    """Surface points (rows) with unit ``normals`` facing the camera seen from the lamp of
    ``row`` (``lamp_rows``): which it lights (in front of it, facing it), their distances, unit
    directions from the lamp, cosines off its axis and cosines of incidence."""
    s = points - row[:3]
    r = np.linalg.norm(s, axis=1)
    u = s / np.where(r > 0.0, r, 1.0)[:, None]
    cos_b, cos_i = u @ row[3:6], -np.einsum("ij,ij->i", u, normals)
    return (cos_b > 0.0) & (cos_i > 0.0) & (r > 0.0), r, u, cos_b, cos_i


def add_lamp_light(
    out: Array, strength: float, m: float, cos_b: Array, cos_i: Array, r: Array, minus_beta_d: Array,
    e: Array, attenuation: Array,
) -> None:  # fmt: skip
    """``out`` (rows x 3) plus one lamp's ``exposure E_c`` (module doc): ``strength cos_b^m cos_i
    / r^2`` attenuated by ``exp(-beta_D,c r)`` per channel (``minus_beta_d``: -beta_D, float64);
    ``e`` (rows) and ``attenuation`` (rows x 3) are working buffers. Rows with ``cos_i`` 0 and
    ``r`` 1 add nothing. The one place the lamps' light is computed, for both render paths."""
    np.power(cos_b, m, out=e)
    np.multiply(strength, e, out=e)
    e *= cos_i
    e /= np.square(r)
    np.multiply(minus_beta_d[None, :], r[:, None], out=attenuation)
    np.exp(attenuation, out=attenuation)
    attenuation *= e[:, None]
    out += attenuation


def lamp_light(
    points: Array, normals: Array, rows: Array, beta_d: Array, shadowed: Array | None = None
) -> Array:
    """The lamps' ``exposure E_c`` (pixels x 3, float64) on surfaces at ``points`` with unit
    ``normals`` facing the camera (rows), ``rows`` as ``lamp_rows`` gives them (module doc);
    ``shadowed`` (points x lamps): the points each lamp cannot see."""
    out = np.zeros((len(points), 3))
    minus_beta_d = -np.asarray(beta_d, dtype=float)
    for k, row in enumerate(rows):
        strength, m = row[6], row[7]
        if strength <= 0.0:
            continue
        lit, r, _, cos_b, cos_i = from_lamp(points, normals, row)
        if shadowed is not None:
            lit &= ~shadowed[:, k]
        cos_b, cos_i, r = np.where(lit, cos_b, 0.0), np.where(lit, cos_i, 0.0), np.where(lit, r, 1.0)
        add_lamp_light(out, strength, m, cos_b, cos_i, r, minus_beta_d, np.empty(len(r)), np.empty(out.shape))
    return out


@dataclass(frozen=True)
class Intrinsics:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def from_fov(cls, width: int, height: int, hfov: float) -> Intrinsics:
        """Square pixels, the principal point at the image's centre, ``hfov`` (rad) across."""
        f = 0.5 * width / math.tan(0.5 * hfov)
        return cls(int(width), int(height), f, f, 0.5 * (width - 1), 0.5 * (height - 1))

    @property
    def K(self) -> Array:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def project(self, point: Array) -> Array:
        """Pixel (u, v) of a point in camera axes (x forward)."""
        x, y, z = np.asarray(point, dtype=float)
        return np.array([self.fx * y / x + self.cx, self.fy * z / x + self.cy])

    def rays(self) -> tuple[Array, Array]:
        """Unit ray of each pixel in camera axes (rows, row-major: v then u) and the optical
        depth of a unit step along it (the cosine to the optical axis)."""
        u, v = np.meshgrid(np.arange(self.width), np.arange(self.height))
        d = np.stack([np.ones(u.shape), (u - self.cx) / self.fx, (v - self.cy) / self.fy], axis=-1)
        d = d.reshape(-1, 3)
        norm = np.linalg.norm(d, axis=1)
        return d / norm[:, None], 1.0 / norm


@dataclass(frozen=True)
class Water:
    """Per channel (R, G, B): ``beta_d`` and ``beta_b`` (1/m) and the veiling light ``b_inf``
    (0-1). Defaults: coastal water, red lost first (this project's choice, of the magnitudes
    Akkaynak and Treibitz 2018 report for coastal water)."""

    beta_d: tuple[float, float, float] = (0.40, 0.10, 0.08)
    beta_b: tuple[float, float, float] = (0.30, 0.09, 0.07)
    b_inf: tuple[float, float, float] = (0.05, 0.22, 0.28)


def image_formation(J: Array, z: Array, water: Water) -> Array:
    """Akkaynak and Treibitz (2018, eq. 3): radiance (..., 3) of surfaces of radiance ``J``
    (..., 3) seen through ``z`` (...) metres of water; z = inf (with J = 0) gives the veiling
    light."""
    z = np.minimum(np.asarray(z), FAR)[..., None]
    beta_d, beta_b, b_inf = (
        np.asarray(x, dtype=np.float32) for x in (water.beta_d, water.beta_b, water.b_inf)
    )
    return J * np.exp(-beta_d * z) + b_inf * (1.0 - np.exp(-beta_b * z))


class Camera:
    """Renders one scene from poses: ``render(R, p)`` -> (RGB uint8 H x W x 3, depth float32
    H x W). ``R`` takes camera axes to world NED (the mount's, before the tilt). With
    ``BodyRays`` the bodies are seen too, where they were last placed (``BodyRays.place``), in
    their first visual's colour; the body the camera sits in is left out by ``BodyRays``'s
    ``skip``."""

    def __init__(
        self,
        rays: SceneRays | BodyRays,
        intrinsics: Intrinsics,
        water: Water | None = None,
        max_range: float = 30.0,
        ambient: float = 0.35,
        noise: float = 0.0,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.rays, self.intrinsics = rays, intrinsics
        self.bodies = rays if isinstance(rays, BodyRays) else None
        self.scene_rays = rays.scene_rays if isinstance(rays, BodyRays) else rays
        self.water = water or Water()
        self.max_range, self.ambient, self.noise, self.rng = max_range, ambient, noise, rng
        self.directions, self.cosines = intrinsics.rays()
        names = [name for name, _, _ in rays.scene.surfaces()]
        colors: list[tuple[float, ...]] = [SAND if n == "seabed" else GREY for n in names]
        colors += self.bodies.colors if self.bodies is not None else []
        self.albedo = np.array([*colors, (0.0, 0.0, 0.0)], dtype=np.float32)
        self._frame = _Frame(self)

    def radiance(
        self, R: Array, p: Array, tilt: float = 0.0, lamps: Array | None = None
    ) -> tuple[Array, Array]:
        """Radiance (pixels x 3, row-major, no noise) and range along each pixel's ray (inf
        where no surface is within ``max_range``): the model written plainly in numpy, every
        ray through ``SceneRays.trace``; ``render`` computes the same compiled. ``lamps``: the
        lights' rows (``lamp_rows``)."""
        world = np.asarray(R) @ tilted(tilt)
        rays = self.directions @ world.T
        distance, normal, surface = self.rays.trace(p, rays)
        distance[distance > self.max_range] = np.inf
        surface[~np.isfinite(distance)] = -1
        light = self.ambient + (1.0 - self.ambient) * np.clip(-normal[:, 2], 0.0, None)  # NED: up is -z
        if lamps is not None and len(lamps) and np.any(lamps[:, 6] > 0.0):
            seen = np.isfinite(distance)
            added = np.zeros((len(distance), 3))
            points = np.asarray(p, dtype=float) + distance[seen, None] * rays[seen]
            shadowed = self.shadows(points, normal[seen], lamps)
            added[seen] = lamp_light(
                points, normal[seen], lamps, np.asarray(self.water.beta_d, dtype=np.float32), shadowed
            )
            J = self.albedo[surface] * (light[:, None] + added).astype(np.float32)
        else:
            J = self.albedo[surface] * light[:, None].astype(np.float32)
        return image_formation(J, distance.astype(np.float32), self.water), distance

    def shadows(self, points: Array, normals: Array, lamps: Array) -> Array:
        """Which surface points (rows, unit ``normals`` facing the camera) each lit lamp
        (``lamp_rows``) cannot see (points x lamps, bool): something in the scene or a body
        nearer along the way from the lamp than ``SHADOW_GAP`` short of the point; ``render``
        computes the same compiled."""
        shadowed = np.zeros((len(points), len(lamps)), dtype=bool)
        for k, row in enumerate(lamps):
            if row[6] <= 0.0:
                continue
            lights, r, u, _, _ = from_lamp(points, normals, row)
            lit = np.flatnonzero(lights)
            if len(lit):
                shadowed[lit, k] = self.rays.trace(row[:3], u[lit])[0] < r[lit] * (1.0 - SHADOW_GAP)
        return shadowed

    def render(
        self, R: Array, p: Array, tilt: float = 0.0, lamps: Array | None = None
    ) -> tuple[Array, Array]:
        """The image (RGB uint8, H x W x 3: ``radiance`` plus the noise, rounded to nearest)
        and the depth image (float32 H x W, NaN where no surface is); ``lamps``: the lights'
        rows (``lamp_rows``). Not re-entrant: one thread renders a camera."""
        h, w = self.intrinsics.height, self.intrinsics.width
        world = np.asarray(R, dtype=float) @ tilted(tilt)
        lit = lamps is not None and len(lamps) and bool(np.any(lamps[:, 6] > 0.0))
        rows = np.ascontiguousarray(lamps, dtype=float) if lit else np.zeros((0, 8))
        image, depth = self._frame.render(world, np.asarray(p, dtype=float), rows)
        return image.reshape(h, w, 3), depth.reshape(h, w)

    def render_plainly(
        self, R: Array, p: Array, tilt: float = 0.0, lamps: Array | None = None
    ) -> tuple[Array, Array]:
        """``render`` written plainly in numpy over ``radiance`` (every ray through
        ``SceneRays.trace``): the reference the compiled ``render`` is tested against, the same
        image and noise for the same generator state, about ten times slower."""
        rgb, distance = self.radiance(R, p, tilt, lamps)
        if self.noise and self.rng is not None:
            rgb += self.noise * self.rng.standard_normal(rgb.shape, dtype=np.float32)
        h, w = self.intrinsics.height, self.intrinsics.width
        rgb *= 255.0
        rgb += 0.5
        image = np.clip(rgb, 0.0, 255.0).astype(np.uint8).reshape(h, w, 3)  # rounded to nearest
        depth = np.where(np.isfinite(distance), distance * self.cosines, np.nan).astype(np.float32)
        return image, depth.reshape(h, w)


def tilted(tilt: float) -> Array:
    """The rotation about the camera's y axis by ``tilt`` (+ looks up, -z)."""
    c, s = math.cos(tilt), math.sin(tilt)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


class _Frame:
    """``Camera.render`` compiled (``camera_kernels``): what does not change between frames
    computed once (the rays in camera axes, their cosines, the mesh's box and normals, the
    coefficients in float32) and the per-frame buffers allocated once; Embree is asked only
    for the rays that enter a surface's box before the plane seabed and ``max_range``."""

    def __init__(self, camera: Camera) -> None:
        self.camera = camera
        rays, n = camera.scene_rays, len(camera.directions)
        self.rays = np.ascontiguousarray(camera.directions)
        bounds = rays.mesh_bounds()
        self.mesh = bounds is not None
        if bounds is not None:  # padded: a triangle on a box's face is inside it
            pad = 1e-6 * (1.0 + float(np.abs(np.concatenate(bounds)).max()))
            self.lo, self.hi = np.ascontiguousarray(bounds[0] - pad), np.ascontiguousarray(bounds[1] + pad)
        else:
            self.lo = self.hi = np.zeros((0, 3))
        self.face_normals = np.ascontiguousarray(rays.face_normals, dtype=float)
        self.face_surfaces = np.ascontiguousarray(rays.face_surfaces, dtype=np.int64)
        plane = rays.scene.plane
        self.plane = plane is not None
        self.up, self.depth = np.array([0.0, 0.0, -1.0]), 0.0
        if plane is not None:
            s0, s1 = plane.slope
            self.up = np.array([s0, s1, -1.0]) / math.sqrt(1.0 + s0 * s0 + s1 * s1)
            self.depth = plane.depth
        water = camera.water
        self.betas = -np.array([*water.beta_d, *water.beta_b], dtype=np.float32)
        self.b_inf = np.asarray(water.b_inf, dtype=np.float32)
        self.plane_distance, self.dirs = np.empty(n), np.empty((n, 3), dtype=np.float32)
        self.tfar, self.index = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.int64)
        self.J = np.empty((n, 3), dtype=np.float32)
        self.E, self.normal = np.empty((n, 6), dtype=np.float32), np.empty((n, 3), dtype=np.float32)
        self.body_dirs, self.body_tfar = np.empty((n, 3), dtype=np.float32), np.empty(n, dtype=np.float32)
        self.body_index, self.taken = np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.uint8)
        self.surface, self.distance = np.empty(n, dtype=np.int64), np.empty(n)  # nearest's buffers
        self.hit_normal = np.empty((n, 3))
        self.shadowed = np.zeros((n, 0), dtype=np.uint8)  # pixels x lamps: hidden from the lamp
        self.lamp_R = self.lamp_C = self.lamp_N = np.empty((0, n))  # lamps x pixels (lamp_geometry)
        self.added, self.attenuation = np.empty((n, 3)), np.empty((n, 3))
        self.lamp_e, self.no_lamps = np.empty(n), np.zeros((0, 3))
        self.minus_beta_d = -np.asarray(np.asarray(camera.water.beta_d, dtype=np.float32), dtype=float)
        intr = camera.intrinsics
        self.K = np.array([intr.fx, intr.fy, intr.cx, intr.cy])
        self.no_hits = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0)

    def render(self, world: Array, p: Array, lamps: Array) -> tuple[Array, Array]:
        cam = self.camera
        world = np.ascontiguousarray(world)
        height = float(p @ self.up + self.depth * -self.up[2])  # Seafloor.distance
        m = world_rays(
            self.rays, world, p, self.up, height, self.plane, float(cam.max_range), self.lo, self.hi,
            self.mesh, self.plane_distance, self.dirs, self.tfar, self.index,
        )  # fmt: skip
        prim, hit = cam.scene_rays.mesh_hits(p, self.dirs[:m], self.tfar[:m])
        body_index, body_prim, body_hit = self.no_hits
        body_normals, body_surfaces = self.face_normals, self.face_surfaces
        bodies = cam.bodies
        if bodies is not None:
            lo, hi = bodies.boxes()
            if len(lo):
                k = box_rays(
                    self.rays, world, p, self.plane_distance, float(cam.max_range), lo, hi, self.K,
                    cam.intrinsics.width, self.taken, self.body_dirs, self.body_tfar, self.body_index,
                )  # fmt: skip
                body_index = self.body_index[:k]
                body_prim, body_hit = bodies.mesh_hits(p, self.body_dirs[:k], self.body_tfar[:k])
                body_normals, body_surfaces = bodies.face_normals, bodies.face_surfaces
        n = len(self.rays)
        depth = np.empty(n, dtype=np.float32)
        surface, distance, normal = self.surface, self.distance, self.hit_normal
        nearest(
            self.rays, world, self.plane_distance, self.up, self.index[:m], prim, hit, self.face_normals,
            self.face_surfaces, body_index, body_prim, body_hit, body_normals, body_surfaces, surface,
            distance, normal,
        )  # fmt: skip
        added = self._lamp_light(world, p, lamps) if len(lamps) else self.no_lamps
        shade(
            surface, distance, normal, cam.albedo, float(cam.ambient), float(cam.max_range), cam.cosines,
            self.betas, added, self.J, self.E, depth,
        )  # fmt: skip
        np.exp(self.E, out=self.E)
        noise = np.float32(cam.noise if cam.noise and cam.rng is not None else 0.0)
        if noise and cam.rng is not None:
            cam.rng.standard_normal(dtype=np.float32, out=self.normal)
        image = np.empty((n, 3), dtype=np.uint8)
        expose(self.J, self.E, self.b_inf, noise, self.normal, image)
        return image, depth

    def _lamp_light(self, world: Array, p: Array, lamps: Array) -> Array:
        """``lamp_light`` on each pixel's surface (pixels x 3, float64), the lamps' shadows
        taken out: the geometry compiled (``lamp_geometry``), the powers and exponentials
        numpy's in the reference's order, into buffers kept between frames."""
        n, count = len(self.rays), len(lamps)
        if self.lamp_R.shape[0] != count:
            self.lamp_R, self.lamp_C, self.lamp_N = (np.empty((count, n)) for _ in range(3))
        R, C, N = self.lamp_R, self.lamp_C, self.lamp_N
        lamp_geometry(
            self.rays, world, p, float(self.camera.max_range), self.distance, self.hit_normal, lamps,
            self._shadows(world, p, lamps), R, C, N,
        )  # fmt: skip
        added = self.added
        added.fill(0.0)
        for k in range(count):
            if lamps[k, 6] > 0.0:
                add_lamp_light(
                    added, lamps[k, 6], lamps[k, 7], C[k], N[k], R[k], self.minus_beta_d, self.lamp_e,
                    self.attenuation,
                )  # fmt: skip
        return added

    def _shadows(self, world: Array, p: Array, lamps: Array) -> Array:
        """Which pixels' surfaces each lit lamp cannot see (pixels x lamps, uint8): a shadow
        ray from the lamp towards each surface point it would light whose way passes through a
        mesh's or a body's box, cast into the scene's triangles and the bodies. A plane seabed
        cannot hide a point above it from a lamp above it: no ray is cast at it (the reference,
        through ``trace``, does; the two differ only for points below the plane, which a
        camera above it does not see)."""
        cam, n = self.camera, len(self.rays)
        if self.shadowed.shape[1] != len(lamps):
            self.shadowed = np.zeros((n, len(lamps)), dtype=np.uint8)
        shadowed = self.shadowed
        shadowed.fill(0)
        bodies = cam.bodies
        # the scene's triangles and the bodies, each asked only for the rays through its boxes
        casts: list[tuple[SceneRays | BodyRays, Array, Array]] = []
        if self.mesh:
            casts.append((cam.scene_rays, self.lo, self.hi))
        if bodies is not None:
            body_lo, body_hi = bodies.boxes()
            if len(body_lo):
                casts.append((bodies, body_lo, body_hi))
        for k in range(len(lamps)):
            if lamps[k, 6] <= 0.0:
                continue
            for rays, lo, hi in casts:
                m = lamp_rays(
                    self.rays, world, p, float(cam.max_range), self.distance, self.hit_normal, lamps, k,
                    SHADOW_GAP, lo, hi, self.dirs, self.tfar, self.index,
                )  # fmt: skip
                prim, _ = rays.mesh_hits(lamps[k, :3], self.dirs[:m], self.tfar[:m])
                shadowed[self.index[:m][prim >= 0], k] = 1
        return shadowed


def lamp_of(spec) -> Lamp:
    """The lamp a description declares (``model.sensor_specs``: type ``light``)."""
    return Lamp(spec.value("lumens"), spec.value("beam_width"))


def camera_of(spec, rays: SceneRays | BodyRays, rng: np.random.Generator | None) -> Camera:
    """The camera a description declares (``model.sensor_specs``: type ``camera``)."""
    v = spec.value
    intrinsics = Intrinsics.from_fov(int(v("width")), int(v("height")), v("hfov"))
    noise = v("pixel_noise") if spec.noise else 0.0
    return Camera(rays, intrinsics, max_range=v("max_range"), noise=noise, rng=rng)
