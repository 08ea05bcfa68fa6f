# -*- coding: utf-8 -*-
"""Shared setup of the unit tests.

1. Makes the repository importable as ``ansible_collections.gsb.kai_lab`` from
   a fresh clone, without ANSIBLE_COLLECTIONS_PATH: a directory
   ``tests/output/unit-collections/ansible_collections/gsb`` (gitignored) gets a
   symlink ``kai_lab`` -> the repository root and its parent goes first on
   sys.path.
2. Loads the fixtures recorded from the real sim cluster (KAI v0.12.0).
3. Offers FakeCluster: the Cluster interface (get/list/apply/patch/delete)
   served from a recorded snapshot, recording every call, so the solver and the
   grader can run against what the real cluster showed.
4. Fixtures grade (grade a state and files) and finished_lab (the lab after
   the last step of the step list, lab_states.py), used by the tests of the
   runners and of each step (steps/), and serve: a local API server
   (fake_api.py) for a FakeCluster, over HTTP.
5. Keeps every test away from a learner's lab on the same machine: the sim
   state directory (where the grader's record lives) is a temporary one.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SIM = FIXTURES / "sim"
NAMESPACE = "kai-lab"


def _install_collection_path() -> Path:
    base = REPO / "tests" / "output" / "unit-collections"
    gsb = base / "ansible_collections" / "gsb"
    gsb.mkdir(parents=True, exist_ok=True)
    link = gsb / "kai_lab"
    if not (link.is_symlink() and Path(os.path.realpath(link)) == REPO):
        tmp = gsb / (".kai_lab.%d" % os.getpid())
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(str(REPO), str(tmp))
        os.replace(str(tmp), str(link))  # atomic: safe with parallel runs
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    return base


COLLECTION_PATH = _install_collection_path()

# Ansible's collection finder over that path, installed before the first
# import: role templates can then use the collection's filters
# (gsb.kai_lab.kai_chart_values) as in a playbook run.
from ansible.plugins.loader import init_plugin_loader  # noqa: E402

init_plugin_loader([str(COLLECTION_PATH)])

# Import once now, before any other test module could install Ansible's
# collection finder; later imports come from sys.modules.
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import (  # noqa: E402
    ClusterError, comparable, lean_object)

import fake_api  # noqa: E402  (the local API server of the serve fixture)
import lab_states  # noqa: E402  (the lab after each step, from each step's own recording)

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as _registry  # noqa: E402

# The collection's own steps: all that a child process knows (a module run as Ansible runs it, the kai-lab
# entry script, which runs with -I). They differ from registry.STEP_IDS only when a step is registered for
# the session below.
COLLECTION_STEP_IDS = tuple(_registry.STEP_IDS)

# KAI_LAB_ADDED_STEP=1: the whole run with test_added_step.py's step as the lab's last (that module says why).
if os.environ.get("KAI_LAB_ADDED_STEP"):
    import test_added_step  # noqa: E402

    test_added_step.register_for_session()

QUEUE_API = kai.QUEUE_API
PODGROUP_API = kai.PODGROUP_API

# Which API each fixture key holds; list items from the API carry no kind.
CATEGORIES = {
    "pods": ("v1", "Pod"),
    "reservation_pods": ("v1", "Pod"),
    "podgroups": (PODGROUP_API, "PodGroup"),
    "events": ("v1", "Event"),
    "queues": (QUEUE_API, "Queue"),
}
CLUSTER_SCOPED = {"Queue", "Namespace", "Node", "PriorityClass", "MutatingWebhookConfiguration"}


def load_json(path):
    with open(path) as handle:
        return json.load(handle)


def sim_state(name):
    """A recorded sim snapshot that is no step's state, e.g. sim_state('gang-job-on-v0.12.0'); a fresh copy each
    call. A step's state: lab_states.lab_after(step_id)."""
    return load_json(SIM / ("%s.json" % name))


def mistakes():
    return load_json(SIM / "mistakes.json")


