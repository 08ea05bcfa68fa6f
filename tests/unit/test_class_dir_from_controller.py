# -*- coding: utf-8 -*-
"""Issue 33 row 7: the directory the controller writes the class summary to never comes from a learner's host.

A module's result may carry ansible_facts; Ansible keeps them as that host's facts, which rank above the
inventory's variables. A learner who controls its host (root on its VM) can make the grade task return
`ansible_facts: {kai_lab_class_dir: ...}`. The play of playbooks/grade.yml runs here as it is (its vars and
its class-summary task, copied from the playbook) with ansible-playbook, over two learner hosts on this
machine, the first returning that fact from its grade task.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import COLLECTION_PATH

ROOT = Path(__file__).resolve().parents[2]
PLAY = next(p for p in yaml.safe_load((ROOT / "playbooks" / "grade.yml").read_text())
            if p.get("name") == "Grade the KAI-Scheduler lab")
CLASS_TASK = next(t for t in PLAY["tasks"] if t["name"].startswith("Write the class summary"))
SOLVED = json.loads((Path(__file__).resolve().parent / "fixtures" / "class" / "grade-solved.json").read_text())

# What the learner's host returns from its grade task: a grade, and a fact naming where to write.
LEARNER_MODULE = '''#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
module = AnsibleModule(argument_spec=dict(grade=dict(type='dict'), where=dict(type='str')))
module.exit_json(changed=False, grade=module.params['grade'], ansible_facts={'kai_lab_class_dir': module.params['where']})
'''


def run_grade_play(tmp_path, inventory_vars=None, extra_vars=None, learners=("learner-1", "learner-2")):
    """Run the class summary of grade.yml after the first learner's forged grade; (rc, output, learner's dir)."""
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "learner_grade.py").write_text(LEARNER_MODULE)
    learner_dir = tmp_path / "learner-chose"
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {"all": {"vars": dict(inventory_vars or {})},
                 "kai_lab": {"hosts": dict((name, dict(host)) for name in learners)}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    play = {"name": PLAY["name"], "hosts": "kai_lab", "gather_facts": False, "vars": PLAY["vars"], "tasks": [
        {"name": "Grade (the first learner returns a fact)", "learner_grade": {"grade": SOLVED, "where": str(learner_dir)},
         "register": "kai_lab_grade", "when": "inventory_hostname == %r" % learners[0]},
        CLASS_TASK]}
    (tmp_path / "grade.yml").write_text(yaml.safe_dump([play], sort_keys=False))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "inventory.yml", "grade.yml"]
    for key, value in (extra_vars or {}).items():
        argv += ["-e", "%s=%s" % (key, value)]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTION_PATH), ANSIBLE_LIBRARY=str(tmp_path / "library"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_RETRY_FILES_ENABLED="0")
    done = subprocess.run(argv, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr, learner_dir


def written(directory):
    return sorted(os.listdir(str(directory))) if directory.is_dir() else []


SUMMARY = ["class-junit.xml", "class.csv", "class.html", "class.json"]


@pytest.mark.parametrize("where", ["default", "inventory", "extra vars"])
def test_a_class_dir_fact_from_a_learners_host_is_not_where_the_controller_writes(tmp_path, where):
    chosen = tmp_path / "instructor-chose"
    rc, output, learner_dir = run_grade_play(
        tmp_path, inventory_vars={"kai_lab_class_dir": str(chosen)} if where == "inventory" else None,
        extra_vars={"kai_lab_class_dir": str(chosen)} if where == "extra vars" else None)
    assert rc == 0, output
    assert written(learner_dir) == [], output
    expected = tmp_path / "class-grade" if where == "default" else chosen
    assert written(expected) == SUMMARY, output
    summary = json.loads((expected / "class.json").read_text())
    assert [(row["learner"], row["score"]) for row in summary["learners"]] == [("learner-1", 100.0), ("learner-2", None)]


@pytest.mark.parametrize("learner", ["learner-1", "localhost"])
def test_one_learners_class_dir_fact_asks_for_no_class_summary(tmp_path, learner):
    """One learner (also localhost, as the sim's inventory has it) and no kai_lab_class_dir of the controller's:
    no class summary, wherever the learner's fact points."""
    rc, output, learner_dir = run_grade_play(tmp_path, learners=(learner,))
    assert rc == 0, output
    assert written(learner_dir) == [] and written(tmp_path / "class-grade") == [], output
    assert "Write the class summary" in output and "skipping: [%s]" % learner in output
