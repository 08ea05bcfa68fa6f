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
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from role_templating import trust

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
    # The plugin kai-lab doctor names when it is on is the one the role turns off on both targets.
    ("kai_scheduler", "kai_scheduler_disabled_plugins", [kai_profiles.SNAPSHOT_PLUGIN],
     "[kai/profiles.py SNAPSHOT_PLUGIN]"),
])
def test_a_role_default_and_the_python_constant_are_one_value(role, variable, python, where):
    assert defaults(role)[variable] == python, "roles/%s/defaults/main.yml %s is not %s" % (role, variable, where)


def test_the_labs_default_workdir_is_the_graders():
    """kai_lab_workdir without a learner of its own: root's ~/gsb-kai, as the grader and kai-lab assume."""
    from test_learner_access import templar
    from ansible.template import trust_as_template
    assert templar().template(trust_as_template("{{ kai_lab_workdir }}")) == DEFAULTS["workdir"]


def test_the_default_workdir_is_set_once_and_documented_as_it_is():
    """learner/workdir_fd.py DEFAULT_WORKDIR is the grade's and kai-lab's default, the lab modules' option default
    (as a module builds its spec) and what doc_fragments/lab.py documents."""
    from ansible_collections.gsb.kai_lab.plugins.doc_fragments.lab import ModuleDocFragment
    from ansible_collections.gsb.kai_lab.plugins.module_utils.client.args import lab_argument_spec
    from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.workdir_fd import DEFAULT_WORKDIR
    assert DEFAULTS["workdir"] == DEFAULT_WORKDIR
    assert lab_argument_spec(DEFAULT_WORKDIR)["workdir"]["default"] == DEFAULT_WORKDIR
    assert yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]["workdir"]["default"] == DEFAULT_WORKDIR
    for module in ("kai_lab_step", "kai_lab_grade"):
        source = (ROLES.parent / "plugins" / "modules" / ("%s.py" % module)).read_text()
        assert "lab_argument_spec(\n        DEFAULT_WORKDIR," in source, module


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


# ---------------------------------------------------------------- fake-gpu-operator's node pool

def role_templar(*roles, **overrides):
    """Ansible's templating over the roles' defaults and vars, as a play has them (the collection's lookups too)."""
    variables = {}
    for role in roles:
        for part in ("defaults", "vars"):
            if (ROLES / role / part / "main.yml").is_file():
                variables.update(trust(DataLoader().load_from_file(str(ROLES / role / part / "main.yml"))))
    variables.update(overrides)
    return Templar(loader=DataLoader(), variables=variables)


def rendered_pool_places(tmp_path):
    """{place: (label key, pool)} of every role file that names fake-gpu-operator's node pool, rendered."""
    fgo = role_templar("fake_gpu_operator", kai_lab_kubeconfig="/k", kai_lab_sim_state_dir=str(tmp_path),
                       fake_gpu_operator_chart_version="0.2.0")
    places = {}
    node = yaml.safe_load(role_templar("sim_cluster").template(
        trust((ROLES / "sim_cluster" / "templates" / "node.yaml.j2").read_text())))
    places["sim_cluster node.yaml.j2"] = [(k, v) for k, v in node["metadata"]["labels"].items()
                                          if not k.startswith(("kubernetes.io/", "node-role.kubernetes.io/"))]
    topology = yaml.safe_load(fgo.template(trust((ROLES / "fake_gpu_operator" / "templates" / "topology.yml.j2")
                                                 .read_text())))
    places["topology.yml.j2"] = [(topology["nodePoolLabelKey"], pool) for pool in topology["nodePools"]]
    values = yaml.safe_load(fgo.template(trust((ROLES / "fake_gpu_operator" / "templates" / "k3s-values.yaml.j2")
                                               .read_text())))["topology"]
    places["k3s-values.yaml.j2"] = [(values["nodePoolLabelKey"], pool) for pool in values["nodePools"]]
    k3s = {t["name"]: t for t in yaml.safe_load((ROLES / "fake_gpu_operator" / "tasks" / "k3s.yml").read_text())}
    label = next(t for n, t in k3s.items() if n.startswith("Make the nodes simulated GPU nodes"))
    labels = fgo.template(trust(label["kubernetes.core.k8s"]["definition"]["metadata"]["labels"]))
    places["k3s.yml labels"] = list(labels.items())
    wait = next(t for n, t in k3s.items() if n.startswith("Wait until the node shows its fake GPUs"))
    places["k3s.yml wait"] = [tuple(fgo.template(trust(s)).split("=")) for s in wait["kubernetes.core.k8s_info"]
                              ["label_selectors"]]
    sim = next(t for t in yaml.safe_load((ROLES / "fake_gpu_operator" / "tasks" / "sim.yml").read_text())
               if t["name"] == "Wait until the node shows its fake GPUs")
    fgo = role_templar("fake_gpu_operator", kai_lab_kubeconfig="/k", kai_lab_sim_state_dir=str(tmp_path),
                       **trust(sim["vars"]))
    command = fgo.template(trust(sim["ansible.builtin.shell"]["cmd"]))
    places["sim.yml wait"] = [tuple(s.split("=")) for s in re.findall(r"wait nodes -l (\S+)", command)]
    return places


