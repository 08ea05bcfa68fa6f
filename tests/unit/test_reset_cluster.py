"""Reset outside the lab namespace (issue 34): what the learner added there goes, KAI's and the lab's own stay.

The cluster is the sim's right after a full provision (fixtures/sim-provision:
its record and what its API server listed, KAI v0.12.0), with the lab's
queues of a solved lab (fixtures/sim/steps/fraction.json) and, as a learner
with the lab's admin kubeconfig leaves them, a queue of their own with a
child, a child hung under the lab's research queue, a PriorityClass, an
admission policy with its binding that denies every Queue, and the gang
Job, a pod and a PodGroup of the lab applied to namespace default (they
would hold the lab's GPUs). Served over HTTP as the API server serves them
(tests/unit/fake_api.py, start_recorded); module kai_lab_reset runs as
reset.yml runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from conftest import COLLECTION_PATH, FIXTURES, load_json

import fake_api
import lab_states
from role_templating import trust
from test_learner_access import render, templar

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps

RECORDED = FIXTURES / "sim-provision"
QUEUES = "/apis/scheduling.run.ai/v2/queues"
PRIORITY = "/apis/scheduling.k8s.io/v1/priorityclasses"
POLICIES = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
JOBS, PODS, PODGROUPS = "/apis/batch/v1/jobs", "/api/v1/pods", "/apis/scheduling.run.ai/v2alpha2/podgroups"
NAMESPACES = "/api/v1/namespaces"
LEARNER_TIME = "2026-12-01T22:05:00Z"  # after the gate proved the lab (kai-lab-probe: 21:20:42)
LABEL = "kai.scheduler/queue"


def meta(name, namespace=None, created=LEARNER_TIME, **extra):
    found = {"name": name, "uid": "uid-" + name, "creationTimestamp": created}
    if namespace:
        found["namespace"] = namespace
    found.update(extra)
    return found


def lab_objects():
    """The lab's own objects for a learner with an account (its admission policies among them), as provision made."""
    objects = render(kai_lab_learner_user="learner")
    for obj in objects:
        obj["metadata"]["creationTimestamp"] = "2026-12-01T21:20:33Z"
    return objects


def cluster_lists(lab_own=True):
    lists = load_json(RECORDED / "provisioned-objects.json")
    solved = lab_states.lab_after("fraction")["queues"]
    for queue in solved:
        if queue["metadata"]["name"] in steps.QUEUE_NAMES:
            queue["metadata"]["creationTimestamp"] = "2026-12-01T21:40:00Z"
            lists[QUEUES].append(queue)
    lists[QUEUES] += [
        {"metadata": meta("team-x"), "spec": {}},
        {"metadata": meta("team-x-child"), "spec": {"parentQueue": "team-x"}},
        {"metadata": meta("research-sub"), "spec": {"parentQueue": "research"}}]
    lists[PRIORITY].append({"metadata": meta("urgent"), "value": 1000000})
    lists[POLICIES] = [{"metadata": meta("deny-queues"), "spec": {"validations": [{"expression": "false"}]}}]
    lists[BINDINGS] = [{"metadata": meta("deny-queues"), "spec": {"policyName": "deny-queues"}}]
    if lab_own:
        for obj in lab_objects():
            if obj["kind"] in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
                lists[POLICIES if obj["kind"] == "ValidatingAdmissionPolicy" else BINDINGS].append(obj)
    lists[JOBS] = [{"metadata": meta("gang", "default", labels={LABEL: "research"}), "spec": {}}]
    lists[PODS] = [{"metadata": meta("p1", "default", labels={LABEL: "research"}), "spec": {}},
                   {"metadata": meta("web", "default", labels={"app": "web"}), "spec": {}},
                   {"metadata": meta("probe", "kai-lab-probe", labels={LABEL: "default-queue"}), "spec": {}}]
    lists[PODGROUPS] = [{"metadata": meta("pg-gang", "default", labels={LABEL: "research"}), "spec": {}}]
    return lists


LEARNERS = ["Job default/gang", "Pod default/p1", "PodGroup default/pg-gang",
            "ValidatingAdmissionPolicyBinding deny-queues", "ValidatingAdmissionPolicy deny-queues",
            "PriorityClass urgent",
            # children before their parents
            "Queue research-sub", "Queue nolimit", "Queue ops", "Queue research", "Queue team-x-child",
            "Queue lab", "Queue team-x"]


