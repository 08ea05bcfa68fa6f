"""roles/sim_cluster/files/node_lease.py: after a restart of the sim's kwok
controller, the lease the stopped controller left on the lab's node is
removed, so kwok runs the lab's pods at once instead of after the old lease
expires (a gate probe bound by KAI sat Pending for 3 min 24 s in CI, kwok
v0.8.0, lease of 200 s). A fake kubectl keeps the Lease in a file and plays
kwok: a deleted lease is created again, by the running controller, a moment
later."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "roles" / "sim_cluster" / "files" / "node_lease.py"

FAKE_KUBECTL = r'''
import json, os, sys, time, datetime
store = sys.argv[1]
args = sys.argv[2:]
calls = store + '.calls'
with open(calls, 'a') as handle:
    handle.write(' '.join(args) + '\n')
state = json.load(open(store)) if os.path.exists(store) else {}
def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')
if args[0] == 'get':
    if state.get('deleted_at') and state.get('recreate') and time.time() - state['deleted_at'] > 0.6:
        state['lease'] = {'metadata': {'uid': 'new-uid'}, 'spec': {'holderIdentity': 'kwok-new', 'renewTime': now()}}
        state['deleted_at'] = None
        json.dump(state, open(store, 'w'))
    if state.get('lease'):
        print(json.dumps(state['lease']))
elif args[0] == 'delete':
    state['lease'] = None
    state['deleted_at'] = time.time()
    json.dump(state, open(store, 'w'))
'''


def stamp(seconds_from_now: float) -> str:
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds_from_now)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def setup(tmp_path: Path, lease, recreate=True):
    """A running 'kwok controller' (its pid file written now) and the fake kubectl's lease."""
    (tmp_path / "kubectl.py").write_text(FAKE_KUBECTL)
    store = tmp_path / "leases.json"
    store.write_text(json.dumps({"lease": lease, "recreate": recreate}))
    proc = subprocess.Popen(["sleep", "60"])
    (tmp_path / "kwok-controller.pid").write_text(str(proc.pid))
    (tmp_path / "kwok-controller.log").write_text("Failed to sync lease: lease already exists\n")
    spec = {"node": "kai-lab-vm", "timeout": 8, "pid_file": str(tmp_path / "kwok-controller.pid"),
            "log_file": str(tmp_path / "kwok-controller.log"),
            "kubectl": [sys.executable, str(tmp_path / "kubectl.py"), str(store)]}
    return proc, spec, store


def run(spec: dict) -> tuple[int, str, float]:
    began = time.monotonic()
    out = subprocess.run([sys.executable, str(SCRIPT), json.dumps(spec)], capture_output=True, text=True, timeout=60)
    return out.returncode, out.stdout, time.monotonic() - began


def deletes(store: Path) -> int:
    return sum(1 for line in Path(str(store) + ".calls").read_text().splitlines() if line.startswith("delete"))


def test_a_stopped_controllers_lease_is_removed_and_the_running_one_takes_the_node(tmp_path):
    old = {"metadata": {"uid": "old-uid"}, "spec": {"holderIdentity": "kwok-old", "renewTime": stamp(-5)}}
    proc, spec, store = setup(tmp_path, old)
    try:
        code, out, took = run(spec)
    finally:
        proc.kill()
    assert code == 0, out
    assert out.splitlines()[0] == "changed"
    assert "lease held by kwok-new" in out and "kwok-old" in out
    assert deletes(store) == 1


def test_a_lease_renewed_by_the_running_controller_is_left_alone(tmp_path):
    live = {"metadata": {"uid": "live"}, "spec": {"holderIdentity": "kwok-now", "renewTime": stamp(2)}}
    proc, spec, store = setup(tmp_path, live)
    try:
        code, out, _ = run(spec)
    finally:
        proc.kill()
    assert (code, out.splitlines()[0]) == (0, "unchanged")
    assert deletes(store) == 0


def test_no_lease_in_time_fails_naming_the_node_and_showing_kwoks_log(tmp_path):
    old = {"metadata": {"uid": "old-uid"}, "spec": {"holderIdentity": "kwok-old", "renewTime": stamp(-5)}}
    proc, spec, store = setup(tmp_path, old, recreate=False)
    spec["timeout"] = 2
    try:
        code, out, took = run(spec)
    finally:
        proc.kill()
    assert code == 1 and took < 30
    assert "kwok does not manage node kai-lab-vm within 2 s" in out
    assert "lease already exists" in out  # the log's tail
    assert deletes(store) == 1  # deleted once, not in a loop


def test_a_stopped_kwok_controller_is_named_at_once(tmp_path):
    proc, spec, _ = setup(tmp_path, None)
    proc.kill()
    proc.wait()
    code, out, took = run(spec)
    assert code == 1 and took < 30
    assert "the kwok controller is not running" in out and "lease already exists" in out
    os.remove(spec["pid_file"])