def test_the_roles_name_fake_gpu_operators_node_pool_of_kai_gpu(tmp_path):
    """The node (sim), its labels (k3s), the operator's topology (both) and the waits all name kai/gpu.py's
    pool, the one kai-lab doctor checks a node for."""
    places = rendered_pool_places(tmp_path)
    wanted = (kai_gpu.NODE_POOL_LABEL, kai_gpu.NODE_POOL)
    assert places == dict((place, [wanted] * (2 if place == "sim.yml wait" else 1)) for place in places)
    assert len(places) == 6


def test_a_changed_node_pool_shows_in_every_role_file_and_the_doctor(tmp_path, monkeypatch):
    monkeypatch.setattr(kai_gpu, "NODE_POOL_LABEL", "x-example.org/gpu-pool")
    monkeypatch.setattr(kai_gpu, "NODE_POOL", "lab-7")
    places = rendered_pool_places(tmp_path)
    assert all(found and set(found) == {("x-example.org/gpu-pool", "lab-7")} for found in places.values()), places
    node = {"metadata": {"name": "n1", "labels": {"x-example.org/gpu-pool": "lab-7", kai_gpu.FAKE_GPU_LABEL: "true"}},
            "status": {"allocatable": {kai_gpu.GPU_RESOURCE: "4"}}}
    assert doctor.node_faults([node]) == []
    node["metadata"]["labels"]["x-example.org/gpu-pool"] = "default"
    assert doctor.node_faults([node])[0]["values"]["pool"] == "lab-7"


def test_no_role_types_the_node_pool_again():
    """A role names the pool through the lookup gsb.kai_lab.fake_gpu_node_pool (its vars), never as a literal."""
    typed = []
    for path in role_files():
        text = path.read_text()
        for literal in (kai_gpu.NODE_POOL_LABEL, "run.ai/simulated-gpu-node-pool"):
            if literal in text:
                typed.append((str(path.relative_to(ROLES)), literal))
        typed.extend((str(path.relative_to(ROLES)), "nodePools: " + pool)
                     for pool in re.findall(r"nodePools:\s*\n\s+([^\s{][^:]*):", text))
        typed.extend((str(path.relative_to(ROLES)), line.strip()) for line in text.splitlines()
                     if re.search(r"\bpool\W+%s\b" % re.escape(kai_gpu.NODE_POOL), line))
    assert typed == []


def test_the_node_pool_lookup_gives_kai_gpus_pool_and_names_a_wrong_term():
    from ansible.errors import AnsibleError
    from ansible_collections.gsb.kai_lab.plugins.lookup.fake_gpu_node_pool import RETURN, LookupModule
    assert LookupModule().run(["label", "name"]) == [kai_gpu.NODE_POOL_LABEL, kai_gpu.NODE_POOL]
    # Its documentation's examples of the values are the values.
    said = " ".join(yaml.safe_load(RETURN)["_raw"]["description"])
    assert "V(%s)" % kai_gpu.NODE_POOL_LABEL in said and "V(%s)" % kai_gpu.NODE_POOL in said
    for terms in ([], ["pool"]):
        with pytest.raises(AnsibleError) as raised:
            LookupModule().run(terms)
        assert "takes label (the label key) or name (the pool), not %s" % (terms[0] if terms else "nothing") \
            in str(raised.value)
