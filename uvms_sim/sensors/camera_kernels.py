"""The camera's per-pixel work compiled (numba, single thread, without the GIL so that the
physics thread runs beside it): the rays turned into the world, the plane seabed met in closed
form, the rays that can reach a triangle gathered for Embree, then the hits, the light and the
image-formation model of Akkaynak and Treibitz (2018, eq. 3) written straight into the 8-bit
image and the depth image. Each step is the arithmetic of ``Camera.radiance`` (numpy, the
reference) in the same precision: float64 geometry, float32 radiance; the exponentials are
numpy's, between the two kernels, as in the reference."""

from __future__ import annotations

import numpy as np
from numba import njit

F32 = np.float32


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
            # the slab test: the ray's parameter interval inside the box
            t0, t1 = 0.0, far
            for k, dk in enumerate((d0, d1, d2)):
                if dk != 0.0:
                    s0 = (lo[box, k] - p[k]) / dk
                    s1 = (hi[box, k] - p[k]) / dk
                    t0, t1 = max(t0, min(s0, s1)), min(t1, max(s0, s1))
                elif p[k] < lo[box, k] or p[k] > hi[box, k]:
                    t1 = -1.0
            if t0 <= t1:
                dirs[m, 0], dirs[m, 1], dirs[m, 2] = F32(d0), F32(d1), F32(d2)
                tfar[m] = F32(far * (1.0 + 1e-5) + 1e-6) if far < 1e30 else F32(1e30)
                index[m] = i
                m += 1
                break
    return m


@njit(cache=True, nogil=True)
def shade(
    rays, world, plane_distance, up_z, index, prim, hit_distance, face_normals, face_surfaces,
    albedo, ambient, max_range, cosines, betas, J, E, depth,
):  # fmt: skip
    """The first surface along each ray (the plane's distance unless Embree's triangle
    ``prim`` is closer), beyond ``max_range`` none; its radiance lit from above into ``J``
    (pixels x 3, float32: ``albedo (ambient + (1 - ambient) max(0, n . up))``, zero where none),
    the exponents ``betas z`` of the six exponentials (``betas``: minus beta_D then minus beta_B,
    float32; z the range in float32, ``FAR`` where none) into ``E`` and the optical depth into
    ``depth`` (NaN where none)."""
    n = rays.shape[0]
    surface = np.empty(n, dtype=np.int64)
    distance = np.empty(n)
    nz = np.empty(n)
    for i in range(n):
        distance[i] = plane_distance[i]
        surface[i] = 0 if plane_distance[i] < np.inf else -1
        nz[i] = up_z
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
            nz[i] = -face_normals[tri, 2] if facing > 0.0 else face_normals[tri, 2]
    far = F32(1.0e6)
    for i in range(n):
        if distance[i] > max_range or not distance[i] < np.inf:
            J[i, 0] = J[i, 1] = J[i, 2] = F32(0.0)
            z = far
            depth[i] = np.nan
        else:
            light = F32(ambient + (1.0 - ambient) * max(-nz[i], 0.0))
            s = surface[i]
            for c in range(3):
                J[i, c] = albedo[s, c] * light
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