@pytest.fixture
def serve(tmp_path):
    servers = []

    def start(lists=None, texts=()):
        server = fake_api.start_recorded(cluster_lists() if lists is None else lists, texts)
        servers.append(server)
        return server, fake_api.kubeconfig(tmp_path / ("kubeconfig-%d" % len(servers)), server.url)

    yield start
    for server in servers:
        fake_api.stop(server)


@pytest.fixture
def state_dir(tmp_path):
    """The sim's state directory with the record of the last full provision."""
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    (directory / "provisioned.json").write_text((RECORDED / "provisioned.json").read_text())
    return str(directory)


def task_args(**overrides):
    """The module's arguments as reset.yml gives them, templated with the role's variables."""
    tasks = yaml.safe_load((COLLECTION_PATH / "ansible_collections/gsb/kai_lab/roles/kai_lab/tasks/reset.yml").read_text())
    task = next(t for t in tasks if "gsb.kai_lab.kai_lab_reset" in t)
    args = dict(task["gsb.kai_lab.kai_lab_reset"])
    args.pop("state_dir")
    return templar(**overrides).template(trust(args))


def run_module(tmp_path, args, check=False):
    path = tmp_path / "args.json"
    args = dict(args, _ansible_check_mode=check)
    path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    module = COLLECTION_PATH / "ansible_collections/gsb/kai_lab/plugins/modules/kai_lab_reset.py"
    done = subprocess.run([sys.executable, str(module), str(path)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(COLLECTION_PATH)), check=False)
    return json.loads(done.stdout)


def args_for(config, state=None, **overrides):
    args = (task_args(kai_lab_learner_user="learner", **overrides))
    args.update(kubeconfig=config)
    if state:
        args["state_dir"] = state
    return args


def names(server, path):
    return sorted(o["metadata"]["name"] for o in server.lists.get(path, []))


def warnings_of(done):
    return [w if isinstance(w, str) else w["event"]["msg"] for w in done.get("warnings") or []]


def test_reset_yml_hands_the_module_the_lab_s_queues_own_objects_and_the_gates_namespace():
    args = (task_args(kai_lab_learner_user="learner"))
    assert args["queues"] == list(steps.QUEUE_NAMES)
    assert args["namespace"] == "kai-lab" and args["proved_namespace"] == "kai-lab-probe"
    assert args["own"] == render(kai_lab_learner_user="learner")
    assert args["own_labels"] == {"app.kubernetes.io/part-of": "gsb-kai-lab",
                                  "app.kubernetes.io/component": "learner-access"}


def test_what_the_learner_added_goes_and_what_provision_made_stays(serve, state_dir, tmp_path):
    server, config = serve()
    done = run_module(tmp_path, args_for(config, state_dir))
    assert not done.get("failed"), done.get("msg")
    assert done["changed"] is True and done["removed"] == LEARNERS and done["kept"] == []
    assert names(server, QUEUES) == ["default-parent-queue", "default-queue"]
    assert names(server, PRIORITY) == ["build", "build-preemptible", "inference", "system-cluster-critical",
                                       "system-node-critical", "train"]
    own = sorted(o["metadata"]["name"] for o in lab_objects() if o["kind"] == "ValidatingAdmissionPolicy")
    assert names(server, POLICIES) == own and len(names(server, BINDINGS)) == len(own)
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in server.lists[PODS]] == [
        ("default", "web"), ("kai-lab-probe", "probe")]
    # Nothing of KAI's namespaces, nodes, RBAC or CRDs is touched.
    assert all(path in (QUEUES, PRIORITY, POLICIES, BINDINGS, JOBS, PODS, PODGROUPS) for path, _, _ in server.deleted)


def test_a_second_reset_changes_nothing(serve, state_dir, tmp_path):
    _, config = serve()
    run_module(tmp_path, args_for(config, state_dir))
    done = run_module(tmp_path, args_for(config, state_dir))
    assert done["changed"] is False and done["removed"] == []


def test_check_mode_names_what_would_go_and_removes_nothing(serve, state_dir, tmp_path):
    server, config = serve()
    done = run_module(tmp_path, args_for(config, state_dir), check=True)
    assert done["changed"] is True and done["removed"] == LEARNERS
    assert server.deleted == []


