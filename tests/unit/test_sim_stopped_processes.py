"""The sim_cluster task that finds stopped control-plane processes, rendered
from the real task file and run against real processes: a dead pid, a pid
reused by another program, and a kube-apiserver that lingers after SIGTERM
without listening (kwokctl would not restart it; seen on the sim: it stopped
listening at once and was still alive minutes later, while the
controller-manager and scheduler exited) are each reported; a process that
listens on its port is left alone. In check mode nothing is killed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROOT = Path(__file__).resolve().parents[2]
TASKS = yaml.safe_load((ROOT / "roles" / "sim_cluster" / "tasks" / "start.yml").read_text())
TASK = next(task for task in TASKS if task["name"].startswith("Find stopped control-plane processes"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _script(cluster_dir: Path, ports: dict, check_mode: bool) -> str:
    templar = Templar(loader=DataLoader(), variables={
        "sim_cluster_dir": str(cluster_dir), "sim_cluster_ports": ports, "ansible_check_mode": check_mode})
    return templar.template(trust_as_template(TASK["ansible.builtin.shell"]["cmd"]))


def _program(name: str, *argv: str) -> subprocess.Popen:
    """A process whose argv[0] is .../<name>, as kwokctl starts each component."""
    return subprocess.Popen(["bash", "-c", 'exec -a "/sim/bin/$0" "$@"', name, *argv])


def _sleeper(cluster_dir, seconds: int = 60) -> tuple:
    """A program that sleeps with a path in the cluster's directory among its arguments, as kwokctl's do."""
    return sys.executable, "-c", "import time; time.sleep(%d)" % seconds, "--config=%s/kwok.yaml" % cluster_dir


@pytest.fixture()
def sim(tmp_path):
    ports = {key: _free_port() for key in
             ("etcd", "kube_apiserver", "kube_controller_manager", "kube_scheduler", "kwok_controller")}
    (tmp_path / "pids").mkdir()
    processes = []

    def start(name, *argv):
        process = _program(name, *argv)
        processes.append(process)
        (tmp_path / "pids" / (name + ".pid")).write_text(str(process.pid))
        return process

    yield tmp_path, ports, start
    for process in processes:
        process.kill()
        process.wait()


def _listener(port: int, cluster_dir, seconds: int = 60) -> tuple:
    code = ("import socket,time,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1);"
            "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(%d)" % seconds)
    return sys.executable, "-c", code, str(port), "--kubeconfig=%s/kubeconfig.yaml" % cluster_dir


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("listener on %d never came up" % port)


def _run(script: str) -> list[str]:
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.split()


def test_a_lingering_apiserver_is_stopped_and_reported_a_listening_one_kept(sim):
    cluster_dir, ports, start = sim
    lingering = start("kube-apiserver", *_sleeper(cluster_dir))  # alive, nothing on its port
    serving = start("kube-scheduler", *_listener(ports["kube_scheduler"], cluster_dir))
    _wait_listening(ports["kube_scheduler"])
    dead = start("kube-controller-manager", "true")
    dead.wait()
    reused = _program("something-else", "sleep", "60")
    (cluster_dir / "pids" / "etcd.pid").write_text(str(reused.pid))
    try:
        stopped = _run(_script(cluster_dir, ports, check_mode=False))
        assert sorted(stopped) == ["etcd", "kube-apiserver", "kube-controller-manager"]
        assert lingering.wait(timeout=10) == -9          # killed, so kwokctl can start it again
        assert serving.poll() is None                     # listening: left alone
        assert reused.poll() is None                      # another program's pid is never signalled
    finally:
        reused.kill()
        reused.wait()


def test_check_mode_reports_the_lingering_process_but_kills_nothing(sim):
    cluster_dir, ports, start = sim
    lingering = start("kube-apiserver", *_sleeper(cluster_dir))
    assert _run(_script(cluster_dir, ports, check_mode=True)) == ["kube-apiserver"]
    assert lingering.poll() is None


def test_a_pid_of_a_program_of_the_same_name_not_naming_the_cluster_is_reported_never_killed(sim):
    """Issue 18 row 11: kwokctl's pid files have no start time; the program name alone is no proof.
    A kube-apiserver of someone else (not listening on the sim's port) is reported, never killed."""
    cluster_dir, ports, start = sim
    stranger = start("kube-apiserver", "sleep", "60")
    elsewhere = start("etcd", *_sleeper("/elsewhere"))
    assert sorted(_run(_script(cluster_dir, ports, check_mode=False))) == ["etcd", "kube-apiserver"]
    time.sleep(0.5)
    assert stranger.poll() is None and elsewhere.poll() is None
