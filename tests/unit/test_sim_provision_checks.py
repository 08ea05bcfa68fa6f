"""The cheap checks that let a provision of the sim skip work, evaluated from
the real task files with Ansible's templating: KAI's CRDs are sent again
unless the sim's state check found every one as the last full provision
left it, carrying the hash of the chart's CRDs; KAI's chart is found in the
Go module cache by its path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]
KAI = ROOT / "roles" / "kai_scheduler"
# KAI's files (no API server needed) and then what goes to the API server.
TASKS = [task for name in ("sim_files.yml", "sim.yml") for task in yaml.safe_load((KAI / "tasks" / name).read_text())]
ROLE_VARS = trust(yaml.safe_load((KAI / "vars" / "main.yml").read_text()))


def _task(name_start: str) -> dict:
    return next(task for task in TASKS if task["name"].startswith(name_start))


def _crd(name: str, version: str = "v1") -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name, "annotations": {"controller-gen.kubebuilder.io/version": "v0.16.1"}},
            "spec": {"versions": [{"name": version}]}}


OBJECTS = [_crd("queues.scheduling.run.ai"), {"kind": "Namespace", "metadata": {"name": "kai-resource-reservation"}},
           _crd("configs.kai.scheduler")]


def _templar(**variables) -> Templar:
    base = {"kai_scheduler_crds_annotation": ROLE_VARS["kai_scheduler_crds_annotation"]}
    return Templar(loader=DataLoader(), variables=dict(base, **variables))


def _hashed(objects: list[dict]) -> dict:
    """The fact of "Select the chart objects ..." for a `helm template` render of these chart
    objects, with the role's vars that name its parts."""
    render = "".join("---\n# Source: kai-scheduler/x.yaml\n" + yaml.safe_dump(obj) for obj in objects)
    select = _task("Select the chart objects the sim needs")["ansible.builtin.set_fact"]
    templar = _templar(kai_scheduler_rendered={"stdout": render},
                       kai_scheduler_chart_kinds=ROLE_VARS["kai_scheduler_chart_kinds"])
    chart = {key: templar.template(trust_as_template(value)) for key, value in select.items()}
    parts = ["kai_scheduler_objects", "kai_scheduler_crds", "kai_scheduler_crds_hash"]
    templar = _templar(**chart)
    return dict(chart, **{key: templar.template(trust_as_template(ROLE_VARS[key])) for key in parts})


def _applies(objects: list[dict], check: dict) -> bool:
    """Whether "Apply the chart's CRDs first" runs, given the sim's state check result (kai_lab_sim_state_check)."""
    task = _task("Apply the chart's CRDs first")
    templar = _templar(**_hashed(objects), kai_lab_sim_state_check=check)
    return templar.evaluate_conditional(trust_as_template(task["when"]))


def test_the_crds_are_skipped_only_when_the_state_check_found_them_as_recorded_with_the_charts_hash():
    digest = _hashed(OBJECTS)["kai_scheduler_crds_hash"]
    assert _applies(OBJECTS, {"crds_unchanged_hash": digest}) is False
    # A CRD edited, deleted or not Established, no record (a failed provision), no API server: the check says ''.
    assert _applies(OBJECTS, {"crds_unchanged_hash": ""}) is True
    # No state directory (the first provision): the check did not run.
    assert _applies(OBJECTS, {"skipped": True}) is True
    assert _applies(OBJECTS, {}) is True


def test_a_changed_crd_in_the_chart_changes_the_hash_and_is_applied():
    changed = [_crd("queues.scheduling.run.ai", "v2")] + OBJECTS[1:]
    digest = _hashed(OBJECTS)["kai_scheduler_crds_hash"]
    assert _hashed(changed)["kai_scheduler_crds_hash"] != digest
    # The CRDs in the cluster are as the last provision left them, with the old chart's hash.
    assert _applies(changed, {"crds_unchanged_hash": digest}) is True


def test_applied_crds_carry_the_hash_beside_their_own_annotations():
    task = _task("Apply the chart's CRDs first")
    facts = _hashed(OBJECTS)
    applied = _templar(**facts).template(trust_as_template(task["gsb.kai_lab.kai_lab_owned_objects"]["objects"]))
    assert [crd["metadata"]["name"] for crd in applied] == ["queues.scheduling.run.ai", "configs.kai.scheduler"]
    for crd in applied:
        assert crd["metadata"]["annotations"] == {"controller-gen.kubebuilder.io/version": "v0.16.1",
                                                  "gsb-kai-lab/chart-crds-sha256": facts["kai_scheduler_crds_hash"]}
    # The put-back does not wait; one kubectl wait then waits for all of them, only when they were sent.
    assert set(task["gsb.kai_lab.kai_lab_owned_objects"]) == {"kubeconfig", "kubectl", "objects"}
    wait = _task("Wait until the chart's CRDs are Established")
    argv = _templar(**facts, sim_binaries_bin={"kubectl": "/bin/kubectl"},
                    kai_lab_kubeconfig="/k").template(trust_as_template(wait["ansible.builtin.command"]["argv"]))
    assert argv == ["/bin/kubectl", "--kubeconfig=/k", "wait", "--for=condition=Established", "--timeout=60s",
                    "customresourcedefinition/queues.scheduling.run.ai", "customresourcedefinition/configs.kai.scheduler"]
    assert wait["when"] == "kai_scheduler_crds_put is not skipped"


@pytest.mark.parametrize(("version", "module_dir"), [
    ("v0.12.0", "github.com/!n!v!i!d!i!a/!k!a!i-scheduler@v0.12.0"),
    ("v0.17.0", "github.com/kai-scheduler/!k!a!i-scheduler@v0.17.0"),
])
def test_the_chart_is_looked_for_where_go_keeps_the_module(version, module_dir):
    task = _task("Set the chart's location and version")
    templar = _templar(kai_scheduler_sim_chart_dir="", kai_scheduler_sim_kai_version=version,
                       sim_binaries_go_env={"stdout_lines": ["go1.26.0", "/root/go/pkg/mod", "off"]})
    chart_dir = templar.template(trust_as_template(task["ansible.builtin.set_fact"]["kai_scheduler_chart_dir"]))
    assert chart_dir == f"/root/go/pkg/mod/{module_dir}/deployments/kai-scheduler"
    own = _templar(kai_scheduler_sim_chart_dir="/mine/chart", kai_scheduler_sim_kai_version=version,
                   sim_binaries_go_env={"stdout_lines": ["go1.26.0", "/root/go/pkg/mod", "off"]})
    assert own.template(trust_as_template(task["ansible.builtin.set_fact"]["kai_scheduler_chart_dir"])) == "/mine/chart"
