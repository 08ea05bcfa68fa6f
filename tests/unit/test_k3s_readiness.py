"""The readiness gate (plugins/module_utils/readiness*.py, roles/kai_lab/tasks/ready.yml)
against a cluster that behaves like the lab's: probe pods are scheduled,
the binder makes a reservation pod shaped like the one recorded on the sim
(tests/unit/fixtures/sim/steps/fraction.json), fake-gpu-operator annotates it,
the node lists the images it pulled. Each test breaks one link and checks
that the gate names that link, within its time limit, and cleans up."""

from __future__ import annotations

import copy
import os
import stat
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleValueOmittedError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
import lab_states
from conftest import FakeCluster
from role_templating import trust

from ansible_collections.gsb.kai_lab.plugins.module_utils.client import readable
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.errors import AnswerTooDeep
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import links as readiness_links
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import marker as readiness_marker
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import probes as readiness_probes
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import base, podgroup
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate.gate import Gate
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate.probes import GateFailure

ROOT = Path(__file__).resolve().parents[2]
PROBE_NS = "kai-lab-probe"
RES_NS = kai_gpu.RESERVATION_NAMESPACE
SIM_BINDER_ARGS = ["/cache/bin/binder", "--scheduler-name=kai-scheduler", "--fake-gpu-nodes",
                   "--resource-reservation-namespace=kai-resource-reservation"]


# The gate's whole run, cleanup included, ends by its deadline; what may
# exceed it is the poll under way at that moment (here CALL_SECONDS per API
# call of SlowLabCluster; a busy machine's scheduling in
# tests/integration/gate_broken_links.yml, which states its own slack).
SCHEDULING_SLACK = 2.0
CALL_SECONDS = 0.2


class Clock(object):
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def _node(gpus=4, images=("docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu:22.04@sha256:" + "1" * 64)):
    return {"metadata": {"name": "kai-lab-vm", "uid": "node-uid", "labels": {"run.ai/fake.gpu": "true"}},
            "status": {"allocatable": {kai_gpu.GPU_RESOURCE: str(gpus), "cpu": "8"},
                       "images": [{"names": list(images)}] if images else []}}


def _recorded_reservation_pod():
    state = lab_states.lab_after("fraction")
    return copy.deepcopy(state["reservation_pods"][0])


