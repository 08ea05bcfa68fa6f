"""Drift the learner can cause that the sim's fast path must see (issue 34, rows 2-4):
a CRD edited by hand, webhooks and admission policies, the installed kai-lab, quotas
and limit ranges; and a state check that fails falls back to the full provision.

The record and the lists are those of tests/unit/test_sim_state.py
(fixtures/sim-provision, a full provision of the sim with KAI v0.12.0); each test
changes one thing there and checks that the check names it, and that the full
path the check sends provision down repairs it."""

from __future__ import annotations

import copy
import datetime
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from conftest import FIXTURES, load_json

import fake_api

from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import differences as sim_differences
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import provision_record as sim_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.sim import state as sim_state
from ansible_collections.gsb.kai_lab.plugins.modules import kai_lab_sim_state

ROOT = Path(__file__).resolve().parents[2]
RECORDED = FIXTURES / "sim-provision"
TODAY = datetime.datetime(2026, 12, 1, 21, 0, tzinfo=datetime.timezone.utc)
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


class Lists(object):
    def __init__(self, lists):
        self.lists = lists

    def request(self, method, path, query=None, body=None, content_type=None, **kwargs):
        return copy.deepcopy(fake_api.recorded_answer(self.lists, path))


def watched_kinds():
    """The kinds the record keeps whole besides the webhooks (roles/kai_lab/vars/main.yml), templated with the
    role's defaults (the lab namespace)."""
    raw = yaml.safe_load((ROOT / "roles/kai_lab/vars/main.yml").read_text())["kai_lab_sim_state_watched_kinds"]
    defaults = yaml.safe_load((ROOT / "roles/kai_lab/defaults/main.yml").read_text())
    templar = Templar(loader=DataLoader(), variables={"kai_lab_namespace": defaults["kai_lab_namespace"]})
    kinds = templar.template(trust_as_template(json.dumps(raw)))
    return json.loads(kinds) if isinstance(kinds, str) else kinds


QUOTAS = "/api/v1/resourcequotas"


def quota(when="provisioned"):
    """The lab namespace's quota recorded on the sim (fixtures/sim-provision/quota-kai-lab.json): as provision
    made it, or on the solved lab (its status counting the lab's objects)."""
    return load_json(RECORDED / "quota-kai-lab.json")[when]


def provisioned_lists():
    """What the API server listed after the full provision (provisioned-objects.json), with the lab namespace's
    quota provision now makes (issue 40)."""
    lists = load_json(RECORDED / "provisioned-objects.json")
    lists[QUOTAS] = [quota()]
    return lists


@pytest.fixture
def recorded():
    record = load_json(RECORDED / "provisioned.json")
    # As sim_state_record.yml records now: the watched kinds too, of which provision makes the lab's quota.
    record["spec"]["kinds"] = record["spec"]["kinds"] + watched_kinds()
    for ref in watched_kinds():
        record["kinds"][ref["kind"]] = {}
    record["kinds"]["ResourceQuota"] = {"kai-lab/gsb-kai-lab": sim_state.object_hash(quota())}
    return record


def check(recorded, lists):
    now = copy.deepcopy(recorded)
    for key in ("version", "spec"):
        now.pop(key)
    now.update(sim_state.cluster_state(dict(recorded["spec"], fingerprint=None), Lists(lists), None))
    return sim_differences.differences(recorded, now, 30, TODAY)


def test_the_recorded_lab_with_the_watched_kinds_is_unchanged(recorded):
    assert check(recorded, provisioned_lists()) == []


# ---- row 2: CRDs by their whole spec, webhooks, admission policies --------------------
def test_a_crd_patched_with_a_validation_rule_is_named(recorded):
    lists = provisioned_lists()
    queue = next(c for c in lists[CRDS] if c["metadata"]["name"] == "queues.scheduling.run.ai")
    # kubectl patch crd queues.scheduling.run.ai: the chart's annotation stays, the spec does not.
    queue["spec"]["versions"] = [{"name": "v2", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
        "type": "object", "x-kubernetes-validations": [{"rule": "false", "message": "no queues"}]}}}]
    assert check(recorded, lists) == [
        "CRD queues.scheduling.run.ai: spec differs from what the last provision applied "
        "(edited since: a schema or validation rule)"]


def test_a_record_of_the_older_format_takes_the_full_path(recorded):
    recorded["version"] = 1
    assert check(recorded, provisioned_lists()) == [
        "the record of the last provision is of another format (version 1)"]


