"""Sweeps on a real multi-node Ray cluster on this machine (a head and a second node started
with ``ray start``), tasks landing on both, and a node that leaves in the middle of a sweep."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from net_helpers import free_tcp_port_pair

from uvms_sim.model import ConfigError
from uvms_sim.sweep import read_spec, run_sweep, summary, write_table

BIN = Path(sys.executable).parent
RAY = str(BIN / "ray")

pytestmark = pytest.mark.slow
# one token for every cluster of this test session: Ray keeps the first token it read in the
# process, so a second cluster with a fresh token would refuse the second ray.init here
TOKEN = secrets.token_hex(32)


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """A head node (with Ray's client server) and a second node (1 CPU each), token
    authentication (``TOKEN``), in a Ray directory of their own; yields (address, the second
    node's node-manager port, the client server's port, the directory); afterwards only this cluster's
    processes are stopped (``ray stop`` would stop every Ray on the machine)."""
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN, "RAY_USAGE_STATS_ENABLED": "0"}
    for key in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_USAGE_STATS_ENABLED"):
        monkeypatch.setenv(key, env[key])
    head, second, client = free_tcp_port_pair(), free_tcp_port_pair(), free_tcp_port_pair()
    temp = tempfile.mkdtemp(prefix="ray")  # short: Ray's sockets live under it
    common = [
        "--num-cpus=1",
        "--object-store-memory=150000000",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    try:
        subprocess.run([RAY, "start", "--head", f"--port={head}", "--include-dashboard=false",
                        f"--ray-client-server-port={client}", *common],
                       env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
        subprocess.run([RAY, "start", f"--address=127.0.0.1:{head}", f"--node-manager-port={second}",
                        *common], env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
        yield f"127.0.0.1:{head}", second, client, temp
    finally:
        stop_processes_of(temp, head)
        shutil.rmtree(temp, ignore_errors=True)


def stop_processes_of(temp: str, head: int) -> None:
    """SIGTERM, then SIGKILL, every process whose command line names the Ray directory ``temp``
    or the head's port (Ray's client server), and the processes they started."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        ours = {pid for pid, cmd in processes() if temp in cmd or ("ray" in cmd and f":{head} " in f"{cmd} ")}
        ours |= {pid for pid in _children(ours)}
        for pid in ours:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        end = time.monotonic() + 10.0
        while time.monotonic() < end and any(_alive(pid) for pid in ours):
            time.sleep(0.1)