class LabCluster(FakeCluster):
    """A FakeCluster whose probe pods move the way the lab's components move them."""

    def __init__(self, node=None, binder_args=None, annotate=True, pull=True, schedule=True, pods=(),
                 binder_gives_up_after=10 ** 6, reservation_linger=0, orphan_first=0):
        super().__init__({})
        self._store("v1", "Node", node or _node())
        if binder_args is not None:
            self._store("apps/v1", "Deployment", {
                "metadata": {"name": "binder", "namespace": "kai-scheduler"},
                "spec": {"template": {"spec": {"containers": [{"name": "binder", "image": "binder:v0.18.6",
                                                                "args": binder_args}]}}}})
        for pod in pods:
            self._store("v1", "Pod", pod)
        self.annotate = annotate
        self.reservation_linger = reservation_linger
        self.reservation_lingers_for = None
        self.binder_attempts = 0
        self.binder_gives_up_after = binder_gives_up_after
        self.pull = pull
        self.schedule = schedule
        self.created = []
        # The first orphan_first fraction probes are bound into a GPU group
        # whose reservation pod the binder is deleting (seen on the sim when a
        # probe followed the removal of the group's last fraction pod).
        self.orphan_first = orphan_first
        self.orphaned = {}
        self.dying_polls = None

    def apply(self, obj, dry_run=False, force=True, field_manager=None):
        if obj["kind"] == "Pod":
            self.created.append(obj["metadata"]["name"])
            obj = copy.deepcopy(obj)
            obj["metadata"]["uid"] = "uid-%d" % len(self.created)
        return super().apply(obj, dry_run, force, field_manager)

    def get(self, api_version, kind, name, namespace=None):
        if kind == "Pod" and namespace == PROBE_NS:
            self._advance(name)
        if kind == "Pod" and namespace == RES_NS:
            self._reservation_gc()
        return super().get(api_version, kind, name, namespace)

    def _advance(self, name):
        key = self._key("v1", "Pod", name, PROBE_NS)
        pod = self.objects.get(key)
        if pod is None or not self.schedule:
            return
        pod.setdefault("status", {})
        pod["spec"]["nodeName"] = "kai-lab-vm"
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
        if kai_gpu.gpu_fraction(pod) is not None and self._bind_into_dying_group(pod):
            return
        if kai_gpu.gpu_fraction(pod) is not None:
            # The binder makes the reservation pod first and labels the
            # fraction pod with the GPU group only when it binds it.
            group = "9d0e9a52-group-of-" + name
            reservation = _recorded_reservation_pod()
            reservation["metadata"]["name"] = "gpu-reservation-kai-lab-vm-probe"
            reservation["metadata"]["labels"][kai_gpu.GPU_GROUP_LABEL] = group
            if not self.annotate:
                reservation["metadata"]["annotations"].pop(kai_gpu.RESERVATION_GPU_ANNOTATION)
            self._store("v1", "Pod", reservation)
            if not self.annotate:
                pod["spec"].pop("nodeName")
                pod["status"]["phase"] = "Pending"
                self.binder_attempts += 1
                if self.binder_attempts >= self.binder_gives_up_after:
                    # What KAI v0.12.0's binder recorded on the sim after its 40 s wait.
                    self._store("v1", "Event", {
                        "metadata": {"name": name + ".binding", "namespace": PROBE_NS},
                        "involvedObject": {"kind": "Pod", "name": name, "namespace": PROBE_NS,
                                           "uid": pod["metadata"]["uid"]},
                        "reason": "BindingError", "type": "Warning",
                        "message": "Failed to bind pod %s/%s to node kai-lab-vm: failed waiting for GPU reservation "
                                   "pod to allocate: %s/gpu-reservation-kai-lab-vm-probe" % (PROBE_NS, name, RES_NS)})
                return
            pod["metadata"].setdefault("labels", {})[kai_gpu.GPU_GROUP_LABEL] = group
        if self.pull:
            pod["status"]["phase"] = "Running"
        else:
            pod["status"]["phase"] = "Pending"
            pod["status"]["containerStatuses"] = [{"name": "probe", "restartCount": 0, "state": {"waiting": {
                "reason": "ImagePullBackOff", "message": "Back-off pulling image \"ubuntu:22.04\""}}}]

    def _bind_into_dying_group(self, pod):
        uid = pod["metadata"]["uid"]
        if uid not in self.orphaned:
            if len(self.orphaned) >= self.orphan_first:
                return False
            self.orphaned[uid] = "dying-group-%d" % (len(self.orphaned) + 1)
            dying = _recorded_reservation_pod()
            dying["metadata"]["name"] = "gpu-reservation-kai-lab-vm-dying"
            dying["metadata"]["labels"][kai_gpu.GPU_GROUP_LABEL] = self.orphaned[uid]
            dying["metadata"]["deletionTimestamp"] = "2026-12-01T14:00:00Z"
            self._store("v1", "Pod", dying)
            self.dying_polls = 2
        pod["metadata"].setdefault("labels", {})[kai_gpu.GPU_GROUP_LABEL] = self.orphaned[uid]
        pod["status"]["phase"] = "Running"
        return True

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None):
        if kind == "Pod" and namespace == RES_NS:
            self._reservation_gc()
        return super().list(api_version, kind, namespace, label_selector, field_selector)

    def delete(self, api_version, kind, name, namespace=None, dry_run=False, propagation="Background"):
        deleted = super().delete(api_version, kind, name, namespace, dry_run, propagation)
        if deleted and name == readiness_probes.FRACTION_PROBE:
            # The binder removes a reservation pod whose fraction pods are gone, a few polls later.
            self.reservation_lingers_for = self.reservation_linger
        return deleted

    def _reservation_gc(self):
        if self.dying_polls is not None:
            self.dying_polls -= 1
            if self.dying_polls <= 0:
                self.objects.pop(self._key("v1", "Pod", "gpu-reservation-kai-lab-vm-dying", RES_NS), None)
                self.dying_polls = None
        key = self._key("v1", "Pod", "gpu-reservation-kai-lab-vm-probe", RES_NS)
        if self.reservation_lingers_for is not None:
            if self.reservation_lingers_for <= 0:
                self.objects.pop(key, None)
                self.reservation_lingers_for = None
            else:
                self.reservation_lingers_for -= 1

    def probe_pods_left(self):
        return [key[3] for key in self.objects if key[1] == "Pod" and key[2] in (PROBE_NS, RES_NS)]


