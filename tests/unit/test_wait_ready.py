"""roles/sim_cluster/files/wait_ready.py, the sim's readiness wait, on real
processes: one that exits at start (a KAI component given a flag it does not
know, a kube-apiserver that finds no default route) is named with its log
tail within seconds, not after the whole timeout."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WAIT = ROOT / "roles" / "sim_cluster" / "files" / "wait_ready.py"


def start(tmp_path: Path, name: str, script: str) -> None:
    """Start a process as background_process does: detached, output to NAME.log, pid in NAME.pid."""
    (tmp_path / "pids").mkdir(exist_ok=True)
    (tmp_path / "logs").mkdir(exist_ok=True)
    with open(tmp_path / "logs" / f"{name}.log", "w") as log:
        proc = subprocess.Popen(["sh", "-c", script], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (tmp_path / "pids" / f"{name}.pid").write_text(str(proc.pid))
    return proc


def wait(spec: dict) -> tuple[int, str, float]:
    began = time.monotonic()
    out = subprocess.run([sys.executable, str(WAIT), json.dumps(spec)], capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout, time.monotonic() - began


def test_a_component_with_an_unknown_flag_is_named_with_its_log_within_10_s(tmp_path):
    proc = start(tmp_path, "binder", "echo 'unknown flag: --cdi-enabled'; echo 'Usage: binder'; exit 2")
    proc.wait()
    code, out, took = wait({"timeout": 60, "pid_dir": str(tmp_path / "pids"), "log_dir": str(tmp_path / "logs"),
                            "urls": {"binder": "http://127.0.0.1:9/metrics"}})
    assert code == 1 and took < 10
    assert "binder exited" in out and "unknown flag: --cdi-enabled" in out


def test_a_dead_kube_apiserver_is_named_with_its_log_within_10_s(tmp_path):
    proc = start(tmp_path, "kube-apiserver", "echo 'Error: no default routes found in \"/proc/net/route\"'; exit 1")
    start(tmp_path, "etcd", "sleep 30")
    proc.wait()
    code, out, took = wait({"timeout": 120, "pid_dir": str(tmp_path / "pids"), "log_dir": str(tmp_path / "logs"),
                            "command": ["false"]})
    assert code == 1 and took < 10
    assert "kube-apiserver exited" in out and "no default routes found" in out
    assert "etcd exited" not in out


def test_running_processes_that_serve_are_ready(tmp_path):
    start(tmp_path, "scheduler", "sleep 30")
    code, out, took = wait({"timeout": 30, "pid_dir": str(tmp_path / "pids"), "log_dir": str(tmp_path / "logs"),
                            "command": ["true"]})
    assert (code, out) == (0, "") and took < 10


def test_a_process_that_never_serves_is_named_at_the_timeout(tmp_path):
    start(tmp_path, "admission", "echo 'waiting for certificates'; sleep 30")
    code, out, took = wait({"timeout": 3, "pid_dir": str(tmp_path / "pids"), "log_dir": str(tmp_path / "logs"),
                            "urls": {"admission": "http://127.0.0.1:9/readyz"}})
    assert code == 1 and 3 <= took < 15
    assert "not ready within 3 s: admission" in out and "waiting for certificates" in out
