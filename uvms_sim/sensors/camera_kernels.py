"""The camera's per-pixel work compiled (numba, single thread, without the GIL so that the
physics thread runs beside it): the rays turned into the world, the plane seabed met in closed
form, the rays that can reach a triangle gathered for Embree, then the hits, the light and the
image-formation model of Akkaynak and Treibitz (2018, eq. 3) written straight into the 8-bit
image and the depth image. Each step is the arithmetic of ``Camera.radiance`` (numpy, the
reference) in the same precision: float64 geometry, float32 radiance; the exponentials (and
the lamps' powers) are numpy's, between the kernels, as in the reference."""

from __future__ import annotations

import numpy as np
from numba import njit

F32 = np.float32


@njit(cache=True, nogil=True, inline="always")
def _axis(t0, t1, pk, dk, lok, hik):
    """The slab test's step along one axis: the ray's parameter interval [t0, t1] cut by the
    slab [lok, hik] (emptied when the ray is parallel to it and outside)."""
    if dk != 0.0:
        s0 = (lok - pk) / dk
        s1 = (hik - pk) / dk
        if s0 > s1:
            s0, s1 = s1, s0
        return max(t0, s0), min(t1, s1)
    if pk < lok or pk > hik:
        return t0, -1.0
    return t0, t1


@njit(cache=True, nogil=True)
def _slab(p, d0, d1, d2, lo, hi, box, far) -> bool:
    """The slab test: whether the ray from ``p`` along ``(d0, d1, d2)`` meets box ``box``
    (``lo``, ``hi`` corners) within ``far`` (its parameter interval inside the box not empty).
    The axes written out (``_axis``): a loop over a tuple of the three made it 2x slower."""
    t0, t1 = _axis(0.0, far, p[0], d0, lo[box, 0], hi[box, 0])
    t0, t1 = _axis(t0, t1, p[1], d1, lo[box, 1], hi[box, 1])
    t0, t1 = _axis(t0, t1, p[2], d2, lo[box, 2], hi[box, 2])
    return t0 <= t1


@njit(cache=True, nogil=True)
def world_rays(rays, world, p, up, height, plane, max_range, lo, hi, mesh, plane_distance, dirs, tfar, index):
    """For each pixel's ray (rows of ``rays``, camera axes) turned by ``world``: its distance
    to the plane seabed (``plane``: unit normal ``up``, height of ``p`` above it) into
    ``plane_distance`` (inf where it does not meet it); and, when there is a ``mesh`` and the ray
    enters one of its surfaces' boxes [``lo``, ``hi``] (rows) before the plane and
    ``max_range``, the ray's world direction (float32) into ``dirs``, the distance Embree need
    not look beyond into ``tfar`` and the pixel into ``index``. Returns how many rays were
    gathered."""
    n = rays.shape[0]
    m = 0
    for i in range(n):
        a, b, c = rays[i, 0], rays[i, 1], rays[i, 2]
        d0 = world[0, 0] * a + world[0, 1] * b + world[0, 2] * c
        d1 = world[1, 0] * a + world[1, 1] * b + world[1, 2] * c
        d2 = world[2, 0] * a + world[2, 1] * b + world[2, 2] * c
        limit = np.inf
        if plane:
            down = -(d0 * up[0] + d1 * up[1] + d2 * up[2])
            if height > 0.0 and down > 1e-12:
                limit = height / down
        plane_distance[i] = limit
        if not mesh:
            continue
        far = min(limit, max_range)
        for box in range(lo.shape[0]):
            if _slab(p, d0, d1, d2, lo, hi, box, far):
                dirs[m, 0], dirs[m, 1], dirs[m, 2] = F32(d0), F32(d1), F32(d2)
                tfar[m] = F32(far * (1.0 + 1e-5) + 1e-6) if far < 1e30 else F32(1e30)
                index[m] = i
                m += 1
                break
    return m


