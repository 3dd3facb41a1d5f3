"""The Earth's magnetic field from the World Magnetic Model (WMM2025; Chulliat et al. 2025),
evaluated with pygeomag: what a compass at a place and date sees, as an autopilot expects it
(PX4 applies the same model's declination at its GPS position, so a field with another
declination makes its heading disagree with the simulator's).

WMM2025 is valid from 2025.0 to 2030.0; a date outside that span is refused (the secular
variation is a linear extrapolation that grows wrong beyond the model's life)."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

import numpy as np

MODEL = "wmm/WMM_2025.COF"  # shipped inside pygeomag
NANOTESLA = 1e-9


@lru_cache(maxsize=1)
def _model():
    from pygeomag import GeoMag

    return GeoMag(coefficients_file=MODEL)


def decimal_year(when: dt.date) -> float:
    """A date as the decimal year the WMM takes (day of the year / days in the year)."""
    start = dt.date(when.year, 1, 1)
    days = (dt.date(when.year + 1, 1, 1) - start).days
    return when.year + (when - start).days / days


def wmm_field(lat: float, lon: float, alt: float, when: dt.date) -> np.ndarray:
    """The main field (T) in local NED at geodetic ``lat``, ``lon`` (degrees), ``alt`` metres
    above mean sea level (negative under water), on ``when``; ValueError outside the model's
    life span or the globe."""
    if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
        raise ValueError(f"home ({lat}, {lon}) is not a latitude in [-90, 90] and a longitude in [-180, 180]")
    model = _model()
    year = decimal_year(when)
    start, end = model.life_span
    if not start <= year <= end:
        raise ValueError(f"the magnetic model {model.model} covers {start:g}-{end:g}, not {when.isoformat()}")
    r = model.calculate(glat=lat, glon=lon, alt=alt / 1000.0, time=year)
    return np.array([r.x, r.y, r.z]) * NANOTESLA


def declination(field_ned: np.ndarray) -> float:
    """Declination (rad, east of true north) of a NED field."""
    return float(np.arctan2(field_ned[1], field_ned[0]))
