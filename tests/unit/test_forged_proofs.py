# -*- coding: utf-8 -*-
"""Issue 40: every proof a protected learner's grade uses is one KAI (or the API server) wrote.

What the learner's account (roles/kai_lab/templates/learner_access.yaml.j2) may
do: create pods with any label, annotation, env value and ownerReferences;
create PodGroups on a KAI that makes no gang of a Job (the sim's v0.12.0);
read ConfigMaps, never write them; nothing in the reservation namespace; no
pod changed after creation. Each test takes the real recordings
(fixtures/sim, KAI v0.12.0; fixtures/kai-v0.17.0, copied from
shared/fixtures/kai-v0.17.0) changed as such a learner changes them, and
shows the check needs what only KAI or the API server writes.

Row 3 (steps 7 and 8): a pod's ``runai-gpu-group`` label and a plain
``NVIDIA_VISIBLE_DEVICES`` value are the learner's say-so; KAI's word is the
ConfigMap KAI's binder writes for that very pod (ownerReferences: the pod's
uid, which the API server gives it) and the reservation pod KAI made. The
forger's lab: the real fraction pod fr-1 becomes the one other fraction pod
``x-1`` (its KAI ConfigMaps and PodGroup renamed with it, as KAI would have
named them), fr-2 and its ConfigMaps are gone, and fr-1 and fr-2 are the
learner's pods created with the GPU group label and the device as a plain
env value, no gpu-fraction and no GPU: KAI places them as pods that ask for
no GPU (no ConfigMap, no shared-GPU annotation, received-resource-type
Regular).

The review's findings: step 2's PodGroup named in p1's annotation (the
learner's own on the sim), step 5's gang size (a text KAI never wrote).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

import kai_v017 as hand
import lab_states
from lab_testing import HANGUL, NS, SHARED_GPU, by_name, checks

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED, PASSED

VERSIONS = ["v0.12.0", hand.KAI_VERSION]
FORGED_UIDS = {"fr-1": "0b7c1b7e-5f4e-4c8e-9a53-2f3f1f6c0a11", "fr-2": "6d2e8a90-1c3b-4f7d-8e21-7a9c4b5d3e22"}


# The grade of a recorded lab and the finished lab on both KAI versions, as the placement forgeries use them.
from test_forged_placement import finished, graded  # noqa: E402,F401  (graded is a fixture)


def renamed(obj, old, new):
    """obj with every name derived from pod `old` derived from `new` (its ConfigMaps, PodGroup, owner)."""
    return json.loads(json.dumps(obj).replace('"%s"' % old, '"%s"' % new).replace('"%s-' % old, '"%s-' % new)
                      .replace("pg-%s-" % old, "pg-%s-" % new))


def configmaps_of(state, name):
    return [cm for cm in state["configmaps"].values() if cm["metadata"].get("ownerReferences", [{}])[0].get("name") == name]


def plain_pod(real, name, env):
    """Pod `name` as KAI shows a pod created from `real`'s manifest without gpu-fraction, with the env given."""
    pod = copy.deepcopy(real)
    meta = pod["metadata"]
    meta["uid"] = FORGED_UIDS[name]
    annotations = meta["annotations"]
    for key in (kai_gpu.FRACTION_ANNOTATION, kai_gpu.SHARED_GPU_CONFIGMAP_ANNOTATION,
                "kubectl.kubernetes.io/last-applied-configuration"):
        annotations.pop(key, None)
    annotations.update({"received-resource-type": "Regular", "pod-group-name": "pg-%s-%s" % (name, meta["uid"])})
    container = pod["spec"]["containers"][0]
    container["env"] = env
    container.pop("envFrom", None)
    pod["spec"]["volumes"] = [v for v in pod["spec"]["volumes"] if "configMap" not in v]
    return pod