@njit(cache=True, nogil=True)
def box_rays(rays, world, p, plane_distance, max_range, lo, hi, K, width, taken, dirs, tfar, index):
    """``world_rays``'s gathering for other boxes [``lo``, ``hi``] (rows: the bodies where they
    are), the plane's distances already in ``plane_distance``: the rays that enter a box before
    the plane and ``max_range``, their world directions (float32) into ``dirs``, the distance
    not to look beyond into ``tfar``, the pixel into ``index``. Returns how many. Only the
    pixels of the rectangle around a box's projected corners (``K``: fx, fy, cx, cy; rows of
    ``width`` pixels) are tried, every pixel when a corner is not in front of the camera (a
    convex box in front projects inside its corners' hull); ``taken`` (one flag a pixel,
    zeros, left zero) keeps a pixel from being gathered twice."""
    n = rays.shape[0]
    height = n // width
    m = 0
    for box in range(lo.shape[0]):
        u0, u1, v0, v1 = 0, width - 1, 0, height - 1
        front = True
        umin, umax, vmin, vmax = np.inf, -np.inf, np.inf, -np.inf
        for corner in range(8):
            c = (lo[box, 0] if corner & 1 == 0 else hi[box, 0],
                 lo[box, 1] if corner & 2 == 0 else hi[box, 1],
                 lo[box, 2] if corner & 4 == 0 else hi[box, 2])  # fmt: skip
            x = y = z = 0.0
            for k in range(3):
                dk = c[k] - p[k]
                x += world[k, 0] * dk
                y += world[k, 1] * dk
                z += world[k, 2] * dk
            if x <= 1e-9:
                front = False
                break
            u, v = K[0] * y / x + K[2], K[1] * z / x + K[3]
            umin, umax, vmin, vmax = min(umin, u), max(umax, u), min(vmin, v), max(vmax, v)
        if front:
            if umax < -1.0 or vmax < -1.0 or umin > width or vmin > height:
                continue
            u0, u1 = max(0, int(np.floor(umin)) - 1), min(width - 1, int(np.ceil(umax)) + 1)
            v0, v1 = max(0, int(np.floor(vmin)) - 1), min(height - 1, int(np.ceil(vmax)) + 1)
        for row in range(v0, v1 + 1):
            for col in range(u0, u1 + 1):
                i = row * width + col
                if taken[i]:
                    continue
                a, b, c3 = rays[i, 0], rays[i, 1], rays[i, 2]
                d0 = world[0, 0] * a + world[0, 1] * b + world[0, 2] * c3
                d1 = world[1, 0] * a + world[1, 1] * b + world[1, 2] * c3
                d2 = world[2, 0] * a + world[2, 1] * b + world[2, 2] * c3
                far = min(plane_distance[i], max_range)
                if _slab(p, d0, d1, d2, lo, hi, box, far):
                    taken[i] = 1
                    dirs[m, 0], dirs[m, 1], dirs[m, 2] = F32(d0), F32(d1), F32(d2)
                    tfar[m] = F32(far * (1.0 + 1e-5) + 1e-6) if far < 1e30 else F32(1e30)
                    index[m] = i
                    m += 1
    for j in range(m):
        taken[index[j]] = 0
    return m


@njit(cache=True, nogil=True)
def _nearer(rays, world, index, prim, hit_distance, face_normals, face_surfaces, distance, surface, normal):
    """Where Embree's triangle ``prim[j]`` is nearer than what pixel ``index[j]`` sees: its
    distance, surface and unit normal facing the ray."""
    for j in range(index.shape[0]):
        tri = prim[j]
        if tri < 0:
            continue
        i = index[j]
        d = hit_distance[j]
        if d < distance[i]:
            distance[i] = d
            surface[i] = face_surfaces[tri]
            a, b, c = rays[i, 0], rays[i, 1], rays[i, 2]
            facing = 0.0
            for k in range(3):
                facing += face_normals[tri, k] * (world[k, 0] * a + world[k, 1] * b + world[k, 2] * c)
            sign = -1.0 if facing > 0.0 else 1.0
            for k in range(3):
                normal[i, k] = sign * face_normals[tri, k]


