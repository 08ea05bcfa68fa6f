"""One KAI version per lab, read from what runs (issue 19).

- The roles derive everything from the one input of each target
  (kai_lab_sim_kai_version, kai_lab_k3s_kai_version).
- The sim's record (kai_running.sim_record, written by kai_scheduler's
  provisioning) from the real `go version -m` of the sim's v0.12.0 binaries
  (fixtures/kai-buildinfo), and read back.
- k3s: the version read through the API from the scheduler Deployment's image
  (built from the image fields of the recorded v0.17.0 Config,
  fixtures/kai-v0.17.0/kai-config.yaml, which KAI's operator turns into the
  scheduler's image) and from a Helm release Secret.
- A set kai_version that differs is refused naming both; the grade's line.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import class_report
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import output as grade_output
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import running as kai_running
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import kai_forms

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
BUILDINFO = (FIXTURES / "kai-buildinfo" / "v0.12.0-sim-build.txt").read_text()
SIM_BIN = "/root/.cache/gsb-kai-lab/bin/kai-v0.12.0_k8s-v1.34.1-04de911e8d/"
SIM_LOCAL = "/root/.cache/gsb-kai-lab/bin/kai-local-v0.12.0-14fddb1657/"
# name -> path as sim_binaries_bin gives them for the recorded build.
BINARIES = {"scheduler": SIM_LOCAL + "scheduler", "binder": SIM_BIN + "binder", "podgrouper": SIM_BIN + "podgrouper",
            "admission": SIM_LOCAL + "admission", "queuecontroller": SIM_BIN + "queuecontroller",
            "podgroupcontroller": SIM_LOCAL + "podgroupcontroller"}
CONFIG = yaml.safe_load((FIXTURES / "kai-v0.17.0" / "kai-config.yaml").read_text())


def _vars(*files, **overrides):
    variables = {}
    for path in files:
        variables.update(trust(DataLoader().load_from_file(str(ROOT / path))))
    variables.update(overrides)
    return Templar(loader=DataLoader(), variables=variables)


def _render(templar, expression):
    return templar.template(trust_as_template(expression))


# ---------------------------------------------------------------- derivations in the roles

LAB = ("roles/kai_lab/defaults/main.yml", "roles/kai_lab/vars/main.yml")


@pytest.mark.parametrize("target, version", [("sim", "v0.12.0"), ("k3s", "v0.18.6")])
def test_each_target_has_one_input_and_no_second_version(target, version):
    templar = _vars(*LAB, kai_lab_target=target)
    assert _render(templar, "{{ kai_lab_target_kai_version }}") == version
    # kai_lab_kai_version is only a check, empty unless set.
    assert _render(templar, "{{ kai_lab_kai_version }}") == ""
    defaults = yaml.safe_load((ROOT / LAB[0]).read_text())
    assert "kai_lab_kai_versions" not in defaults


def test_sim_roles_follow_kai_lab_sim_kai_version():
    """The sim's build, profile and chart all come from kai_lab_sim_kai_version."""
    templar = _vars(*LAB, "roles/sim_binaries/defaults/main.yml", "roles/kai_scheduler/defaults/main.yml",
                    kai_lab_sim_kai_version="v0.17.0", kai_lab_sim_kai_bin_dir="", kai_lab_sim_kai_chart_dir="")
    assert _render(templar, "{{ sim_binaries_kai_version }}") == "v0.17.0"
    assert _render(templar, "{{ kai_scheduler_sim_kai_version }}") == "v0.17.0"
    assert _render(templar, "{{ sim_binaries_profile.module }}") == "github.com/kai-scheduler/KAI-scheduler"
    tasks = yaml.safe_load((ROOT / "roles" / "kai_scheduler" / "tasks" / "sim_files.yml").read_text())
    chart_dir = tasks[0]["ansible.builtin.set_fact"]["kai_scheduler_chart_dir"]
    templar.available_variables = dict(templar.available_variables,
                                       sim_binaries_go_env={"stdout_lines": ["go1.26.8", "/go/mod", "off"]})
    assert _render(templar, chart_dir) == "/go/mod/github.com/kai-scheduler/!k!a!i-scheduler@v0.17.0/deployments/kai-scheduler"


@pytest.mark.parametrize("version, registry", [("v0.18.6", "ghcr.io/kai-scheduler/kai-scheduler"),
                                               ("v0.17.0", "ghcr.io/kai-scheduler/kai-scheduler"),
                                               ("v0.12.0", "ghcr.io/nvidia/kai-scheduler")])
