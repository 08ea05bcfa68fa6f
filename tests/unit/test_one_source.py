# -*- coding: utf-8 -*-
"""One source for each fact shared by the roles and the Python code: where a
name or number has to be typed in both (a role default the playbooks use,
a constant the grader and kai-lab use without Ansible), they are the same,
and a role's fallback for another role's variable is that role's default.

A new copy that differs fails here, naming both places.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.session import DEFAULTS
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import doctor
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import fraction

ROLES = Path(__file__).resolve().parents[2] / "roles"


def defaults(role):
    return yaml.safe_load((ROLES / role / "defaults" / "main.yml").read_text())


@pytest.mark.parametrize("role, variable, python, where", [
    ("kai_lab", "kai_lab_namespace", DEFAULTS["namespace"], "grading/session.py DEFAULTS['namespace']"),
    ("kai_lab", "kai_lab_k3s_kai_version", kai_profiles.LAB_VERSION, "kai/profiles.py LAB_VERSION"),
    ("kai_scheduler", "kai_scheduler_namespace", DEFAULTS["kai_namespace"], "grading/session.py DEFAULTS['kai_namespace']"),
    ("kai_scheduler", "kai_scheduler_scheduler_name", kai.SCHEDULER_NAME, "kai/objects.py SCHEDULER_NAME"),
    ("kai_scheduler", "kai_scheduler_queue_label", kai.QUEUE_LABEL, "kai/objects.py QUEUE_LABEL"),
    ("kai_scheduler", "kai_scheduler_reservation_namespace", kai_gpu.RESERVATION_NAMESPACE,
     "kai/gpu.py RESERVATION_NAMESPACE"),
    ("fake_gpu_operator", "fake_gpu_operator_gpu_count", fraction.NODE_GPUS, "steps/fraction.py NODE_GPUS"),
    ("fake_gpu_operator", "fake_gpu_operator_namespace", doctor.FAKE_GPU_OPERATOR_NAMESPACE,
     "kai/doctor.py FAKE_GPU_OPERATOR_NAMESPACE"),
])
def test_a_role_default_and_the_python_constant_are_one_value(role, variable, python, where):
    assert defaults(role)[variable] == python, "roles/%s/defaults/main.yml %s is not %s" % (role, variable, where)


def test_the_labs_default_workdir_is_the_graders():
    """kai_lab_workdir without a learner of its own: root's ~/gsb-kai, as the grader and kai-lab assume."""
    from test_learner_access import templar
    from ansible.template import trust_as_template
    assert templar().template(trust_as_template("{{ kai_lab_workdir }}")) == DEFAULTS["workdir"]


def role_files():
    for path in sorted(ROLES.rglob("*")):
        if path.is_file() and path.suffix in (".yml", ".yaml", ".j2", ".py"):
            yield path


def test_a_fallback_for_another_roles_variable_is_that_roles_default():
    """`kai_scheduler_namespace | default('kai-scheduler')` where the kai_scheduler role's default is not
    in scope: the fallback must be that default, not a copy that drifted."""
    known = {}
    for role in sorted(p.name for p in ROLES.iterdir() if (p / "defaults" / "main.yml").is_file()):
        for variable, value in defaults(role).items():
            if isinstance(value, (str, int)) and "{{" not in str(value):
                known[variable] = str(value)
    found = []
    for path in role_files():
        for variable, fallback in re.findall(r"\b(\w+) \| default\('([^']*)'\)", path.read_text()):
            if variable in known:
                found.append(variable)
                assert fallback == known[variable], "%s: %s falls back to %r, its role's default is %r" % (
                    path.relative_to(ROLES), variable, fallback, known[variable])
    assert {"kai_scheduler_namespace", "fake_gpu_operator_namespace", "kai_scheduler_reservation_namespace"} <= set(found)


def test_every_node_pool_label_in_the_roles_is_the_labs_pool():
    """fake-gpu-operator serves the nodes of one pool: the label key and pool the roles write on the node,
    select nodes by and give the operator are kai/gpu.py's and kai/doctor.py's (kai-lab doctor names a
    node without them)."""
    seen = []
    for path in role_files():
        text = path.read_text()
        for key in re.findall(r"run\.ai/[\w.-]*pool[\w.-]*", text):
            assert key == kai_gpu.NODE_POOL_LABEL, "%s: %s" % (path.relative_to(ROLES), key)
            seen.append(path.name)
        for pool in re.findall(r"%s\s*[:=]\s*([\w.-]+)" % re.escape(kai_gpu.NODE_POOL_LABEL), text):
            assert pool == doctor.NODE_POOL, "%s: pool %s" % (path.relative_to(ROLES), pool)
        if path.suffix == ".j2" and "nodePoolLabelKey" in text:
            pools = re.findall(r"nodePools:\s*\n\s+([\w.-]+):", text)
            assert pools == [doctor.NODE_POOL], "%s: nodePools %s" % (path.relative_to(ROLES), pools)
    assert {"node.yaml.j2", "k3s.yml", "topology.yml.j2", "k3s-values.yaml.j2"} <= set(seen)
