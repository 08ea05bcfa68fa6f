"""Re-provision of a sim lab that is up and unchanged is a health check
(plugins/module_utils/targets/sim/state.py, provision_record.py and
differences.py; module kai_lab_sim_state).

The record is the one a full provision of the sim wrote
(fixtures/sim-provision/provisioned.json, KAI v0.12.0, port base 17500),
the objects those the sim's API server listed right after it
(fixtures/sim-provision/provisioned-objects.json; see its README). Each test changes one thing the
roles would change back and checks that the decision says so, first, in
words naming it; an unchanged lab gives one "up, unchanged" line per
component."""

from __future__ import annotations

import copy
import datetime
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleValueOmittedError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from conftest import FIXTURES, load_json

import fake_api

from ansible_collections.gsb.kai_lab.plugins.module_utils.gate import marker as readiness_marker
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import render as kai_profile_render
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import differences as sim_differences
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import provision_record as sim_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import state as sim_state

ROOT = Path(__file__).resolve().parents[2]

RECORDED = FIXTURES / "sim-provision"
TODAY = datetime.datetime(2026, 12, 1, 21, 0, tzinfo=datetime.timezone.utc)


@pytest.fixture
def recorded():
    return load_json(RECORDED / "provisioned.json")


def listed():
    """path -> items, as the sim's API server listed them after the provision."""
    return load_json(RECORDED / "provisioned-objects.json")


class Lists(object):
    """The one request snapshot() makes per kind (and namespace), answered from recorded lists."""

    def __init__(self, lists):
        self.lists = lists
        self.paths = []

    def request(self, method, path, query=None, body=None, content_type=None, **kwargs):
        assert method == "GET"
        self.paths.append(path)
        return copy.deepcopy(fake_api.recorded_answer(self.lists, path))


def now_of(recorded):
    now = copy.deepcopy(recorded)
    for key in ("version", "spec", "recorded_at"):
        now.pop(key, None)
    return now


def component(now, name):
    return [c for c in now["components"] if c["name"] == name][0]


def test_the_recorded_lab_unchanged_is_one_line_per_component(recorded):
    now = now_of(recorded)
    assert sim_differences.differences(recorded, now, 30, TODAY) == []
    lines = sim_differences.component_lines(now, [])
    assert "kube-apiserver: up, unchanged" in lines and "binder: up, unchanged" in lines
    assert len(lines) == len(recorded["spec"]["components"]) == 12


def test_no_record_is_the_full_path():
    assert sim_differences.differences(None, {}, 30, TODAY) == [
        "no record of a completed full provision in the state directory"]


def test_other_settings_or_collection_come_first(recorded):
    now = now_of(recorded)
    now["inputs"] = "0" * 64
    component(now, "binder")["alive"] = False
    found = sim_differences.differences(recorded, now, 30, TODAY)
    assert found[0] == "the lab's settings or the collection changed since the last full provision"
    assert found[1].startswith("binder: not running")


def test_a_killed_component_is_named(recorded):
    now = now_of(recorded)
    binder = component(now, "binder")
    binder.update(alive=False, argv=None, start=None)
    found = sim_differences.differences(recorded, now, 30, TODAY)
    assert found == ["binder: not running (pid file %s)" % binder["pid_file"]]
    assert "binder: not running (pid file %s)" % binder["pid_file"] in sim_differences.component_lines(now, found)
    assert "scheduler: up, unchanged" in sim_differences.component_lines(now, found)


def test_a_component_restarted_outside_provision_is_named(recorded):
    now = now_of(recorded)
    component(now, "kube-scheduler").update(pid=99999, start="1")
    assert sim_differences.differences(recorded, now, 30, TODAY)[0].startswith(
        "kube-scheduler: restarted since the last provision (pid 99999, was ")


def test_a_changed_flag_names_the_argument(recorded):
    now = now_of(recorded)
    scheduler = component(now, "scheduler")
    index = len(scheduler["argv"]) - 1
    rendered = scheduler["argv"][index]
    scheduler["argv"][index] = "--v=9"
    assert sim_differences.differences(recorded, now, 30, TODAY) == [
        "scheduler: runs with other arguments than provision renders (argument %d is '--v=9', provision renders %r)"
        % (index, rendered)]