def test_k3s_chart_and_images_follow_kai_lab_k3s_kai_version(version, registry):
    """The chart the VM installs and the images it pulls are the same version, from one input,
    for every version a KAI profile covers (not only the one a list was written for)."""
    templar = _vars(*LAB, "roles/kai_scheduler/defaults/main.yml", "roles/kai_scheduler/vars/main.yml",
                    "roles/k3s/defaults/main.yml", "roles/k3s/vars/main.yml",
                    kai_lab_target="k3s", kai_lab_k3s_kai_version=version, ansible_facts={"architecture": "x86_64"})
    assert _render(templar, "{{ kai_scheduler_chart_version }}") == version
    images = _render(templar, "{{ k3s_images_needed }}")
    assert "%s/scheduler:%s" % (registry, version) in images
    # No image of another KAI version.
    kai_images = [i for i in images if i.startswith(registry + "/")]
    assert len(kai_images) == 8 and all(i.endswith(":" + version) for i in kai_images)


@pytest.mark.parametrize("check, refused", [("", False), ("v0.12.0", False), ("v0.17.0", True)])
def test_provisioning_refuses_a_kai_lab_kai_version_other_than_the_targets(check, refused):
    tasks = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "main.yml").read_text())
    task = next(t for t in tasks if t["name"].startswith("Check kai_lab_kai_version"))
    templar = _vars(*LAB, kai_lab_target="sim", kai_lab_kai_version=check)
    assert templar.evaluate_conditional(trust_as_template(task["ansible.builtin.assert"]["that"])) is not refused
    message = _render(templar, task["ansible.builtin.assert"]["fail_msg"])
    assert "kai_lab_kai_version is %s" % check in message and "gets KAI v0.12.0" in message


# ---------------------------------------------------------------- the sim's record

def test_buildinfo_of_the_sim_build_names_kai_v0120_for_every_binary():
    found = kai_running.buildinfo_versions(BUILDINFO)
    assert {path: info["version"] for path, info in found.items()} == {path: "v0.12.0" for path in BINARIES.values()}
    # The sim's own main packages (scheduler) have KAI as a dependency, KAI's own (binder) as the main module.
    assert found[BINARIES["scheduler"]]["module"] == found[BINARIES["binder"]]["module"] == "github.com/NVIDIA/KAI-scheduler"


def test_sim_record_of_the_default_sim_is_v0120_and_reads_back(tmp_path):
    record = kai_running.sim_record("v0.12.0", BUILDINFO, BINARIES)
    assert record["version"] == "v0.12.0" and record["line"] == "v0.12" and record["own_binaries"] is False
    assert {name: entry["version"] for name, entry in record["binaries"].items()} == dict.fromkeys(BINARIES, "v0.12.0")
    path = tmp_path / "kai-version.json"
    path.write_text(json.dumps(record))
    running = kai_running.read_sim_record(str(path))
    assert running.version == "v0.12.0"
    assert str(path) in running.source and "binaries: v0.12.0" in running.source


def test_sim_record_refuses_binaries_of_another_version():
    """-e kai_lab_sim_kai_version=v0.17.0 with v0.12.0 binaries: refused before KAI starts, naming both."""
    with pytest.raises(kai_profiles.KaiProfileError) as error:
        kai_running.sim_record("v0.17.0", BUILDINFO, BINARIES)
    assert "kai_lab_sim_kai_version is v0.17.0" in str(error.value) and "scheduler is v0.12.0" in str(error.value)


def test_own_binaries_from_a_checkout_go_knows_no_version_of_keep_the_asked_version():
    own = "/own/bin/"
    text = "".join("%s%s: go1.26.8\n\tpath\tgithub.com/kai-scheduler/KAI-scheduler/cmd/%s\n"
                   "\tmod\tgithub.com/kai-scheduler/KAI-scheduler\t(devel)\t\n" % (own, name, name) for name in BINARIES)
    record = kai_running.sim_record("v0.17.0", text, {name: own + name for name in BINARIES}, own=True)
    assert record["version"] == "v0.17.0" and record["own_binaries"] is True
    assert all(entry["version"] is None and entry["module"] == "github.com/kai-scheduler/KAI-scheduler"
               for entry in record["binaries"].values())


@pytest.mark.parametrize("content, words", [
    (None, "No such file"),
    ("{not json", "not JSON"),
    (json.dumps({"schema": 1, "version": "v0.99.0"}), "No KAI profile covers v0.99.0"),
    (json.dumps({"version": "v0.12.0"}), "not a record of schema 1"),
])
def test_an_unreadable_sim_record_is_an_environment_failure_naming_it(tmp_path, content, words):
    path = tmp_path / "kai-version.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(kai_running.KaiVersionUnknown) as error:
        kai_running.read_sim_record(str(path))
    assert str(error.value).startswith("environment: ")
    assert str(path) in str(error.value) and words in str(error.value)