def forged(fixtures, version, env):
    """The forger's lab: x-1 is the one real fraction pod; fr-1 and fr-2 carry its GPU group and env(x-1's
    ConfigMap name) each, no gpu-fraction, no GPU."""
    state = finished(fixtures, version)
    pods = by_name(state["pods"])
    real_fr1, real_fr2 = pods["fr-1"], pods["fr-2"]
    x1 = renamed(real_fr1, "fr-1", "x-1")
    x1_configmaps = [renamed(cm, "fr-1", "x-1") for cm in configmaps_of(state, "fr-1")]
    assert x1_configmaps and all(cm["metadata"]["ownerReferences"][0]["uid"] == x1["metadata"]["uid"]
                                 for cm in x1_configmaps)
    shared = kai_gpu.env_source(x1)[1]
    state["configmaps"] = dict((cm["metadata"]["name"], cm) for cm in state["configmaps"].values()
                               if cm["metadata"].get("ownerReferences", [{}])[0].get("name") not in ("fr-1", "fr-2"))
    state["configmaps"].update((cm["metadata"]["name"], cm) for cm in x1_configmaps)
    state["podgroups"] = [renamed(pg, "fr-1", "x-1") if pg["metadata"]["name"].startswith("pg-fr-1-") else pg
                          for pg in state["podgroups"] if not pg["metadata"]["name"].startswith("pg-fr-2-")]
    state["pods"] = [p for p in state["pods"] if p["metadata"]["name"] not in ("fr-1", "fr-2")] + [
        x1, plain_pod(real_fr1, "fr-1", env(shared)), plain_pod(real_fr2, "fr-2", env(shared))]
    # One real fraction pod: one reservation pod, holding the device fr-1 and fr-2 name.
    (holder,) = state["reservation_pods"]
    assert kai_gpu.reserved_gpu(holder) == SHARED_GPU
    assert kai_gpu.gpu_group(holder) == kai_gpu.gpu_group(x1) == kai_gpu.gpu_group(by_name(state["pods"])["fr-1"])
    return state


def plain_value(_configmap):
    """Row 3 as tried: the device written into the pod."""
    return [{"name": kai_gpu.VISIBLE_DEVICES, "value": SHARED_GPU}]


def other_pods_configmap(configmap):
    """The device read from the ConfigMap KAI's binder wrote for another pod (x-1)."""
    return [{"name": kai_gpu.VISIBLE_DEVICES,
             "valueFrom": {"configMapKeyRef": {"name": configmap, "key": kai_gpu.VISIBLE_DEVICES}}}]


def assert_tells_nothing(check, state):
    """A failed check's words never name the device or the GPU group the learner is to find."""
    group = kai_gpu.gpu_group(state["reservation_pods"][0])
    for text in (check["message"], check["hint"]):
        assert SHARED_GPU not in text and group not in text and "None" not in text, text


# ---------------------------------------------------------------- step 7

@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("env, said, said_ko", [
    (plain_value, "NVIDIA_VISIBLE_DEVICES of pod fr-1 is written in the pod itself, not read from the ConfigMap "
                  "KAI's binder writes for it: a value a pod is created with is no proof of a GPU KAI gave it",
     u"파드를 만들 때 적은 값은 KAI가 준 GPU 의 증거가 아닙니다"),
    (other_pods_configmap, "NVIDIA_VISIBLE_DEVICES of pod fr-1 is read from ConfigMap x-1-",
     u"이 파드가 아닌 다른 파드의 GPU 입니다"),
])
def test_fraction_pods_that_ask_for_no_gpu_fail_fraction_shared_naming_why(graded, fixtures, version, env, said,
                                                                            said_ko):
    state = forged(fixtures, version, env)
    en, ko = graded(state, version), graded(copy.deepcopy(state), version, lang="ko")
    check, check_ko = checks(en)["fraction.shared"], checks(ko)["fraction.shared"]
    assert check["status"] == check_ko["status"] == FAILED, check["message"]
    message = check["message"]
    assert message.startswith("pod fr-1 in the cluster does not ask KAI for 0.5 of a GPU: it has no gpu-fraction "
                              "annotation; "), message
    assert said in message
    assert "pod fr-2 in the cluster does not ask KAI for 0.5 of a GPU" in message
    if env is other_pods_configmap:
        assert "which KAI's binder did not write for fr-1: its ownerReferences do not name this pod" in message
    assert "kubectl -n kai-lab get pod fr-1 -o yaml shows where its environment comes from" in check["hint"]
    assert said_ko in check_ko["message"] and HANGUL.search(check_ko["hint"])
    assert_tells_nothing(check, state)
    assert_tells_nothing(check_ko, state)
    # The learner's files are as the lab asks: only the cluster's objects tell the forgery.
    assert checks(en)["fraction.manifest"]["status"] == PASSED