def now_of_lists(recorded, lists):
    now = copy.deepcopy(recorded)
    for key in ("version", "spec"):
        now.pop(key)
    now.update(sim_state.cluster_state(dict(recorded["spec"], fingerprint=None), Lists(lists), None))
    return now


def test_the_full_path_sends_the_crds_again_unless_each_is_as_recorded(recorded):
    lists = load_json(RECORDED / "provisioned-objects.json")
    digest = next(iter(recorded["crds"].values()))["hash"]
    # As recorded (whatever else differs): the full path need not send them, while the chart's hash is this one.
    assert sim_differences.crds_as_recorded(recorded, now_of_lists(recorded, lists)) == digest
    queue = next(c for c in lists[CRDS] if c["metadata"]["name"] == "queues.scheduling.run.ai")
    queue["spec"]["versions"] = [{"name": "v2", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
        "type": "object", "x-kubernetes-validations": [{"rule": "false"}]}}}]
    assert sim_differences.crds_as_recorded(recorded, now_of_lists(recorded, lists)) == ""
    assert sim_differences.crds_as_recorded(None, {}) == ""
    assert sim_differences.crds_as_recorded(dict(recorded, version=1), now_of_lists(recorded, lists)) == ""
    assert sim_differences.crds_as_recorded(recorded, {"api_error": "connection refused"}) == ""
    # What the full path then does: module gsb.kai_lab.kai_lab_owned_objects, which replaces a CRD whole with the
    # live resourceVersion (kubernetes.core's force did not: "metadata.resourceVersion: ... must be specified").
    tasks = yaml.safe_load((ROOT / "roles/kai_scheduler/tasks/sim.yml").read_text())
    apply = next(t for t in tasks if t.get("name") == "Apply the chart's CRDs first")
    assert "gsb.kai_lab.kai_lab_owned_objects" in apply
    assert apply["when"] == "kai_lab_sim_state_check.crds_unchanged_hash | default('') != kai_scheduler_crds_hash"


def test_a_webhook_configuration_provision_did_not_make_is_named(recorded):
    lists = provisioned_lists()
    path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    lists[path] = lists.get(path, []) + [{"metadata": {"name": "learner-deny"}, "webhooks": []}]
    assert check(recorded, lists) == ["ValidatingWebhookConfiguration learner-deny: new since the last provision"]


@pytest.mark.parametrize("path, kind, obj", [
    ("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", "ValidatingAdmissionPolicy",
     {"metadata": {"name": "deny-queues"}, "spec": {"validations": [{"expression": "false"}]}}),
    ("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding",
     {"metadata": {"name": "deny-queues"}, "spec": {"policyName": "deny-queues"}}),
    # row 4: the lab namespace's quotas and limit ranges
    ("/api/v1/resourcequotas", "ResourceQuota",
     {"metadata": {"name": "tight", "namespace": "kai-lab"}, "spec": {"hard": {"pods": "0"}}}),
    ("/api/v1/limitranges", "LimitRange",
     {"metadata": {"name": "small", "namespace": "kai-lab"},
      "spec": {"limits": [{"type": "Container", "max": {"cpu": "1m"}}]}}),
])
def test_an_object_of_a_watched_kind_provision_did_not_make_is_named(recorded, path, kind, obj):
    lists = provisioned_lists()
    assert sim_state.list_path("v1" if path.startswith("/api/") else "admissionregistration.k8s.io/v1", kind) == path
    lists[path] = lists.get(path, []) + [obj]
    name = "%s/%s" % (obj["metadata"]["namespace"], obj["metadata"]["name"]) if "namespace" in obj["metadata"] \
        else obj["metadata"]["name"]
    assert check(recorded, lists) == ["%s %s: new since the last provision" % (kind, name)]


# ---- issue 40: provision's own quota ---------------------------------------------------
def test_provisions_own_quota_is_the_one_the_role_renders_and_only_it_changed_or_gone_is_named(recorded):
    from test_learner_access import render
    (rendered,) = [o for o in render() if o["kind"] == "ResourceQuota"]
    for when in ("provisioned", "solved"):
        assert {k: quota(when)[k] for k in ("apiVersion", "kind", "spec")} == {k: rendered[k] for k in (
            "apiVersion", "kind", "spec")}
        assert all(quota(when)["metadata"][k] == v for k, v in rendered["metadata"].items())
    # Counting the lab's objects (its status) is no difference; another quota is (the watched kinds' test).
    lists = provisioned_lists()
    lists[QUOTAS] = [quota("solved")]
    assert quota("solved")["status"] != quota()["status"]
    assert check(recorded, lists) == []
    lists[QUOTAS][0]["spec"]["hard"]["count/pods"] = "0"
    assert check(recorded, lists) == ["ResourceQuota kai-lab/gsb-kai-lab: differs from what the last provision "
                                      "applied"]
    lists[QUOTAS] = []
    assert check(recorded, lists) == ["ResourceQuota kai-lab/gsb-kai-lab: is missing"]


