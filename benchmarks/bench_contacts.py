"""Contacts beside MuJoCo (issue 38): the incline and the drop of ``test/test_touch.py`` built in
both simulators, their outcomes side by side, and a check that they agree within the stated
tolerances (the script exits non-zero otherwise).

The same physical case in both:

- **Incline**: a 0.3 x 0.3 x 0.1 m box of 20 kg (9 L: 11 kg heavy in water), 2 kg of added
  mass along the slope, μ = 0.5 (friction angle atan 0.5 = 26.565°). In uvms_sim, the
  description of the test: a plane seabed sloping by θ, buoyancy and added mass from the
  ``hydrodynamics`` block, no drag. In MuJoCo (no fluid, no added mass) a box of the inertial
  mass along the slope, m + m_a = 22 kg, under the buoyancy-corrected gravity
  g' = (m - ρV) g / (m + m_a) turned by θ (a flat floor under a tilted gravity is the same
  incline): the normal force (m - ρV) g cos θ, the friction bound μ of that and the pull
  down the slope are the same, and so is the sliding acceleration g' (sin θ - μ cos θ).
- **Drop**: a 2 kg sphere of 5 cm radius (0.52 kg of water, 0.26 kg of added mass) from 0.2 m
  above the seabed, restitution 0 (critically damped), contact stiffness 2e4 N/m.

MuJoCo's contact is a soft constraint (Todorov 2014): with the impedance ``d`` constant
(``solimp`` dmin = dmax = d = 0.95) and ``solref`` in its direct form (-S, -B), a contact row at
rest carries the force that holds the body with the penetration r = (1 - d) a0 / S (a0: the
acceleration the row has without the contact; its regularisation R = (1 - d) / d times the
row's inverse mass, r = R f / k). The stiffness that gives our rest depth W' / k (W': the
weight in water) is then S = (1 - d) k / (m + m_a) for the elliptic cone; the pyramidal cone
(MuJoCo's default) splits a contact into four edge rows, each regularised with 2 μ² (1 + μ²)
times the inverse mass, so its S is μ² (1 + μ²) / 2 times that (without it the sphere sinks
6.4 times less at μ = 0.5). B = 2 sqrt(S): critical damping of MuJoCo's own spring. Friction
rows have no position term: below the friction bound a contact creeps at R f_t / B, so
MuJoCo's sticking is not exact (ours is: a Coulomb-bounded spring); the script measures the
creep at 20°.

Compared, with the tolerances (``TOLERANCES``) and why:

- the slide onset angle, by bisection over θ: does the block move more than 10 mm down the
  slope in 2 s (after 0.5 s of settling)? A slide covers 10 mm in 2 s at a = 5 mm/s², 0.05°
  above the friction angle; the elliptic cone's creep (0.7 mm/s at 20°, 1 mm/s near the onset)
  covers a fifth of the 10 mm and moves its onset down by about 0.01°; ours sticks, but within
  0.1° of the friction angle the block keeps the speed of the slip it made while settling (its
  contact springs ringing after the 0.1 mm drop) and decelerates at g' (μ cos θ - sin θ) ≈ 0,
  so it counts as sliding 0.02° below atan μ. Tolerance 0.1°, against atan μ and between the
  two. The pyramidal cone creeps five times faster (3.6 mm/s at 20°: 7 mm of the 10 mm in the
  window), so with it this test finds the creep rather than the slide (2.3° low): shown, not
  checked.
- the sliding acceleration at 35°, fitted over 0.5-2 s: against g' (sin θ - μ cos θ) and
  between the two, to 0.5 % (the test's tolerance; all three agree to 0.1 %).
- the drop's rest height of the sphere's centre above the seabed after 3 s: against
  r - W' / k and between the two, to 1e-6 m (0.14 % of the 0.72 mm sink; both settle onto the
  same equilibrium, to 1e-9 m).

Run: ``.venv/bin/python benchmarks/bench_contacts.py`` (part of ``make bench``). Needs MuJoCo
(``benchmarks/requirements.txt``).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from uvms_sim.model.description import load
from uvms_sim.simulator import Simulator

G = 9.80665
RHO = 1000.0
DT = 0.001
MU = 0.5
# the incline (test_touch._incline)
BOX = (0.3, 0.3, 0.1)
BOX_MASS, BOX_VOLUME, BOX_ADDED = 20.0, 0.3 * 0.3 * 0.1, 2.0
K_BOX = 1.0e5
# the drop (test_touch: the sphere at rest)
BALL_R, BALL_MASS, K_BALL = 0.05, 2.0, 2.0e4
BALL_VOLUME = 4.0 / 3.0 * math.pi * BALL_R**3
BALL_ADDED = 0.5 * RHO * BALL_VOLUME  # a sphere's added mass, ½ ρ V
# MuJoCo's constant impedance (solimp dmin = dmax)
D = 0.95
SETTLE, WINDOW, MOVED = 0.5, 2.0, 0.01  # s, s, m: the onset test

TOLERANCES = {
    "onset (deg)": 0.1,  # module doc: the threshold's 0.05°, the creep (elliptic) or the settling kick (ours)
    "sliding acceleration (rel)": 0.005,  # the test's; both are within 0.1 %
    "rest height (m)": 1.0e-6,  # 0.14 % of the sink; both settle onto the same equilibrium
}

POST = """
vehicles:
  - name: post
    base: fixed
    links: [{name: post, collision: []}]
