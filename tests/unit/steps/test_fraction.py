# -*- coding: utf-8 -*-
"""Step 7, two pods share one GPU: the manifests and KAI's denial of a fraction
with a GPU limit."""

from __future__ import annotations

import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import fraction
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import FAILED

from lab_testing import DENIAL, NS, all_gpu_resources, both_langs, by_name, checks, ids_with, solved


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
    docs = list(yaml.safe_load_all(fixtures.sim("07-fraction")["files"]["fraction.yaml"]))
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