@pytest.mark.parametrize("version", VERSIONS)
def test_kais_own_configmaps_of_the_recorded_pairs_still_pass(graded, fixtures, version):
    state = finished(fixtures, version)
    result = checks(graded(state, version))
    assert result["fraction.shared"]["status"] == result["report.values"]["status"] == PASSED
    assert result["fraction.shared"]["evidence"]["devices"] == {"fr-1": SHARED_GPU, "fr-2": SHARED_GPU}
    step7 = lab_states.lab_after("fraction", lab_states.KAI_V017 if version != "v0.12.0" else lab_states.SIM)
    assert checks(graded(step7, version))["fraction.shared"]["status"] == PASSED


@pytest.mark.parametrize("version", VERSIONS)
def test_a_configmap_of_the_pods_name_but_another_uid_is_not_kais_word(graded, fixtures, version):
    """fr-1 created again after KAI wrote a ConfigMap for the first fr-1: the ConfigMap names the old uid."""
    state = finished(fixtures, version)
    fr1 = by_name(state["pods"])["fr-1"]
    fr1["metadata"]["uid"] = FORGED_UIDS["fr-1"]
    check = checks(graded(state, version))["fraction.shared"]
    assert check["status"] == FAILED
    assert "its ownerReferences do not name this pod" in check["message"]
    assert_tells_nothing(check, state)


# ---------------------------------------------------------------- step 8

@pytest.mark.parametrize("version", VERSIONS)
def test_report_values_take_fr1s_gpu_from_kais_configmap_only(graded, fixtures, version):
    """The forger's report.json names the device its own fr-1 carries: no GPU KAI gave fr-1."""
    state = forged(fixtures, version, plain_value)
    assert json.loads(state["files"]["report.json"])["shared_gpu"] == SHARED_GPU
    en, ko = graded(state, version), graded(copy.deepcopy(state), version, lang="ko")
    check, check_ko = checks(en)["report.values"], checks(ko)["report.values"]
    assert check["status"] == check_ko["status"] == FAILED, check["message"]
    assert check["message"] == (
        "report.json: shared_gpu is the GPU KAI gave pod fr-1, and the cluster shows none: NVIDIA_VISIBLE_DEVICES "
        "of pod fr-1 is written in the pod itself, not read from the ConfigMap KAI's binder writes for it: a value "
        "a pod is created with is no proof of a GPU KAI gave it")
    assert u"클러스터에 그런 GPU 가 없습니다" in check_ko["message"] and HANGUL.search(check_ko["hint"])
    assert check["evidence"]["cluster"]["shared_gpu"] is None
    assert_tells_nothing(check, state)
    assert_tells_nothing(check_ko, state)


@pytest.mark.parametrize("version", VERSIONS)
def test_report_without_fr1_says_so_without_none(graded, fixtures, version):
    state = finished(fixtures, version)
    state["pods"] = [p for p in state["pods"] if p["metadata"]["name"] != "fr-1"]
    check = checks(graded(state, version))["report.values"]
    assert check["status"] == FAILED
    assert "shared_gpu is the GPU KAI gave pod fr-1, and there is no pod fr-1 in kai-lab" in check["message"]
    assert_tells_nothing(check, state)


