"""The chart render's objects for the sim (filter kai_chart_objects): one
parse of `helm template`'s output, the kinds the sim applies, and the CRDs'
hash that a lab provisioned before this filter already carries."""

from __future__ import annotations

import hashlib

import pytest
from ansible.plugins.filter.core import to_json

from ansible_collections.gsb.kai_lab.plugins.filter.kai_profile import FilterModule
from ansible.errors import AnsibleFilterError

chart_objects = FilterModule().filters()["kai_chart_objects"]

# The shape of KAI's chart render: comment headers, an empty document, and
# kinds the sim does not apply (a Deployment runs as a process instead).
RENDER = """---
# Source: kai-scheduler/crds/scheduling.run.ai_queues.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: queues.scheduling.run.ai
spec:
  group: scheduling.run.ai
  names: {kind: Queue, plural: queues}
  scope: Cluster
  versions: [{name: v2, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
---
# Source: kai-scheduler/templates/queues.yaml
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: default-parent-queue
spec:
  resources: {gpu: {quota: -1, limit: -1, overQuotaWeight: 1}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: binder, namespace: kai-scheduler}
spec: {replicas: 1}
"""

KINDS = ["CustomResourceDefinition", "Queue", "PriorityClass"]


def test_only_the_kinds_the_sim_applies_are_kept_in_order():
    chart = chart_objects(RENDER, KINDS)
    assert [(o["kind"], o["metadata"]["name"]) for o in chart["objects"]] == [
        ("CustomResourceDefinition", "queues.scheduling.run.ai"), ("Queue", "default-parent-queue")]
    assert [c["metadata"]["name"] for c in chart["crds"]] == ["queues.scheduling.run.ai"]
    assert chart["objects"][1]["spec"]["resources"]["gpu"]["quota"] == -1


def test_the_crds_hash_is_the_one_labs_provisioned_before_carry():
    chart = chart_objects(RENDER, KINDS)
    # What the role computed before: crds | to_json(sort_keys=true) | hash('sha256').
    before = hashlib.sha256(to_json(chart["crds"], sort_keys=True).encode("utf-8")).hexdigest()
    assert chart["crds_hash"] == before


def test_a_render_that_is_not_yaml_fails_naming_the_error():
    with pytest.raises(AnsibleFilterError, match="the chart render is not YAML"):
        chart_objects("kind: [unclosed\n", KINDS)