def find(objs, name, namespace=None):
    """The object named name in a list (optionally of one namespace), or None."""
    for obj in objs:
        meta = obj.get("metadata") or {}
        if meta.get("name") == name and (namespace is None or meta.get("namespace") == namespace):
            return obj
    return None


def _merge(base, patch):
    """JSON merge patch (RFC 7386), also used as a model of server-side apply."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge(result.get(key), value)
    return result


class FakeCluster(object):
    """The Cluster API over a recorded snapshot.

    calls records every call as a tuple; writes are the apply/patch/delete ones.
    With error set, every call raises ClusterError(error), like an API server
    that cannot be reached. reject maps a kind to an error text raised by apply
    (an admission denial). objects: whole objects (each with its apiVersion and
    kind) held besides the snapshot's.
    """

    def __init__(self, state=None, namespace=NAMESPACE, error=None, reject=None, objects=()):
        self.namespace = namespace
        self.error = error
        self.reject = reject or {}
        self.calls = []
        self.objects = {}
        state = state or {}
        for category, (api, kind) in CATEGORIES.items():
            for obj in state.get(category) or []:
                self._store(api, kind, obj)
        for obj in (state.get("configmaps") or {}).values():
            self._store("v1", "ConfigMap", obj)
        for obj in objects:
            self._store(obj["apiVersion"], obj["kind"], obj)

    # ------------------------------------------------------------ storage
    def _key(self, api, kind, name, namespace):
        return (api, kind, None if kind in CLUSTER_SCOPED else namespace, name)

    def _store(self, api, kind, obj):
        meta = obj.get("metadata") or {}
        self.objects[self._key(api, kind, meta.get("name"), meta.get("namespace"))] = copy.deepcopy(obj)

    def _check(self, *call):
        self.calls.append(call)
        if self.error:
            raise ClusterError(self.error)

    @property
    def writes(self):
        return [c for c in self.calls if c[0] in ("apply", "patch", "delete")]

    # ------------------------------------------------------------ reads
    def get(self, api_version, kind, name, namespace=None):
        self._check("get", kind, name, namespace)
        obj = self.objects.get(self._key(api_version, kind, name, namespace))
        return copy.deepcopy(obj) if obj is not None else None

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None, lean=False):
        """As Cluster.list: lean drops what client/api.py's lean_object drops."""
        self._check("list", kind, namespace, label_selector)
        wanted = {}
        for term in (label_selector or "").split(","):
            if "=" in term:
                key, value = term.split("=", 1)
                wanted[key.strip()] = value.strip()
        items = []
        for (api, k, ns, _), obj in sorted(self.objects.items(), key=lambda kv: str(kv[0])):
            if (api, k) != (api_version, kind):
                continue
            if namespace and ns != namespace:
                continue
            labels = (obj.get("metadata") or {}).get("labels") or {}
            if any(labels.get(key) != value for key, value in wanted.items()):
                continue
            items.append(lean_object(copy.deepcopy(obj)) if lean else copy.deepcopy(obj))
        return items

    # ------------------------------------------------------------ writes
    def apply(self, obj, dry_run=False, force=True, field_manager=None, create_absent=False):
        kind = obj["kind"]
        name = obj["metadata"]["name"]
        namespace = obj["metadata"].get("namespace")
        self._check("apply", kind, name, namespace, dry_run)
        if kind in self.reject:
            raise ClusterError(self.reject[kind])
        key = self._key(obj["apiVersion"], kind, name, namespace)
        before = self.objects.get(key)
        after = _merge(before, obj)
        changed = before is None or comparable(before) != comparable(after)
        if not dry_run:
            self.objects[key] = after
        return changed, copy.deepcopy(after)

    def patch(self, api_version, kind, name, patch, namespace=None, dry_run=False):
        self._check("patch", kind, name, namespace, dry_run, json.dumps(patch, sort_keys=True))
        key = self._key(api_version, kind, name, namespace)
        after = _merge(self.objects.get(key), patch)
        if not dry_run:
            self.objects[key] = after
        return copy.deepcopy(after)

    def delete(self, api_version, kind, name, namespace=None, dry_run=False, propagation="Background"):
        self._check("delete", kind, name, namespace, dry_run)
        key = self._key(api_version, kind, name, namespace)
        if key not in self.objects:
            return False
        if not dry_run:
            del self.objects[key]
        return True


