"""Messages published from their serialized form, with only their changing numbers rewritten.

At the rates a simulator publishes when it runs many times faster than real time, most of an
rclpy publish is the conversion of the Python message into its C form (measured for a /tf of
eight transforms: 40 us to convert, 5 us to hand the bytes to the middleware with a reader in
another process). rclpy also publishes bytes that are already serialized
(``Publisher.publish(bytes)``), as the middleware would have made them. ``Serialized`` keeps
such bytes for one message whose strings, sequence lengths and constant fields do not change
between publishes (a TF message's frame names, an odometry's covariances), made once by
rclpy's own serializer, and writes the changing numbers (float64 fields and the stamps) in
place before each publish.

Where each number lies in the bytes is found, not computed: each listed field is set to a
value of its own and the serializer's output searched for it, twice with other values (a
frame name may hold any four bytes; it holds the same in both): exactly one place each. The
result is then checked once: numbers written in place must read back, through rclpy's
deserializer, as the same message with the same numbers set (``check``). CDR aligns a
float64 to 8 bytes and a 32-bit integer to 4, counted from the end of the 4-byte encapsulation
header: the float64 fields are one strided view, the stamps another.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message

from ..spatial import Array

HEADER = 4  # bytes of the CDR encapsulation header before the payload
LITTLE_ENDIAN = (0, 1)  # its first two bytes for CDR, little endian


def get_field(msg, path: str):
    """The field at a dotted ``path`` whose parts may index a sequence (``transforms[2].header``)."""
    for part in path.split(".") if path else ():
        name, _, index = part.partition("[")
        msg = getattr(msg, name)
        if index:
            msg = msg[int(index.rstrip("]"))]
    return msg


def set_field(msg, path: str, value) -> None:
    head, _, leaf = path.rpartition(".")
    setattr(get_field(msg, head), leaf, value)


def _float_sentinel(k: int, variant: int) -> float:
    """The float64 set into the k-th listed field (k below 2^20) for the ``variant``-th
    serialization: -2^(10 + variant) - k/1024, whose low 32 bits are zero (so half of it is
    never a ``_uint_sentinel``)."""
    return -(2.0 ** (20 + variant) + k) / 1024.0


def _uint_sentinel(k: int, variant: int) -> int:
    """The 32-bit number set into the k-th stamp field: under 10^9 (a valid nanosec)."""
    return (0x2B3C4D00, 0x1A2B3C00)[variant] + 37 * k


class Serialized:
    """The serialized bytes of ``msg`` with its float64 fields ``floats`` and its
    builtin_interfaces/Time fields ``stamps`` (dotted paths; a part may index a sequence, as in
    ``transforms[2].transform.rotation.w``) rewritten by ``fill``."""

    def __init__(self, msg, floats: Sequence[str], stamps: Sequence[str] = ()) -> None:
        self.msg_type = type(msg)
        self.floats, self.stamps = tuple(floats), tuple(stamps)
        nf, ns = len(self.floats), 2 * len(self.stamps)
        views = []
        for variant in (0, 1):  # a string of the message may hold a sentinel's bytes, not both
            for k, path in enumerate(self.floats):
                set_field(msg, path, _float_sentinel(k, variant))
            for k, path in enumerate(self.stamps):
                stamp = get_field(msg, path)
                stamp.sec, stamp.nanosec = _uint_sentinel(2 * k, variant), _uint_sentinel(2 * k + 1, variant)
            raw = serialize_message(msg)
            if tuple(raw[:2]) != LITTLE_ENDIAN:
                raise RuntimeError(
                    f"{self.msg_type.__name__}: serialized as {raw[:2]!r}, not CDR little endian"
                )
            buffer = bytearray(raw)
            size = len(raw)
            f64 = np.frombuffer(buffer, dtype="<f8", offset=HEADER, count=(size - HEADER) // 8)
            u32 = np.frombuffer(buffer, dtype="<u4", count=size // 4)
            views.append((buffer, f64, u32))
        (self.buffer, self._f64, self._u32), (_, f64_b, u32_b) = views
        self._fi = self._places(
            self._f64, f64_b, [(_float_sentinel(k, 0), _float_sentinel(k, 1)) for k in range(nf)]
        )
        places = self._places(
            self._u32, u32_b, [(_uint_sentinel(k, 0), _uint_sentinel(k, 1)) for k in range(ns)]
        )
        self._sec, self._nsec = places[0::2], places[1::2]
        # one stamp (most messages): written as two scalars, not through index arrays
        self._stamp = (int(self._sec[0]), int(self._nsec[0])) if len(self.stamps) == 1 else None
        self.check(msg)

    def _places(self, a: Array, b: Array, sentinels: list[tuple[float, float]]) -> np.ndarray:
        """Where each field is: the one aligned number that holds its first sentinel in the
        first serialization (``a``) and its second in the second (``b``)."""
        if len(a) != len(b):
            raise RuntimeError(f"{self.msg_type.__name__}: its size depends on its numbers")
        first = np.array([s for s, _ in sentinels])
        which = {float(x): k for k, x in enumerate(first)}
        at = np.full(len(sentinels), -1, dtype=np.intp)
        for h in np.flatnonzero(np.isin(a, first)):
            k = which[float(a[h])]
            if b[h] != sentinels[k][1]:
                continue  # bytes of a string, the same in both
            if at[k] >= 0:
                raise RuntimeError(f"{self.msg_type.__name__}: a field is in two places of its bytes")
            at[k] = h
        if (at < 0).any():
            raise RuntimeError(f"{self.msg_type.__name__}: a field is not in its serialized bytes")
        return at

    def check(self, msg) -> None:
        """Numbers written in place read back (rclpy's deserializer) as ``msg`` with the same
        numbers set. (Not compared byte for byte: the serializer leaves its alignment padding
        as it finds it in its buffer.)"""
        rng = np.random.default_rng(0)
        values = rng.normal(size=len(self.floats))
        sec, nsec = int(rng.integers(0, 2**31 - 1)), int(rng.integers(0, 10**9))
        for path, value in zip(self.floats, values, strict=True):
            set_field(msg, path, float(value))
        for path in self.stamps:
            stamp = get_field(msg, path)
            stamp.sec, stamp.nanosec = sec, nsec
        if deserialize_message(self.fill(values, sec, nsec), self.msg_type) != msg:
            raise RuntimeError(f"{self.msg_type.__name__}: the bytes written in place read back otherwise")

    def fill(self, values: Array | Sequence[float], sec: int = 0, nanosec: int = 0) -> bytes:
        """The message's bytes with ``values`` (in the order of ``floats``) and every stamp at
        ``sec``, ``nanosec``."""
        if len(self._fi):
            self._f64[self._fi] = values
        if self._stamp is not None:
            self._u32[self._stamp[0]], self._u32[self._stamp[1]] = sec, nanosec
        else:
            self._u32[self._sec] = sec
            self._u32[self._nsec] = nanosec
        return bytes(self.buffer)
