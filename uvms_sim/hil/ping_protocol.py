"""Blue Robotics' Ping protocol (version 1.0): framing and the messages the Ping2 (Ping1D)
and the Ping360 speak.

A frame is ``'B' 'R'``, the payload length (u16), the message id (u16), the source and the
destination device ids (u8 each), the payload, and a checksum (u16): the sum of every byte
before it, modulo 2**16; all little-endian. A message with an empty payload whose id is one
the device sends asks for that message (the Ping1D's ``legacy`` request);
``general_request`` (6) asks for ``requested_id``. Payload layouts are the protocol's
definitions (struct formats; a trailing ``data`` field is the rest of the payload, prefixed
by its u16 length in the messages that carry one).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

HEADER = struct.Struct("<2sHHBB")
MAX_PAYLOAD = 65535

ACK, NACK, ASCII_TEXT, DEVICE_INFORMATION, PROTOCOL_VERSION, GENERAL_REQUEST = 1, 2, 3, 4, 5, 6
SET_DEVICE_ID = 100

# id -> (name, struct format of the fixed part, field names; a last name past the format is
# the variable data); an indented line goes on with the row above
_TABLE = """
1 ack H acked_id
2 nack H nacked_id nack_message
3 ascii_text - ascii_message
4 device_information BBBBBB device_type device_revision firmware_version_major
    firmware_version_minor firmware_version_patch reserved
5 protocol_version BBBB version_major version_minor version_patch reserved
6 general_request H requested_id
100 set_device_id B device_id
1000 set_device_id B device_id
1001 set_range II scan_start scan_length
1002 set_speed_of_sound I speed_of_sound
1003 set_mode_auto B mode_auto
1004 set_ping_interval H ping_interval
1005 set_gain_setting B gain_setting
1006 set_ping_enable B ping_enabled
1007 set_oss_profile_configuration HBB number_of_points normalization_enabled enhance_enabled
1200 firmware_version BBHH device_type device_model firmware_version_major firmware_version_minor
1201 device_id B device_id
1202 voltage_5 H voltage_5
1203 speed_of_sound I speed_of_sound
1204 range II scan_start scan_length
1205 mode_auto B mode_auto
1206 ping_interval H ping_interval
1207 gain_setting I gain_setting
1208 transmit_duration H transmit_duration
1210 general_info HHHHBB firmware_version_major firmware_version_minor voltage_5 ping_interval
    gain_setting mode_auto
1211 distance_simple IB distance confidence
1212 distance IHHIIII distance confidence transmit_duration ping_number scan_start scan_length
    gain_setting
1213 processor_temperature H processor_temperature
1214 pcb_temperature H pcb_temperature
1215 ping_enable B ping_enabled
1300 profile IHHIIIIH distance confidence transmit_duration ping_number scan_start scan_length
    gain_setting profile_data_length profile_data
1301 oss_profile_configuration HBB number_of_points normalization_enabled enhance_enabled
1400 continuous_start H id
1401 continuous_stop H id
2000 set_device_id BB id reserved
2300 device_data BBHHHHHH mode gain_setting angle transmit_duration sample_period transmit_frequency
    number_of_samples data_length data
2301 auto_device_data BBHHHHHHBBHH mode gain_setting angle transmit_duration sample_period
    transmit_frequency start_angle stop_angle num_steps delay number_of_samples data_length data
2600 reset BB bootloader reserved
2601 transducer BBHHHHHBB mode gain_setting angle transmit_duration sample_period transmit_frequency
    number_of_samples transmit reserved
2602 auto_transmit BBHHHHHHBB mode gain_setting transmit_duration sample_period transmit_frequency
    number_of_samples start_angle stop_angle num_steps delay
2903 motor_off - -
"""
MESSAGES: dict[int, tuple[str, str, tuple[str, ...]]] = {
    int(i): (name, "" if fmt == "-" else fmt, () if names == ["-"] else tuple(names))
    for i, name, fmt, *names in (row.split() for row in _TABLE.strip().replace("\n    ", " ").splitlines())
}


@dataclass(frozen=True)
class Message:
    id: int
    src: int
    dst: int
    payload: bytes

    def fields(self) -> dict | None:
        """The payload's fields by name (a variable ``data`` as bytes), or None when the id is
        unknown or the payload does not hold the fixed part."""
        if self.id not in MESSAGES:
            return None
        _, fmt, names = MESSAGES[self.id]
        fixed = struct.calcsize("<" + fmt)
        if len(self.payload) < fixed:
            return None
        values = struct.unpack_from("<" + fmt, self.payload)
        out = dict(zip(names, values, strict=False))
        if len(names) > len(values):
            out[names[-1]] = self.payload[fixed:]
        return out


def frame(msg_id: int, payload: bytes = b"", src: int = 0, dst: int = 0) -> bytes:
    """One frame: header, payload, checksum."""
    head = HEADER.pack(b"BR", len(payload), msg_id, src, dst) + payload
    return head + struct.pack("<H", sum(head) & 0xFFFF)


def pack(msg_id: int, src: int = 0, dst: int = 0, **values) -> bytes:
    """The frame of message ``msg_id`` with its fields ``values`` (the variable data, if the
    message has one, as bytes under its name; a ``*_length`` before it is filled in)."""
    _, fmt, names = MESSAGES[msg_id]
    n_fixed = len(struct.unpack("<" + fmt, bytes(struct.calcsize("<" + fmt)))) if fmt else 0
    data = b""
    if len(names) > n_fixed:
        data = bytes(values.get(names[-1], b""))
        length = names[n_fixed - 1] if n_fixed and names[n_fixed - 1].endswith("_length") else None
        if length:
            values[length] = len(data)
    payload = struct.pack("<" + fmt, *(values.get(n, 0) for n in names[:n_fixed])) + data
    return frame(msg_id, payload, src, dst)


class Parser:
    """Frames out of a byte stream (or datagrams): bytes in, the messages whose checksum
    holds out; anything else is skipped up to the next ``'BR'``."""

    def __init__(self, max_payload: int = MAX_PAYLOAD) -> None:
        self.buffer = bytearray()
        self.max_payload = max_payload
        self.errors = 0

    def feed(self, data: bytes) -> list[Message]:
        self.buffer += data
        out: list[Message] = []
        buf = self.buffer
        while True:
            start = buf.find(b"BR")
            if start < 0:
                del buf[: max(0, len(buf) - 1)]
                return out
            del buf[:start]
            if len(buf) < HEADER.size:
                return out
            _, length, msg_id, src, dst = HEADER.unpack_from(buf)
            if length > self.max_payload:
                self.errors += 1
                del buf[:2]
                continue
            end = HEADER.size + length
            if len(buf) < end + 2:
                return out
            (checksum,) = struct.unpack_from("<H", buf, end)
            if checksum != sum(buf[:end]) & 0xFFFF:
                self.errors += 1
                del buf[:2]
                continue
            out.append(Message(msg_id, src, dst, bytes(buf[HEADER.size : end])))
            del buf[: end + 2]
