"""The sim target runs the lab as processes on the control host itself. Against
a remote host it failed deep in provisioning ("Create etcd's key", the remote
Python lacking cryptography) after reusing the control host's build cache
(issue 36, finding 6): it is refused before any work, by the first task of the
role every playbook starts with, naming the k3s target, in English and Korean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "kai_lab"
HANGUL = re.compile("[\uac00-\ud7a3]")
FIRST = "Check that a sim lab runs on the control host itself"


def _templar(**host) -> Templar:
    loader = DataLoader()
    variables = dict(trust(loader.load_from_file(str(ROLE / "defaults" / "main.yml"))))
    variables.update(trust(loader.load_from_file(str(ROLE / "vars" / "main.yml"))))
    variables.update(host)
    return Templar(loader=loader, variables=variables)


def _first_task() -> dict:
    return yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())[0]


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        # playbooks/inventories/sim.yml, molecule's sim scenarios, tests/class.sh's learners.
        ({"inventory_hostname": "localhost", "ansible_connection": "local"}, True),
        ({"inventory_hostname": "learner1", "ansible_connection": "local"}, True),
        # localhost without a connection set (a play's `connection: local`), or this host over SSH.
        ({"inventory_hostname": "localhost"}, True),
        ({"inventory_hostname": "learner4", "ansible_connection": "ssh", "ansible_host": "127.0.0.1"}, True),
        # A VM given the sim target.
        ({"inventory_hostname": "lab-vm", "ansible_host": "192.0.2.10", "ansible_user": "debian"}, False),
        ({"inventory_hostname": "lab-vm", "ansible_connection": "ssh", "ansible_host": "lab-vm.example"}, False),
        ({"inventory_hostname": "lab-vm.example", "ansible_connection": "ssh"}, False),
    ],
)
def test_a_sim_on_another_host_is_refused_before_any_work(host, allowed):
    task = _first_task()
    assert task["name"] == FIRST
    that = task["ansible.builtin.assert"]["that"]
    templar = _templar(kai_lab_target="sim", **host)
    assert templar.evaluate_conditional(trust_as_template(that)) is allowed
    # The k3s target is for any host.
    assert _templar(kai_lab_target="k3s", **host).evaluate_conditional(trust_as_template(that)) is True
    if not allowed:
        message = templar.template(trust_as_template(task["ansible.builtin.assert"]["fail_msg"]))
        assert host["inventory_hostname"] in message and "kai_lab_target: k3s" in message
        assert "playbooks/inventories/k3s.example.yml" in message and HANGUL.search(message)


def test_every_playbook_starts_with_that_role():
    for name in ("provision", "solve", "grade", "reset", "teardown"):
        plays = yaml.safe_load((ROOT / "playbooks" / ("%s.yml" % name)).read_text())
        play = next(p for p in plays if "hosts" in p)
        assert play["roles"][0]["role"] == "gsb.kai_lab.kai_lab", name
        assert not play.get("pre_tasks"), name