def write_files(workdir, files):
    """Write learner files (name -> content) into workdir."""
    os.makedirs(str(workdir), exist_ok=True)
    for name, content in files.items():
        with open(os.path.join(str(workdir), name), "w") as handle:
            handle.write(content)
    return str(workdir)


@pytest.fixture(autouse=True, scope="session")
def _own_sim_state(tmp_path_factory):
    """A sim state directory of the tests' own, for every playbook they run.

    Without it a reset test run beside the learner's lab (``make lab`` then
    ``make test``) archived the learner's real grader record
    (~/.local/state/gsb-kai-lab/sim/grade-records/kai-lab.json) into its
    temporary workdir.
    """
    state = tmp_path_factory.mktemp("sim-state")
    saved = os.environ.get("KAI_LAB_SIM_STATE")
    os.environ["KAI_LAB_SIM_STATE"] = str(state)
    yield state
    if saved is None:
        os.environ.pop("KAI_LAB_SIM_STATE", None)
    else:
        os.environ["KAI_LAB_SIM_STATE"] = saved


@pytest.fixture
def fake_cluster():
    """FakeCluster, the class: fake_cluster(state) builds one."""
    return FakeCluster


@pytest.fixture
def serve():
    """serve(cluster=None, raw=None, texts=()) -> a running local API server (fake_api.py) for cluster (a
    FakeCluster; an empty one by default); stopped after the test."""
    servers = []

    def start(cluster=None, raw=None, texts=()):
        server = fake_api.start(cluster or FakeCluster({}), raw, texts)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stopping = True  # what a trickling raw answer watches
        fake_api.stop(server)


@pytest.fixture
def fixtures():
    """Loaders of the recorded (sim) and derived fixtures and small helpers."""

    class Fixtures(object):
        sim = staticmethod(sim_state)
        after = staticmethod(lab_states.lab_after)
        finished = staticmethod(lab_states.finished)
        mistakes = staticmethod(mistakes)
        find = staticmethod(find)
        write_files = staticmethod(write_files)
        namespace = NAMESPACE
        sim_dir = SIM

    return Fixtures


@pytest.fixture
def grade(tmp_path, fake_cluster, fixtures):
    """grade(state, files, lang='en', cluster=None, deadline=None, health=None) -> (grade dict, workdir)."""
    counter = {"n": 0}

    def run(state, files, lang="en", cluster=None, deadline=None, deadline_seconds=None, health=None,
            kai_version="v0.12.0"):
        counter["n"] += 1
        workdir = fixtures.write_files(tmp_path / ("w%d" % counter["n"]), files)
        snapshot = Snapshot(cluster or fake_cluster(state), NAMESPACE, workdir, health=health, kai_version=kai_version)
        grader = Grader(snapshot, lang=lang, deadline=deadline, time_limit=deadline_seconds)
        return grader.run(), workdir

    return run


@pytest.fixture(params=["recorded", "conditions-cleared"])
def finished_lab(request, tmp_path, fixtures, fake_cluster):
    """The lab after the last step of the step list (lab_states.finished): as recorded on the sim (KAI v0.12.0),
    and as KAI v0.17+ shows it (PodGroup schedulingConditions cleared: lab_states.conditions_cleared)."""
    state = lab_states.finished()
    if request.param == "recorded":
        version = lab_states.KAI[lab_states.SIM]
    else:
        state, version = lab_states.conditions_cleared(state), "v0.18.6"
    workdir = fixtures.write_files(tmp_path / "gsb-kai", state["files"])
    return fake_cluster(state), workdir, state, version