@njit(cache=True, nogil=True)
def nearest(
    rays, world, plane_distance, up, index, prim, hit_distance, face_normals, face_surfaces,
    body_index, body_prim, body_distance, body_normals, body_surfaces, surface, distance, normal,
):  # fmt: skip
    """The first surface along each ray: the plane's distance unless Embree's triangle ``prim``
    of the scene or ``body_prim`` of the bodies is closer; its index (-1: none), distance (inf:
    none) and unit normal facing the ray into ``surface``, ``distance`` and ``normal`` (int64,
    float64, float64 x 3 a pixel: buffers given so that a frame allocates nothing)."""
    for i in range(rays.shape[0]):
        distance[i] = plane_distance[i]
        surface[i] = 0 if plane_distance[i] < np.inf else -1
        normal[i, 0], normal[i, 1], normal[i, 2] = up[0], up[1], up[2]
    _nearer(rays, world, index, prim, hit_distance, face_normals, face_surfaces, distance, surface, normal)
    _nearer(
        rays, world, body_index, body_prim, body_distance, body_normals, body_surfaces, distance, surface,
        normal,
    )  # fmt: skip


@njit(cache=True, nogil=True, inline="always")
def _from_lamp(rays, world, p, max_range, distance, normal, i, lamps, k):
    """Pixel ``i``'s surface point (``distance[i]`` along its ray from ``p``, unit ``normal[i]``
    facing the camera) seen from lamp ``k`` (rows of ``lamps``): whether the lamp lights it
    (a surface within ``max_range``, in front of the lamp and facing it; NaN: not, as in the
    reference), its distance r, the unit direction from the lamp (u0, u1, u2), the cosine off
    the lamp's axis and the cosine of incidence on the surface."""
    d = distance[i]
    if d > max_range or not d < np.inf:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    a, b, c = rays[i, 0], rays[i, 1], rays[i, 2]
    s0 = p[0] + d * (world[0, 0] * a + world[0, 1] * b + world[0, 2] * c) - lamps[k, 0]
    s1 = p[1] + d * (world[1, 0] * a + world[1, 1] * b + world[1, 2] * c) - lamps[k, 1]
    s2 = p[2] + d * (world[2, 0] * a + world[2, 1] * b + world[2, 2] * c) - lamps[k, 2]
    r = np.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    if not r > 0.0:
        return False, r, 0.0, 0.0, 0.0, 0.0, 0.0
    u0, u1, u2 = s0 / r, s1 / r, s2 / r
    cos_b = u0 * lamps[k, 3] + u1 * lamps[k, 4] + u2 * lamps[k, 5]
    cos_i = -(u0 * normal[i, 0] + u1 * normal[i, 1] + u2 * normal[i, 2])
    return cos_b > 0.0 and cos_i > 0.0, r, u0, u1, u2, cos_b, cos_i


@njit(cache=True, nogil=True)
def lamp_rays(rays, world, p, max_range, distance, normal, lamps, k, gap, lo, hi, dirs, tfar, index):
    """The shadow rays of lamp ``k`` (rows of ``lamps``, ``camera.lamp_rows``): for each pixel
    whose surface (``nearest``'s ``distance`` and ``normal``, within ``max_range``) the lamp
    lights (in front of it, on the surface's side) and whose way from the lamp, up to a
    relative ``gap`` short of the surface, enters one of the boxes [``lo``, ``hi``] (rows: the
    meshes' and the bodies'), the unit direction from the lamp (float32) into ``dirs``, that
    distance into ``tfar`` (what is nearer shadows it) and the pixel into ``index``. Returns
    how many."""
    m = 0
    lamp = lamps[k, :3]
    for i in range(rays.shape[0]):
        lit, r, u0, u1, u2, _, _ = _from_lamp(rays, world, p, max_range, distance, normal, i, lamps, k)
        if not lit:
            continue
        far = r * (1.0 - gap)
        for box in range(lo.shape[0]):
            if _slab(lamp, u0, u1, u2, lo, hi, box, far):
                dirs[m, 0], dirs[m, 1], dirs[m, 2] = F32(u0), F32(u1), F32(u2)
                tfar[m] = F32(far)
                index[m] = i
                m += 1
                break
    return m