def test_on_a_vm_the_gates_namespace_and_helm_tell_what_provision_made(serve, tmp_path):
    """No record (k3s): KAI's objects are older than the gate's namespace or carry Helm's release annotation."""
    lists = cluster_lists()
    for queue in lists[QUEUES]:
        if queue["metadata"]["name"].startswith("default"):
            # A later KAI upgrade made them again through Helm.
            queue["metadata"]["creationTimestamp"] = "2026-12-02T08:00:00Z"
            queue["metadata"].setdefault("annotations", {})["meta.helm.sh/release-name"] = "kai-scheduler"
    server, config = serve(lists)
    done = run_module(tmp_path, args_for(config))
    assert done["removed"] == LEARNERS
    assert names(server, QUEUES) == ["default-parent-queue", "default-queue"]


def test_without_a_record_or_the_gates_namespace_only_the_lab_s_queues_and_workloads_go(serve, tmp_path):
    lists = cluster_lists()
    lists[NAMESPACES] = [n for n in lists[NAMESPACES] if n["metadata"]["name"] != "kai-lab-probe"]
    server, config = serve(lists)
    done = run_module(tmp_path, args_for(config, str(tmp_path / "no-state")))
    assert done["removed"] == ["Job default/gang", "Pod default/p1", "PodGroup default/pg-gang",
                               "Queue nolimit", "Queue ops", "Queue research", "Queue lab"]
    assert "PriorityClass urgent" in " ".join(done["kept"]) and "Queue default-queue" in " ".join(done["kept"])
    assert warnings_of(done) and "neither a record of the last provision nor the readiness gate" in warnings_of(done)[0]
    assert "urgent" in names(server, PRIORITY)


def test_a_queue_nested_too_deep_is_removed_by_its_name(serve, state_dir, tmp_path):
    deep = (QUEUES, None, "deep", fake_api.deep_object("Queue", "deep", None))
    server, config = serve(texts=[deep])
    done = run_module(tmp_path, args_for(config, state_dir))
    assert not done.get("failed"), done.get("msg")
    assert "Queue deep" in done["removed"] and server.texts == []
    assert names(server, QUEUES) == ["default-parent-queue", "default-queue"]


def test_a_lab_job_nested_too_deep_elsewhere_is_found_by_its_label_and_removed(serve, state_dir, tmp_path):
    deep = (JOBS, "team", "deep-gang", fake_api.deep_object("Job", "deep-gang", "team"), {LABEL: "research"})
    lists = cluster_lists()
    lists[NAMESPACES].append({"metadata": meta("team")})
    server, config = serve(lists, texts=[deep])
    done = run_module(tmp_path, args_for(config, state_dir))
    assert not done.get("failed"), done.get("msg")
    assert done["removed"][:2] == ["Job default/gang", "Job team/deep-gang"]
    assert server.texts == []


def test_a_root_learner_s_lab_keeps_nothing_of_a_learner_account_it_has_not(serve, state_dir, tmp_path):
    """A root learner (no account): the lab's own policies are none; a policy with the lab's labels still stays."""
    lists = cluster_lists()
    server, config = serve(lists)
    args = (task_args())
    args.update(kubeconfig=config, state_dir=state_dir)
    # The lab namespace and its quota (issue 40), no policy.
    assert [(o["kind"], o["metadata"]["name"]) for o in args["own"]] == [("Namespace", "kai-lab"),
                                                                         ("ResourceQuota", "gsb-kai-lab")]
    done = run_module(tmp_path, args)
    assert done["removed"] == LEARNERS
    assert len(names(server, POLICIES)) == 3, "labelled as the lab's"


# ---------------------------------------------------------------- controllers that make the lab's pods again
# A learner's Deployment and CronJob in namespace team (applied without -n kai-lab), their pods on the lab's
# queue research. The pods and the Job are the real ones KAI v0.17.0 ran (fixtures/kai-v0.17.0/
# hand-gang: the lab's Job gang and its pods gang-dnrlt, gang-l6wd8), moved to namespace team
# with ownerReferences to the controllers (as the ReplicaSet and CronJob controllers write them).