def _children(parents: set[int]) -> set[int]:
    found = set()
    for pid, _ in processes():
        try:
            with open(f"/proc/{pid}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) in parents:
                    found.add(pid)
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def spec_file(tmp_path: Path, samples: int, duration: float) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(
        "kind: monte_carlo\ndescription: bluerov2_heavy\n"
        f"samples: {samples}\nduration: {duration}\ncommand: {{forward: 0.4}}\n"
        "vary:\n  surge: [-0.2, 0.2]\n  current_north: [-0.3, 0.3]\n  damping_scale: [0.8, 1.2]\n"
        "  thrust_scale: [0.8, 1.0]\n  buoyancy_offset: [-2.0, 2.0]\n  thruster_failure: 0.2\n"
    )
    return path


def test_a_sweep_runs_on_both_nodes_of_a_cluster(cluster, tmp_path):
    """``uvms-sim sweep SPEC --address HEAD``: 12 Monte-Carlo samples land on both nodes, the
    table has one row per sample (CSV, and Parquet for a .parquet name), the summary says so,
    and the same seed draws the same samples as a run of the same spec on Ray here."""
    import pyarrow.parquet as pq

    address, _, client, _ = cluster
    spec = spec_file(tmp_path, 12, 3.0)
    out = tmp_path / "mc.parquet"
    run = subprocess.run([BIN / "uvms-sim", "sweep", str(spec), "--address", address, "--out", str(out)],
                         capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "12 of 12 samples done on 2 Ray node(s)" in run.stdout and "0 retried, 0 lost" in run.stdout
    table = pq.read_table(out).to_pydict()
    assert table["sample"] == list(range(12)) and len(set(table["node"])) == 2
    assert all(table["finite"]) and min(table["distance"]) > 0.0
    again = run_sweep(read_spec(spec), address)
    assert [r["final_north"] for r in again.rows] == table["final_north"]  # deterministic per sample
    # the same through Ray's client (ray://, as --help suggests), its progress a line per sample
    run = subprocess.run([BIN / "uvms-sim", "sweep", str(spec), "--address", f"ray://127.0.0.1:{client}",
                          "--out", str(tmp_path / "mc.csv"), "--connect-timeout", "600"],
                         capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "12 of 12 samples done" in run.stdout and "Traceback" not in run.stderr
    assert f"sweep {spec}: 12 of 12" in run.stderr and run.stderr.count("\n") >= 10


def test_a_node_that_leaves_mid_sweep_costs_retries_not_samples(cluster, tmp_path):
    """The second node is killed (its raylet and its workers, SIGKILL) while it runs a sample:
    with no retries allowed the sweep finishes the other samples and reports the ones it lost;
    with a node again and retries allowed, every sample is done (on the head) and the summary
    says which were retried and why."""
    address, second, _, temp = cluster
    spec = read_spec(spec_file(tmp_path, 6, 3000.0))  # a few seconds of work per sample
    lost = sweep_losing_a_node(spec, address, second, retries=0)
    assert lost.lost and len(lost.rows) + len(lost.lost) == 6 and not lost.retried
    assert all("Died" in why or "died" in why or "Crashed" in why for why in lost.lost.values()), lost.lost
    again = free_tcp_port_pair()
    subprocess.run([RAY, "start", f"--address={address}", f"--node-manager-port={again}", "--num-cpus=1",
                    "--object-store-memory=150000000", "--disable-usage-stats", f"--temp-dir={temp}"],
                   check=True, capture_output=True, timeout=120)  # fmt: skip
    report = sweep_losing_a_node(spec, address, again, retries=2)
    assert len(report.rows) == 6 and not report.lost and report.retried
    text = summary(spec, report)
    assert "6 of 6 samples done" in text and f"{len(report.retried)} retried, 0 lost" in text
    assert "retried sample" in text
    write_table(report.rows, tmp_path / "after_loss.csv")
    assert (tmp_path / "after_loss.csv").read_text().count("\n") == 7


def sweep_losing_a_node(spec, address: str, node_manager_port: int, retries: int):
    """Run the sweep and kill the node on ``node_manager_port`` once the first sample is done
    and the node is running a sample (Ray titles a busy worker ``ray::<task>``, an idle one
    ``ray::IDLE``): killed between two samples, it would lose none."""
    first = threading.Event()
    results: dict = {}

    def go() -> None:
        results["report"] = run_sweep(
            spec, address, retries, progress=lambda done, n: done.rows and first.set()
        )

    thread = threading.Thread(target=go)
    thread.start()
    assert first.wait(timeout=300)
    end = time.monotonic() + 60.0

    def busy() -> bool:
        titles = [cmd for _, cmd in node_processes(node_manager_port)]
        return any(t.startswith("ray::") and "IDLE" not in t for t in titles)

    while not busy():
        assert time.monotonic() < end, "the node ran no sample within 60 s"
        time.sleep(0.005)
    victims = node_processes(node_manager_port)
    assert victims, "the node's raylet was not found"
    for pid, _ in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    thread.join(timeout=600)
    return results["report"]


def node_processes(node_manager_port: int) -> list[tuple[int, str]]:
    """(pid, command line) of the raylet listening on ``node_manager_port`` and of every process
    it started (its workers)."""
    table = list(processes())
    port = f"--node_manager_port={node_manager_port}"
    raylets = {pid for pid, cmd in table if "raylet" in cmd and port in cmd}
    found = []
    for pid, cmd in table:
        try:
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if pid in raylets or parent in raylets:
            found.append((pid, cmd))
    return found


def processes():
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    yield int(entry), f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue


def test_sweep_specs_are_checked(tmp_path, capsys):
    """Each wrong spec is one ConfigError naming the spec file, the line and the key, before
    Ray starts: limits (10^12 samples, 1e12 s), keys of the other kind, unknown fits, axes and
    motors, missing recordings, a description that does not load or has no thrusters."""
    from uvms_sim.cli import main

    (tmp_path / "run1.BIN").write_bytes(b"\0" * 64)
    for text, why in (
        ("kind: wander\n", "kind: expected one of"),
        ("kind: monte_carlo\nsamples: 0\n", "samples: expected an integer >= 1"),
        ("kind: monte_carlo\nsamples: 1000000000000\n", "samples: expected an integer <= 1e\\+06"),
        ("kind: monte_carlo\nduration: 1.0e12\n", r"duration: expected a number in \(0, 86400\] s"),
        ("kind: monte_carlo\ndt: 0\n", r"dt: expected a number in \[1e-05, 0.1\] s"),
        ("kind: monte_carlo\nduration: 80000\ndt: 0.0001\n", "8e\\+08 RK4 steps per sample"),
        ("kind: monte_carlo\nseed: -1\n", "seed: expected an integer >= 0"),
        ("kind: monte_carlo\nvary: {surge: [1, -1]}\n", "low <= high"),
        ("kind: monte_carlo\nvary: {surge: [0, 1.0e6]}\n", r"vary.surge: expected \[low, high\] within"),
        ("kind: monte_carlo\nvary: {damping_scale: [-1, 1]}\n", "vary.damping_scale"),
        ("kind: monte_carlo\nvary: {thruster_failure: 2}\n", "probability"),
        ("kind: monte_carlo\ncommand: {forward: 3}\n", r"command.forward: expected a number in \[-1, 1\]"),
        ("kind: identification\n", "needs `recordings`"),
        ("kind: monte_carlo\ncolour: red\n", "colour: unknown key"),
        ("kind: monte_carlo\nrecordings: [run1.BIN]\n", "recordings: a key of identification sweeps"),
        ("kind: identification\nrecordings: [run1.BIN]\nsamples: 3\n", "samples: a key of monte_carlo"),
        ("kind: identification\nrecordings: [run1.BIN]\nfit: [thrust, x]\n", r"fit\[1\]: expected one of"),
        ("kind: identification\nrecordings: [run1.BIN]\nfit: [lag, lag]\n", "listed twice"),
        ("kind: identification\nrecordings: [run1.BIN]\naxes: [u, x]\n", r"axes\[1\]: expected one of"),
        ("kind: identification\nrecordings: [run1.BIN]\nreversed_motors: [1, 9]\n", "motor 9 is not one of"),
        ("kind: identification\nrecordings: [run*.tlog]\n", "no recording matches"),
        ("kind: identification\nrecordings: []\n", "at least one recording"),
        ("kind: monte_carlo\ndescription: no_such_robot\n", "description: no_such_robot: .*shipped"),
        ("kind: monte_carlo\ndescription: walker\n", "description: walker has no thrusters"),
        ("- kind: monte_carlo\n", "expected a mapping"),
    ):  # fmt: skip
        (tmp_path / "bad.yaml").write_text(text)
        with pytest.raises(ConfigError, match=why) as caught:
            read_spec(tmp_path / "bad.yaml")
        assert str(caught.value).startswith(str(tmp_path / "bad.yaml")), caught.value
        assert main(["sweep", str(tmp_path / "bad.yaml")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "bad.yaml" in err, err
    assert main(["sweep", str(tmp_path / "missing.yaml")]) == 2
    assert shutil.which(RAY) or Path(RAY).exists()
    # a description file is taken from the spec's folder, as the recordings are
    (tmp_path / "sub").mkdir()
    shutil.copy(Path(__file__).parents[1] / "config" / "bluerov2.yaml", tmp_path / "sub" / "rov.yaml")
    (tmp_path / "sub" / "mc.yaml").write_text("kind: monte_carlo\ndescription: rov.yaml\nsamples: 3\n")
    assert read_spec(tmp_path / "sub" / "mc.yaml")["description"] == str(tmp_path / "sub" / "rov.yaml")


def test_unreachable_or_silent_addresses_are_one_line_errors_in_time(tmp_path, capsys, monkeypatch):
    """A closed port, a server that accepts and never answers, a server that is not a Ray head,
    a malformed address, and ray:// without Ray's client installed: each is one line (exit 2)
    within the --connect-timeout, never a wait without end or a traceback."""
    import importlib.util
    import socketserver

    from uvms_sim.cli import main

    spec = spec_file(tmp_path, 2, 1.0)

    class Silent(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            time.sleep(8.0)

    class Http(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.recv(1024)
            self.request.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")

    servers = [socketserver.ThreadingTCPServer(("127.0.0.1", 0), h) for h in (Silent, Http)]
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    closed = free_tcp_port_pair()
    try:
        for address, said in (
            (f"127.0.0.1:{closed}", "cannot reach the Ray head at"),
            (f"ray://127.0.0.1:{closed}", "cannot reach the Ray client server"),
            (f"127.0.0.1:{servers[0].server_address[1]}", "does not answer as a Ray head"),
            (f"127.0.0.1:{servers[1].server_address[1]}", "does not answer as a Ray head"),
            ("127.0.0.1:99999", "expected ray://HOST"),
        ):
            t0 = time.monotonic()
            assert main(["sweep", str(spec), "--address", address, "--connect-timeout", "2"]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and said in err, err
            assert time.monotonic() - t0 < 2.0 + 5.0
        real = importlib.util.find_spec
        no_grpc = lambda name, *a: None if name == "grpc" else real(name, *a)  # noqa: E731
        monkeypatch.setattr(importlib.util, "find_spec", no_grpc)
        assert main(["sweep", str(spec), "--address", "ray://127.0.0.1:10001"]) == 2
        assert "pip install 'ray[client]'" in capsys.readouterr().err
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_a_sweep_whose_samples_all_fail_says_so_and_exits_nonzero(tmp_path):
    """Identification over two recordings that are not recordings: each sample fails in its
    task, is lost at once (not run again: it would fail again) with its reason, the summary
    lists them, the progress shows on standard error line by line, and the command exits 1."""
    for name in ("dive1.BIN", "dive2.BIN"):
        (tmp_path / name).write_bytes(b"not a log" * 100)
    spec = tmp_path / "id.yaml"
    spec.write_text("kind: identification\nrecordings: [dive*.BIN]\n")
    here = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    run = subprocess.run([BIN / "uvms-sim", "sweep", str(spec), "--out", str(tmp_path / "id.csv")],
                         capture_output=True, text=True, timeout=600, check=False, env=here)  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    assert "0 of 2 samples done" in run.stdout and "0 retried, 2 lost" in run.stdout
    assert run.stdout.count("lost sample") == 2 and "dive1.BIN" in run.stdout
    assert f"error: {spec}: 2 of 2 samples lost" in run.stderr and "Traceback" not in run.stderr
    assert f"sweep {spec}: 2 of 2, 2 lost" in run.stderr


def test_an_identification_sweep_on_ray_started_here(tmp_path):
    """``uvms-sim sweep`` without ``--address`` starts Ray on this machine: identification over
    three recordings (one per task) gives one row per recording with the damping and its
    standard errors, each near the recording vehicle's (within 5 % on the quadratic terms)."""
    from test_replay import TRUTH, record

    from uvms_sim.model.export import save_yaml

    for seed in (1, 2, 3):
        system = record(tmp_path / f"run{seed}", "sqlite3", seconds=30.0, noise=0.003, seed=seed)
    save_yaml(system, tmp_path / "deep.yaml")
    (tmp_path / "id.yaml").write_text(
        f"kind: identification\ndescription: {tmp_path / 'deep.yaml'}\nrecordings: [run*]\naxes: [u, w, r]\n"
    )
    out = tmp_path / "id.csv"
    here = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}  # no cluster's token
    run = subprocess.run([BIN / "uvms-sim", "sweep", str(tmp_path / "id.yaml"), "--out", str(out)],
                         capture_output=True, text=True, timeout=600, check=False, env=here)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 of 3 samples done on 1 Ray node(s)" in run.stdout
    import csv

    rows = list(csv.DictReader(out.open()))
    assert [Path(r["recording"]).name for r in rows] == ["run1", "run2", "run3"]
    for r in rows:
        for name in ("X_uu", "Z_ww", "N_rr"):
            assert float(r[name]) == pytest.approx(TRUTH[name], rel=0.05) and float(r[f"{name}_se"]) > 0.0
