"""Small ArduSub logs written by the tests in the real formats: DataFlash (``.BIN``: FMT records
then data records, each ``A3 95 type payload``, with the formats ArduPilot's LogStructure.h
declares, packed by pymavlink's ``DFFormat``/``DFMessage``) and MAVLink telemetry logs
(``.tlog``: an 8-byte big-endian microsecond stamp before each MAVLink packet, as ground
stations and pymavlink's ``setup_logfile`` write them). The MAVLink packets are encoded by
pymavlink; the reader under test is the same pymavlink a user has."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from pymavlink.dialects.v20 import ardupilotmega as mavlink2

# name: (type id, format, columns), as ArduPilot 4.x logs them (AP_Logger/LogStructure.h)
MESSAGES = {
    "PARM": (64, "QNff", "TimeUS,Name,Value,Default"),
    "RCOU": (11, "QHHHHHHHHHHHHHH", "TimeUS,C1,C2,C3,C4,C5,C6,C7,C8,C9,C10,C11,C12,C13,C14"),
    "ATT": (35, "QffffffB", "TimeUS,DesRoll,Roll,DesPitch,Pitch,DesYaw,Yaw,AEKF"),
    "XKF1": (150, "QBccCfffffffccce", "TimeUS,C,Roll,Pitch,Yaw,VN,VE,VD,dPD,PN,PE,PD,GX,GY,GZ,OH"),
    "IMU": (29, "QBffffffIIfBBHH", "TimeUS,I,GyrX,GyrY,GyrZ,AccX,AccY,AccZ,EG,EA,T,GH,AH,GHz,AHz"),
    "BARO": (32, "QBfffcfIffBf", "TimeUS,I,Alt,AltAMSL,Press,Temp,CRt,SMS,Offset,GndTemp,H,CPress"),
    "BAT": (24, "QBfffffcfBBB", "TimeUS,Inst,Volt,VoltR,Curr,CurrTot,EnrgTot,Temp,Res,RemPct,H,SH"),
}
# ArduSub 3.x: sensor instances as separate messages (IMU2, BAR2, BAT2) without an instance
# field, ATT in centidegrees, EKF2's NKF1 and EKF3's XKF1 without a core field (core 1 in NKF6/XKF6)
MESSAGES_3X = {
    "PARM": (64, "QNf", "TimeUS,Name,Value"),
    "RCOU": (11, "QHHHHHHHHHHHHHH", "TimeUS,C1,C2,C3,C4,C5,C6,C7,C8,C9,C10,C11,C12,C13,C14"),
    "ATT": (35, "QccccCCCC", "TimeUS,DesRoll,Roll,DesPitch,Pitch,DesYaw,Yaw,ErrRP,ErrYaw"),
    "NKF1": (151, "QccCfffffffccce", "TimeUS,Roll,Pitch,Yaw,VN,VE,VD,dPD,PN,PE,PD,GX,GY,GZ,OH"),
    "NKF6": (156, "QccCfffffffccce", "TimeUS,Roll,Pitch,Yaw,VN,VE,VD,dPD,PN,PE,PD,GX,GY,GZ,OH"),
    "IMU": (29, "QffffffIIfBBHH", "TimeUS,GyrX,GyrY,GyrZ,AccX,AccY,AccZ,EG,EA,T,GH,AH,GHz,AHz"),
    "IMU2": (30, "QffffffIIfBBHH", "TimeUS,GyrX,GyrY,GyrZ,AccX,AccY,AccZ,EG,EA,T,GH,AH,GHz,AHz"),
    "BARO": (32, "QffcfIffB", "TimeUS,Alt,Press,Temp,CRt,SMS,Offset,GndTemp,Health"),
    "BAR2": (33, "QffcfIffB", "TimeUS,Alt,Press,Temp,CRt,SMS,Offset,GndTemp,Health"),
    "BAT": (24, "Qfffffcf", "TimeUS,Volt,VoltR,Curr,CurrTot,EnrgTot,Temp,Res"),
    "BAT2": (25, "Qfffffcf", "TimeUS,Volt,VoltR,Curr,CurrTot,EnrgTot,Temp,Res"),
}
FMT = (128, "BBnNZ", "Type,Length,Name,Format,Columns")


class DataFlashWriter:
    """Writes a DataFlash log with pymavlink's own DataFlash classes: a FMT record per message
    kind, then ``write(name, **fields)`` records (missing fields are 0), each packed by
    ``DFMessage.get_msgbuf`` (header ``A3 95 type``, the struct of the format, scaled fields
    such as centidegrees divided by their multiplier as ArduPilot stores them)."""

    def __init__(self, path: str | Path, messages: dict | None = None) -> None:
        from pymavlink.DFReader import DFFormat

        self.f = open(path, "wb")
        self.formats: dict[str, DFFormat] = {}
        fmt = DFFormat(FMT[0], "FMT", 0, FMT[1], FMT[2])
        fmt.len = 3 + struct.calcsize(fmt.msg_struct)
        self.formats["FMT"] = fmt
        self.write("FMT", Type=FMT[0], Length=fmt.len, Name="FMT", Format=FMT[1], Columns=FMT[2])
        for name, (msg_id, format_, columns) in (messages or MESSAGES).items():
            df = DFFormat(msg_id, name, 0, format_, columns)
            df.len = 3 + struct.calcsize(df.msg_struct)
            self.formats[name] = df
            self.write("FMT", Type=msg_id, Length=df.len, Name=name, Format=format_, Columns=columns)

    def write(self, name: str, **fields) -> None:
        self.f.write(self.record(name, **fields))

    def record(self, name: str, **fields) -> bytes:
        """One record's bytes (``write`` without writing)."""
        from pymavlink.DFReader import DFMessage

        df = self.formats[name]
        values = []
        for code, column, mul in zip(df.msg_fmts, df.columns, df.msg_mults, strict=True):
            v = fields.get(column, 0)
            if code in "nNZ":
                values.append(v if isinstance(v, str) else v.decode())
            elif mul is not None:  # DFMessage holds the stored value (centidegrees) and scales it
                values.append(float(v) / mul)
            elif code in "fd":
                values.append(float(v))
            else:
                values.append(round(float(v)))
        buf = DFMessage(df, values, True, None).get_msgbuf()
        if buf is None:
            raise ValueError(f"{name}: pymavlink cannot pack {fields}")
        return buf

    def raw(self, data: bytes) -> None:
        self.f.write(data)

    def close(self) -> None:
        self.f.close()


class TelemetryLogWriter:
    """Writes a ``.tlog``: ``send(name, stamp_us, **fields)`` through pymavlink's encoder
    (MAVLink 2), each packet after its 8-byte big-endian receive stamp."""

    def __init__(self, path: str | Path, spoil=None) -> None:
        self.f = open(path, "wb")
        self.mav = mavlink2.MAVLink(None, srcSystem=1, srcComponent=1)
        self.spoil = spoil
        self.sent = 0

    def send(self, name: str, stamp_us: int, **fields) -> None:
        """``spoil(n, name, fields)``, when given, may change the n-th message's fields."""
        if self.spoil is not None:
            self.spoil(self.sent, name, fields)
        self.sent += 1
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
