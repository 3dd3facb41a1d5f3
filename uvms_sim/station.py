"""What holding station on a tether takes: the thrust a vehicle needs to stay still at a point
while the current drags on it and on its tether.

The vehicle is held at the station, level, at rest; its tether (MoorDyn) settles in the current
and waves for ``seconds``; then the wrench the thrusters must supply is the inverse dynamics at
rest (``dynamics.rnea`` with v = 0, v̇ = 0): the current's drag on the vehicle, its buoyancy
less its weight, and the tether's pull, which it balances. The thrusters' share of it comes
from the allocation matrix (least squares), and their use from the T200 tables' limits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .actuators.bank import thruster_bank
from .dynamics.rnea import rnea
from .model.system import System
from .simulator import Simulator
from .spatial import Array


@dataclass
class Station:
    """The wrench to hold station (``thrust``: body axes about the root, N and N m) and its
    parts in world NED (N): the tether's pull on the vehicle and everything else (current drag,
    buoyancy less weight); the thrusters' forces that give it (N, least squares) and the largest
    share of a thruster's limit that needs (1: one thruster at its limit)."""

    thrust: Array
    tether_force: Array
    vehicle_force: Array
    thrusts: Array
    use: float


def hold_station(system: System, station: Array, seconds: float = 120.0, dt: float = 0.002) -> Station:
    """Hold the first vehicle of ``system`` (and its first tether) still at ``station`` (NED, m),
    level, and say what it takes once the tether has settled for ``seconds``."""
    sim = Simulator.from_system(system)
    q = system.initial_q.copy()
    root = system.model.body_index(system.vehicles[0].root)
    iq = system.model.idx_q[root]
    q[iq : iq + 3] = station
    q[iq + 3 : iq + 7] = (1.0, 0.0, 0.0, 0.0)
    sim.reset(q)
    tether = sim.tethers[0]
    _, x, _ = sim.link_point(tether.body, tether.spec.position)
    still = np.zeros(3)
    t = 0.0
    for _ in range(round(seconds / dt)):
        tether.advance(t, dt, x, still)
        t += dt
    sim.state.t = t
    model = sim.model
    loads = np.zeros((model.nbodies, 6))
    R, _, _ = sim.link_point(tether.body, tether.spec.position)
    tether.wrench(R, loads[tether.body])
    zero = np.zeros(model.nv)
    data = model.create_data()
    without = rnea(model, data, q, zero, zero, sim.env, None, t)  # what the water and gravity need
    needed = rnea(model, data, q, zero, zero, sim.env, loads, t)  # and the tether's pull
    iv = model.idx_v[root]
    thrust = needed[iv : iv + 6]
    bank = thruster_bank(system)
    if bank is None:
        raise ValueError("holding station needs thrusters")
    B = system.allocation_matrix(0)
    thrusts = np.asarray(np.linalg.lstsq(B, thrust, rcond=None)[0], dtype=float)
    limits = np.where(thrusts >= 0.0, bank.T_max, -bank.T_min)
    return Station(
        thrust=thrust,
        tether_force=tether.force.copy(),
        vehicle_force=-(R @ without[iv : iv + 3]),
        thrusts=thrusts,
        use=float(np.max(np.abs(thrusts) / limits)),
    )