# ---------------------------------------------------------------- step 2: the PodGroup KAI's pod-grouper made

LEARNERS_PODGROUP = "pg-mine"


def own_podgroup(fixtures, owned):
    """The finished sim lab (KAI v0.12.0, where the learner's account may create PodGroups for step 5) with p1
    created naming the learner's PodGroup in its pod-group-name annotation: KAI's pod-grouper leaves a pod so
    created in that PodGroup (an orphan pod with the annotation, pod_controller.go isOrphanPodWithPodGroup)
    and makes none; KAI's scheduler writes the PodGroup's status as on its own. owned: the learner made it
    after p1, naming p1 (its uid) as the owner."""
    state = lab_states.finished()
    p1 = by_name(state["pods"])["p1"]
    kais = [pg for pg in state["podgroups"] if pg["metadata"]["name"] == p1["metadata"]["annotations"]["pod-group-name"]]
    (learners,) = copy.deepcopy(kais)
    learners["metadata"].update(name=LEARNERS_PODGROUP, uid="9d1f3c2a-7b6e-4f15-8a0d-3c2b1a0f9e77")
    learners["metadata"].pop("ownerReferences")
    if owned:
        learners["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p1",
                                                    "uid": p1["metadata"]["uid"]}]
    state["podgroups"] = [pg for pg in state["podgroups"] if pg not in kais] + [learners]
    p1["metadata"]["annotations"]["pod-group-name"] = LEARNERS_PODGROUP
    state["files"]["podgroup.txt"] = LEARNERS_PODGROUP + "\n"
    return state


@pytest.mark.parametrize("owned", [False, True])
def test_p1_created_in_the_learners_own_podgroup_fails_podgroup_file(graded, fixtures, owned):
    state = own_podgroup(fixtures, owned)
    en, ko = graded(state, "v0.12.0"), graded(copy.deepcopy(state), "v0.12.0", lang="ko")
    check, check_ko = checks(en)["podgroup.file"], checks(ko)["podgroup.file"]
    assert check["status"] == check_ko["status"] == FAILED, check["message"]
    assert check["message"] == (
        "podgroup.txt: pg-mine is not a PodGroup KAI's pod-grouper made for p1: p1 was created naming it in its "
        "pod-group-name annotation, so KAI placed p1 in that PodGroup and made none of its own")
    assert "without the pod-group-name annotation" in check["hint"]
    assert u"자신의 PodGroup 은 만들지 않았습니다" in check_ko["message"] and HANGUL.search(check_ko["hint"])
    # p1 did run through KAI (its binder bound it): that check still passes.
    assert checks(en)["podgroup.running"]["status"] == PASSED


def test_a_podgroup_named_like_kais_for_a_gone_p1_but_owned_by_no_pod_fails(graded, fixtures):
    """p1 evicted in step 6 and its PodGroup collected with it; the learner (sim) creates a PodGroup of the
    name KAI's pod-grouper gave p1's, with no owner."""
    state = lab_states.finished()
    p1 = by_name(state["pods"])["p1"]
    state["pods"].remove(p1)
    podgroup = [pg for pg in state["podgroups"] if pg["metadata"]["name"] == state["files"]["podgroup.txt"].strip()][0]
    podgroup["metadata"].pop("ownerReferences")
    podgroup["metadata"]["uid"] = "9d1f3c2a-7b6e-4f15-8a0d-3c2b1a0f9e77"
    check = checks(graded(state, "v0.12.0"))["podgroup.file"]
    assert check["status"] == FAILED, check["message"]
    assert check["message"] == ("podgroup.txt: %s is not a PodGroup KAI's pod-grouper made for p1: its ownerReferences "
                                "do not name the pod p1 it is named after" % podgroup["metadata"]["name"])


