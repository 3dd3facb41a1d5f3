"""The kernels' decorators, and their borrowed views of the two buffers of ``flat.pack``
(tables, workspace, fluid) and of the workspace's parts (``flat.workspace``)."""

from __future__ import annotations

from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..flat import (
    H_BF,
    H_BI,
    H_CF,
    H_CI,
    H_IN,
    H_KF,
    H_KI,
    H_KN,
    H_NB,
    H_NBF,
    H_NC,
    H_NK,
    H_NT,
    H_NW,
    H_TF,
    H_TI,
    H_W,
    H_WT,
    NBI,
    NCF,
    NKF,
    NKI,
    NTF,
    NWT,
    connection_fields,
    input_fields,
    limit_fields,
    workspace_fields,
)

# Every kernel: cached, GIL released. Those called only from compiled code go without the
# wrappers that make a function callable from Python and from C (numba options its type stubs
# do not list): 3 s less to compile. ``inlined`` ones are inlined where they are called (numba
# IR): a call between compiled functions passes every array as its 7 or 9 fields, about 100 ns
# for a call of 19 arrays.
_INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}
kernel = njit(cache=True, nogil=True, error_model="numpy", **_INTERNAL)  # type: ignore[call-overload]
inlined = njit(inline="always", cache=True, nogil=True, error_model="numpy", **_INTERNAL)  # type: ignore[call-overload]
entry_kernel = njit(cache=True, nogil=True, error_model="numpy")  # the entry points from Python


# Every view a kernel takes of an array that numpy owns (``WB[i]``, a workspace row) counts a
# reference on it, an atomic increment and decrement: they cost half of an RK4 step of a
# BlueROV2 (5.0 us instead of 2.5). The entry points therefore take borrowed views of their
# arguments (``carray`` over the same memory, without a reference count), valid for the call:
# the caller holds the arrays, and no kernel keeps a view after it returns.
@intrinsic
def _address(typingctx, addr):
    """The integer ``addr`` as a void pointer (for ``carray``)."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(types.intp), codegen


# inlined where it is called: numba would otherwise compile it once per literal shape (14 times)
@inlined
def _borrow(a, o, shape):
    """A borrowed view (see above) of the C-contiguous ``a`` from element o, of ``shape``."""
    return carray(_address(a.ctypes.data + o * a.itemsize), shape, a.dtype)


@kernel
def _unpack(FB, IB):
    """Borrowed views (BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid, WT) of the buffers of
    ``flat.pack`` (FB floats, IB ints), at the offsets its header records."""
    nb, nt, nc, nk = IB[H_NB], IB[H_NT], IB[H_NC], IB[H_NK]
    return (
        _borrow(FB, IB[H_BF], (nb, IB[H_NBF])),
        _borrow(IB, IB[H_BI], (nb, NBI)),
        _borrow(FB, IB[H_TF], (nt, NTF)),
        _borrow(IB, IB[H_TI], nt),
        _borrow(IB, IB[H_CI], (nc, 2)),
        _borrow(FB, IB[H_CF], (nc, NCF)),
        _borrow(IB, IB[H_KI], (nk, NKI)),
        _borrow(FB, IB[H_KF], (nk, NKF)),
        _borrow(FB, IB[H_KN], nk),
        _borrow(FB, IB[H_W], IB[H_IN] - IB[H_W]),
        _borrow(FB, 0, (3, 4, 3)),
        _borrow(FB, IB[H_WT], (IB[H_NW], NWT)),
    )


@kernel
def _bare(a):
    """A borrowed view of all of ``a``."""
    return _borrow(a, 0, a.shape)


# ``flat``'s declarations of the workspace and its parts, compiled: the kernels cut each buffer
# at the offsets that follow from them, as ``flat.laid_out`` does in Python.
_workspace_fields = inlined(workspace_fields)
_connection_fields = inlined(connection_fields)
_input_fields = inlined(input_fields)
_limit_fields = inlined(limit_fields)


@inlined
def _start(fields, k):
    """Where field k of a buffer laid out as ``fields`` starts (``flat.laid_out``)."""
    o = 0
    for j in range(k):
        o += fields[j][0] * fields[j][1]
    return o


@inlined
def _part(a, o, fields, k):
    """A borrowed view (rows x columns) of field k of a buffer laid out as ``fields`` at a[o:]."""
    return _borrow(a, o + _start(fields, k), fields[k])


@inlined
def _flat_part(a, o, fields, k):
    """``_part`` as a vector."""
    rows, columns = fields[k]
    return _borrow(a, o + _start(fields, k), rows * columns)


@kernel
def _carve(W, nb, nq, nv, nt):
    """(WB, WQ, WV, thrust, S, CS): borrowed views of a workspace buffer at the offsets of
    ``flat.workspace``; CS, the connections' scratch, is the rest."""
    F = _workspace_fields(nb, nq, nv, nt)
    o_cs = _start(F, len(F))
    WB, WQ, WV = _part(W, 0, F, 0), _part(W, 0, F, 1), _part(W, 0, F, 2)
    return WB, WQ, WV, _flat_part(W, 0, F, 3), _flat_part(W, 0, F, 4), _borrow(W, o_cs, W.shape[0] - o_cs)
