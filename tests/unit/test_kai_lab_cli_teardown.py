"""Teardown removes what provision installed for kai-lab outside the sim's
state directory (roles/kai_lab/tasks/cli_remove.yml, run by
playbooks/teardown.yml before the cluster goes): the command, every
version's code, and on a VM its settings and the learner's sudo rule. A sim
with its own state directory keeps kai-lab there, so nothing shared is
touched for it (another lab's /usr/local/bin/kai-lab stays)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]
LAB = ("roles/kai_lab/defaults/main.yml", "roles/kai_lab/vars/main.yml")


def _removed(**overrides):
    variables = {}
    for path in LAB:
        variables.update(trust(DataLoader().load_from_file(str(ROOT / path))))
    variables.update(kai_lab_collection_version="0.1.0", **overrides)
    templar = Templar(loader=DataLoader(), variables=variables)
    tasks = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "cli_remove.yml").read_text())
    removed = []
    for task in tasks:
        if "loop" in task:
            removed += templar.template(trust_as_template(task["loop"]))
        elif templar.evaluate_conditional(trust_as_template(task["when"])):
            # The learner's kubeconfig: a path in its home, removed through the module that follows no link.
            removed.append(templar.template(trust_as_template(task["gsb.kai_lab.kai_lab_learner_file"]["path"])))
    return removed


# The sudo rule of a sim with its own state directory is its own (sha1 of the directory, 12 digits).
OTHER_SIM_RULE = "/etc/sudoers.d/gsb-kai-lab-" + __import__("hashlib").sha1(b"/tmp/another-sim").hexdigest()[:12]


@pytest.mark.parametrize("target, state, removed", [
    ("sim", "/root/.local/state/gsb-kai-lab/sim", ["/usr/local/bin/kai-lab", "/usr/local/lib/gsb-kai-lab",
                                                   "/etc/sudoers.d/gsb-kai-lab"]),
    ("sim", "/tmp/another-sim", [OTHER_SIM_RULE]),
    ("k3s", "/unused", ["/usr/local/bin/kai-lab", "/usr/local/lib/gsb-kai-lab", "/etc/gsb-kai-lab",
                        "/etc/sudoers.d/gsb-kai-lab", "/etc/profile.d/gsb-kai-lab.sh"]),
])
def test_teardown_removes_what_provision_installed_outside_the_state(target, state, removed):
    assert _removed(kai_lab_target=target, kai_lab_sim_state_dir=state,
                    kai_lab_sim_default_state_dir="/root/.local/state/gsb-kai-lab/sim") == removed


def test_teardown_removes_the_learners_kubeconfig():
    assert _removed(kai_lab_target="k3s", kai_lab_sim_state_dir="/unused", kai_lab_learner_user="learner",
                    ansible_facts={"getent_passwd": {"learner": ["x", "1001", "1001", "", "/home/learner", "/bin/sh"]}},
                    kai_lab_sim_default_state_dir="/root/.local/state/gsb-kai-lab/sim")[-1] == "/home/learner/.kube/config"


def test_the_teardown_playbook_removes_kai_lab_before_the_cluster():
    play = yaml.safe_load((ROOT / "playbooks" / "teardown.yml").read_text())[1]
    roles = [t["ansible.builtin.include_role"] for t in play["tasks"]]
    assert roles[0] == {"name": "gsb.kai_lab.kai_lab", "tasks_from": "cli_remove"}
    assert roles[1]["tasks_from"] == "teardown"


def test_provision_and_teardown_name_the_same_sudo_rule():
    tasks = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "cli.yml").read_text())
    paths = [t.get("ansible.builtin.template", t.get("ansible.builtin.file", {})).get("dest")
             or t.get("ansible.builtin.file", {}).get("path") for t in tasks]
    assert "{{ kai_lab_cli_sudoers }}" in paths