class SlowLabCluster(LabCluster):
    """A LabCluster whose every API call takes CALL_SECONDS of the gate's clock."""

    def __init__(self, clock, **kwargs):
        super().__init__(**kwargs)
        self.clock = clock

    def apply(self, *args, **kwargs):
        self.clock.sleep(CALL_SECONDS)
        return super().apply(*args, **kwargs)

    def get(self, *args, **kwargs):
        self.clock.sleep(CALL_SECONDS)
        return super().get(*args, **kwargs)

    def list(self, *args, **kwargs):
        self.clock.sleep(CALL_SECONDS)
        return super().list(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self.clock.sleep(CALL_SECONDS)
        return super().delete(*args, **kwargs)


def _gate(cluster, tmp_path, clock=None, binder_args=SIM_BINDER_ARGS, sim=True, timeout=30, **kwargs):
    clock = clock or Clock()
    # The lab's private state directory, where the gate keeps its fingerprint (gate/marker.py).
    options = dict(clock=clock, sleep=clock.sleep, timeout=timeout, state_dir=str(tmp_path / "state"))
    if sim:
        pid_file = tmp_path / "binder.pid"
        pid_file.write_text("4242\n")
        options.update(binder_pid_file=str(pid_file), pull_images=False,
                       read_cmdline=lambda pid: list(binder_args) if pid == 4242 else None)
    options.update(kwargs)
    return Gate(cluster, PROBE_NS, "ubuntu:22.04", options.pop("timeout"), **options), clock


def _statuses(result):
    return {link["link"]: link["status"] for link in result["links"]}


# --- every link works --------------------------------------------------------------


def test_sim_lab_passes_every_link_and_leaves_no_probe(tmp_path):
    cluster = LabCluster()
    gate, _ = _gate(cluster, tmp_path)
    result = gate.run()
    assert _statuses(result) == {"binder": "passed", "gpu_pod": "passed", "fraction": "passed",
                                 "image": "not applicable"}
    assert "pulls no image" in result["links"][-1]["detail"]
    fraction = next(link for link in result["links"] if link["link"] == "fraction")
    assert "GPU-8a252772-30e0-533f-9d07-32784ec7e87c" in fraction["detail"]
    # Four GPUs free: both probes at once.
    assert cluster.created == [readiness_probes.GPU_PROBE, readiness_probes.FRACTION_PROBE]
    assert cluster.probe_pods_left() == []
    # Nothing was written outside the probe namespace.
    assert {call[3] for call in cluster.writes} <= {PROBE_NS, None}
    assert result["probed"] is True


def test_the_gate_returns_only_once_the_probes_reservation_pod_is_gone(tmp_path):
    """The lab's steps count GPUs: a reservation pod left by the probe would hold one."""
    cluster = LabCluster(reservation_linger=4)
    _gate(cluster, tmp_path)[0].run()
    assert cluster.probe_pods_left() == []


def test_k3s_lab_reads_the_binder_deployment_and_proves_the_image(tmp_path):
    cluster = LabCluster(binder_args=["--fake-gpu-nodes", "--scheduler-name=kai-scheduler"])
    gate, _ = _gate(cluster, tmp_path, sim=False)
    result = gate.run()
    assert _statuses(result) == {"binder": "passed", "gpu_pod": "passed", "fraction": "passed", "image": "passed"}
    assert "Deployment kai-scheduler/binder" in result["links"][0]["detail"]


def test_a_lab_already_proved_is_not_probed_again(tmp_path):
    cluster = LabCluster()
    _gate(cluster, tmp_path)[0].run()
    cluster.created.clear()
    result = _gate(cluster, tmp_path)[0].run()
    assert result["probed"] is False
    assert cluster.created == []
    assert _statuses(result) == {"binder": "passed", "gpu_pod": "proven", "fraction": "proven",
                                 "image": "not applicable"}
    # Forced, or once a component's identity changed, it probes again.
    assert _gate(cluster, tmp_path, reprove=True)[0].run()["probed"] is True
    cluster.objects[cluster._key("v1", "Node", "kai-lab-vm", None)]["status"]["allocatable"][kai_gpu.GPU_RESOURCE] = "3"
    assert _gate(cluster, tmp_path)[0].run()["probed"] is True


def test_the_proof_is_a_private_file_in_the_state_directory_not_a_configmap(tmp_path):
    cluster = LabCluster()
    _gate(cluster, tmp_path)[0].run()
    path = tmp_path / "state" / readiness_marker.MARKER_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    digest, proven_at = readiness_marker.read(str(tmp_path / "state"))
    assert len(digest) == 64 and proven_at.endswith("Z")
    assert not [c for c in cluster.writes if c[1] == "ConfigMap"], "nothing of the proof is kept in the cluster"


def _plant_marker_configmap(cluster, gate):
    """What anyone allowed to write a ConfigMap in the probe namespace could plant: the fingerprint of the lab as it
    is now (the gate's own digest: its inputs are readable), as the gate kept it before issue 34."""
    nodes = [n for n in cluster.list("v1", "Node") if kai_gpu.node_gpus(n) > 0]
    cluster._store("v1", "ConfigMap", {"metadata": {"name": "kai-lab-ready", "namespace": PROBE_NS}, "data": {
        "fingerprint": readiness_links.current_fingerprint(gate, nodes), "proven_at": "2026-12-01T10:00:00Z"}})


def test_a_planted_marker_configmap_does_not_skip_the_probes(tmp_path):
    cluster = LabCluster()
    gate, _ = _gate(cluster, tmp_path)
    _plant_marker_configmap(cluster, gate)
    result = gate.run()
    assert result["probed"] is True
    assert _statuses(result) == {"binder": "passed", "gpu_pod": "passed", "fraction": "passed",
                                 "image": "not applicable"}


@pytest.mark.parametrize("spoil", ["file writable by others", "file of another user", "directory writable by others",
                                   "a link to a good one", "not JSON"])
def test_a_marker_file_others_could_have_written_is_not_believed(tmp_path, spoil):
    cluster = LabCluster()
    _gate(cluster, tmp_path)[0].run()
    state = tmp_path / "state"
    path = state / readiness_marker.MARKER_FILE
    if spoil == "file writable by others":
        path.chmod(0o666)
    elif spoil == "file of another user":
        os.chown(str(path), 4242, 4242)
    elif spoil == "directory writable by others":
        state.chmod(0o777)
    elif spoil == "a link to a good one":
        good = tmp_path / "good.json"
        path.rename(good)
        path.symlink_to(good)
    else:
        path.write_text("{")
    assert readiness_marker.read(str(state)) == (None, None)
    cluster.created.clear()
    assert _gate(cluster, tmp_path)[0].run()["probed"] is True


def test_without_a_state_directory_the_gate_always_probes(tmp_path):
    cluster = LabCluster()
    _gate(cluster, tmp_path, state_dir=None)[0].run()
    assert _gate(cluster, tmp_path, state_dir=None)[0].run()["probed"] is True
    assert not (tmp_path / "state").exists()


def test_a_restarted_process_invalidates_the_proof(tmp_path):
    pid_file = tmp_path / "fake-gpu-operator.pid"
    pid_file.write_text("999999999\n")  # no such process: identity "dead"
    cluster = LabCluster()
    _gate(cluster, tmp_path, identity_pid_files=[str(pid_file)])[0].run()
    pid_file.write_text("1\n")  # now a live process (pid 1)
    assert _gate(cluster, tmp_path, identity_pid_files=[str(pid_file)])[0].run()["probed"] is True


# --- each broken link is named ----------------------------------------------------


def test_binder_without_fake_gpu_nodes_is_named_before_any_probe(tmp_path):
    cluster = LabCluster(node=_node())
    args = [a for a in SIM_BINDER_ARGS if a != "--fake-gpu-nodes"]
    gate, clock = _gate(cluster, tmp_path, binder_args=args)
    with pytest.raises(GateFailure) as failure:
        gate.run()
    assert failure.value.link == "binder"
    assert "without --fake-gpu-nodes" in str(failure.value)
    assert "labelled nodes: kai-lab-vm" in str(failure.value)
    assert cluster.created == []
    assert clock.now == 1000.0


def test_k3s_binder_deployment_without_the_flag_points_at_the_node_label(tmp_path):
    node = _node()
    node["metadata"]["labels"] = {}
    cluster = LabCluster(node=node, binder_args=["--scheduler-name=kai-scheduler"])
    with pytest.raises(GateFailure) as failure:
        _gate(cluster, tmp_path, sim=False)[0].run()
    assert failure.value.link == "binder"
    assert "run.ai/fake.gpu=true" in str(failure.value) and "labelled nodes: none" in str(failure.value)


def test_a_binder_that_is_not_running_is_named(tmp_path):
    gate, _ = _gate(LabCluster(), tmp_path, read_cmdline=lambda pid: None)
    with pytest.raises(GateFailure) as failure:
        gate.run()
    assert failure.value.link == "binder" and "not running" in str(failure.value)


def test_binder_giving_up_on_the_annotation_ends_the_wait_early(tmp_path):
    cluster = LabCluster(annotate=False, binder_gives_up_after=5)
    gate, clock = _gate(cluster, tmp_path, timeout=180)
    with pytest.raises(GateFailure) as failure:
        gate.run()
    assert failure.value.link == "fraction"
    assert "BindingError" in str(failure.value) and kai_gpu.RESERVATION_GPU_ANNOTATION in str(failure.value)
    assert clock.now - 1000.0 < 10
    assert cluster.probe_pods_left() == []


def test_a_binding_error_left_by_an_earlier_probe_does_not_fail_a_working_lab(tmp_path):
    cluster = LabCluster()
    cluster._store("v1", "Event", {
        "metadata": {"name": "old.binding", "namespace": PROBE_NS},
        "involvedObject": {"kind": "Pod", "name": readiness_probes.FRACTION_PROBE, "namespace": PROBE_NS, "uid": "old-uid"},
        "reason": "BindingError", "message": "failed waiting for GPU reservation pod to allocate: x"})
    cluster.annotate = False
    original = cluster._advance

    def annotate_late(name, calls=[0]):
        calls[0] += 1
        cluster.annotate = calls[0] > 6
        original(name)

    cluster._advance = annotate_late
    result = _gate(cluster, tmp_path)[0].run()
    assert _statuses(result)["fraction"] == "passed"


def test_a_probe_bound_into_a_group_being_removed_is_created_again(tmp_path):
    """The sim's race: the probe bound into the GPU group of a reservation pod the
    binder was deleting; the gate had waited its whole time for a reservation pod
    that never came."""
    cluster = LabCluster(orphan_first=1)
    gate, clock = _gate(cluster, tmp_path, timeout=180)
    result = gate.run()
    assert _statuses(result)["fraction"] == "passed"
    assert cluster.created.count(readiness_probes.FRACTION_PROBE) == 2
    assert any("bound into GPU group dying-group-1" in line and "creating the probe again" in line
               for line in gate.progress)
    # A few seconds lost, not the gate's time limit.
    assert clock.now - 1000.0 < 15
    assert cluster.probe_pods_left() == []


def test_a_probe_bound_into_removed_groups_again_and_again_is_named(tmp_path):
    cluster = LabCluster(orphan_first=10)
    gate, clock = _gate(cluster, tmp_path, timeout=180)
    with pytest.raises(GateFailure) as failure:
        gate.run()
    assert failure.value.link == "fraction"
    assert "3 times into a GPU group whose reservation pod was gone" in str(failure.value)
    assert "dying-group-1, dying-group-2, dying-group-3" in str(failure.value)
    assert clock.now - 1000.0 < 40
    assert cluster.probe_pods_left() == []


def test_missing_reservation_annotation_is_named_within_the_time_limit(tmp_path):
    cluster = LabCluster(annotate=False)
    gate, clock = _gate(cluster, tmp_path, timeout=20)
    with pytest.raises(GateFailure) as failure:
        gate.run()
    message = str(failure.value)
    assert failure.value.link == "fraction"
    assert "gpu-reservation-kai-lab-vm-probe" in message and kai_gpu.RESERVATION_GPU_ANNOTATION in message
    assert "resourceReservationNamespace" in message
    assert clock.now - 1000.0 <= 20 + SCHEDULING_SLACK
    assert cluster.probe_pods_left() == []
    # The wait showed how it moved, with seconds.
    assert any("reservation pod" in line for line in gate.progress)


class BinderHeldCluster(LabCluster):
    """KAI's binder holding the 1-GPU probe's binding while it waits for a fraction probe's reservation
    pod to be annotated: on the sim (KAI v0.12.0, fake GPU operator stopped) the 1-GPU probe was bound
    only after 41.3 s, and once not within the link's deadline."""

    def _advance(self, name):
        fraction = self.objects.get(self._key("v1", "Pod", readiness_probes.FRACTION_PROBE, PROBE_NS))
        if name == readiness_probes.GPU_PROBE and fraction is not None and not self.annotate:
            return
        super()._advance(name)


def test_a_missing_annotation_is_named_as_such_when_the_binder_holds_the_gpu_probe_meanwhile(tmp_path):
    cluster = BinderHeldCluster(annotate=False)
    gate, clock = _gate(cluster, tmp_path, timeout=20)
    with pytest.raises(GateFailure) as failure:
        gate.run()
    assert failure.value.link == "fraction", str(failure.value)
    assert kai_gpu.RESERVATION_GPU_ANNOTATION in str(failure.value)
    assert [(link["link"], link["status"]) for link in gate.links][:2] == [("binder", "passed"), ("gpu_pod", "passed")]
    assert cluster.probe_pods_left() == []


@pytest.mark.parametrize("timeout", [20, 45, 180])
def test_the_whole_gate_with_a_reservation_pod_that_stays_ends_by_its_deadline(tmp_path, timeout):
    # Sim, fake GPU operator stopped: nothing annotates the reservation pod,
    # and the binder keeps it past the gate's end (its own 40 s wait). The
    # links and the cleanup share the one deadline (the mistakes scenario
    # measured 55.1 s against a 45 s limit plus 10 s of cleanup).
    clock = Clock()
    cluster = SlowLabCluster(clock, annotate=False, reservation_linger=10 ** 6)
    gate, _ = _gate(cluster, tmp_path, clock=clock, timeout=timeout)
    with pytest.raises(GateFailure) as failure:
        gate.run()
    assert failure.value.link == "fraction"
    assert clock.now - 1000.0 <= timeout + SCHEDULING_SLACK
    assert "removing its probe pods" in str(failure.value)
    assert any("probe pods still terminating" in line for line in gate.progress)


def test_unscheduled_gpu_pod_is_named_with_what_kai_said(tmp_path):
    cluster = LabCluster(schedule=False)
    gate, clock = _gate(cluster, tmp_path, timeout=10)
    with pytest.raises(GateFailure) as failure:
        gate.run()
    assert failure.value.link == "gpu_pod"
    assert "1-GPU probe pod" in str(failure.value) and "not bound" in str(failure.value)
    assert clock.now - 1000.0 <= 10 + SCHEDULING_SLACK


def test_image_that_cannot_be_pulled_on_a_vm_is_named(tmp_path):
    cluster = LabCluster(binder_args=["--fake-gpu-nodes"], pull=False, node=_node(images=()))
    with pytest.raises(GateFailure) as failure:
        _gate(cluster, tmp_path, sim=False, timeout=10)[0].run()
    assert failure.value.link == "image"
    assert "ImagePullBackOff" in str(failure.value) and "k3s_airgap_dir" in str(failure.value)


# --- a solved lab is not disturbed ----------------------------------------------------


def _gpu_holder(name, gpus):
    pod = base.gpu_pod(name, "kai-lab", "research", gpus=gpus)
    pod["spec"]["nodeName"] = "kai-lab-vm"
    pod["status"] = {"phase": "Running"}
    return pod


def test_all_gpus_held_skips_the_gpu_probes_and_says_why(tmp_path):
    holders = [_gpu_holder("tr-%d" % i, 1) for i in range(4)]
    cluster = LabCluster(pods=holders)
    result = _gate(cluster, tmp_path)[0].run()
    assert _statuses(result) == {"binder": "passed", "gpu_pod": "skipped", "fraction": "skipped",
                                 "image": "not applicable"}
    assert "every GPU is held" in result["links"][1]["detail"]
    assert cluster.created == [readiness_probes.CPU_PROBE]
    # Not recorded as proved: the next provision probes again.
    assert readiness_marker.read(str(tmp_path / "state")) == (None, None)
    assert not [c for c in cluster.writes if c[1] == "ConfigMap"]


class DeepPodCluster(LabCluster):
    """A LabCluster with a pod in default nested 1,500 levels deep (issue 34, row 1): the API server's every
    list holding it is out of the client's bounds, and so is a GET of it; its Table of names is not."""

    DEEP = ("cannot %s: Pod default/deep nests more than 100 levels deep (at metadata.managedFields[]."
            "fieldsV1.f:a...), more than the lab reads in any object. Delete that object or remove its deep field "
            "(kubectl delete pod deep -n default)")

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None):
        if kind == "Pod" and namespace in (None, "default"):
            raise AnswerTooDeep(self.DEEP % ("list Pod in %s" % (namespace or "every namespace")), 100)
        if kind == "Namespace":
            return [{"metadata": {"name": name}} for name in ("default", "kai-lab", PROBE_NS, RES_NS)]
        return super().list(api_version, kind, namespace, label_selector, field_selector)

    def request(self, method, path, query=None, what=None, kind=None, accept=None, **kwargs):
        assert path.startswith("/api/v1/namespaces/default/pods")
        if accept == readable.TABLE:
            return {"kind": "Table", "columnDefinitions": [{"name": "Name", "format": "name"}],
                    "rows": [{"cells": ["deep"]}]}
        raise AnswerTooDeep(self.DEEP % what, 100)