# ---------------------------------------------------------------- k3s, through the API

def _scheduler_deployment(tag, namespace="kai-scheduler"):
    """The scheduler Deployment KAI's operator creates from the Config's scheduler image fields."""
    image = CONFIG["spec"]["scheduler"]["service"]["image"]
    registry = "ghcr.io/kai-scheduler/kai-scheduler"  # the released chart's global.registry
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "kai-scheduler-default", "namespace": namespace},
            "spec": {"template": {"spec": {"containers": [
                {"name": "scheduler", "image": "%s/%s:%s" % (registry, image["name"], tag)}]}}}}


def _release_secret(chart_version, namespace="kai-scheduler"):
    """A Helm 3 release Secret: data.release is base64 (the API's) of base64 (Helm's) of gzip of the release JSON."""
    release = {"name": "kai-scheduler", "chart": {"metadata": {"name": "kai-scheduler", "version": chart_version,
                                                               "appVersion": chart_version}}}
    helm = base64.b64encode(gzip.compress(json.dumps(release).encode()))
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": "sh.helm.release.v1.kai-scheduler.v1", "namespace": namespace,
                         "labels": {"name": "kai-scheduler", "owner": "helm", "status": "deployed", "version": "1"}},
            "data": {"release": base64.b64encode(helm).decode()}}


class _Objects(object):
    """The reads of kai_running on a handful of objects (Deployments and Secrets are not in conftest's state)."""

    def __init__(self, *objects, error=None):
        self.objects = objects
        self.error = error

    def list(self, api_version, kind, namespace=None, label_selector=None, field_selector=None):
        if self.error:
            raise kai_running.ClusterError(self.error)
        wanted = dict(term.split("=", 1) for term in (label_selector or "").split(",") if term)
        return [o for o in self.objects if (o["apiVersion"], o["kind"]) == (api_version, kind)
                and o["metadata"]["namespace"] == namespace
                and all((o["metadata"].get("labels") or {}).get(k) == v for k, v in wanted.items())]


def test_k3s_version_is_the_scheduler_image_tag():
    image = CONFIG["spec"]["scheduler"]["service"]["image"]
    assert image["name"] == "scheduler"  # the name kai_running looks for, as the recorded Config has it
    running = kai_running.read_cluster(_Objects(_scheduler_deployment("v0.18.6"), _release_secret("v0.18.6")),
                                       "kai-scheduler")
    assert running.version == "v0.18.6"
    assert "Deployment kai-scheduler/kai-scheduler-default" in running.source and ":v0.18.6" in running.source


def test_k3s_version_falls_back_to_the_helm_release_chart_version():
    # The recorded Config's tag is 0.0.0 (a chart rendered from source): no version; the release says which.
    tag = CONFIG["spec"]["scheduler"]["service"]["image"]["tag"]
    running = kai_running.read_cluster(_Objects(_scheduler_deployment(tag), _release_secret("v0.17.0")), "kai-scheduler")
    assert running.version == "v0.17.0" and "sh.helm.release.v1.kai-scheduler.v1" in running.source


def test_k3s_version_that_cannot_be_read_names_everything_looked_at():
    tag = CONFIG["spec"]["scheduler"]["service"]["image"]["tag"]
    with pytest.raises(kai_running.KaiVersionUnknown) as error:
        kai_running.read_cluster(_Objects(_scheduler_deployment(tag), _release_secret("0.0.0")), "kai-scheduler")
    looked = error.value.looked_at
    assert any("kai-scheduler-default" in item and "0.0.0" in item for item in looked)
    assert any("sh.helm.release.v1.kai-scheduler.v1" in item and "'0.0.0'" in item for item in looked)
    with pytest.raises(kai_running.KaiVersionUnknown) as error:
        kai_running.read_cluster(_Objects(error="connection refused"), "kai-scheduler")
    assert "connection refused" in str(error.value) and "Deployments of namespace kai-scheduler" in str(error.value)


# ---------------------------------------------------------------- the check, and the grade's words

def test_a_different_kai_version_is_refused_naming_both():
    running = kai_running.RunningKai("v0.12.0", "the sim record /s/kai/kai-version.json")
    kai_running.check_expected(None, running)
    kai_running.check_expected("v0.12.0", running)
    with pytest.raises(kai_running.KaiVersionMismatch) as error:
        kai_running.check_expected("v0.17.0", running)
    assert "kai_version is v0.17.0 but the KAI-Scheduler that runs is v0.12.0" in str(error.value)
    assert "/s/kai/kai-version.json" in str(error.value)