# The settings the fixture's sim ran with (roles/kai_scheduler/vars/main.yml kai_scheduler_sim_settings).
SIM_SETTINGS = {"scheduler_name": "kai-scheduler", "namespace": "kai-scheduler",
                "reservation_namespace": "kai-resource-reservation", "queue_label": "kai.scheduler/queue",
                "gpu_sharing": True, "runtime_class": "", "sim_dir": "/tmp/wt-ci-sim/kai", "host": "127.0.0.1",
                "ports": kai_profiles.sim_ports(17500)}


# The fixture's sim was provisioned from a branch whose profile did not yet
# give the scheduler this flag (it came with commit a869cda).
NEWER_FLAG = "--enable-profiler=false"


def rendered_args(as_recorded=True, **settings):
    """What roles/kai_scheduler/tasks/sim_rendered.yml renders: component name -> arguments
    (as_recorded: without the flag the fixture's profile lacked)."""
    components = kai_profile_render.component_args("v0.12.0", dict(SIM_SETTINGS, **settings))
    args = dict((c["name"], c["args"]) for c in components)
    if as_recorded:
        args["scheduler"] = [a for a in args["scheduler"] if a != NEWER_FLAG]
    return args


def test_what_the_profile_renders_for_the_recorded_settings_is_what_runs(recorded):
    now = now_of(recorded)
    assert sim_differences.differences(recorded, now, 30, TODAY, rendered=rendered_args()) == []
    # The profile of today adds a flag to the scheduler: a collection upgrade is named by it.
    assert sim_differences.differences(recorded, now, 30, TODAY, rendered=rendered_args(as_recorded=False)) == [
        "scheduler: runs without %s, which provision renders" % NEWER_FLAG]


def test_a_setting_that_changes_a_flag_names_the_component_and_the_flag_first(recorded):
    # kai_scheduler_gpu_sharing=false: the settings changed, and what that
    # does is admission's flag (said first, with the settings line after it).
    now = now_of(recorded)
    now["inputs"] = "0" * 64
    found = sim_differences.differences(recorded, now, 30, TODAY, rendered=rendered_args(gpu_sharing=False))
    assert found == ["admission: runs --gpu-sharing-enabled=true, provision renders --gpu-sharing-enabled=false",
                     "the lab's settings or the collection changed since the last full provision"]
    assert found[0] in sim_differences.component_lines(now, found)
    assert "binder: up, unchanged" in sim_differences.component_lines(now, found)


def test_a_flag_the_profile_adds_or_drops_is_named(recorded):
    rendered = rendered_args()
    rendered["binder"] = rendered["binder"] + ["--qps=20"]
    rendered["queuecontroller"] = [a for a in rendered["queuecontroller"] if not a.startswith("--enable-webhook")]
    found = sim_differences.differences(recorded, now_of(recorded), 30, TODAY, rendered=rendered)
    assert found == ["binder: runs without --qps=20, which provision renders",
                     "queuecontroller: runs --enable-webhook=false, which provision no longer renders"]


def test_reordered_arguments_are_named_by_position(recorded):
    rendered = rendered_args()
    rendered["podgrouper"] = rendered["podgrouper"][1:] + rendered["podgrouper"][:1]
    found = sim_differences.differences(recorded, now_of(recorded), 30, TODAY, rendered=rendered)
    assert found == ["podgrouper: runs with other arguments than provision renders (argument 1 is "
                     "'--scheduler-name=kai-scheduler', provision renders %r)" % rendered["podgrouper"][0]]


def test_a_stopped_component_is_not_compared_with_what_is_rendered(recorded):
    now = now_of(recorded)
    admission = component(now, "admission")
    admission.update(alive=False, argv=None, start=None)
    found = sim_differences.differences(recorded, now, 30, TODAY, rendered=rendered_args(gpu_sharing=False))
    assert found == ["admission: not running (pid file %s)" % admission["pid_file"]]