def test_a_deep_pod_in_another_namespace_is_named_not_counted_and_the_gate_passes(tmp_path):
    cluster = DeepPodCluster(pods=[_gpu_holder("tr-%d" % i, 1) for i in range(3)])
    result = _gate(cluster, tmp_path)[0].run()
    assert _statuses(result) == {"binder": "passed", "gpu_pod": "passed", "fraction": "passed",
                                 "image": "not applicable"}
    # The three holders in kai-lab are counted: one GPU free, so the probes run one after the other.
    assert cluster.created == [readiness_probes.GPU_PROBE, readiness_probes.FRACTION_PROBE]
    notes = [line for line in result["progress"] if "pod default/deep" in line]
    assert len(notes) == 1 and notes[0].endswith(
        "pod default/deep is not counted among those holding GPUs: Pod default/deep nests more than 100 levels "
        "deep (at metadata.managedFields[].fieldsV1.f:a...), more than the lab reads in any object. Delete that "
        "object or remove its deep field (kubectl delete pod deep -n default)")


def test_one_free_gpu_runs_the_probes_one_after_the_other(tmp_path):
    cluster = LabCluster(pods=[_gpu_holder("tr-%d" % i, 1) for i in range(3)])
    result = _gate(cluster, tmp_path)[0].run()
    assert _statuses(result)["fraction"] == "passed"
    deletes = [c[2] for c in cluster.calls if c[0] == "delete"]
    assert deletes[0] == readiness_probes.GPU_PROBE
    applies = [c[2] for c in cluster.calls if c[0] == "apply" and c[1] == "Pod"]
    assert applies == [readiness_probes.GPU_PROBE, readiness_probes.FRACTION_PROBE]
    # The GPU probe was gone before the fraction probe was created.
    order = [(c[0], c[2]) for c in cluster.calls if c[0] in ("apply", "delete") and c[1] == "Pod"]
    assert order.index(("delete", readiness_probes.GPU_PROBE)) < order.index(("apply", readiness_probes.FRACTION_PROBE))


