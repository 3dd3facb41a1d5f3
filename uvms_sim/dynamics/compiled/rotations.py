"""Rotation and quaternion formulas of the kernels (row-major 3x3 at ``out[o:o+9]``), written
out because compiled code cannot call transforms3d: ``transforms3d.quaternions.quat2mat``,
``axangle2mat``, the quaternion exponential and product, the inverse of the SO(3) exponential's
differential (``integrate._tangent_rate``) and ``mat2quat``."""

from __future__ import annotations

import math

from .buffers import kernel


@kernel
def _quat2mat(w, x, y, z, out, o):
    """Rotation matrix of a (not necessarily unit) quaternion, as transforms3d.quat2mat."""
    n = w * w + x * x + y * y + z * z
    if n < 2.220446049250313e-16:
        for k in range(9):
            out[o + k] = 1.0 if k % 4 == 0 else 0.0
        return
    s = 2.0 / n
    X, Y, Z = x * s, y * s, z * s
    wX, wY, wZ = w * X, w * Y, w * Z
    xX, xY, xZ = x * X, x * Y, x * Z
    yY, yZ, zZ = y * Y, y * Z, z * Z
    out[o + 0] = 1.0 - (yY + zZ)
    out[o + 1] = xY - wZ
    out[o + 2] = xZ + wY
    out[o + 3] = xY + wZ
    out[o + 4] = 1.0 - (xX + zZ)
    out[o + 5] = yZ - wX
    out[o + 6] = xZ - wY
    out[o + 7] = yZ + wX
    out[o + 8] = 1.0 - (xX + yY)


@kernel
def _axangle_T(x, y, z, angle, out, o):
    """Transpose of the rotation by ``angle`` about the unit axis (transforms3d.axangle2mat)."""
    c, s = math.cos(angle), math.sin(angle)
    C = 1.0 - c
    xs, ys, zs = x * s, y * s, z * s
    xC, yC, zC = x * C, y * C, z * C
    xyC, yzC, zxC = x * yC, y * zC, z * xC
    out[o + 0] = x * xC + c
    out[o + 3] = xyC - zs
    out[o + 6] = zxC + ys
    out[o + 1] = xyC + zs
    out[o + 4] = y * yC + c
    out[o + 7] = yzC - xs
    out[o + 2] = zxC - ys
    out[o + 5] = yzC + xs
    out[o + 8] = z * zC + c


@kernel
def _quat_exp(t0, t1, t2):
    """``exp(θ/2)`` as a quaternion (transforms3d.axangle2quat of θ/|θ|, |θ|)."""
    angle = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    if angle < 1e-300:
        return 1.0, 0.0, 0.0, 0.0
    s = math.sin(0.5 * angle) / angle
    return math.cos(0.5 * angle), t0 * s, t1 * s, t2 * s


@kernel
def _qmult(w1, x1, y1, z1, w2, x2, y2, z2):
    return (
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 + y1 * w2 + z1 * x2 - x1 * z2,
        w1 * z2 + z1 * w2 + x1 * y2 - y1 * x2,
    )


@kernel
def _dexp_inv(t0, t1, t2, w0, w1, w2, out, o):
    """Inverse right Jacobian of SO(3) times w into out[o:o+3] (integrate.dexp_inv)."""
    angle = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    if angle < 1e-4:
        coef = 1.0 / 12.0 + angle * angle / 720.0
    else:
        coef = 1.0 / (angle * angle) - (1.0 + math.cos(angle)) / (2.0 * angle * math.sin(angle))
    k0 = t1 * w2 - t2 * w1
    k1 = t2 * w0 - t0 * w2
    k2 = t0 * w1 - t1 * w0
    out[o] = w0 + 0.5 * k0 + coef * (t1 * k2 - t2 * k1)
    out[o + 1] = w1 + 0.5 * k1 + coef * (t2 * k0 - t0 * k2)
    out[o + 2] = w2 + 0.5 * k2 + coef * (t0 * k1 - t1 * k0)


@kernel
def _mat2quat(R):
    """Unit quaternion [w x y z] (w >= 0) of a rotation matrix (Shepperd's method; the same
    quaternion transforms3d.mat2quat returns for an orthonormal matrix)."""
    t = R[0, 0] + R[1, 1] + R[2, 2]
    if t > 0.0:
        s = 2.0 * math.sqrt(t + 1.0)
        w, x, y, z = 0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        w, x, y, z = (R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        w, x, y, z = (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        w, x, y, z = (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s
    if w < 0.0:
        return -w, -x, -y, -z
    return w, x, y, z


@kernel
def _rotate(S, o, x, xo, out, oo, add):
    """out[oo:oo+3] (=, or += with add) R x[xo:xo+3], R the row-major 3x3 at S[o:o+9]."""
    x0, x1, x2 = x[xo], x[xo + 1], x[xo + 2]
    for a in range(3):
        r = S[o + 3 * a] * x0 + S[o + 3 * a + 1] * x1 + S[o + 3 * a + 2] * x2
        out[oo + a] = out[oo + a] + r if add else r


@kernel
def _advance_quat(q, o, dq, d, out):
    """out[o:o+4] = q[o:o+4] ⊗ exp(dq[d:d+3] / 2), renormalised (integrate.integrate)."""
    e0, e1, e2, e3 = _quat_exp(dq[d], dq[d + 1], dq[d + 2])
    w, x, y, z = _qmult(q[o], q[o + 1], q[o + 2], q[o + 3], e0, e1, e2, e3)
    nrm = math.sqrt(w * w + x * x + y * y + z * z)
    out[o], out[o + 1], out[o + 2], out[o + 3] = w / nrm, x / nrm, y / nrm, z / nrm