def test_the_record_keeps_the_watched_kinds_and_the_installed_kai_lab():
    task = yaml.safe_load((ROOT / "roles/kai_lab/tasks/sim_state_record.yml").read_text())[0]
    spec = task["gsb.kai_lab.kai_lab_sim_state"]["spec"]
    assert "kai_lab_sim_state_watched_kinds" in spec["kinds"]
    assert "kai_lab_cli_path" in spec["files"] and "kai_lab_cli_config" in spec["files"]
    assert spec["trees"] == ["{{ kai_lab_cli_code_dir }}"]
    assert {k["kind"] for k in watched_kinds()} == {
        "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ResourceQuota", "LimitRange"}


# ---- row 3: the installed kai-lab by content ------------------------------------------
@pytest.fixture
def installed(tmp_path):
    code = tmp_path / "kai-lab-lib" / "0123456789abcdef"
    (code / "ansible_collections").mkdir(parents=True)
    (code / "ansible_collections" / "__init__.py").write_text("")
    (code / "ansible_collections" / "cli.py").write_text("print('kai-lab')\n")
    command = tmp_path / "kai-lab"
    command.write_text("#!/bin/sh\nexec python3 -I ...\n")
    settings = tmp_path / "kai-lab.json"
    settings.write_text('{"namespace": "kai-lab"}\n')
    spec = {"files": [str(command), str(settings)], "trees": [str(code)]}
    record = dict(sim_state.machine_state(spec), version=sim_record.RECORD_VERSION, inputs="d", spec=spec)
    return record, code, command


def now_of(record):
    return dict(sim_state.machine_state(record["spec"]), inputs="d")


def test_the_installed_kai_lab_unchanged_and_its_compiled_files_are_no_difference(installed):
    record, code, _ = installed
    (code / "ansible_collections" / "__pycache__").mkdir()
    (code / "ansible_collections" / "__pycache__" / "cli.cpython-311.pyc").write_bytes(b"\0")
    assert sim_differences.differences(record, now_of(record), 30, TODAY) == []


def test_the_installed_kai_lab_moved_aside_is_named(installed):
    record, code, command = installed
    command.rename(command.with_name("kai-lab.aside"))
    code.rename(code.with_name("aside"))
    assert sim_differences.differences(record, now_of(record), 30, TODAY) == [
        "file %s: is missing" % command, "installed tree %s: is missing" % code]


def test_the_installed_kai_lab_code_edited_is_named_and_unpacked_again(installed):
    record, code, _ = installed
    (code / "ansible_collections" / "cli.py").write_text("print('pass')\n")
    found = sim_differences.differences(record, now_of(record), 30, TODAY)
    assert found == ["installed tree %s: content differs from what the last provision installed" % code]
    tasks = yaml.safe_load((ROOT / "roles/kai_lab/tasks/cli.yml").read_text())
    remove = next(t for t in tasks if t.get("name") == "Remove kai-lab's code changed since it was installed")
    assert remove["ansible.builtin.file"] == {"path": "{{ kai_lab_cli_code_dir }}", "state": "absent"}
    assert "'^installed tree '" in remove["when"]


# ---- a state check that fails: the full path, and why ---------------------------------
class Answer(object):
    """An API server whose every answer is the same (one that is no object)."""

    def __init__(self, value):
        self.value = value

    def request(self, method, path, query=None, body=None, content_type=None, **kwargs):
        return copy.deepcopy(self.value)


class Broken(object):
    def __init__(self, exc):
        self.exc = exc

    def request(self, method, path, query=None, body=None, content_type=None, **kwargs):
        raise self.exc


PARAMS = {"hash_cache": None, "cert_renew_days": 30, "rendered_args": {}}


@pytest.mark.parametrize("cluster, named", [
    (Broken(RecursionError("maximum recursion depth exceeded while decoding a JSON object")), "RecursionError"),
    (Answer(["not an object"]), "AttributeError"),
])
def test_a_state_check_that_fails_falls_back_to_the_full_provision_and_says_why(recorded, cluster, named):
    found, lines, _ = kai_lab_sim_state.safe_compare(PARAMS, recorded["inputs"], recorded, lambda: cluster)
    assert len(found) == 1 and lines == []
    assert found[0].startswith("the state check failed (%s: " % named)
    assert found[0].endswith(", so the full provision runs") and "\n" not in found[0]


