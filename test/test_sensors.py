"""The noisy sensors against their statistics and their geometry: the Allan deviation of a
long static IMU record, the DVL's beams over flat and sloped seabeds, the altimeter's cone,
the magnetometer's heading, the pressure sensor's noise and resolution, seeds, and exact rates
in simulated time over DDS."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from ros_helpers import simulator, spin_until
from sensor_msgs.msg import Imu, Range

from uvms_sim.hydro.environment import Seafloor
from uvms_sim.model import ConfigError, load
from uvms_sim.model.sensor_specs import DEFAULTS, SensorSpec
from uvms_sim.scene import PlaneSeabed, Scene, SceneRays
from uvms_sim.sensors.acoustic import Altimeter, Dvl
from uvms_sim.sensors.imu import Imu as ImuModel
from uvms_sim.sensors.magnetometer import Magnetometer
from uvms_sim.sensors.mount import Mount
from uvms_sim.sensors.noise import FLICKER_FLOOR, GM_PEAK, allan_deviation, gauss_markov_allan
from uvms_sim.sensors.pressure import PressureSensor
from uvms_sim.sensors.suite import SensorSuite
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"


class Pose:
    """The kinematic data a sensor reads (``Data``'s fields), for one body placed by hand."""

    def __init__(self, R=None, p=(0.0, 0.0, 0.0), v=(0.0,) * 6) -> None:
        self.R_world = np.array([np.eye(3) if R is None else R])
        self.p_world = np.array([p], dtype=float)
        self.v = np.array([v], dtype=float)


def rot_y(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_gauss_markov_allan_peak_is_the_constant_the_bias_uses():
    """The Gauss-Markov Allan deviation (closed form) peaks at GM_PEAK times its standard
    deviation at tau = 1.89 T, and a simulated process's Allan deviation follows the closed
    form within 5 % at 0.5, 1.89 and 5 T."""
    tau = np.linspace(0.1, 20.0, 20000)
    curve = gauss_markov_allan(tau, 1.0, 1.0)
    assert curve.max() == pytest.approx(GM_PEAK, rel=1e-5) and tau[curve.argmax()] == pytest.approx(
        1.89, abs=0.01
    )
    from uvms_sim.sensors.noise import InertialNoise

    noise = InertialNoise(
        10.0, 0.0, 1.0 / FLICKER_FLOOR * GM_PEAK, 0.0, 5.0, np.random.default_rng(3), axes=1
    )
    x = np.array([noise.sample()[0] for _ in range(200_000)])  # 20 000 s at 10 Hz, T = 5 s
    taus = np.array([2.5, 9.45, 25.0])
    np.testing.assert_allclose(allan_deviation(x, 10.0, taus), gauss_markov_allan(taus, 1.0, 5.0), rtol=0.05)


def test_a_static_imu_record_has_the_configured_allan_deviation():
    """Two hours of a static IMU at 50 Hz (white noise 1e-3 rad/s/sqrt(Hz) and 2e-3 m/s^2/sqrt(Hz),
    bias instability 5e-4 rad/s and 1e-3 m/s^2, correlation time 10 s): per axis, the white
    noise density read off the Allan deviation at tau = 0.2 s and the bias instability read off
    its peak near 1.89 T (after the white part is removed, and divided by the flicker floor
    0.664) are the configured ones within 10 % (measured: white noise within 0.7 %, bias
    instability within 7.3 %)."""
    params = {"rate": 50.0, "gyro_noise_density": 1e-3, "gyro_bias_instability": 5e-4,
              "accel_noise_density": 2e-3, "accel_bias_instability": 1e-3,
              "bias_correlation_time": 10.0}  # fmt: skip
    spec = SensorSpec("imu", "imu", "base", params=tuple(params.items()))
    imu = ImuModel(spec, Mount.of(spec, 0), np.random.default_rng(11))
    still = Pose()
    zero = np.zeros((1, 6))
    samples = np.array([np.concatenate(imu.read(still, zero, 9.80665)) for _ in range(7200 * 50)])
    taus = np.array([0.2, 10.0, 15.0, 18.9, 25.0, 35.0])
    for axis in range(6):
        density, instability = (
            (params["gyro_noise_density"], params["gyro_bias_instability"]) if axis < 3
            else (params["accel_noise_density"], params["accel_bias_instability"])
        )  # fmt: skip
        adev = allan_deviation(samples[:, axis], 50.0, taus)
        assert adev[0] * math.sqrt(taus[0]) == pytest.approx(density, rel=0.10), axis
        bias = np.sqrt(np.maximum(adev[1:] ** 2 - density**2 / taus[1:], 0.0)).max() / FLICKER_FLOOR
        assert bias == pytest.approx(instability, rel=0.10), (axis, bias)


def test_the_imu_reads_the_lever_arm_and_its_mounting():
    """Noise off, a body spinning at 2 rad/s about z: an IMU 0.3 m out along x feels the
    centripetal 1.2 m/s^2 towards the axis on top of gravity; mounted upside down (roll pi) it
    reads the same vector in its own axes (y and z flipped)."""
    base = SensorSpec("imu", "imu", "base", position=[0.3, 0.0, 0.0], noise=False)
    still = Pose(v=(0, 0, 0, 0, 0, 2.0))
    gyro, accel = ImuModel(base, Mount.of(base, 0), np.random.default_rng(0)).read(
        still, np.zeros((1, 6)), 9.80665
    )
    np.testing.assert_allclose(gyro, [0, 0, 2.0], atol=1e-12)
    np.testing.assert_allclose(accel, [-1.2, 0.0, -9.80665], atol=1e-12)
    flipped = replace(base, rpy=[math.pi, 0.0, 0.0])
    gyro2, accel2 = ImuModel(flipped, Mount.of(flipped, 0), np.random.default_rng(0)).read(
        still, np.zeros((1, 6)), 9.80665
    )
    np.testing.assert_allclose(gyro2, [0, 0, -2.0], atol=1e-12)
    np.testing.assert_allclose(accel2, [-1.2, 0.0, 9.80665], atol=1e-12)


def scene_of(depth: float, slope: tuple[float, float] = (0.0, 0.0)) -> SceneRays:
    """What the acoustic sensors see of a scene with only a plane seabed."""
    return SceneRays(Scene(PlaneSeabed(depth, slope)))


def dvl(noise_on: bool = False, **params) -> Dvl:
    spec = SensorSpec("dvl", "dvl", "base", params=tuple(params.items()), noise=noise_on)
    return Dvl(spec, Mount.of(spec, 0), np.random.default_rng(5))


def test_the_dvl_loses_lock_at_its_range_over_a_flat_seabed():
    """Level over a flat seabed each beam's range is the altitude / cos(22.5 deg): with the
    A50's 50 m the lock holds at 46.1 m altitude and is lost at 46.3 m (50 cos 22.5 = 46.19);
    below 0.05 m along the beams it is lost too. While locked the velocity is the vehicle's
    over the ground, in the DVL's axes, and the altitude is the true one."""
    sensor = dvl()
    floor = scene_of(100.0)
    moving = (0.4, -0.1, 0.05, 0.0, 0.0, 0.0)
    for h, valid in ((46.1, True), (46.3, False), (1.0, True), (0.04, False)):
        reading = sensor.read(Pose(p=(0, 0, 100.0 - h), v=moving), floor)
        assert reading.valid is valid, h
        if valid:
            np.testing.assert_allclose(reading.velocity, [0.4, -0.1, 0.05], atol=1e-12)
            assert reading.altitude == pytest.approx(h, rel=1e-12)
            np.testing.assert_allclose(reading.ranges, h / math.cos(math.radians(22.5)), rtol=1e-12)


def test_the_dvl_drops_beams_one_by_one_over_a_sloped_seabed():
    """A seabed sloping down to the north by 20 degrees, the DVL level: the beams pointing
    north (forward) are longer, range h_perp / (d . -n) each (checked against that formula). As
    the vehicle rises the two forward beams drop first: with two beams left the velocity is
    invalid though the altitude is still reported from them; with three or four it equals the
    truth."""
    slope = math.tan(math.radians(20.0))
    floor = Seafloor(60.0, (slope, 0.0))
    sensor = dvl()
    n = floor.normal
    heights = np.arange(60.0, 0.0, -0.5)  # NED depth of the vehicle: rising means smaller depth
    seen = []
    for z in heights:
        pose = Pose(p=(0, 0, 60.0 - z), v=(0.2, 0.1, 0.0, 0, 0, 0))
        reading = sensor.read(pose, scene_of(60.0, (slope, 0.0)))
        h_perp = floor.distance(pose.p_world[0])
        expected = [h_perp / -(n @ b) if -(n @ b) > 0 else np.inf for b in sensor.beams]
        expected = np.where((np.array(expected) >= 0.05) & (np.array(expected) <= 50.0), expected, np.nan)
        np.testing.assert_allclose(reading.ranges, expected, rtol=1e-12)
        valid = int(np.sum(np.isfinite(reading.ranges)))
        assert reading.valid == (valid >= 3)
        if reading.valid:
            np.testing.assert_allclose(reading.velocity, [0.2, 0.1, 0.0], atol=1e-12)
        seen.append(valid)
    assert {0, 2, 4} <= set(seen)  # all lost, the forward pair lost, all valid
    forward = sensor.beams[:, 0] > 0
    two = next(k for k, v in enumerate(seen) if v == 2)
    pose = Pose(p=(0, 0, 60.0 - heights[two]))
    ranges = sensor.read(pose, scene_of(60.0, (slope, 0.0))).ranges
    assert np.all(np.isnan(ranges[forward]))  # the down-slope (northern) pair


def test_dvl_noise_matches_its_reported_covariance():
    """With noise on, the velocity errors of 20 000 readings have the covariance the DVL reports
    (sigma^2 (B^T B)^-1) within 5 % on the diagonal."""
    sensor = dvl(noise_on=True)
    floor = scene_of(20.0)
    errors, cov = [], None
    for _ in range(20_000):
        r = sensor.read(Pose(p=(0, 0, 10.0), v=(0.3, 0.0, 0.0, 0, 0, 0)), floor)
        errors.append(r.velocity - [0.3, 0.0, 0.0])
        cov = r.covariance
    np.testing.assert_allclose(np.diag(np.cov(np.array(errors).T)), np.diag(cov), rtol=0.05)


def test_the_altimeter_sees_the_nearest_seabed_point_in_its_cone():
    """Ping2 geometry (25 degree cone) over a flat seabed 10 m below: pointing down it reads 10
    m; tilted 10 degrees (inside the half-angle 12.5) still 10 m; tilted 30 degrees,
    10 / cos(17.5 deg); pointing up, no return (+inf); beyond 100 m +inf; closer than 0.5 m
    -inf (REP 117)."""
    spec = SensorSpec("altimeter", "ping", "base", rpy=[0.0, -math.pi / 2, 0.0], noise=False)
    ping = Altimeter(spec, Mount.of(spec, 0), np.random.default_rng(0))
    floor = scene_of(10.0)
    assert ping.read(Pose(), floor) == pytest.approx(10.0, rel=1e-12)
    assert ping.read(Pose(R=rot_y(math.radians(10.0))), floor) == pytest.approx(10.0, rel=1e-12)
    tilted = ping.read(Pose(R=rot_y(math.radians(30.0))), floor)
    assert tilted == pytest.approx(10.0 / math.cos(math.radians(17.5)), rel=1e-12)
    assert ping.read(Pose(R=rot_y(math.pi)), floor) == math.inf
    assert ping.read(Pose(), scene_of(150.0)) == math.inf and ping.read(Pose(), scene_of(0.3)) == -math.inf
    assert ping.read(Pose(), SceneRays(Scene())) == math.inf  # no seabed


def test_the_magnetometer_gives_the_heading_and_the_pressure_sensor_its_noise():
    """Level and yawed by psi with declination D, atan2(-m_y, m_x) + D is psi; the field's
    inclination is atan2(m_z, |m_xy|). The pressure readings are multiples of the 10 Pa
    resolution with a standard deviation of sqrt(20^2 + 10^2/12) Pa within 3 %, about the true
    pressure at the sensor's depth."""
    decl = math.radians(7.0)
    spec = SensorSpec("magnetometer", "mag", "base", params=(("declination", decl),), noise=False)
    mag = Magnetometer(spec, Mount.of(spec, 0), np.random.default_rng(0))
    for psi in np.radians([0.0, 30.0, 135.0, -100.0]):
        m = mag.read(Pose(R=rot_z(psi)))
        assert math.remainder(math.atan2(-m[1], m[0]) + decl - psi, 2 * math.pi) == pytest.approx(
            0.0, abs=1e-12
        )
        assert math.atan2(m[2], math.hypot(m[0], m[1])) == pytest.approx(
            DEFAULTS["magnetometer"]["inclination"]
        )
    spec = SensorSpec("pressure", "bar30", "base", position=[0.0, 0.0, -0.1])
    bar30 = PressureSensor(spec, Mount.of(spec, 0), np.random.default_rng(2))
    values = np.array([bar30.read(Pose(p=(0, 0, 3.0)), 0.0, 1000.0, 9.80665) for _ in range(50_000)])
    assert np.allclose(values / 10.0, np.round(values / 10.0))
    assert values.mean() == pytest.approx(101325.0 + 1000.0 * 9.80665 * 2.9, abs=0.5)
    assert values.std() == pytest.approx(math.sqrt(20.0**2 + 10.0**2 / 12.0), rel=0.03)


def test_suites_are_deterministic_per_seed_and_differ_without_noise():
    system = load(CONFIG / "bluerov2_heavy.yaml")
    sims = [Simulator.from_system(system) for _ in range(3)]
    suites = [SensorSuite(system, 0.002, seed=s) for s in (7, 7, 8)]
    exact = SensorSuite(system, 0.002, noise=False)
    runs: list[list] = [[], [], [], []]
    for step in range(1, 201):
        for k, (sim, suite) in enumerate(zip([*sims, sims[0]], [*suites, exact], strict=True)):
            if k < 3:
                sim.step(0.002)
            readings = [r for r in suite.sample(sim, step) if r.sensor.spec.type in ("imu", "pressure")]
            runs[k] += [np.hstack(r.value) if isinstance(r.value, tuple) else r.value for r in readings]
    assert all(np.array_equal(a, b) for a, b in zip(runs[0], runs[1], strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(runs[0], runs[2], strict=True))
    assert len(runs[0]) == 40 + 8  # 200 steps of 2 ms: 40 IMU (100 Hz) and 8 pressure (20 Hz) samples
    # without noise the pressure is not quantised: the readings are exact, not the noisy ones
    exact_p = [x for x in runs[3] if np.ndim(x) == 0]
    noisy_p = [x for x in runs[0] if np.ndim(x) == 0]
    assert all(abs(a - b) < 200.0 and a != b for a, b in zip(exact_p, noisy_p, strict=True))


def _with_sensor(line: str, name: str = "_sensors.yaml") -> Path:
    text = (CONFIG / "bluerov2_heavy.yaml").read_text()
    path = Path(__file__).parent / "data" / name
    path.write_text(text.replace("      - {type: imu, position: [0.0, 0.0, -0.05]}", f"      - {line}", 1))
    return path


@pytest.mark.parametrize(
    ("bad", "key", "why"),
    [
        ("{type: sonar}", "type", "expected one of"),
        ("{type: imu, gyro_noise: 0.1}", "gyro_noise", "unknown key"),
        ("{type: dvl, rate: 0}", "rate", "expected more than 0 to 10000, got 0"),
        ("{type: imu, rate: 1e9}", "rate", "expected more than 0 to 10000"),
        ("{type: imu, link: nowhere}", "link", "no link named"),
        (
            "{type: dvl, beam_angle: 0}",
            "beam_angle",
            "expected more than 0 to less than 1.5708 rad (0 to 90 deg)",
        ),
        ("{type: dvl, beam_angle: 1.5707963267948966}", "beam_angle", "to less than 1.5708"),
        ("{type: altimeter, beam_width: 0}", "beam_width", "expected more than 0"),
        ("{type: altimeter, min_range: 5, max_range: 2}", "max_range", "expected more than min_range (5)"),
        ("{type: dvl, max_altitude: 0.01}", "max_altitude", "expected more than min_altitude (0.05)"),
        ("{type: magnetometer, field_strength: 0}", "field_strength", "expected more than 0"),
        ("{type: magnetometer, inclination: 2}", "inclination", "-90 to 90 deg"),
        ("{type: magnetometer, declination: -4}", "declination", "-180 to 180 deg"),
        (
            "{type: pressure, resolution: 1e-320}",
            "resolution",
            "expected 0 (no rounding) or at least 0.001 Pa",
        ),
        ("{type: pressure, noise: -1}", "noise", "expected from 0 to 1e+06"),
        ("{type: pressure, noise: fast}", "noise", "expected true, false, a standard deviation (noise)"),
        ("{type: imu, noise: 0.1}", "noise", "or a mapping of ['gyro_noise_density'"),
        ("{type: imu, noise: {velocity_noise: 1}}", "velocity_noise", "unknown key"),
        ("{type: dvl, velocity_noise: 0.1, noise: {velocity_noise: 0.2}}", "velocity_noise", "given twice"),
        ("{type: imu, position: [1e6, 0, 0]}", "position", "within +-100"),
        ("{type: imu}\n      - {type: imu}", "sensors[1]", "name 'imu' is used by two sensors"),
    ],
)
def test_sensor_descriptions_are_checked(bad, key, why):
    """A sensor key out of its range, of the wrong kind, or a sensor name used twice: one
    error naming the file and the key, and what was expected."""
    path = _with_sensor(bad, "_bad_sensors.yaml")
    try:
        with pytest.raises(ConfigError, match=re.escape(why)) as err:
            load(path)
        text = str(err.value)
        assert "_bad_sensors.yaml:" in text and "sensors" in text and key in text and "\n" not in text, text
    finally:
        path.unlink(missing_ok=True)


def test_noise_is_a_switch_a_standard_deviation_or_a_mapping_of_them_for_every_sensor():
    """``noise`` means the standard deviations for every type (docs/config.md): false/true as the
    switch, a number as the type's one standard deviation (pressure, magnetometer, altimeter,
    DVL), a mapping naming them (the IMU's too); a southern-hemisphere field (negative
    inclination and a west declination) is accepted and read back as such."""
    cases = {
        "{type: pressure, noise: false}": ("pressure", False, {}),
        "{type: pressure, noise: 5.0}": ("pressure", True, {"noise": 5.0}),
        "{type: magnetometer, noise: {noise: 1e-7}}": ("magnetometer", True, {"noise": 1e-7}),
        "{type: altimeter, noise: 0.01}": ("altimeter", True, {"noise": 0.01}),
        "{type: dvl, noise: 0.004}": ("dvl", True, {"velocity_noise": 0.004}),
        "{type: imu, noise: {gyro_noise_density: 1e-4}}": ("imu", True, {"gyro_noise_density": 1e-4}),
        "{type: imu, noise: true}": ("imu", True, {}),
        "{type: magnetometer, inclination: -1.1, declination: -0.3}": (
            "magnetometer", True, {"inclination": -1.1, "declination": -0.3}),
    }  # fmt: skip
    for line, (kind, switch, params) in cases.items():
        path = _with_sensor(line.replace("{type:", "{name: probe, type:"))
        try:
            [spec] = [s for s in load(path).vehicles[0].sensors if s.name.endswith("probe")]
        finally:
            path.unlink(missing_ok=True)
        assert spec.noise is switch, line
        for k, v in {**DEFAULTS[kind], **params}.items():
            assert spec.value(k) == v, (line, k)
    south = SensorSpec("magnetometer", "mag", "base", params=(("inclination", -1.1),), noise=False)
    m = Magnetometer(south, Mount.of(south, 0), np.random.default_rng(0)).read(Pose())
    assert math.atan2(m[2], math.hypot(m[0], m[1])) == pytest.approx(-1.1)  # the field points up


def test_the_node_publishes_noisy_sensors_at_exact_rates_beside_the_ground_truth():
    """The Heavy (IMU 100 Hz, magnetometer 50, pressure 20, altimeter and DVL 10) at 1 kHz
    physics in simulated time: every sensors/imu stamp is 10 ms after the previous one (to the
    nanosecond), the DVL reports its velocity with covariance and the seabed's altitude (20 m
    seabed, 2 m deep: 17.86 m at the DVL), the altimeter 17.9 m, and the ground-truth imu
    topic keeps no noise (its covariance stays the ground truth's). The Heavy sinks about 26
    mm/s and the node runs as fast as it can, so the altitudes are compared at the depth the
    ground-truth odometry gives at their own stamps."""
    from geometry_msgs.msg import TwistWithCovarianceStamped
    from nav_msgs.msg import Odometry

    def ns(m) -> int:
        return m.header.stamp.sec * 10**9 + m.header.stamp.nanosec

    with simulator(description="bluerov2_heavy", use_sim_time=True, real_time_factor=0.0, physics_rate=1000.0,
                   ardusub_frame="none") as (_sim, user, executor):  # fmt: skip
        stamps: list[int] = []
        got: dict = {}
        user.create_subscription(
            Imu,
            "sensors/imu",
            lambda m: stamps.append(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec),
            1000,
        )
        user.create_subscription(
            TwistWithCovarianceStamped, "sensors/dvl/twist", lambda m: got.__setitem__("dvl", m), 10
        )
        user.create_subscription(Range, "sensors/dvl/altitude", lambda m: got.__setitem__("alt", m), 10)
        user.create_subscription(Range, "sensors/altimeter", lambda m: got.__setitem__("ping", m), 10)
        user.create_subscription(Imu, "imu", lambda m: got.__setitem__("truth", m), 10)
        depth: dict[int, float] = {}  # ground truth, by stamp (odometry is ENU: z up)
        user.create_subscription(
            Odometry, "odom", lambda m: depth.__setitem__(ns(m), -m.pose.pose.position.z), 1000
        )

        def done() -> bool:
            return (
                len(stamps) > 300
                and {"dvl", "alt", "ping", "truth"} <= set(got)
                and ns(got["alt"]) in depth
                and ns(got["ping"]) in depth
            )

        assert spin_until(executor, done, timeout=30)
        steps = np.diff(np.array(stamps))
        assert (
            np.all(steps % 10_000_000 == 0) and np.median(steps) == 10_000_000
        )  # a lost message leaves a gap of 20 ms
        assert got["dvl"].twist.covariance[0] > 0 and got["dvl"].header.frame_id == "dvl"
        sunk = depth[ns(got["alt"])] - 2.0, depth[ns(got["ping"])] - 2.0
        assert got["alt"].range == pytest.approx(20.0 - 2.14 - sunk[0], abs=0.1)
        assert got["ping"].range == pytest.approx(17.9 - sunk[1], abs=0.3)
        assert got["truth"].angular_velocity_covariance[0] < 1e-9


@pytest.mark.parametrize("with_dvl", [True, False])
def test_the_estimate_follows_the_truth_as_well_as_the_sensors_allow(with_dvl):
    """The Heavy flown for 60 s (surge, sway, yaw and heave commands changing every 5 s), its
    sensors feeding the estimator: the attitude stays within 1 degree RMS of the truth (Mahony
    filter on the noisy IMU and compass; measured 0.54), the depth within 3 cm RMS (filtered
    Bar30; 4 mm); with the DVL the horizontal position drifts less than 0.3 m over 60 s of dead
    reckoning (0.21 m), and without
    it the position holds where it started (ArduSub's constant-position mode), though the
    vehicle moved more than a metre."""
    from transforms3d.quaternions import qinverse, qmult

    from uvms_sim.actuators.ardusub import mix, thrust_to_pwm
    from uvms_sim.sensors.estimator import Estimator

    system = load(CONFIG / "bluerov2_heavy.yaml")
    if not with_dvl:
        vehicles = (
            replace(
                system.vehicles[0], sensors=tuple(s for s in system.vehicles[0].sensors if s.type != "dvl")
            ),
        )
        system = replace(system, vehicles=vehicles)
    sim = Simulator.from_system(system)
    suite = SensorSuite(system, 0.002, seed=4)
    est = Estimator(suite.sensors, system.environment.density, system.environment.gravity)
    est.start(sim.state.q[:7], sim.state.v[:6])
    rng = np.random.default_rng(9)
    attitude, depth, start = [], [], sim.state.q[:3].copy()
    for step in range(1, 30001):
        if step % 2500 == 1:
            out = mix("vectored_6dof", 0, 0, rng.uniform(-0.2, 0.2), rng.uniform(-0.1, 0.1),
                      rng.uniform(-0.3, 0.3),
                      rng.uniform(-0.2, 0.2))  # fmt: skip
            sim.thrusters.set_motor_pwm(np.array(thrust_to_pwm([out[m] for m in range(1, 9)])))
        sim.step(0.002)
        for r in suite.sample(sim, step):
            est.reading(r, 0.0)
        est.update_truth(sim.state.q[:7], sim.state.v[:6])
        if step % 50 == 0 and step > 2500:
            qe, _ = est.state()
            dq = qmult(qinverse(sim.state.q[3:7]), qe[3:7])
            attitude.append(2 * math.degrees(math.acos(min(1.0, abs(dq[0])))))
            depth.append(qe[2] - sim.state.q[2])
    qe, _ = est.state()
    assert math.sqrt(np.mean(np.square(attitude))) < 1.0
    assert math.sqrt(np.mean(np.square(depth))) < 0.03
    moved = np.linalg.norm(sim.state.q[:2] - start[:2])
    assert moved > 1.0
    if with_dvl:
        assert np.linalg.norm(qe[:2] - sim.state.q[:2]) < 0.3
    else:
        np.testing.assert_allclose(qe[:2], start[:2], atol=1e-12)


def test_the_estimate_realigns_after_a_reset_or_a_teleport():
    """The node marks its estimators not started on reset and set_pose: the next truth update
    aligns the estimate where the vehicle now is (as an autopilot after a reboot)."""
    from uvms_sim.sensors.estimator import Estimator

    system = load(CONFIG / "bluerov2_heavy.yaml")
    suite = SensorSuite(system, 0.002, seed=1)
    est = Estimator(suite.sensors, 1000.0, 9.80665)
    q, v = system.initial_q[:7].copy(), np.zeros(6)
    est.update_truth(q, v)
    moved = q.copy()
    moved[:3] += [10.0, -5.0, 3.0]
    est.update_truth(moved, v)
    assert not np.allclose(est.state()[0][:2], moved[:2])  # measured parts do not follow the truth
    est.started = False
    est.update_truth(moved, v)
    np.testing.assert_allclose(est.state()[0], moved, atol=1e-12)


def test_the_python_api_checks_sensor_parameters_as_the_reader_does():
    """``SensorSpec`` (the library's way in) refuses what the reader refuses: a DVL beam at 0
    (its beams would be parallel: the velocity solve is singular), a field of strength 0 (no
    direction to normalise: NaN headings), a pressure resolution of 1e-320 (a division by almost
    nothing), naming the sensor and the key."""
    cases = [
        ("dvl", "beam_angle", 0.0),
        ("magnetometer", "field_strength", 0.0),
        ("pressure", "resolution", 1e-320),
        ("magnetometer", "inclination", 2.0),
    ]
    for kind, key, value in cases:
        with pytest.raises(ValueError, match=f"sensor s: {key}: expected"):
            SensorSpec(kind, "s", "base", params=((key, value),))
    with pytest.raises(ValueError, match="sensor s: position must be finite numbers within 100"):
        SensorSpec("imu", "s", "base", position=[float("nan"), 0.0, 0.0])
