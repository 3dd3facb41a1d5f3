"""The vehicle's lights in the camera's image against the closed form of the model (McGlamery
1980, Jaffe 1990: the direct source term ``I(theta) cos(phi) exp(-beta_D,c r_s) / r_s^2`` of a
Lambertian surface, attenuated again on the way to the camera): a grey wall facing the camera
at distance d, lit by a lamp beside it, per channel, for levels and distances; the lamps at 0
leave the image as it was, bit for bit; the compiled path is the plain one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_camera import VIEWS, _scenes

from uvms_sim.scene import Scene, SceneRays, Shape, Structure
from uvms_sim.scene.seabed import PlaneSeabed
from uvms_sim.sensors.camera import EXPOSURE, Camera, Intrinsics, Lamp, Water, lamp_rows

INTR = Intrinsics.from_fov(64, 48, math.radians(80.0))
LUMEN = Lamp(1500.0, math.radians(135.0))
GREY = 0.55


def wall_camera(d: float) -> Camera:
    wall = Shape("box", (0.5, 40.0, 40.0), xyz=(d + 0.25, 0.0, 0.0))
    return Camera(SceneRays(Scene(structures=(Structure("wall", wall),))), INTR, Water())


def test_the_beam_carries_the_lamps_flux_and_halves_at_half_its_width():
    m, i0 = LUMEN.exponent, LUMEN.intensity
    assert math.cos(0.5 * LUMEN.beam_width) ** m == pytest.approx(0.5, rel=1e-12)
    theta = np.linspace(0.0, 0.5 * math.pi, 200001)  # the flux: the integral of I over the half space
    flux = np.trapezoid(i0 * np.cos(theta) ** m * 2.0 * math.pi * np.sin(theta), theta)
    assert flux == pytest.approx(1500.0, rel=1e-6)


@pytest.mark.parametrize("d", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("level", [0.25, 1.0])
@pytest.mark.parametrize("offset", [0.0, 0.15])
def test_a_lit_lambertian_wall_is_as_bright_as_the_closed_form_says(d, level, offset):
    """The centre pixel sees the wall at (d, 0, 0), normal back along -x; a lamp at (0,
    ``offset``, 0) pointing along x lights it from r = sqrt(d^2 + offset^2), theta = phi =
    acos(d / r): per channel ``J_c = 0.55 (ambient + level exposure I_0 (d/r)^m (d/r) / r^2
    exp(-beta_D,c r))`` and ``I_c = J_c exp(-beta_D,c d) + B_inf,c (1 - exp(-beta_B,c d))``
    (Akkaynak and Treibitz 2018 to the camera), for the pixel next to the centre (32, 24): its
    ray meets the wall at ``d (1, (u - cx)/fx, (v - cy)/fy)``, with its own angles. ``radiance``
    to float32's rounding and Embree's single-precision range (1e-6 relative), the 8-bit image
    of ``render`` to half a level (clipped at full scale)."""
    water = Water()
    camera = wall_camera(d)
    rows = lamp_rows([(LUMEN, np.array([0.0, offset, 0.0]), np.array([1.0, 0.0, 0.0]))], level)
    beta_d, beta_b, b_inf = (np.array(x) for x in (water.beta_d, water.beta_b, water.b_inf))
    centre = 24 * 64 + 32
    rgb, distance = camera.radiance(np.eye(3), np.zeros(3), lamps=rows)
    pixel = INTR.project(np.array([d, 0.0, 0.0]))
    assert tuple(pixel) == (31.5, 23.5)  # the centre is between pixels: take the one whose ray is nearest
    u, v = 32, 24
    ray = np.array([1.0, (u - INTR.cx) / INTR.fx, (v - INTR.cy) / INTR.fy])
    point = d * ray  # this pixel's point of the wall, and its own closed form
    s = point - np.array([0.0, offset, 0.0])
    r = float(np.linalg.norm(s))
    cos_b, cos_i = s[0] / r, s[0] / r
    E = level * EXPOSURE * LUMEN.intensity * cos_b**LUMEN.exponent * cos_i / r**2 * np.exp(-beta_d * r)
    z = float(np.linalg.norm(point))
    J = GREY * (camera.ambient + E)
    expected = J * np.exp(-beta_d * z) + b_inf * (1.0 - np.exp(-beta_b * z))
    assert distance[centre] == pytest.approx(z, rel=1e-6)  # Embree's single precision
    assert np.allclose(rgb[centre], expected, rtol=1e-6, atol=0.0)
    image, _ = camera.render(np.eye(3), np.zeros(3), lamps=rows)
    exposed = np.clip(expected, 0.0, 1.0)  # full light at half a metre saturates green and blue
    assert np.all(np.abs(image[v, u] / 255.0 - exposed) <= 0.5 / 255.0 + 1e-6)
    unlit, _ = camera.radiance(np.eye(3), np.zeros(3))
    assert np.all(rgb[centre] > unlit[centre])  # every channel brighter, red least far off


def test_the_lamps_light_falls_as_the_inverse_square_and_the_channels_attenuation():
    """What the lamp adds to J (the radiance less the unlit one, divided by the path to the
    camera), on the axis at d: ``ln(added d^2)`` falls with slope ``-beta_D,c`` in d per channel
    (the lamp at the camera, on the axis: theta = phi = 0) and the added light is linear in the
    level. Tolerances: the radiance is float32 (a relative step of 6e-8 on values below 1), so
    the added light, a difference of two radiances, is known to ``2 eps32 / (albedo exp(-beta_D
    z))``; over 0.5-3 m that is below 1e-5 of it, and the fitted slopes to 1e-4."""
    water = Water()
    ds = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    added = []
    for d in ds:
        camera = wall_camera(d)
        ray_index = 24 * 64 + 32
        z = float(camera.radiance(np.eye(3), np.zeros(3))[1][ray_index])
        rows = [lamp_rows([(LUMEN, np.zeros(3), np.array([1.0, 0.0, 0.0]))], level) for level in (0.5, 1.0)]
        lit = [camera.radiance(np.eye(3), np.zeros(3), lamps=r)[0][ray_index] for r in rows]
        unlit = camera.radiance(np.eye(3), np.zeros(3))[0][ray_index]
        direct = np.exp(-np.array(water.beta_d) * z)
        half, full = ((x - unlit) / direct / GREY for x in lit)
        known = 2.0 * np.finfo(np.float32).eps / (direct * GREY)
        assert np.all(np.abs(full - 2.0 * half) <= 3.0 * known)
        # the ray is 1/(cos) longer than d off the exact axis: correct to the point's range
        cos = d / z
        added.append(full * z**2 / (cos**LUMEN.exponent * cos))
    added = np.array(added)
    zs = ds / np.cos(np.arctan(np.hypot(0.5 / INTR.fx, 0.5 / INTR.fy)))
    for c in range(3):
        slope = np.polyfit(zs, np.log(added[:, c]), 1)[0]
        assert slope == pytest.approx(-water.beta_d[c], rel=1e-4)


@pytest.mark.parametrize("name", ["plane", "heightmap"])
def test_lamps_at_zero_leave_the_image_as_it_was_and_compiled_is_plain(name):
    """Every lamp at level 0: the same image and depth, bit for bit, as without lamps (the
    compiled path and the plain one). Lit (two Lumens at +-0.1 m, 10 degrees down): the
    compiled image is the plain one within one level in at most 0.1 % of the pixels."""
    rays = SceneRays(_scenes()[name])
    small = Intrinsics.from_fov(160, 120, math.radians(80.0))
    down = np.array([math.cos(0.17), 0.0, math.sin(0.17)])
    lamps = [(LUMEN, np.array([0.0, y, 2.0]), down) for y in (-0.1, 0.1)]
    for p, rpy, tilt, max_range in VIEWS[:3]:
        from transforms3d.euler import euler2mat

        R = euler2mat(*rpy, axes="sxyz")
        camera = Camera(rays, small, max_range=max_range)
        plain, plain_depth = camera.render(R, np.array(p), tilt)
        dark, dark_depth = camera.render(R, np.array(p), tilt, lamps=lamp_rows(lamps, 0.0))
        assert np.array_equal(plain, dark) and np.array_equal(plain_depth, dark_depth, equal_nan=True)
        ref, _ = camera.render_plainly(R, np.array(p), tilt, lamps=lamp_rows(lamps, 0.0))
        assert np.array_equal(ref, camera.render_plainly(R, np.array(p), tilt)[0])
        lit, _ = camera.render(R, np.array(p), tilt, lamps=lamp_rows(lamps, 1.0))
        lit_ref, _ = camera.render_plainly(R, np.array(p), tilt, lamps=lamp_rows(lamps, 1.0))
        diff = np.abs(lit.astype(int) - lit_ref.astype(int))
        assert diff.max() <= 1 and (diff > 0).mean() <= 1e-3
        assert lit.astype(int).sum() > plain.astype(int).sum()


def test_a_structure_casts_the_lamps_shadow_where_the_geometry_puts_it():
    """A lamp 8 m down points straight down at a plane seabed 10 m down; a 0.4 x 0.6 x 0.2 m
    box hangs 0.5 m under it. Its shadow on the seabed is the box's top face projected from the
    lamp: ``|x| <= 0.2 s``, ``|y| <= 0.3 s`` with ``s = (10 - 8) / (8.5 - 8) = 4``. A camera
    beside the lamp looks down: every seabed pixel more than 5 cm inside the shadow is exactly
    as without the lamp (and brighter without the box), every one more than 5 cm outside it
    and within 40 degrees of the beam's axis is brighter; the compiled image is the plain one
    (within one level in 0.1 % of the pixels). The camera's own view of the box is left out."""
    box = Structure("box", Shape("box", (0.4, 0.6, 0.2), xyz=(0.0, 0.0, 8.6)))
    camera = Camera(SceneRays(Scene(PlaneSeabed(10.0), (box,))), Intrinsics.from_fov(160, 120, 1.6))
    lamp = lamp_rows([(LUMEN, np.array([0.0, 0.0, 8.0]), np.array([0.0, 0.0, 1.0]))], 1.0)
    R = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # looking down, image up = +x
    p = np.array([0.0, 1.2, 8.0])
    dark, _ = camera.render(R, p)
    lit, _ = camera.render(R, p, lamps=lamp)
    diff = np.abs(lit.astype(int) - camera.render_plainly(R, p, lamps=lamp)[0].astype(int))
    assert diff.max() <= 1 and (diff > 0).mean() <= 1e-3  # as test_camera_lights' other scenes
    distance, _, surface = camera.rays.trace(p, camera.directions @ R.T)
    seabed = surface.reshape(dark.shape[:2]) == 0
    points = (p + distance[:, None] * (camera.directions @ R.T)).reshape(*dark.shape[:2], 3)
    s = (10.0 - 8.0) / (8.5 - 8.0)
    inside = np.minimum(0.2 * s - np.abs(points[..., 0]), 0.3 * s - np.abs(points[..., 1]))
    beam = np.hypot(points[..., 0], points[..., 1]) < 2.0 * math.tan(math.radians(40.0))
    shadow, bright = seabed & (inside > 0.05), seabed & (inside < -0.05) & beam
    assert shadow.sum() > 100 and bright.sum() > 1000
    assert np.array_equal(lit[shadow], dark[shadow])
    open_water = Camera(SceneRays(Scene(PlaneSeabed(10.0))), camera.intrinsics)
    unshaded, bare = open_water.render(R, p, lamps=lamp)[0], open_water.render(R, p)[0]
    assert np.all(unshaded[shadow].astype(int).sum(axis=-1) > bare[shadow].astype(int).sum(axis=-1) + 5)
    assert np.all(lit[bright].astype(int).sum(axis=-1) > dark[bright].astype(int).sum(axis=-1))