def test_check_mode_writes_nothing(tmp_path):
    cluster = LabCluster()
    cluster._store("v1", "Namespace", {"metadata": {"name": PROBE_NS}})
    result = _gate(cluster, tmp_path, check_mode=True)[0].run()
    assert cluster.writes == []
    assert _statuses(result)["gpu_pod"] == "skipped"


# --- pure parts ---------------------------------------------------------------------


@pytest.mark.parametrize(("args", "expected"), [
    (["--fake-gpu-nodes"], True), (["--fake-gpu-nodes=true"], True), (["--fake-gpu-nodes=false"], False),
    (["--fake-gpu-nodes-extra"], False), ([], False), (None, False)])
def test_fake_gpu_flag(args, expected):
    assert readiness_probes.has_fake_gpu_nodes(args) is expected


@pytest.mark.parametrize(("image", "reported"), [
    ("ubuntu:22.04", "docker.io/library/ubuntu:22.04"),
    ("ubuntu", "docker.io/library/ubuntu:latest"),
    ("ghcr.io/run-ai/fake-gpu-operator/status-updater:0.2.0", "ghcr.io/run-ai/fake-gpu-operator/status-updater:0.2.0"),
])
def test_image_names_match_what_containerd_reports(image, reported):
    assert readiness_probes.node_has_image(_node(images=[reported]), image)
    assert not readiness_probes.node_has_image(_node(images=["docker.io/library/ubuntu:24.04"]), image)