def test_a_rebuilt_binary_is_named(recorded):
    now = now_of(recorded)
    component(now, "kube-apiserver")["binary_on_disk"] = False
    found = sim_differences.differences(recorded, now, 30, TODAY)
    assert found[0].startswith("kube-apiserver: runs a binary that is no longer ")
    now = now_of(recorded)
    component(now, "admission")["binary_sha256"] = "f" * 64
    assert sim_differences.differences(recorded, now, 30, TODAY)[0].startswith("admission: binary ")


def test_a_component_that_stopped_listening_is_named(recorded):
    now = now_of(recorded)
    apiserver = component(now, "kube-apiserver")
    apiserver["listening"] = False
    assert sim_differences.differences(recorded, now, 30, TODAY) == [
        "kube-apiserver: not listening on 127.0.0.1:%d" % apiserver["port"]]


def test_an_edited_kwok_yaml_is_named(recorded):
    now = now_of(recorded)
    path = [p for p in now["files"] if p.endswith("/kwok.yaml")][0]
    now["files"][path]["sha256"] = "0" * 64
    assert sim_differences.differences(recorded, now, 30, TODAY) == [
        "file %s: content differs from what the last provision wrote" % path]


def test_a_certificate_close_to_its_end_is_named(recorded):
    now = now_of(recorded)
    path = sorted(now["certs"])[0]
    now["certs"][path] = "2026-12-20T00:00:00Z"
    assert sim_differences.differences(recorded, now, 30, TODAY) == [
        "certificate %s expires 2026-12-20T00:00:00Z, within kai_lab_cert_renew_days (30)" % path]
    assert sim_differences.differences(recorded, now, 10, TODAY) == []


def test_an_aged_certificate_is_named_before_its_file_by_the_days_its_role_renews_it_by(recorded):
    # As roles/kai_scheduler records it: the days and the setting it renews the certificate by.
    path = [p for p in recorded["certs"] if "/serving-certs/" in p][0]
    recorded["spec"]["certs"] = [{"path": p, "renew_days": 60, "setting": "kai_scheduler_cert_renew_days"}
                                 if p == path else p for p in recorded["spec"]["certs"]]
    now = now_of(recorded)
    now["certs"][path] = "2027-01-15T00:00:00Z"
    now["files"][path]["sha256"] = "0" * 64
    assert sim_differences.differences(recorded, now, 30, TODAY) == [
        "certificate %s expires 2027-01-15T00:00:00Z, within kai_scheduler_cert_renew_days (60)" % path,
        "file %s: content differs from what the last provision wrote" % path]
    # A certificate the record gives no days of: the module's cert_renew_days.
    etcd = [p for p in recorded["certs"] if p != path][0]
    now = now_of(recorded)
    now["certs"][etcd] = "2027-01-15T00:00:00Z"
    assert sim_differences.differences(recorded, now, 30, TODAY) == []
    assert sim_differences.differences(recorded, now, 50, TODAY) == [
        "certificate %s expires 2027-01-15T00:00:00Z, within kai_lab_cert_renew_days (50)" % etcd]


def test_certificates_given_with_their_days_are_read_by_path(recorded):
    spec = sim_record.normalize_spec({"certs": ["/a/tls.crt", {"path": "/b/tls.crt", "renew_days": 7, "setting": "x"}]})
    assert spec["certs"] == [{"path": "/a/tls.crt"}, {"path": "/b/tls.crt", "renew_days": 7, "setting": "x"}]

    class Certs(sim_state.System):
        def cert_not_after(self, path):
            return {"/a/tls.crt": "2030-01-01T00:00:00Z"}.get(path)

    assert sim_state.machine_state(spec, Certs())["certs"] == {"/a/tls.crt": "2030-01-01T00:00:00Z", "/b/tls.crt": None}


def test_the_gate_fingerprint_changed_is_named(recorded):
    now = now_of(recorded)
    now["fingerprint"]["current"] = "1" * 64
    assert sim_differences.differences(recorded, now, 30, TODAY) == [
        "the readiness gate's fingerprint changed (a process, a node's GPUs or the image)"]