def test_a_lamp_at_zero_among_lit_ones_and_a_changing_lamp_count_change_nothing_else():
    """The shadowed scene with the lamp, then with a second lamp at level 0 beside it, then the
    lamp alone again, on one camera: the same image each time, and the same as a new camera's
    (the per-lamp buffers follow the lamp count)."""
    box = Structure("box", Shape("box", (0.4, 0.6, 0.2), xyz=(0.0, 0.0, 8.6)))
    scene = Scene(PlaneSeabed(10.0), (box,))
    intr = Intrinsics.from_fov(80, 60, 1.6)
    camera = Camera(SceneRays(scene), intr)
    on = (LUMEN, np.array([0.0, 0.0, 8.0]), np.array([0.0, 0.0, 1.0]))
    off = (LUMEN, np.array([0.3, 0.0, 8.0]), np.array([0.0, 0.0, 1.0]))
    R = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    p = np.array([0.0, 1.2, 8.0])
    one = lamp_rows([on], 1.0)
    two = np.vstack([one, lamp_rows([off], 0.0)])
    first = camera.render(R, p, lamps=one)[0]
    assert np.array_equal(camera.render(R, p, lamps=two)[0], first)
    assert np.array_equal(camera.render(R, p, lamps=one)[0], first)
    assert np.array_equal(Camera(SceneRays(scene), intr).render(R, p, lamps=one)[0], first)
    assert first.astype(int).sum() > camera.render(R, p)[0].astype(int).sum()
