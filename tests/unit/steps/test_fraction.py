# -*- coding: utf-8 -*-
"""Step 7, two pods share one GPU: the manifests and KAI's denial of a fraction
with a GPU limit."""

from __future__ import annotations

import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import fraction
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED

from lab_testing import (DENIAL, NS, OTHER_CLUSTER_GPU, SHARED_GPU, all_gpu_resources, both_langs, by_name, checks,
                         ids_with, solved)


def test_fraction_pods_have_the_annotation_and_no_gpu_resource():
    pods = by_name(fraction.fraction_pods(NS))
    assert sorted(pods) == ["fr-1", "fr-2"]
    for pod in pods.values():
        assert pod["metadata"]["annotations"] == {"gpu-fraction": "0.5"}
        assert isinstance(pod["metadata"]["annotations"]["gpu-fraction"], str)
        assert all_gpu_resources(pod["spec"]) == []
        assert "resources" not in pod["spec"]["containers"][0]
        assert pod["spec"]["schedulerName"] == "kai-scheduler"
        assert kai.pod_queue(pod) == "research"


def test_fraction_yaml_keeps_the_annotation_a_string(fixtures):
    """yaml.safe_dump quotes '0.5' so kubectl does not reject a float annotation."""
    docs = list(yaml.safe_load_all(fixtures.after("fraction")["files"]["fraction.yaml"]))
    assert [d["metadata"]["annotations"]["gpu-fraction"] for d in docs] == ["0.5", "0.5"]


def test_fraction_yaml_with_gpu_limits_names_kais_denial(grade, fixtures):
    state, files = solved(fixtures)
    files["fraction.yaml"] = files["fraction.yaml"].replace(
        "    - infinity\n", "    - infinity\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n")
    assert files["fraction.yaml"].count("nvidia.com/gpu") == 2
    en, ko = both_langs(grade, state, files)
    assert ids_with(en, FAILED) == ids_with(ko, FAILED) == ["fraction.manifest"]
    denial = fixtures.mistakes()["fraction_with_gpu_limit_error"].split("denied the request: ", 1)[1]
    assert denial == DENIAL
    for result, words in ((en, "admission webhook rejects it"), (ko, u"웹훅이 거부합니다")):
        message = checks(result)["fraction.manifest"]["message"]
        assert denial in message
        assert words in message
        assert "fr-1" in message and "fr-2" in message


def test_fraction_request_of_a_gpu_is_caught_too(grade, fixtures):
    state, files = solved(fixtures)
    files["fraction.yaml"] = files["fraction.yaml"].replace(
        "    - infinity\n", "    - infinity\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n", 1)
    result, _ = grade(state, files)
    assert ids_with(result, FAILED) == ["fraction.manifest"]
    assert DENIAL in checks(result)["fraction.manifest"]["message"]
    assert "fr-2" not in checks(result)["fraction.manifest"]["message"]


def test_fraction_annotation_written_as_a_number_is_flagged(grade, fixtures):
    state, files = solved(fixtures)
    files["fraction.yaml"] = files["fraction.yaml"].replace("gpu-fraction: '0.5'", "gpu-fraction: 0.5")
    assert "gpu-fraction: 0.5\n" in files["fraction.yaml"]
    result, _ = grade(state, files)
    assert checks(result)["fraction.manifest"]["status"] == FAILED


def test_fraction_yaml_without_the_annotation_names_it_missing(grade, fixtures):
    state, files = solved(fixtures)
    files["fraction.yaml"] = files["fraction.yaml"].replace("  annotations:\n    gpu-fraction: '0.5'\n", "", 1)
    assert files["fraction.yaml"].count("gpu-fraction") == 1
    en, ko = both_langs(grade, state, files)
    assert checks(en)["fraction.manifest"]["message"] == "fraction.yaml: fr-1: it has no gpu-fraction annotation"
    assert u"gpu-fraction 어노테이션이 없습니다" in checks(ko)["fraction.manifest"]["message"]
    assert "None" not in checks(ko)["fraction.manifest"]["message"]


def test_a_pair_kai_put_on_two_gpus_is_named_without_the_gpus(grade, fixtures):
    """fr-2's ConfigMap (KAI's binder's) names another GPU, held by a second reservation pod of KAI."""
    state, files = solved(fixtures)
    fr2_configmap = [c for c in state["configmaps"].values() if c["metadata"]["ownerReferences"][0]["name"] == "fr-2"][0]
    fr2_configmap["data"]["NVIDIA_VISIBLE_DEVICES"] = OTHER_CLUSTER_GPU
    en, ko = both_langs(grade, state, files)
    check = checks(en)["fraction.shared"]
    assert check["status"] == FAILED
    assert check["message"] == ("fr-1 and fr-2 were given different GPUs by KAI's binder (NVIDIA_VISIBLE_DEVICES in "
                                "each pod's ConfigMap): they do not share one")
    assert u"서로 다른 GPU 를 받았습니다" in checks(ko)["fraction.shared"]["message"]
    for text in (check["message"], checks(ko)["fraction.shared"]["message"]):
        assert SHARED_GPU not in text and OTHER_CLUSTER_GPU not in text


def test_a_reservation_pod_holding_another_gpu_is_named_without_the_gpu(grade, fixtures):
    state, files = solved(fixtures)
    holder = state["reservation_pods"][0]
    holder["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"] = OTHER_CLUSTER_GPU
    en, ko = both_langs(grade, state, files)
    check = checks(en)["fraction.shared"]
    assert check["status"] == FAILED
    assert check["message"] == ("reservation pod %s of KAI on kai-lab-vm holds another GPU than the one KAI's binder "
                                "gave fr-1 and fr-2 (NVIDIA_VISIBLE_DEVICES in their ConfigMaps)"
                                % holder["metadata"]["name"])
    assert u"예약 파드" in checks(ko)["fraction.shared"]["message"]
    for text in (check["message"], checks(ko)["fraction.shared"]["message"]):
        assert SHARED_GPU not in text and OTHER_CLUSTER_GPU not in text
