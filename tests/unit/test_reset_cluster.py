"""Reset outside the lab namespace (issue 34): what the learner added there goes, KAI's and the lab's own stay.

The cluster is the sim's right after a full provision (fixtures/sim-provision:
its record and what its API server listed, KAI v0.12.0), with the lab's
queues of a solved lab (fixtures/sim/07-fraction.json) and, as a learner
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
    solved = load_json(FIXTURES / "sim" / "07-fraction.json")["queues"]
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
    assert args["own"] == [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kai-lab"}}]
    done = run_module(tmp_path, args)
    assert done["removed"] == LEARNERS
    assert len(names(server, POLICIES)) == 3, "labelled as the lab's"
