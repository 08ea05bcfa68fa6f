"""kwokctl creates the sim cluster in the background (sim_cluster tasks/start.yml)
and tasks/ready.yml waits for that job. A fresh `make lab` with HOME set to
another directory than the account's failed with "could not find job": the
launch and the wait expanded the default ~/.ansible_async apart. Both tasks
now name one absolute directory in the state directory (removed by
teardown), rendered here from the real task files."""

from __future__ import annotations

from pathlib import Path

import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "sim_cluster"


def _task(file: str, name_start: str) -> dict:
    return next(t for t in yaml.safe_load((ROLE / "tasks" / file).read_text()) if t["name"].startswith(name_start))


def _async_dir(task: dict, state_dir: str) -> str:
    variables = trust(yaml.safe_load((ROLE / "vars" / "main.yml").read_text()))
    variables.update(kai_lab_sim_state_dir=state_dir)
    return Templar(loader=DataLoader(), variables=variables).template(
        trust_as_template(task["vars"]["ansible_async_dir"]))


def test_the_launch_and_the_wait_use_one_absolute_job_directory_in_the_state_directory():
    launch = _task("start.yml", "Start creating the sim cluster")
    wait = _task("ready.yml", "Wait for kwokctl to finish creating the sim cluster")
    assert launch["poll"] == 0 and "async" in launch
    assert wait["ansible.builtin.async_status"]["jid"] == "{{ sim_cluster_create.ansible_job_id }}"
    state = "/home/learner/.local/state/gsb-kai-lab/sim"
    assert _async_dir(launch, state) == _async_dir(wait, state) == state + "/async"


def test_check_mode_creates_the_cluster_in_the_foreground():
    # Ansible refuses async in check mode; async 0 runs the task as usual (the command is then skipped).
    launch = _task("start.yml", "Start creating the sim cluster")
    for check_mode, expected in ((True, 0), (False, 120)):
        templar = Templar(loader=DataLoader(), variables={"ansible_check_mode": check_mode,
                                                          "sim_cluster_start_timeout": 120})
        assert int(templar.template(trust_as_template(launch["async"]))) == expected
