"""Small ArduSub logs written by the tests in the real formats: DataFlash (``.BIN``: FMT records
then data records, each ``A3 95 type payload``, laid out as ArduPilot's LogStructure.h declares
them) and MAVLink telemetry logs (``.tlog``: an 8-byte big-endian microsecond stamp before each
MAVLink packet, as ground stations and pymavlink's ``setup_logfile`` write them). The MAVLink
packets are encoded by pymavlink; the reader under test is the same pymavlink a user has."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from pymavlink.dialects.v20 import ardupilotmega as mavlink2

HEAD = b"\xa3\x95"
# format characters of ArduPilot's logger (AP_Logger/LogStructure.h) as Python struct codes
CODES = {"Q": "Q", "B": "B", "b": "b", "H": "H", "h": "h", "I": "I", "i": "i", "f": "f", "d": "d", "c": "h",
         "C": "H", "e": "i", "E": "I", "n": "4s", "N": "16s", "Z": "64s", "M": "B", "q": "q"}  # fmt: skip
SCALED = {"c": 100.0, "C": 100.0, "e": 100.0, "E": 100.0}  # stored x100 (centidegrees, ...)
# name: (type id, format, columns), as ArduPilot 4.x logs them
MESSAGES = {
    "PARM": (64, "QNff", "TimeUS,Name,Value,Default"),
    "RCOU": (11, "QHHHHHHHHHHHHHH", "TimeUS,C1,C2,C3,C4,C5,C6,C7,C8,C9,C10,C11,C12,C13,C14"),
    "ATT": (35, "QffffffB", "TimeUS,DesRoll,Roll,DesPitch,Pitch,DesYaw,Yaw,AEKF"),
    "XKF1": (150, "QBccCfffffffccce", "TimeUS,C,Roll,Pitch,Yaw,VN,VE,VD,dPD,PN,PE,PD,GX,GY,GZ,OH"),
    "IMU": (29, "QBffffffIIfBBHH", "TimeUS,I,GyrX,GyrY,GyrZ,AccX,AccY,AccZ,EG,EA,T,GH,AH,GHz,AHz"),
    "BARO": (32, "QBfffcfIffBf", "TimeUS,I,Alt,AltAMSL,Press,Temp,CRt,SMS,Offset,GndTemp,H,CPress"),
    "BAT": (24, "QBfffffcfBBB", "TimeUS,Inst,Volt,VoltR,Curr,CurrTot,EnrgTot,Temp,Res,RemPct,H,SH"),
}


class DataFlashWriter:
    """Writes a DataFlash log: ``write(name, **fields)`` (missing fields are 0)."""

    def __init__(self, path: str | Path) -> None:
        self.f = open(path, "wb")
        self.structs: dict[str, struct.Struct] = {}
        self._fmt(128, "FMT", "BBnNZ", "Type,Length,Name,Format,Columns")
        for name, (msg_id, fmt, columns) in MESSAGES.items():
            self._fmt(msg_id, name, fmt, columns)

    def _fmt(self, msg_id: int, name: str, fmt: str, columns: str) -> None:
        s = struct.Struct("<" + "".join(CODES[c] for c in fmt))
        self.structs[name] = s
        payload = struct.pack(
            "<BB4s16s64s", msg_id, 3 + s.size, name.encode(), fmt.encode(), columns.encode()
        )
        self.f.write(HEAD + bytes([128]) + payload)

    def write(self, name: str, **fields) -> None:
        msg_id, fmt, columns = (128, "BBnNZ", "") if name == "FMT" else MESSAGES[name]
        values = []
        for code, column in zip(fmt, columns.split(","), strict=True):
            v = fields.get(column, 0)
            if code in "nNZ":
                values.append(v.encode() if isinstance(v, str) else v)
            elif code in "fd":
                values.append(float(v))
            else:
                values.append(round(float(v) * SCALED.get(code, 1.0)))
        self.f.write(HEAD + bytes([msg_id]) + self.structs[name].pack(*values))

    def close(self) -> None:
        self.f.close()


class TelemetryLogWriter:
    """Writes a ``.tlog``: ``send(name, stamp_us, **fields)`` through pymavlink's encoder
    (MAVLink 2), each packet after its 8-byte big-endian receive stamp."""

    def __init__(self, path: str | Path) -> None:
        self.f = open(path, "wb")
        self.mav = mavlink2.MAVLink(None, srcSystem=1, srcComponent=1)

    def send(self, name: str, stamp_us: int, **fields) -> None:
        msg = getattr(self.mav, f"{name.lower()}_encode")(**fields)
        self.f.write(struct.pack(">Q", stamp_us) + msg.pack(self.mav))

    def raw(self, data: bytes) -> None:
        self.f.write(data)

    def close(self) -> None:
        self.f.close()


def euler_deg(quat_frd_ned: np.ndarray) -> np.ndarray:
    """ArduPilot's roll, pitch, yaw (3-2-1, degrees, yaw in [0, 360)) of an FRD->NED quaternion."""
    from transforms3d.euler import quat2euler

    yaw, pitch, roll = quat2euler(quat_frd_ned, "rzyx")
    return np.array([np.degrees(roll), np.degrees(pitch), np.degrees(yaw) % 360.0])
