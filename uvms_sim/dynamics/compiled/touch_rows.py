"""The rows of the touching pairs (``dynamics.touch.Touch._write``), compiled: the matching of
each pair's points found by coal with its points of the last detection, and the pair's
spring-damper and friction constants shared among its rows."""

from __future__ import annotations

import math

from .buffers import entry_kernel, inlined


@inlined
def _copy_row(src, j, out, r):
    for c in range(src.shape[1]):
        out[r, c] = src[j, c]


@inlined
def _new_row(R, p, a, b, pts, i, pb0, pb1, pb2, out, r):
    """A row from coal's witness points: A's point in A's axes, B's point and the normal in B's
    axes (world for the scene), the constants zero (set per pair)."""
    for c in range(out.shape[1]):
        out[r, c] = 0.0
    d0, d1, d2 = pts[i, 0] - p[a, 0], pts[i, 1] - p[a, 1], pts[i, 2] - p[a, 2]
    for c in range(3):
        out[r, c] = R[a, 0, c] * d0 + R[a, 1, c] * d1 + R[a, 2, c] * d2
    n0, n1, n2 = pts[i, 6], pts[i, 7], pts[i, 8]
    if b >= 0:
        e0, e1, e2 = pb0 - p[b, 0], pb1 - p[b, 1], pb2 - p[b, 2]
        for c in range(3):
            out[r, 3 + c] = R[b, 0, c] * e0 + R[b, 1, c] * e1 + R[b, 2, c] * e2
            out[r, 10 + c] = R[b, 0, c] * n0 + R[b, 1, c] * n1 + R[b, 2, c] * n2
    else:
        out[r, 3], out[r, 4], out[r, 5] = pb0, pb1, pb2
        out[r, 10], out[r, 11], out[r, 12] = n0, n1, n2


