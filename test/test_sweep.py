"""Sweeps on a real multi-node Ray cluster on this machine (a head and a second node started
with ``ray start``), tasks landing on both, and a node that leaves in the middle of a sweep."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
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
    """A head node and a second node (1 CPU each), token authentication (``TOKEN``); yields
    (address, the second node's node-manager port); everything stopped afterwards."""
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN, "RAY_USAGE_STATS_ENABLED": "0"}
    for key in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_USAGE_STATS_ENABLED"):
        monkeypatch.setenv(key, env[key])
    head, second = free_tcp_port_pair(), free_tcp_port_pair()
    common = ["--num-cpus=1", "--object-store-memory=150000000", "--disable-usage-stats"]
    subprocess.run([RAY, "start", "--head", f"--port={head}", "--include-dashboard=false", *common],
                   env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
    subprocess.run([RAY, "start", f"--address=127.0.0.1:{head}", f"--node-manager-port={second}", *common],
                   env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
    try:
        yield f"127.0.0.1:{head}", second
    finally:
        subprocess.run([RAY, "stop", "--force"], env=env, capture_output=True, timeout=120, check=False)


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

    address, _ = cluster
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


def test_a_node_that_leaves_mid_sweep_costs_retries_not_samples(cluster, tmp_path):
    """The second node is killed (its raylet and its workers, SIGKILL) while it runs a sample:
    with no retries allowed the sweep finishes the other samples and reports the ones it lost;
    with a node again and retries allowed, every sample is done (on the head) and the summary
    says which were retried and why."""
    address, second = cluster
    spec = read_spec(spec_file(tmp_path, 6, 3000.0))  # a few seconds of work per sample
    lost = sweep_losing_a_node(spec, address, second, retries=0)
    assert lost.lost and len(lost.rows) + len(lost.lost) == 6 and not lost.retried
    assert all("Died" in why or "died" in why or "Crashed" in why for why in lost.lost.values()), lost.lost
    again = free_tcp_port_pair()
    subprocess.run([RAY, "start", f"--address={address}", f"--node-manager-port={again}", "--num-cpus=1",
                    "--object-store-memory=150000000", "--disable-usage-stats"],
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
        results["report"] = run_sweep(spec, address, retries, progress=lambda done, n: done and first.set())

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
    from uvms_sim.cli import main

    for text, why in (
        ("kind: wander\n", "expected one of"),
        ("kind: monte_carlo\nsamples: 0\n", ">= 1"),
        ("kind: monte_carlo\nvary: {surge: [1, -1]}\n", "low <= high"),
        ("kind: monte_carlo\nvary: {thruster_failure: 2}\n", "probability"),
        ("kind: monte_carlo\ncommand: {forward: 3}\n", "-1..1"),
        ("kind: identification\n", "needs `recordings`"),
        ("kind: monte_carlo\ncolour: red\n", "unknown key"),
    ):
        (tmp_path / "bad.yaml").write_text(text)
        with pytest.raises(ConfigError, match=why):
            read_spec(tmp_path / "bad.yaml")
    assert main(["sweep", str(tmp_path / "missing.yaml")]) == 2
    assert main(["sweep", str(tmp_path / "bad.yaml")]) == 2
    assert "bad.yaml" in capsys.readouterr().err
    assert shutil.which(RAY) or Path(RAY).exists()


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