def test_probe_image_is_the_lab_pods_image():
    defaults = yaml.safe_load((ROOT / "roles" / "kai_lab" / "defaults" / "main.yml").read_text())
    assert defaults["kai_lab_pod_image"] == podgroup.p1("kai-lab")["spec"]["containers"][0]["image"]


# --- the task file, per target ------------------------------------------------------


def _ready_args(target):
    task = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "ready.yml").read_text())[0]
    variables = trust(DataLoader().load_from_file(str(ROOT / "roles" / "kai_lab" / "defaults" / "main.yml")))
    variables.update(trust(DataLoader().load_from_file(str(ROOT / "roles" / "kai_lab" / "vars" / "main.yml"))))
    variables.update(kai_lab_target=target, kai_lab_sim_state_dir="/state")
    # The gate's pid directories are role vars (tasks/sim_state_record.yml uses them too).
    variables.update(trust(DataLoader().load_from_file(str(ROOT / "roles" / "kai_lab" / "vars" / "main.yml"))))
    templar = Templar(loader=DataLoader(), variables=variables)
    args = {}
    for key, value in task["gsb.kai_lab.kai_lab_ready"].items():
        if target == "sim" and key == "identity_pid_files":
            continue  # a fileglob lookup of the running sim's pid files
        try:
            args[key] = templar.template(trust_as_template(value) if isinstance(value, str) else value)
        except AnsibleValueOmittedError:
            continue
    return args


