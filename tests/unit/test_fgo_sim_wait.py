"""fake_gpu_operator's sim wait for the node's fake GPUs (tasks/sim.yml),
rendered from the real task with only the lab's and the role's defaults
(the role also runs on its own: molecule mistakes restarts it after its gate
test, where sim_binaries' facts are not set) and run against a stand-in for
the sim's kubectl link in the state directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from role_templating import trust

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu

ROOT = Path(__file__).resolve().parents[2]
FGO = ROOT / "roles" / "fake_gpu_operator"
TASK = next(t for t in yaml.safe_load((FGO / "tasks" / "sim.yml").read_text())
            if t["name"] == "Wait until the node shows its fake GPUs")


def _command(state_dir: Path) -> str:
    variables = trust(yaml.safe_load((FGO / "defaults" / "main.yml").read_text()))
    variables.update(trust(yaml.safe_load((FGO / "vars" / "main.yml").read_text())))  # the node pool
    variables.update(trust(TASK["vars"]), kai_lab_sim_state_dir=str(state_dir),
                     kai_lab_kubeconfig=str(state_dir / "kubeconfig"))
    return Templar(loader=DataLoader(), variables=variables).template(trust(TASK["ansible.builtin.shell"]["cmd"]))


def _kubectl(state_dir: Path, failing: str = "") -> Path:
    """A kubectl that logs its arguments, one call a line, and fails a wait whose condition contains failing."""
    log = state_dir / "kubectl.log"
    script = state_dir / "kubectl"
    script.write_text('#!/bin/bash\necho "$*" >> %s\n[ -n "%s" ] && [[ "$*" == *"%s"* ]] && exit 1\nexit 0\n'
                      % (log, failing, failing))
    script.chmod(0o755)
    return log


def _run(state_dir: Path) -> int:
    return subprocess.run([TASK["ansible.builtin.shell"]["executable"], "-c", _command(state_dir)]).returncode


def test_both_conditions_are_waited_for_with_the_state_directorys_kubectl(tmp_path):
    log = _kubectl(tmp_path)
    assert _run(tmp_path) == 0
    calls = log.read_text().splitlines()
    assert len(calls) == 2
    assert all(call.startswith("--kubeconfig=%s/kubeconfig wait nodes -l %s=%s "
                               % (tmp_path, kai_gpu.NODE_POOL_LABEL, kai_gpu.NODE_POOL)) for call in calls)
    assert "--for=jsonpath={.status.allocatable.nvidia\\.com/gpu}=4" in calls[0]
    assert "--for=jsonpath={.metadata.labels.run\\.ai/fake\\.gpu}=true" in calls[1]
    # One deadline for both: each wait gets what is left of the 60 s.
    timeouts = [int(call.split("--timeout=")[1].split("s ")[0]) for call in calls]
    assert 59 <= timeouts[0] <= 60 and timeouts[1] <= timeouts[0]


def test_a_gpu_count_never_reached_fails_the_task_without_the_label_wait(tmp_path):
    log = _kubectl(tmp_path, failing="allocatable")
    assert _run(tmp_path) != 0
    assert len(log.read_text().splitlines()) == 1