@pytest.mark.parametrize("version", VERSIONS)
def test_the_podgroup_kais_pod_grouper_made_still_passes(graded, fixtures, version):
    state = finished(fixtures, version)
    assert checks(graded(state, version))["podgroup.file"]["status"] == PASSED
    step2 = lab_states.lab_after("podgroup", lab_states.KAI_V017 if version != "v0.12.0" else lab_states.SIM)
    assert checks(graded(step2, version))["podgroup.file"]["status"] == PASSED


# ---------------------------------------------------------------- step 5: the size KAI wrote

def test_a_gang_kai_saw_as_four_fails_with_a_text_edited_to_three(grade, fixtures):
    """Real KAI v0.17.0 (hand-gang) with the learner's Job of 4 (batch-min-member "4", parallelism 4):
    KAI writes "while 4 are required" on the gang's PodGroup and pods; gang.txt says 3, which KAI never wrote."""
    recorded = lab_states.lab_after("gang", lab_states.KAI_V017)
    state = json.loads(json.dumps(recorded).replace("while 3 are required", "while 4 are required"))
    state["files"] = recorded["files"]
    for podgroup in state["podgroups"]:
        if podgroup["metadata"]["name"].startswith("pg-gang-"):
            podgroup["spec"]["minMember"] = 4
    (job,) = state["jobs"]
    job["metadata"]["annotations"]["kai.scheduler/batch-min-member"] = "4"
    job["spec"]["parallelism"] = job["spec"]["completions"] = 4
    assert "while 3 are required" in state["files"]["gang.txt"]
    en, _ = grade(state, state["files"], kai_version=hand.KAI_VERSION)
    ko, _ = grade(copy.deepcopy(state), state["files"], lang="ko", kai_version=hand.KAI_VERSION)
    check = checks(en)["gang.reason"]
    assert check["status"] == FAILED, check["message"]
    assert check["message"] == (
        "gang.txt: KAI's gang reason about your gang does not say 3 are required: the gang KAI saw is not of 3 pods "
        "(kai.scheduler/batch-min-member on Job gang, minMember of a PodGroup made by hand), so this text is not what "
        "KAI wrote about it")
    assert u"KAI가 그 갱에 대해 쓴 것이 아닙니다" in checks(ko)["gang.reason"]["message"]
    assert checks(grade(lab_states.lab_after("gang", lab_states.KAI_V017), lab_states.lab_after("gang", lab_states.KAI_V017)["files"],
                        kai_version=hand.KAI_VERSION)[0])["gang.reason"]["status"] == PASSED


# ---------------------------------------------------------------- the security guide's proof table

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "docsite" / "rst" / "security_guide.rst"


def proof_table_rows():
    """The rows of the list-table under "Every check's proof": [[cell text, ...], ...] without the header."""
    text = GUIDE.read_text()
    table = text.split("Every check's proof\n", 1)[1].split(".. list-table::", 1)[1]
    table = re.split(r"\n\S", table, maxsplit=1)[0]
    rows = []
    for line in table.splitlines():
        if line.startswith("   * - "):
            rows.append([line[len("   * - "):]])
        elif line.startswith("     - "):
            rows[-1].append(line[len("     - "):])
        elif line.startswith("       ") and rows:
            rows[-1][-1] += " " + line.strip()
    return rows[1:]


def test_the_proof_table_has_one_row_per_check_and_names_tests_that_exist():
    rows = proof_table_rows()
    assert all(len(row) == 5 for row in rows), rows
    assert [row[0] for row in rows] == ["``%s``" % c.id for c in steps.CHECKS]
    for row in rows:
        named = re.findall(r"``((?:steps/)?test_[a-z0-9_]+\.py)::(test_[a-z0-9_]+)``", row[4])
        assert named, row[0]
        for path, name in named:
            source = (Path(__file__).resolve().parent / path).read_text()
            assert re.search(r"^def %s\(" % name, source, re.M), (path, name)