def test_sim_reads_the_binder_process_and_pulls_nothing():
    args = _ready_args("sim")
    assert args["binder_pid_file"] == "/state/kai/pids/binder.pid"
    assert args["state_dir"] == "/state"  # the gate's fingerprint: in the sim's private state directory
    assert args["pull_images"] is False
    assert args["probe_namespace"] == "kai-lab-probe" != "kai-lab"
    # The version is read from the record the sim's provisioning writes, never given.
    assert args["kai_record"] == "/state/kai/kai-version.json"
    assert "kai_version" not in args


def test_k3s_reads_the_binder_deployment_and_fingerprints_the_pods():
    args = _ready_args("k3s")
    assert "binder_pid_file" not in args
    assert args["pull_images"] is True
    assert args["identity_namespaces"] == ["kai-scheduler", "gpu-operator"]
    assert args["image"] == "ubuntu:22.04"
    assert args["state_dir"] == "/var/lib/gsb-kai-lab"  # root's, beside the grader's record
    # No record on the VM: the module reads the version through the API in KAI's namespace.
    assert "kai_record" not in args and "kai_version" not in args


def _ready_async(**variables):
    task = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "ready.yml").read_text())[0]
    templar = Templar(loader=DataLoader(), variables=dict({"kai_lab_ready_timeout": 180, "ansible_check_mode": False},
                                                          **variables))
    return task["poll"], templar.template(trust_as_template(task["async"]))