DEPLOYMENTS, REPLICASETS = "/apis/apps/v1/deployments", "/apis/apps/v1/replicasets"
CRONJOBS = "/apis/batch/v1/cronjobs"


def recorded(key, name):
    return next(o for o in lab_states.lab_after("gang", lab_states.KAI_V017)[key] if o["metadata"]["name"] == name)


def owned_by(obj, name, owner, namespace="team", labels=None):
    """obj (a recorded one) as owner's controller made it: its name, namespace and owner reference."""
    obj = json.loads(json.dumps(obj))
    obj["metadata"].update(name=name, namespace=namespace, uid="uid-" + name, creationTimestamp=LEARNER_TIME)
    if labels is not None:
        obj["metadata"]["labels"] = labels
    obj["metadata"]["ownerReferences"] = [{
        "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    return obj


def controller(api_version, kind, name, queue, namespace="team", labels=None, **extra):
    """A controller whose pod template carries queue (a kubectl-applied one, as the API server keeps it)."""
    template = {"metadata": {"labels": {"app": name, LABEL: queue}}, "spec": {"containers": []}}
    spec = {"jobTemplate": {"spec": {"template": template}}, "schedule": "0 3 * * *"} if kind == "CronJob" else {
        "replicas": 1, "template": template}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta(name, namespace, labels=labels or {"app": name},
                                                                        **extra), "spec": spec}


def deployment_chain(name, queue, namespace="team", **extra):
    """A Deployment, its ReplicaSet and a pod of it (the recorded pod gang-dnrlt, its queue label queue)."""
    deployment = controller("apps/v1", "Deployment", name, queue, namespace, **extra)
    replicaset = owned_by(controller("apps/v1", "ReplicaSet", name + "-5d8f7c9b6", queue, namespace),
                          name + "-5d8f7c9b6", deployment, namespace)
    pod = owned_by(recorded("pods", "gang-dnrlt"), name + "-5d8f7c9b6-x2k4p", replicaset, namespace,
                   labels={"app": name, "pod-template-hash": "5d8f7c9b6", LABEL: queue})
    return deployment, replicaset, pod


def with_controllers(*chains):
    lists = cluster_lists()
    lists[CRONJOBS] = [controller("batch/v1", "CronJob", "nightly", "research")]
    job = owned_by(recorded("jobs", "gang"), "nightly-29000000", lists[CRONJOBS][0], labels={})
    lists[JOBS].append(job)
    lists[PODS].append(owned_by(recorded("pods", "gang-l6wd8"), "nightly-29000000-k8s2p", job,
                                labels={"job-name": job["metadata"]["name"], LABEL: "research"}))
    lists[DEPLOYMENTS], lists[REPLICASETS] = [], []
    for deployment, replicaset, pod in chains:
        lists[DEPLOYMENTS].append(deployment)
        lists[REPLICASETS].append(replicaset)
        lists[PODS].append(pod)
    return lists


CONTROLLERS = ["Deployment team/trainer", "CronJob team/nightly", "ReplicaSet team/trainer-5d8f7c9b6",
               "Job team/nightly-29000000"]
WORKLOADS_THERE = ["Job default/gang", "Pod default/p1", "Pod team/nightly-29000000-k8s2p",
                   "Pod team/trainer-5d8f7c9b6-x2k4p", "PodGroup default/pg-gang"]


def test_controllers_elsewhere_whose_pods_carry_a_lab_queue_go_top_owner_first(serve, state_dir, tmp_path):
    """Fails before issue 34's controllers: only the pods went, and the Deployment and CronJob made them again."""
    server, config = serve(with_controllers(deployment_chain("trainer", "research"),
                                            deployment_chain("other", "team-x")))
    done = run_module(tmp_path, args_for(config, state_dir))
    assert not done.get("failed"), done.get("msg")
    assert done["removed"] == CONTROLLERS + WORKLOADS_THERE + LEARNERS[3:]
    deleted = [(path, namespace, name) for path, namespace, name in server.deleted if namespace == "team"]
    assert deleted == [(DEPLOYMENTS, "team", "trainer"), (CRONJOBS, "team", "nightly"),
                       (REPLICASETS, "team", "trainer-5d8f7c9b6"), (JOBS, "team", "nightly-29000000"),
                       (PODS, "team", "nightly-29000000-k8s2p"), (PODS, "team", "trainer-5d8f7c9b6-x2k4p")]
    # A Deployment whose pods carry another queue (no lab's) stays, with its ReplicaSet and pods.
    assert names(server, DEPLOYMENTS) == ["other"] and names(server, REPLICASETS) == ["other-5d8f7c9b6"]
    assert "other-5d8f7c9b6-x2k4p" in names(server, PODS) and names(server, CRONJOBS) == []
    assert done["kept"] == []


def test_a_controller_labelled_with_a_lab_queue_goes_though_it_has_no_pod(serve, state_dir, tmp_path):
    """KAI reads a pod's queue from its top owner: a Deployment labelled research scaled to zero still goes."""
    lists = with_controllers()
    lists[DEPLOYMENTS].append(controller("apps/v1", "Deployment", "idle", "research", labels={LABEL: "research"}))
    server, config = serve(lists)
    done = run_module(tmp_path, args_for(config, state_dir))
    assert done["removed"][:3] == ["Deployment team/idle", "CronJob team/nightly", "Job team/nightly-29000000"]
    assert names(server, DEPLOYMENTS) == []


def test_a_controller_provision_or_helm_made_stays_with_its_pods_and_is_named(serve, state_dir, tmp_path):
    """Fails before: their pods went (and came back at once), and nothing was named."""
    helm = deployment_chain("metrics", "research", "monitoring",
                            annotations={"meta.helm.sh/release-name": "lab-metrics"})
    early = deployment_chain("warmup", "research", "monitoring", created="2026-12-01T21:10:00Z")
    server, config = serve(with_controllers(helm, early))
    done = run_module(tmp_path, args_for(config, state_dir))
    assert not any("monitoring/" in line for line in done["removed"])
    assert names(server, DEPLOYMENTS) == ["metrics", "warmup"]
    assert {"metrics-5d8f7c9b6-x2k4p", "warmup-5d8f7c9b6-x2k4p"} <= set(names(server, PODS))
    assert done["kept"] == [
        "Pod monitoring/metrics-5d8f7c9b6-x2k4p (kai.scheduler/queue): kept with its top owner Deployment "
        "monitoring/metrics, installed by Helm (release lab-metrics)",
        "Pod monitoring/warmup-5d8f7c9b6-x2k4p (kai.scheduler/queue): kept with its top owner Deployment "
        "monitoring/warmup, made by provision (created 2026-12-01T21:10:00Z, the lab proved ready "
        "2026-12-01T21:20:42Z)"]
    assert any("monitoring/metrics" in w for w in warnings_of(done))


def test_an_owner_that_cannot_be_read_is_named_not_guessed(serve, state_dir, tmp_path):
    """Fails before: the ReplicaSet nested too deep was neither read nor named."""
    deployment, replicaset, pod = deployment_chain("deep", "research")
    lists = with_controllers()
    lists[PODS].append(pod)
    deep = (REPLICASETS, "team", replicaset["metadata"]["name"],
            fake_api.deep_object("ReplicaSet", replicaset["metadata"]["name"], "team"))
    server, config = serve(lists, texts=[deep])
    done = run_module(tmp_path, args_for(config, state_dir))
    assert not done.get("failed"), done.get("msg")
    assert "Pod team/deep-5d8f7c9b6-x2k4p" in done["removed"]
    assert not any("ReplicaSet" in line for line in done["removed"]) and server.texts == [deep]
    named = [line for line in done["kept"] if "deep" in line]
    assert len(named) == 1 and named[0].startswith(
        "Pod team/deep-5d8f7c9b6-x2k4p (kai.scheduler/queue): its controller ReplicaSet team/deep-5d8f7c9b6 is "
        "left, as it cannot be read (") and "deep" in named[0].split("cannot be read", 1)[1]


def test_check_mode_names_the_controllers_it_would_remove_and_removes_nothing(serve, state_dir, tmp_path):
    server, config = serve(with_controllers(deployment_chain("trainer", "research")))
    done = run_module(tmp_path, args_for(config, state_dir), check=True)
    assert done["changed"] is True and done["removed"] == CONTROLLERS + WORKLOADS_THERE + LEARNERS[3:]
    assert server.deleted == [] and names(server, DEPLOYMENTS) == ["trainer"]