@entry_kernel
def pair_rows(R, p, pairs, keep, meshes, seg, pts, ospan, old, known, used, dup, mass, law, out, counts):
    """Each touching pair's rows into ``out`` (from row 0, pair after pair), their number into
    ``counts``; returns the total. Pair n: bodies ``pairs[n]`` (b = -1: the scene); its points
    found by coal ``pts[seg[n]:seg[n + 1]]`` (A's point, B's point, the normal from B to A, world),
    or, with ``keep[n]``, its rows of the last detection as they are; its rows of the last
    detection ``old[ospan[n, 0]:+ospan[n, 1]]`` (copies), with ``known`` (3 + 3 + 1 per old row:
    A's point, the tangential offset of A's point from B's, world, and the gap) and ``used``
    filled here. A mesh pair's (``meshes[n]``) point within the ``same`` distance of an earlier
    one of the pair on A is left out (``dup``): a corner on two triangles' shared edge is in
    both their patches. ``law``: normal and tangential stiffness, friction, damping ratio,
    match, keep and same distances (``touch`` module doc for the rules)."""
    stiff, tstiff, mu, zeta, match, keep_d, same_d = law[0], law[1], law[2], law[3], law[4], law[5], law[6]
    total = 0
    for n in range(pairs.shape[0]):
        a, b = pairs[n, 0], pairs[n, 1]
        o0, oc = ospan[n, 0], ospan[n, 1]
        first = total
        for i in range(seg[n], seg[n + 1]):
            dup[i] = 0
            if not meshes[n]:
                continue
            for k in range(seg[n], i):
                if not dup[k]:
                    e0, e1, e2 = pts[i, 0] - pts[k, 0], pts[i, 1] - pts[k, 1], pts[i, 2] - pts[k, 2]
                    if e0 * e0 + e1 * e1 + e2 * e2 <= same_d * same_d:
                        dup[i] = 1
                        break
        # the last detection's points: A's and B's material points in the world, the gap
        for j in range(o0, o0 + oc):
            used[j] = 0
            x0 = p[a, 0] + R[a, 0, 0] * old[j, 0] + R[a, 0, 1] * old[j, 1] + R[a, 0, 2] * old[j, 2]
            x1 = p[a, 1] + R[a, 1, 0] * old[j, 0] + R[a, 1, 1] * old[j, 1] + R[a, 1, 2] * old[j, 2]
            x2 = p[a, 2] + R[a, 2, 0] * old[j, 0] + R[a, 2, 1] * old[j, 1] + R[a, 2, 2] * old[j, 2]
            if b >= 0:
                y0 = p[b, 0] + R[b, 0, 0] * old[j, 3] + R[b, 0, 1] * old[j, 4] + R[b, 0, 2] * old[j, 5]
                y1 = p[b, 1] + R[b, 1, 0] * old[j, 3] + R[b, 1, 1] * old[j, 4] + R[b, 1, 2] * old[j, 5]
                y2 = p[b, 2] + R[b, 2, 0] * old[j, 3] + R[b, 2, 1] * old[j, 4] + R[b, 2, 2] * old[j, 5]
                m0 = R[b, 0, 0] * old[j, 10] + R[b, 0, 1] * old[j, 11] + R[b, 0, 2] * old[j, 12]
                m1 = R[b, 1, 0] * old[j, 10] + R[b, 1, 1] * old[j, 11] + R[b, 1, 2] * old[j, 12]
                m2 = R[b, 2, 0] * old[j, 10] + R[b, 2, 1] * old[j, 11] + R[b, 2, 2] * old[j, 12]
            else:
                y0, y1, y2 = old[j, 3], old[j, 4], old[j, 5]
                m0, m1, m2 = old[j, 10], old[j, 11], old[j, 12]
            d0, d1, d2 = x0 - y0, x1 - y1, x2 - y2
            gap = d0 * m0 + d1 * m1 + d2 * m2
            known[j, 0], known[j, 1], known[j, 2] = x0, x1, x2
            known[j, 3], known[j, 4], known[j, 5] = d0 - gap * m0, d1 - gap * m1, d2 - gap * m2
            known[j, 6] = gap
        as_before = keep[n] != 0
        if not as_before and oc > 0:
            # a body driven deep into a thin one: coal may now see the shorter way out through
            # its far side (a normal turned round); the pair keeps its points, and so its side
            s0 = s1 = s2 = 0.0
            for j in range(o0, o0 + oc):
                s0 += old[j, 10]
                s1 += old[j, 11]
                s2 += old[j, 12]
            if b >= 0:
                t0 = R[b, 0, 0] * s0 + R[b, 0, 1] * s1 + R[b, 0, 2] * s2
                t1 = R[b, 1, 0] * s0 + R[b, 1, 1] * s1 + R[b, 1, 2] * s2
                t2 = R[b, 2, 0] * s0 + R[b, 2, 1] * s1 + R[b, 2, 2] * s2
            else:
                t0, t1, t2 = s0, s1, s2
            for i in range(seg[n], seg[n + 1]):
                if not dup[i] and pts[i, 6] * t0 + pts[i, 7] * t1 + pts[i, 8] * t2 < 0.0:
                    as_before = True
                    break
        if as_before:  # the rows as they are
            for j in range(o0, o0 + oc):
                _copy_row(old, j, out, total)
                total += 1
        else:
            for i in range(seg[n], seg[n + 1]):
                if dup[i]:
                    continue
                pb0, pb1, pb2 = pts[i, 3], pts[i, 4], pts[i, 5]
                n0, n1, n2 = pts[i, 6], pts[i, 7], pts[i, 8]
                same = -1
                for j in range(o0, o0 + oc):
                    if used[j]:
                        continue
                    e0, e1, e2 = known[j, 0] - pts[i, 0], known[j, 1] - pts[i, 1], known[j, 2] - pts[i, 2]
                    d2 = e0 * e0 + e1 * e1 + e2 * e2  # (squared distances: no roots)
                    if d2 < match * match:
                        used[j] = 1
                        along = e0 * n0 + e1 * n1 + e2 * n2
                        if d2 - along * along < keep_d * keep_d:
                            same = j  # the same material point (a face at rest): as it was
                        else:  # the friction spring's offset carried over
                            f0, f1, f2 = known[j, 3], known[j, 4], known[j, 5]
                            fn = f0 * n0 + f1 * n1 + f2 * n2
                            pb0 -= f0 - fn * n0
                            pb1 -= f1 - fn * n1
                            pb2 -= f2 - fn * n2
                        break
                if same >= 0:
                    _copy_row(old, same, out, total)
                else:
                    _new_row(R, p, a, b, pts, i, pb0, pb1, pb2, out, total)
                total += 1
            # a point of the last detection that coal leaves out now (a face seen as its deepest
            # edge) is kept while it still presses: its friction spring holds on
            for j in range(o0, o0 + oc):
                if not used[j] and known[j, 6] < 0.0:
                    _copy_row(old, j, out, total)
                    total += 1
        count = total - first
        counts[n] = count
        if count == 0:
            continue
        m = mass[a] if b < 0 else 1.0 / (1.0 / mass[a] + 1.0 / mass[b])
        m = m if math.isfinite(m) else 0.0  # (two bodies bolted to the world: no force moves them)
        share = 1.0 / count
        c_n = 2.0 * zeta * math.sqrt(stiff * m) * share
        c_t = 2.0 * zeta * math.sqrt(tstiff * m) * share
        for r in range(first, total):
            out[r, 6], out[r, 7], out[r, 8] = stiff * share, c_n, mu
            out[r, 9], out[r, 13] = tstiff * share, c_t
    return total