"""


def g_incline() -> float:
    """The buoyancy-corrected gravity of the block for MuJoCo (module doc)."""
    return (BOX_MASS - RHO * BOX_VOLUME) * G / (BOX_MASS + BOX_ADDED)


def expected_slide(theta: float) -> float:
    return g_incline() * (math.sin(theta) - MU * math.cos(theta))


# ----------------------------------------------------------------------------------- uvms_sim
def _load(text: str):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scene.yaml"
        path.write_text(text)
        return load(path)


class Ours:
    """The cases in uvms_sim (descriptions as test/test_touch.py's)."""

    name = "uvms_sim"

    def incline(self, degrees: float) -> tuple[Simulator, np.ndarray, str]:
        theta = math.radians(degrees)
        s = math.tan(theta)
        normal = np.array([s, 0.0, -1.0]) / math.hypot(s, 1.0)
        centre = np.array([0.0, 0.0, 10.0]) + (0.05 + 1e-4) * normal
        a = BOX_ADDED
        system = _load(POST + f"""
scene:
  seabed: {{type: plane, depth: 10.0, slope: [{s}, 0.0]}}
  contact: {{stiffness: {K_BOX}, tangential_stiffness: {K_BOX}, restitution: 0.1, friction: {MU}}}
  objects:
    - name: block
      shape: box
      size: {list(BOX)}
      mass: {BOX_MASS}
      xyz: {centre.tolist()}
      rpy: [0.0, {-theta}, 0.0]
      hydrodynamics:
        volume: {BOX_VOLUME}
        added_mass: {{X_udot: {-a}, Y_vdot: {-a}, Z_wdot: -30.0, K_pdot: -0.1, M_qdot: -0.1, N_rdot: -0.2}}
""")  # fmt: skip
        along = np.array([math.cos(theta), 0.0, math.sin(theta)])  # down the slope, NED
        return Simulator.from_system(system), along, "block"

    def along(self, degrees: float, times: list[float]) -> np.ndarray:
        """Distance down the slope at ``times`` (s)."""
        sim, along, name = self.incline(degrees)
        i = sim.model.idx_q[sim.model.body_index(name)]
        out, t = [], 0.0
        for target in times:
            steps = round((target - t) / DT)
            sim.advance(DT, steps)
            t += steps * DT
            out.append(float(sim.state.q[i : i + 3] @ along))
        return np.array(out)

    def rest_height(self) -> float:
        """Height of the sphere's centre above the seabed after 3 s."""
        system = _load(POST + f"""
scene:
  seabed: {{type: plane, depth: 10.0}}
  contact: {{stiffness: {K_BALL}, restitution: 0.0}}
  objects: [{{name: ball, shape: sphere, size: [{BALL_R}], mass: {BALL_MASS}, xyz: [0, 0, 9.8]}}]
""")  # fmt: skip
        sim = Simulator.from_system(system)
        sim.advance(DT, 3000)
        i = sim.model.idx_q[sim.model.body_index("ball")]
        return 10.0 - float(sim.state.q[i + 2])


# ------------------------------------------------------------------------------------- MuJoCo
def _box_inertia(mass: float, size) -> list[float]:
    x, y, z = size
    return [mass * (y * y + z * z) / 12, mass * (x * x + z * z) / 12, mass * (x * x + y * y) / 12]


def _solref(k: float, mass: float, cone: str) -> tuple[float, float]:
    """MuJoCo's direct (S, B) for our stiffness k on a body of inertial mass ``mass`` (module
    doc): S = (1 - d) k / m (the pyramidal cone's rows: times μ² (1 + μ²) / 2), B critical."""
    s = (1.0 - D) * k / mass
    if cone == "pyramidal":
        s *= MU * MU * (1.0 + MU * MU) / 2.0
    return s, 2.0 * math.sqrt(s)


@dataclass
class Peer:
    """The cases in MuJoCo (MJCF written here)."""

    cone: str = "elliptic"
    impratio: float = 1.0

    @property
    def name(self) -> str:
        return f"MuJoCo, {self.cone} cone" + (f", impratio {self.impratio:g}" if self.impratio != 1 else "")

    def _mjcf(self, body: str, mass: float, k: float, gravity) -> str:
        s, b = _solref(k, mass, self.cone)
        g = " ".join(f"{x:.12g}" for x in gravity)
        return f"""<mujoco>
  <option timestep="{DT}" gravity="{g}" density="0" viscosity="0" cone="{self.cone}"
          impratio="{self.impratio}" integrator="Euler"/>
  <default><geom friction="{MU} 0 0" condim="3" solref="{-s:.12g} {-b:.12g}"
                 solimp="{D} {D} 0.001 0.5 2" margin="0"/></default>
  <worldbody>
    <geom name="seabed" type="plane" size="5 5 0.1"/>
{body}
  </worldbody>
</mujoco>"""

    def along(self, degrees: float, times: list[float]) -> np.ndarray:
        """The incline: a flat floor, gravity g' turned by θ about y (down the slope: +x)."""
        import mujoco

        theta = math.radians(degrees)
        m = BOX_MASS + BOX_ADDED
        inertia = " ".join(f"{v:.9g}" for v in _box_inertia(BOX_MASS, BOX))
        half = " ".join(f"{0.5 * v:g}" for v in BOX)
        body = f"""    <body name="block" pos="0 0 {0.5 * BOX[2] + 1e-4}">
      <freejoint/>
      <inertial pos="0 0 0" mass="{m}" diaginertia="{inertia}"/>
      <geom type="box" size="{half}"/>
    </body>"""
        gravity = g_incline() * np.array([math.sin(theta), 0.0, -math.cos(theta)])
        model = mujoco.MjModel.from_xml_string(self._mjcf(body, m, K_BOX, gravity))
        data = mujoco.MjData(model)
        out, t = [], 0.0
        for target in times:
            steps = round((target - t) / DT)
            for _ in range(steps):
                mujoco.mj_step(model, data)
            t += steps * DT
            out.append(float(data.qpos[0]))
        return np.array(out)

    def rest_height(self) -> float:
        import mujoco

        m = BALL_MASS + BALL_ADDED
        inertia = 0.4 * BALL_MASS * BALL_R**2
        body = f"""    <body name="ball" pos="0 0 0.2">
      <freejoint/>
      <inertial pos="0 0 0" mass="{m}" diaginertia="{inertia} {inertia} {inertia}"/>
      <geom type="sphere" size="{BALL_R}"/>
    </body>"""
        g = (BALL_MASS - RHO * BALL_VOLUME) * G / m
        model = mujoco.MjModel.from_xml_string(self._mjcf(body, m, K_BALL, (0.0, 0.0, -g)))
        data = mujoco.MjData(model)
        for _ in range(3000):
            mujoco.mj_step(model, data)
        return float(data.qpos[2])


# ------------------------------------------------------------------------------------ compare
def moved(sim, degrees: float) -> float:
    """Distance down the slope between the end of settling and the end of the window."""
    x = sim.along(degrees, [SETTLE, SETTLE + WINDOW])
    return float(x[1] - x[0])


def onset(sim, lo: float = 20.0, hi: float = 32.0, tol: float = 0.005) -> float:
    """Bisection over the slope angle (deg) for the onset of sliding (module doc)."""
    assert moved(sim, lo) < MOVED <= moved(sim, hi)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if moved(sim, mid) < MOVED else (lo, mid)
    return 0.5 * (lo + hi)


def slide(sim, degrees: float = 35.0) -> float:
    """Sliding acceleration fitted over 0.5-2 s."""
    times = [0.1 * k for k in range(5, 21)]
    x = sim.along(degrees, times)
    return 2.0 * float(np.polyfit(times, x, 2)[0])


def creep(sim, degrees: float = 20.0) -> float:
    """Mean speed down the slope (m/s) over the window, well below the onset."""
    return moved(sim, degrees) / WINDOW


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    friction_angle = math.degrees(math.atan(MU))
    sink = (BALL_MASS - RHO * BALL_VOLUME) * G / K_BALL
    rest_expected = BALL_R - sink
    peers = [Ours(), Peer("elliptic"), Peer("pyramidal")]
    rows = []
    for sim in peers:
        rows.append((sim.name, onset(sim), slide(sim), sim.rest_height(), creep(sim)))
    expected_a = expected_slide(math.radians(35.0))
    print(f"incline: μ {MU}, friction angle {friction_angle:.3f}°", end="; ")
    print(f"onset: moves > {MOVED * 1e3:g} mm in {WINDOW:g} s")
    print(f"slide at 35°: expected g' (sin θ - μ cos θ) = {expected_a:.5f} m/s²")
    print(f"drop: expected rest height r - W'/k = {rest_expected * 1e3:.5f} mm")
    print()
    print("| simulator | onset (deg) | sliding acceleration at 35° (m/s²) | rest height (mm) ", end="")
    print("| creep at 20° (mm/s) |")
    print("|---|---|---|---|---|")
    for name, on, a, rest, c in rows:
        print(f"| {name} | {on:.3f} | {a:.5f} | {rest * 1e3:.5f} | {c * 1e3:.4f} |")
    print()
    failures = []
    ours = rows[0]
    for name, on, a, rest, _ in rows:
        tol_on = TOLERANCES["onset (deg)"]
        checks = (
            []
            if "pyramidal" in name
            else [  # its creep decides (module doc): shown, not checked
                ("onset vs atan μ", abs(on - friction_angle), tol_on),
                ("onset vs uvms_sim", abs(on - ours[1]), tol_on),
            ]
        )
        tol_a = TOLERANCES["sliding acceleration (rel)"]
        checks += [
            ("sliding acceleration vs analytic", abs(a / expected_a - 1), tol_a),
            ("sliding acceleration vs uvms_sim", abs(a / ours[2] - 1), tol_a),
            ("rest height vs analytic", abs(rest - rest_expected), TOLERANCES["rest height (m)"]),
            ("rest height vs uvms_sim", abs(rest - ours[3]), TOLERANCES["rest height (m)"]),
        ]
        for what, err, tol in checks:
            ok = err <= tol
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {what}: {err:.3g} (tolerance {tol:g})")
            if not ok:
                failures.append(f"{name}: {what}")
    print("all within the tolerances" if not failures else f"{len(failures)} outside the tolerances")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