@njit(cache=True, nogil=True)
def lamp_geometry(rays, world, p, max_range, distance, normal, lamps, shadowed, R, C, N):
    """What each lamp's light on each pixel's surface depends on (``camera.lamp_light``; rows
    of ``lamps``, ``camera.lamp_rows``): the distance from the lamp into ``R``, the cosine off
    its axis into ``C`` and the cosine of incidence into ``N`` (lamps x pixels, float64); where
    the lamp is off, the surface beyond ``max_range``, behind the lamp, turned away from it or
    in its shadow (``shadowed``, pixels x lamps), 1, 0 and 0: no light. The powers and the
    exponentials of ``lamp_light`` are numpy's, on these, as in the reference."""
    for k in range(lamps.shape[0]):
        for i in range(rays.shape[0]):
            R[k, i], C[k, i], N[k, i] = 1.0, 0.0, 0.0
            if lamps[k, 6] <= 0.0 or shadowed[i, k]:
                continue
            lit, r, _, _, _, cos_b, cos_i = _from_lamp(
                rays, world, p, max_range, distance, normal, i, lamps, k
            )
            if lit:
                R[k, i], C[k, i], N[k, i] = r, cos_b, cos_i


@njit(cache=True, nogil=True)
def shade(
    surface, distance, normal, albedo, ambient, max_range, cosines, betas, added, J, E, depth,
):  # fmt: skip
    """The radiance of ``nearest``'s surfaces (none beyond ``max_range``) lit from above into
    ``J`` (pixels x 3, float32: ``albedo (ambient + (1 - ambient) max(0, n . up))``, zero where
    none), the exponents ``betas z`` of the six exponentials (``betas``: minus beta_D then minus
    beta_B, float32; z the range in float32, ``FAR`` where none) into ``E`` and the optical
    depth into ``depth`` (NaN where none). ``added``: the lamps' light on each pixel's surface
    (pixels x 3, float64, ``camera.lamp_light``; no rows: no lamps), added to the light from
    above."""
    n = distance.shape[0]
    lit = added.shape[0] > 0
    nz = normal[:, 2]
    far = F32(1.0e6)
    for i in range(n):
        if distance[i] > max_range or not distance[i] < np.inf:
            J[i, 0] = J[i, 1] = J[i, 2] = F32(0.0)
            z = far
            depth[i] = np.nan
        else:
            base = ambient + (1.0 - ambient) * max(-nz[i], 0.0)
            s = surface[i]
            if not lit:
                light = F32(base)
                for c in range(3):
                    J[i, c] = albedo[s, c] * light
            else:
                for c in range(3):
                    J[i, c] = albedo[s, c] * F32(base + added[i, c])
            z = min(F32(distance[i]), far)
            depth[i] = F32(distance[i] * cosines[i])
        for k in range(6):
            E[i, k] = betas[k] * z


@njit(cache=True, nogil=True)
def expose(J, E, b_inf, noise, normal, image):
    """``I = J exp(-beta_D z) + B_inf (1 - exp(-beta_B z))`` per channel (``E``: the six
    exponentials, direct then backscatter), plus ``noise`` times ``normal`` (standard normal
    draws; none when ``noise`` is 0), to 8 bits rounded to nearest and clipped."""
    one, full, half, zero = F32(1.0), F32(255.0), F32(0.5), F32(0.0)
    noisy = noise != 0.0
    for i in range(J.shape[0]):
        for c in range(3):
            x = J[i, c] * E[i, c] + b_inf[c] * (one - E[i, 3 + c])
            if noisy:
                x += noise * normal[i, c]
            x = x * full + half
            image[i, c] = np.uint8(min(max(x, zero), full))