def test_a_solved_lab_whose_gate_kept_an_older_proof_is_unchanged(recorded):
    # Every GPU held: the full provision's gate proved with a CPU pod and
    # left the fingerprint of an earlier pass (molecule default,
    # after a killed binder on the solved lab).
    recorded["fingerprint"]["proven"] = "2" * 64
    now = now_of(recorded)
    assert sim_differences.differences(recorded, now, 30, TODAY) == []


def test_the_gates_proof_is_read_from_its_file_not_from_a_configmap(recorded, tmp_path):
    """A ConfigMap kai-lab-ready planted in the probe namespace is not the gate's proof (issue 34, row 7)."""
    lists = listed()
    planted = [c for c in lists["/api/v1/configmaps"] if c["metadata"]["name"] == "kai-lab-ready"][0]
    planted["data"]["fingerprint"] = "f" * 64
    gate = {"namespace": "kai-lab-probe", "pid_files": [], "image": "ubuntu:22.04", "state_dir": str(tmp_path)}
    readiness_marker.write(str(tmp_path), "a" * 64, "2026-12-01T21:00:00Z")
    spec = dict(recorded["spec"], objects=[], kinds=[], crds={}, fingerprint=gate)
    cluster = Lists(lists)
    state = sim_state.cluster_state(spec, cluster, None)
    assert state["fingerprint"]["proven"] == "a" * 64
    assert cluster.paths == ["/api/v1/nodes"], "no ConfigMap of any namespace is read"


# ---- the objects, as the API server lists them --------------------------------------


def objects_now(recorded, lists):
    spec = recorded["spec"]
    cluster = Lists(lists)
    now = now_of(recorded)
    state = sim_state.cluster_state(dict(spec, fingerprint=None), cluster, None)
    now.update(objects=state["objects"], kinds=state["kinds"], crds=state["crds"])
    return now, cluster


def test_the_listed_objects_are_what_the_provision_applied_with_one_list_per_kind(recorded):
    now, cluster = objects_now(recorded, listed())
    assert sim_differences.differences(recorded, now, 30, TODAY) == []
    assert len(cluster.paths) == len(set(cluster.paths))
    assert "/apis/kai.scheduler/v1/configs" in cluster.paths


def test_status_and_versions_written_by_the_server_are_not_a_change(recorded):
    lists = listed()
    for queue in lists["/apis/scheduling.run.ai/v2/queues"]:
        queue["metadata"]["resourceVersion"] = "999999"
        queue.setdefault("status", {})["allocated"] = {"nvidia.com/gpu": "2"}
    now, _ = objects_now(recorded, lists)
    assert sim_differences.differences(recorded, now, 30, TODAY) == []


def test_an_edited_kai_config_is_named(recorded):
    lists = listed()
    config = lists["/apis/kai.scheduler/v1/configs"][0]
    config["spec"].setdefault("global", {})["replicaCount"] = 2
    now, _ = objects_now(recorded, lists)
    assert sim_differences.differences(recorded, now, 30, TODAY) == [
        "object Config %s: differs from what the last provision applied" % config["metadata"]["name"]]


def test_a_deleted_webhook_is_named(recorded):
    lists = listed()
    webhook = lists["/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"].pop(0)
    now, _ = objects_now(recorded, lists)
    assert sim_differences.differences(recorded, now, 30, TODAY) == [
        "MutatingWebhookConfiguration %s: is missing" % webhook["metadata"]["name"]]


def test_a_crd_applied_from_another_chart_is_named(recorded):
    lists = listed()
    crd = lists["/apis/apiextensions.k8s.io/v1/customresourcedefinitions"][0]
    crd["metadata"]["annotations"][recorded["spec"]["crds"]["annotation"]] = "other"
    now, _ = objects_now(recorded, lists)
    assert sim_differences.differences(recorded, now, 30, TODAY)[0].startswith(
        "CRD %s: carries chart hash other, the last provision applied " % crd["metadata"]["name"])


# ---- this machine: processes, files, inputs -----------------------------------------