def test_a_kubeconfig_that_cannot_be_read_falls_back_too(recorded):
    def connect():
        raise OSError("[Errno 13] Permission denied: '/root/.kube/config'")
    found, _, _ = kai_lab_sim_state.safe_compare(PARAMS, recorded["inputs"], recorded, connect)
    assert found == ["the state check failed (OSError: [Errno 13] Permission denied: '/root/.kube/config'), "
                     "so the full provision runs"]


def _empties(look, empty, found):
    """Whether reset's "Empty the lab namespace" runs when its look found these ({kind: [objects]})."""
    from role_templating import trust
    from test_learner_access import templar
    results = [{"item": item, "resources": found.get(item["kind"], [])} for item in look["loop"]]
    variables = trust(dict(empty.get("vars") or {}))
    rendered = templar(kai_lab_objects={"results": results}, **variables)
    return rendered.template(trust_as_template("{{ (%s) | bool }}" % empty["when"]))


@pytest.mark.parametrize("found, emptied", [
    ({"ResourceQuota": [quota()]}, False),               # what provision made: a clean lab stays as it is
    ({"ResourceQuota": [quota("solved")]}, False),       # its status counts the lab's objects
    ({}, True),                                          # no quota (a lab made before it): made again with it
    ({"ResourceQuota": [quota(), {"metadata": {"name": "tight"}, "spec": {"hard": {"count/pods": "0"}}}]}, True),
    ({"ResourceQuota": [dict(quota(), spec={"hard": {"count/pods": "0"}})]}, True),  # provision's, changed
    ({"ResourceQuota": [quota()], "LimitRange": [{"metadata": {"name": "small"}}]}, True),
    ({"ResourceQuota": [quota()], "Pod": [{"metadata": {"name": "p1"}}]}, True),
])
def test_reset_empties_the_lab_namespace_unless_it_holds_only_provisions_own_quota(found, emptied):
    tasks = yaml.safe_load((ROOT / "roles/kai_lab/tasks/reset.yml").read_text())
    look = next(t for t in tasks if t.get("name") == "Look for the learner's objects in the lab namespace")
    empty = next(t for t in tasks if t.get("name") == "Empty the lab namespace")
    assert {"ResourceQuota", "LimitRange"} <= {item["kind"] for item in look["loop"]}
    assert empty["kubernetes.core.k8s"]["state"] == "absent"
    assert _empties(look, empty, found) is emptied


# ---- row 8: the cache is private, the code bundle verified before root unpacks it ------
BUNDLE = ROOT / "roles/kai_lab/files/kai_lab_bundle.py"


def bundle(*args):
    return subprocess.run([sys.executable, str(BUNDLE)] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture
def cache(tmp_path):
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    directory.chmod(0o700)
    out = directory / "kai-lab-0.3.0-0123456789abcdef.zip"
    assert bundle(ROOT, out).returncode == 0
    return directory, out


def test_the_bundle_the_sources_give_is_kept(cache):
    _, out = cache
    assert bundle("--check", ROOT, out).returncode == 0


def test_a_bundle_changed_in_the_cache_is_packed_again(cache):
    _, out = cache
    with zipfile.ZipFile(out, "a") as planted:
        planted.writestr("ansible_collections/gsb/kai_lab/plugins/module_utils/client/api.py", "import os\n")
    assert bundle("--check", ROOT, out).returncode == 1
    tasks = yaml.safe_load((ROOT / "roles/kai_lab/tasks/cli.yml").read_text())
    pack = next(t for t in tasks if t.get("name") == "Pack kai-lab's code on the controller")
    assert pack["when"] == "kai_lab_cli_bundle_check.rc != 0"


def test_a_cache_others_can_write_is_refused_naming_the_path_and_the_fix(cache):
    directory, out = cache
    directory.chmod(0o777)
    result = bundle("--check", ROOT, out)
    assert result.returncode == 2
    assert "The cache %s is writable by group or others (mode 0777)" % directory in result.stderr
    assert "chmod -R go-w %s" % directory in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="giving the cache to another user needs root")
def test_a_cache_owned_by_another_user_is_refused(cache):
    directory, out = cache
    os.chown(directory, 65534, -1)
    result = bundle("--check", ROOT, out)
    assert result.returncode == 2 and "is owned by uid 65534" in result.stderr