def test_the_line_names_the_kai_and_step_5_where_it_is_not_the_lab_texts():
    old = kai_forms.describe(kai_running.RunningKai("v0.12.0", "the sim record /s"))
    assert old["differences"] == [{"step": "gang", "number": 5, "since": "v0.14.7"},
                                  {"step": "preempt", "number": 6, "since": "v0.14.7"}]
    line = grade_output.kai_line(old, "en")
    assert line.startswith("KAI-Scheduler v0.12.0 (read from the sim record /s)")
    assert "not the lab text's v0.18.6" in line and "step 5 uses an explicit PodGroup" in line and "v0.14.7" in line
    assert "5단계" in grade_output.kai_line(old, "ko")
    # v0.17.0 groups the Job as the text writes it: not the lab's version, but no step differs.
    newer = kai_forms.describe(kai_running.RunningKai("v0.17.0", "x"))
    assert newer["differences"] == [] and "every step as the text writes it" in grade_output.kai_line(newer, "en")
    lab = kai_forms.describe(kai_running.RunningKai("v0.18.6", "x"))
    assert "the lab text's version" in grade_output.kai_line(lab, "en")


def _grade_with(kai):
    grade = {"steps": [{"id": "gang", "number": 5, "checks": [
        {"id": "gang.reason", "status": "passed", "message": "OK", "hint": "", "duration": 0.1}]}],
        "environment": [], "counts": {"passed": 1, "failed": 0, "unverified": 0}, "duration": 0.2,
        "score": 100.0, "points": 4, "max_points": 4, "passed": True, "kai_version": kai["version"]}
    kai["line"] = grade_output.kai_line(kai, "en")
    grade["kai"] = kai
    return grade


def test_table_junit_and_class_summary_say_which_kai_was_graded():
    grade = _grade_with(kai_forms.describe(kai_running.RunningKai("v0.12.0", "the sim record /s")))
    table = grade_output.summary_table(grade)
    assert table[0] == grade["kai"]["line"]  # read before anything else
    junit = grade_output.junit_xml(grade)
    assert '<property name="kai_version" value="v0.12.0"/>' in junit and "step 5 uses an explicit PodGroup" in junit
    summary = class_report.class_summary({"learner1": {"grade": grade}}, "t")
    assert summary["learners"][0]["kai"] == "KAI v0.12.0 (not the lab text's v0.18.6; steps 5, 6 in their own form)"
    assert "[KAI v0.12.0 (not the lab text's v0.18.6; steps 5, 6 in their own form)]" in \
        class_report.console_lines(summary)[0]


# ---------------------------------------------------------------- the modules

COLLECTION_PATH = ROOT / ".collections"


def _run_module(name, tmp_path, **args):
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    module = COLLECTION_PATH / "ansible_collections/gsb/kai_lab/plugins/modules" / (name + ".py")
    done = subprocess.run([sys.executable, str(module), str(path)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(COLLECTION_PATH)), check=False)
    return json.loads(done.stdout)


def test_grade_module_reports_the_recorded_version_and_refuses_another(tmp_path, fixtures):
    record = tmp_path / "kai-version.json"
    record.write_text(json.dumps(kai_running.sim_record("v0.12.0", BUILDINFO, BINARIES)))
    workdir = fixtures.write_files(tmp_path / "gsb-kai", fixtures.finished()["files"])
    common = dict(workdir=workdir, kubeconfig=str(tmp_path / "no-kubeconfig"), lang="en", time_limit=10,
                  kai_record=str(record), _ansible_check_mode=True)
    graded = _run_module("kai_lab_grade", tmp_path, **common)
    assert not graded.get("failed"), graded.get("msg")
    assert graded["grade"]["kai_version"] == "v0.12.0" and graded["grade"]["kai"]["differences"][0]["number"] == 5
    assert graded["table"][0].startswith("KAI-Scheduler v0.12.0 (read from the sim record %s" % record)

    refused = _run_module("kai_lab_grade", tmp_path, kai_version="v0.17.0", **common)
    assert refused["failed"] and "kai_version is v0.17.0 but the KAI-Scheduler that runs is v0.12.0" in refused["msg"]
    assert "grade" not in refused

    record.unlink()
    missing = _run_module("kai_lab_grade", tmp_path, **common)
    assert missing["failed"] and missing["msg"].startswith("environment: ") and str(record) in missing["msg"]
    assert missing["environment"][0]["id"] == "environment.kai_version"