@pytest.fixture
def listener(tmp_path):
    """A real process listening on a port, with a pid file as background_process writes it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = ("import socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
            "s.bind(('127.0.0.1', %d)); s.listen(); time.sleep(60)" % port)
    proc = subprocess.Popen([sys.executable, "-c", code])
    pid_file = tmp_path / "listener.pid"
    pid_file.write_text("%d\n" % proc.pid)
    for _ in range(100):
        if sim_state.System().listening(port):
            break
        time.sleep(0.05)
    yield {"name": "listener", "pid_file": str(pid_file), "port": port}, proc
    proc.kill()
    proc.wait()


def test_a_live_process_is_read_as_the_record_keeps_it(listener):
    spec, proc = listener
    state = sim_state.component_state(spec, sim_state.System())
    assert state["alive"] and state["listening"] and state["binary_on_disk"]
    assert state["pid"] == proc.pid and state["argv"][0] == sys.executable
    assert state["binary_sha256"] == sim_state.file_sha256(sys.executable).decode()
    proc.kill()
    proc.wait()
    assert not sim_state.component_state(spec, sim_state.System())["alive"]


def test_the_inputs_digest_follows_settings_and_files_not_caches(tmp_path):
    (tmp_path / "roles").mkdir()
    (tmp_path / "roles" / "main.yml").write_text("a: 1\n")
    paths = [str(tmp_path / "roles")]
    first = sim_record.inputs_digest({"kai_lab_sim_port_base": 17500}, paths)
    assert sim_record.inputs_digest({"kai_lab_sim_port_base": 17500}, paths) == first
    assert sim_record.inputs_digest({"kai_lab_sim_port_base": 17600}, paths) != first
    os.makedirs(str(tmp_path / "roles" / "__pycache__"))
    (tmp_path / "roles" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert sim_record.inputs_digest({"kai_lab_sim_port_base": 17500}, paths) == first
    (tmp_path / "roles" / "main.yml").write_text("a: 2\n")
    assert sim_record.inputs_digest({"kai_lab_sim_port_base": 17500}, paths) != first


def test_the_record_is_private_and_forgotten_on_demand(tmp_path, recorded):
    sim_record.write_record(str(tmp_path), recorded)
    assert oct(os.stat(str(tmp_path / sim_record.RECORD_FILE)).st_mode & 0o777) == "0o600"
    assert sim_record.read_record(str(tmp_path)) == recorded
    assert sim_record.forget_record(str(tmp_path))
    assert sim_record.read_record(str(tmp_path)) is None


def test_an_api_server_that_does_not_answer_comes_after_the_processes(recorded):
    now = now_of(recorded)
    component(now, "kube-apiserver").update(alive=False, argv=None, start=None)
    for key in ("objects", "kinds", "crds", "fingerprint"):
        now.pop(key)
    now["api_error"] = "cannot reach the Kubernetes API server at https://127.0.0.1:17643"
    found = sim_differences.differences(recorded, now, 30, TODAY)
    assert found[0].startswith("kube-apiserver: not running")
    assert found[1] == ("the lab's API server does not answer: cannot reach the Kubernetes API server at "
                        "https://127.0.0.1:17643")


def test_a_binary_unchanged_since_the_record_is_not_read_again_but_one_rewritten_in_place_is(tmp_path):
    binary = tmp_path / "kube-apiserver"
    binary.write_bytes(b"\x7fELF first build")
    system = sim_state.System()
    recorded = {"components": [{"name": "kube-apiserver", "binary": str(binary),
                                "binary_stat": system.file_stat(str(binary)),
                                "binary_sha256": "a" * 64}]}
    # The recorded hash stands for the file while its stat is the recorded one
    # (a deliberately wrong hash shows it is not recomputed)...
    assert sim_state.System(sim_record.known_hashes(recorded)).sha256(str(binary)) == "a" * 64
    # ...and a write into the same inode (new ctime and size) is read again.
    time.sleep(0.01)
    with open(binary, "r+b") as handle:
        handle.write(b"\x7fELF second build, longer")
    assert sim_state.System(sim_record.known_hashes(recorded)).sha256(str(binary)) == (
        sim_state.file_sha256(str(binary)).decode())


def test_a_record_without_binary_stats_gives_no_known_hashes():
    assert sim_record.known_hashes({"components": [{"name": "etcd", "binary": "/x", "binary_sha256": "b" * 64}]}) == {}
    assert sim_record.known_hashes(None) == {}


def test_the_hash_cache_outlives_the_record_and_is_not_trusted_for_a_rewritten_binary(tmp_path):
    """A provision after a teardown (no record) takes a binary's hash from the cache
    beside the build cache while its stat is the cached one."""
    binary = tmp_path / "bin" / "kube-apiserver"
    binary.parent.mkdir()
    binary.write_bytes(b"\x7fELF first build")
    cache_path = str(tmp_path / "binary-sha256.json")
    system = sim_state.System()
    snapshot = {"components": [{"name": "kube-apiserver", "binary": str(binary),
                                "binary_stat": system.file_stat(str(binary)), "binary_sha256": "c" * 64}]}
    assert sim_record.write_hash_cache(cache_path, {}, snapshot)
    # Written once: the same snapshot again changes nothing.
    assert not sim_record.write_hash_cache(cache_path, sim_record.read_hash_cache(cache_path), snapshot)
    cache = sim_record.read_hash_cache(cache_path)
    assert sim_state.System(sim_record.known_hashes(None, cache)).sha256(str(binary)) == "c" * 64
    time.sleep(0.01)
    binary.write_bytes(b"\x7fELF second build")
    assert sim_state.System(sim_record.known_hashes(None, cache)).sha256(str(binary)) == (
        sim_state.file_sha256(str(binary)).decode())


def test_an_unreadable_hash_cache_is_empty_and_an_unwritable_one_is_only_slower(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    assert sim_record.read_hash_cache(str(tmp_path / "bad.json")) == {}
    assert sim_record.read_hash_cache(str(tmp_path / "missing.json")) == {}
    (tmp_path / "list.json").write_text("[1, 2]")
    assert sim_record.known_hashes(None, sim_record.read_hash_cache(str(tmp_path / "list.json"))) == {}
    snapshot = {"components": [{"binary": "/x", "binary_stat": [1, 2, 3, 4, 5], "binary_sha256": "d" * 64}]}
    assert not sim_record.write_hash_cache(str(tmp_path / "no-such-dir" / "cache.json"), {}, snapshot)



def _record_inputs(**facts):
    task = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "sim_state_record.yml").read_text())[0]
    templar = Templar(loader=DataLoader(), variables=facts)
    args = {}
    for key in ("inputs_digest", "inputs", "input_paths"):
        try:
            args[key] = templar.template(trust_as_template(task["gsb.kai_lab.kai_lab_sim_state"][key]))
        except AnsibleValueOmittedError:
            continue
    return args


def test_the_record_digests_the_settings_the_provision_started_with():
    # A lab that was checked: the check's digest of the settings at the start.
    assert _record_inputs(kai_lab_sim_state_check={"inputs_digest": "abc"}) == {"inputs_digest": "abc"}
    # No state directory, so no check: the settings kept at the start (sim_state.yml), digested by the record.
    start = {"inputs": {"kai_lab_sim_port_base": 16300}, "input_paths": ["/c/roles"]}
    assert _record_inputs(kai_lab_sim_state_check={"skipped": True}, kai_lab_sim_state_start=start) == start
    kept = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "sim_state.yml").read_text())[0]["block"]
    keep = next(t for t in kept if t["name"].startswith("Keep the lab's settings"))
    check = next(t for t in kept if "gsb.kai_lab.kai_lab_sim_state" in t)
    assert keep["when"] == "not kai_lab_sim_state_dir is exists" and check["when"] == "kai_lab_sim_state_dir is exists"
    assert keep["ansible.builtin.set_fact"]["kai_lab_sim_state_start"] == {
        "inputs": check["gsb.kai_lab.kai_lab_sim_state"]["inputs"],
        "input_paths": check["gsb.kai_lab.kai_lab_sim_state"]["input_paths"]}