def test_the_gate_runs_in_the_background_only_when_asked_and_never_in_check_mode():
    assert _ready_async() == (0, 0)  # no job: ready.yml waits for the gate itself and shows it
    assert _ready_async(kai_lab_ready_in_background=True) == (0, 240)  # its timeout and a minute
    assert _ready_async(kai_lab_ready_in_background=True, ansible_check_mode=True) == (0, 0)


def test_provision_installs_kai_lab_while_the_sim_gate_runs_then_waits_for_it():
    provision = yaml.safe_load((ROOT / "playbooks" / "provision.yml").read_text())[1]["tasks"]
    steps = next(t for t in provision if "block" in t)["block"]
    entries = [(t["ansible.builtin.include_role"]["name"], t["ansible.builtin.include_role"].get("tasks_from"))
               for t in steps]
    gate, cli, wait = (entries.index(("gsb.kai_lab.kai_lab", name)) for name in ("ready", "cli", "ready_wait"))
    assert (entries.index(("gsb.kai_lab.kai_lab", "learner_workdir")) < entries.index(("gsb.kai_lab.kai_lab", "learner_namespace"))
            < gate < cli < wait)
    assert steps[gate]["vars"]["kai_lab_ready_in_background"] == "{{ kai_lab_target == 'sim' }}"
    # A gate run at once (k3s, check mode) is shown by ready.yml; only a started job is waited for.
    assert steps[wait]["when"] == "kai_lab_ready.ansible_job_id is defined"
    ready = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "ready.yml").read_text())
    assert ready[1]["ansible.builtin.include_tasks"] == "ready_wait.yml"
    assert ready[1]["when"] == "kai_lab_ready.ansible_job_id is not defined"


def test_the_gate_started_in_the_background_and_its_wait_use_one_job_directory_in_the_state_directory():
    # A default ~/.ansible_async is expanded apart by the launch and the wait when HOME is not
    # the account's home (test_sim_cluster_background_create.py, the same for kwokctl's job).
    launch = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "ready.yml").read_text())[0]
    wait = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "ready_wait.yml").read_text())[0]
    assert wait["ansible.builtin.async_status"]["jid"] == "{{ kai_lab_ready.ansible_job_id }}"
    assert wait["until"] == "kai_lab_ready_job is finished" and wait["become"] == launch["become"]
    variables = trust(DataLoader().load_from_file(str(ROOT / "roles" / "kai_lab" / "vars" / "main.yml")))
    variables.update(kai_lab_sim_state_dir="/home/learner/.local/state/gsb-kai-lab/sim")
    templar = Templar(loader=DataLoader(), variables=variables)
    dirs = {templar.template(trust_as_template(task["vars"]["ansible_async_dir"])) for task in (launch, wait)}
    assert dirs == {"/home/learner/.local/state/gsb-kai-lab/sim/async"}

