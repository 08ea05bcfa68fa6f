# -*- coding: utf-8 -*-
"""Issue 33: the learner's own Kubernetes identity, rendered from the one set of manifests both targets apply
(roles/kai_lab/templates/learner_access.yaml.j2, tasks/learner_namespace.yml).

What the learner's ServiceAccount may do is what the steps need and nothing
the grader reads as KAI's word; the admission policies cover what RBAC
cannot say; the grader's own reading of those policies (grading/admission.py)
accepts exactly what the role renders. The same objects are applied to the
sim's real API server and asked about there by molecule/learner.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import admission
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import fraction
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "kai_lab"
IDENTITY = "system:serviceaccount:kai-lab-learner:learner"
# Where the grader's word lives: no rule may grant these (verb, group, resource).
NEVER = [("create", "", "events"), ("patch", "", "events"), ("update", "", "events"),
         ("create", "events.k8s.io", "events"), ("patch", "", "pods/status"), ("update", "", "pods/status"),
         ("patch", "scheduling.run.ai", "podgroups/status"), ("update", "scheduling.run.ai", "podgroups/status"),
         ("create", "", "pods/binding"), ("update", "", "pods"), ("patch", "", "pods"),
         ("create", "", "pods/ephemeralcontainers"), ("get", "", "secrets"), ("list", "", "secrets"),
         ("create", "rbac.authorization.k8s.io", "rolebindings"), ("impersonate", "", "serviceaccounts"),
         ("patch", "scheduling.run.ai", "queues/status"), ("create", "", "serviceaccounts/token")]


def templar(**overrides):
    variables = {}
    for path in ("defaults/main.yml", "vars/main.yml"):
        variables.update(trust(DataLoader().load_from_file(str(ROLE / path))))
    # The role's directory, where a task's template lookup looks (templates/).
    variables.update(ansible_search_path=[str(ROLE)], role_path=str(ROLE))
    variables.update(overrides)
    return Templar(loader=DataLoader(), variables=variables)


def render(**overrides):
    """The manifests learner_namespace.yml applies, as that task renders them."""
    task = yaml.safe_load((ROLE / "tasks" / "learner_namespace.yml").read_text())[0]
    return templar(**overrides).template(trust_as_template(task["gsb.kai_lab.kai_lab_owned_objects"]["objects"]))


def by_kind(objects):
    found = {}
    for obj in objects:
        found.setdefault(obj["kind"], []).append(obj)
    return found


def grants(rules, verb, group, resource):
    return [r for r in rules if verb in r["verbs"] and group in r["apiGroups"] and resource in r["resources"]]


def test_a_root_learner_gets_the_lab_namespace_its_quota_and_nothing_else():
    namespace, quota = render()
    assert namespace == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kai-lab"}}
    assert (quota["kind"], quota["metadata"]["namespace"]) == ("ResourceQuota", "kai-lab")
    assert templar().template(trust_as_template("{{ kai_lab_learner_identity }}")) == ""
    assert render(kai_lab_learner_user="root") == render()


@pytest.mark.parametrize("target, podgroups", [("sim", True), ("k3s", False)])
def test_the_learner_may_do_the_steps_and_write_none_of_kais_word(target, podgroups):
    objects = by_kind(render(kai_lab_learner_user="learner", kai_lab_target=target))
    assert sorted(objects) == ["ClusterRole", "ClusterRoleBinding", "Namespace", "ResourceQuota", "RoleBinding",
                               "Secret", "ServiceAccount", "ValidatingAdmissionPolicy",
                               "ValidatingAdmissionPolicyBinding"]
    lab, own = objects["Namespace"]
    assert lab["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert own["metadata"]["name"] == "kai-lab-learner"
    (account,), (secret,) = objects["ServiceAccount"], objects["Secret"]
    assert "system:serviceaccount:%s:%s" % (account["metadata"]["namespace"], account["metadata"]["name"]) == IDENTITY
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert secret["metadata"]["annotations"]["kubernetes.io/service-account.name"] == "learner"
    roles = dict((r["metadata"]["name"], r["rules"]) for r in objects["ClusterRole"])
    (binding,) = objects["RoleBinding"]
    # The namespaced rules apply in the lab namespace only: none in KAI's or the reservation namespaces.
    assert binding["metadata"]["namespace"] == "kai-lab"
    lab_rules, cluster_rules = roles[binding["roleRef"]["name"]], roles[objects["ClusterRoleBinding"][0]["roleRef"]["name"]]
    for rules in (lab_rules, cluster_rules):
        for verb, group, resource in NEVER:
            assert grants(rules, verb, group, resource) == [], (verb, group, resource)
        assert not any("*" in r["verbs"] or "*" in r["resources"] or "*" in r["apiGroups"] for r in rules)
    for verb in ("create", "delete", "get", "list", "watch"):
        assert grants(lab_rules, verb, "", "pods") and grants(lab_rules, verb, "batch", "jobs")
    assert grants(lab_rules, "get", "", "pods/log") and grants(lab_rules, "create", "", "pods/exec")
    for resource in ("events", "configmaps"):
        assert grants(lab_rules, "list", "", resource) and not grants(lab_rules, "create", "", resource)
    assert bool(grants(lab_rules, "create", "scheduling.run.ai", "podgroups")) is podgroups
    for verb in ("create", "get", "list", "watch", "patch", "update", "delete"):
        assert grants(cluster_rules, verb, "scheduling.run.ai", "queues")
    for group, resource in (("", "nodes"), ("scheduling.k8s.io", "priorityclasses"), ("", "pods")):
        assert grants(cluster_rules, "list", group, resource) and not grants(cluster_rules, "create", group, resource)


def test_the_policies_name_the_learner_and_the_queues_the_steps_create():
    objects = by_kind(render(kai_lab_learner_user="learner"))
    policies = dict((p["metadata"]["name"], p["spec"]) for p in objects["ValidatingAdmissionPolicy"])
    assert sorted(policies) == ["gsb-kai-lab-learner-jobs", "gsb-kai-lab-learner-pods", "gsb-kai-lab-learner-queues"]
    for spec in policies.values():
        assert spec["failurePolicy"] == "Fail"
        assert spec["matchConditions"] == [{"name": "the-learner",
                                            "expression": "request.userInfo.username == '%s'" % IDENTITY}]
    queues = policies["gsb-kai-lab-learner-queues"]["validations"][0]["expression"]
    assert queues.endswith(" in ['nolimit', 'ops', 'research', 'lab']")
    assert list(steps.QUEUE_NAMES) == ["nolimit", "ops", "research", "lab"]
    # Every queue a step's solver creates, children before their parent (what reset removes too).
    assert templar().template(trust_as_template("{{ kai_lab_lab_queues }}")) == list(steps.QUEUE_NAMES)
    pods, jobs = policies["gsb-kai-lab-learner-pods"], policies["gsb-kai-lab-learner-jobs"]
    # One kind per policy: each expression is type-checked against the kind it matches.
    assert [(r["apiGroups"], r["resources"]) for r in pods["matchConstraints"]["resourceRules"]] == [([""], ["pods"])]
    assert [(r["apiGroups"], r["resources"]) for r in jobs["matchConstraints"]["resourceRules"]] == [(["batch"], ["jobs"])]
    said = " ".join(v["expression"] for v in pods["validations"])
    assert "object.spec.nodeName" in said and "object.spec.template.spec.nodeName" in jobs["validations"][0]["expression"]
    assert "object.metadata.labels == oldObject.metadata.labels" in said
    assert "object.metadata.annotations == oldObject.metadata.annotations" in said


def test_the_grader_finds_the_rendered_policies_in_place():
    """One set of names and one of objects: the grader's check of the policies accepts exactly what the role
    applies, compared with what the role gives the grade (kai_lab_learner_policy_objects)."""
    objects = by_kind(render(kai_lab_learner_user="learner"))
    found = {"policies": dict((p["metadata"]["name"], p) for p in objects["ValidatingAdmissionPolicy"]),
             "bindings": dict((b["metadata"]["name"], b) for b in objects["ValidatingAdmissionPolicyBinding"])}
    names = templar(kai_lab_learner_user="learner").template(trust_as_template("{{ kai_lab_learner_policies }}"))
    expected = admission.expected_policies(templar(kai_lab_learner_user="learner").template(
        trust_as_template("{{ kai_lab_learner_policy_objects }}")))
    assert sorted(expected) == sorted(names)
    assert [admission.problems(name, found, IDENTITY, expected[name]) for name in names] == [[], [], []]
    assert admission.problems(names[0], found, "system:serviceaccount:x:other", expected[names[0]])[0][0] == "other_user"
    assert templar().template(trust_as_template("{{ kai_lab_learner_policy_objects }}")) == []


def test_the_grade_and_kai_lab_get_the_same_learner_settings():
    variables = dict(kai_lab_learner_user="learner")
    grade = yaml.safe_load((ROLE / "tasks" / "grade.yml").read_text())[1]["gsb.kai_lab.kai_lab_grade"]
    cli = next(t for t in yaml.safe_load((ROLE / "tasks" / "cli.yml").read_text())
               if t["name"] == "Write kai-lab's settings")["vars"]["kai_lab_cli_settings"]
    for key in ("learner_identity", "learner_policies", "learner_policy_objects"):
        assert templar(**variables).template(trust_as_template(grade[key])) == \
            templar(**variables).template(trust_as_template(cli[key])), key
    assert templar(**variables).template(trust_as_template(cli["learner_identity"])) == IDENTITY


def test_the_learners_kubeconfig_holds_its_token_and_the_lab_namespace():
    secret = {"data": {"token": "ZXlKaGJHY2lPaUpTVXpJMU5pSjku", "ca.crt": "Q0EtREFUQQ=="}}
    text = templar(kai_lab_learner_user="learner", kai_lab_learner_secret=secret, kai_lab_sim_port_base=16900,
                   ansible_facts={"getent_passwd": {"learner": ["x", "1001", "1001", "", "/home/learner", "/bin/sh"]}}
                   ).template(trust_as_template((ROLE / "templates" / "learner_kubeconfig.yaml.j2").read_text()))
    config = yaml.safe_load(text)
    assert config["clusters"][0]["cluster"] == {"server": "https://127.0.0.1:17043",
                                                "certificate-authority-data": "Q0EtREFUQQ=="}
    assert config["users"][0]["user"] == {"token": "eyJhbGciOiJSUzI1NiJ9."}
    assert config["contexts"][0]["context"]["namespace"] == "kai-lab"


@pytest.mark.parametrize("passwd, workdir", [
    (["x", "1001", "1001", "", "/srv/home/learner", "/bin/sh"], "/srv/home/learner/gsb-kai"),
    (None, "/home/learner/gsb-kai"),
])
def test_the_learners_workdir_defaults_under_its_home(passwd, workdir):
    facts = {"getent_passwd": {"learner": passwd}} if passwd else {}
    assert templar(kai_lab_learner_user="learner", ansible_facts=facts).template(
        trust_as_template("{{ kai_lab_workdir }}")) == workdir
    assert templar().template(trust_as_template("{{ kai_lab_workdir }}")) == "/root/gsb-kai"


# ---- issue 40: the lab namespace's quota -------------------------------------------------------------------

# Never PodGroups (a CRD the controller-manager counts only after its next discovery and recounts only at its
# resync: until then every PodGroup of the namespace is refused, KAI's too), no Events, no CPU or memory.
QUOTA_KEYS = {"count/pods", "count/jobs.batch", "count/configmaps"}


def quota_of(objects):
    (quota,) = [o for o in objects if o["kind"] == "ResourceQuota"]
    return quota


@pytest.mark.parametrize("user", ["", "root", "learner"])
@pytest.mark.parametrize("target", ["sim", "k3s"])
def test_every_learners_lab_namespace_gets_a_quota_of_object_counts_and_never_of_events(user, target):
    quota = quota_of(render(kai_lab_learner_user=user, kai_lab_target=target))
    assert quota["metadata"] == {"name": "gsb-kai-lab", "namespace": "kai-lab",
                                 "labels": {"app.kubernetes.io/part-of": "gsb-kai-lab",
                                            "app.kubernetes.io/component": "learner-access"}}
    hard = quota["spec"]["hard"]
    # Pods, Jobs, ConfigMaps; no PodGroups, no Events (KAI's word), no CPU or memory (the lab's pods request none).
    assert set(hard) == QUOTA_KEYS
    assert all(isinstance(v, str) and v.isdigit() for v in hard.values())
    assert templar(kai_lab_learner_user=user).template(trust_as_template("{{ kai_lab_quota }}")) == quota


def test_the_quota_is_what_the_steps_create_twice_over_with_kais_own_for_every_pod():
    hard = quota_of(render())["spec"]["hard"]
    lab = steps.lab_objects()
    assert (len(lab["pods"]), len(lab["jobs"])) == (10, 1)  # p1, nl-1, gang's 3, tr-1, tr-2, bd-1, fr-1, fr-2
    assert hard == {"count/pods": "20", "count/jobs.batch": "2",
                    # kube-root-ca.crt and the binder's two for every pod the quota allows
                    "count/configmaps": str(1 + kai_gpu.BINDER_CONFIGMAPS * 20)}
    assert kai_gpu.BINDER_CONFIGMAPS == 2


def test_the_quota_follows_a_changed_step_and_kais_binder(monkeypatch):
    monkeypatch.setattr(fraction, "FRACTION_PODS", ("fr-1", "fr-2", "fr-3"))
    monkeypatch.setattr(kai_gpu, "BINDER_CONFIGMAPS", 3)
    assert quota_of(render())["spec"]["hard"] == {
        "count/pods": "22", "count/jobs.batch": "2", "count/configmaps": str(1 + 3 * 22)}
    assert quota_of(render(kai_lab_quota_room=3))["spec"]["hard"]["count/pods"] == "33"


def test_the_lab_steps_lookup_names_what_the_steps_create():
    found = templar().template(trust_as_template("{{ query('gsb.kai_lab.lab_steps', 'objects') }}"))
    assert found == [{"pods": ["p1", "nl-1", "gang-0", "gang-1", "gang-2", "tr-1", "tr-2", "bd-1", "fr-1", "fr-2"],
                      "jobs": ["gang"], "podgroups": ["gang"], "gang_pods": ["gang-0", "gang-1", "gang-2"],
                      "fraction_pods": ["fr-1", "fr-2"], "binder_configmaps": 2}]
