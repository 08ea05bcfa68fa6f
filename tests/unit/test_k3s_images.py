"""The one pinned list of images the lab's VM runs (k3s_lab_images in
roles/k3s/vars/main.yml) against what references them:

- KAI-Scheduler: the only KAI chart available offline is v0.12.0's (Go module
  cache). It is rendered with the role's values; the components whose images
  a cluster would pull (the operator, the install hooks, the services its
  Config enables, with the operator's default image for a service the Config
  leaves out) must be the components of the pinned v0.18.6 list, except those
  named in NOT_PULLED with the reason. KAI's binder source (same module) says which image reservation pods
  get on fake GPU nodes.
- fake-gpu-operator 0.2.0: its chart is not available offline; the list is
  checked for the form its chart renders (repository/<component>:<chart
  version>) and for the images its templates name literally.
- The lab: every image the lab's own manifests (plugins/module_utils/steps/) use.
- The instructor guide's airgap table (docs/docsite/rst/instructor_guide.rst) is exactly this list.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust
from test_chart_render import CHART, HELM, KAI, needs_chart, render_values

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import fraction, gang, nolimit, podgroup, preempt
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate.probes import image_names

ROOT = Path(__file__).resolve().parents[2]
K3S = ROOT / "roles" / "k3s"
VARS = yaml.safe_load((K3S / "vars" / "main.yml").read_text())
IMAGES = VARS["k3s_lab_images"]
KAI_REGISTRY = "ghcr.io/kai-scheduler/kai-scheduler/"
FGO_REGISTRY = "ghcr.io/run-ai/fake-gpu-operator/"
RESERVATION_SOURCE = CHART.parent.parent / "pkg" / "binder" / "binding" / "resourcereservation" / "resource_reservation.go"

OPERATOR_DEFAULTS = CHART.parent.parent / "pkg" / "apis" / "kai" / "v1"
# Components of the v0.12.0 chart and operator that the lab's cluster does not pull, and why.
NOT_PULLED = {
    # Reservation pods of a binder with --fake-gpu-nodes run "ubuntu" instead.
    "resourcereservation", "resource-reservation",
    # Node scale adjuster: only with global.clusterAutoscaling (off in the lab).
    "nodescaleadjuster", "node-scale-adjuster", "scalingpod",
}


def _operator_default_images() -> set[str]:
    """Image names KAI's operator gives each service when its Config leaves it out
    (pkg/apis/kai/v1/<service>/*.go: imageName = "...")."""
    names = set()
    for source in OPERATOR_DEFAULTS.glob("*/*.go"):
        if source.name.endswith("_test.go"):
            continue
        names.update(re.findall(r'^\s*(?:default)?[iI]mageName\s*=\s*"([^"]+)"', source.read_text(), re.M))
        names.update(re.findall(r'^\s*\w+ImageName\s*=\s*"([^"]+)"', source.read_text(), re.M))
    return names


def _name(reference: str) -> str:
    return reference.rsplit("/", 1)[-1].split(":", 1)[0]


def _rendered_images(docs: list[dict]) -> set[str]:
    """Component names of every image a cluster would pull for this render."""
    names = set()
    for doc in docs:
        kind = doc.get("kind")
        hook = (doc.get("metadata", {}).get("annotations") or {}).get("helm.sh/hook", "")
        if kind in ("Deployment", "DaemonSet", "Job") and "post-delete" not in hook:
            spec = doc["spec"]["template"]["spec"]
            for container in spec.get("containers", []) + spec.get("initContainers", []):
                names.add(_name(container["image"]))
        if kind == "Config":
            for section in doc["spec"].values():
                if not isinstance(section, dict):
                    continue
                service = section.get("service") or {}
                if service.get("enabled") is False:
                    continue
                for key in ("image", "resourceReservationImage", "scalingPodImage"):
                    image = service.get(key) or section.get(key) or {}
                    if isinstance(image, dict) and image.get("name"):
                        names.add(image["name"])
    return names


@needs_chart
def test_kai_components_are_those_the_chart_pulls(tmp_path):
    values = render_values("v0.12.0")
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    out = subprocess.run([HELM, "template", "kai-scheduler", str(CHART), "--namespace", "kai-scheduler",
                          "--values", str(values_file)], capture_output=True, text=True, check=True, timeout=60)
    rendered = _rendered_images([d for d in yaml.safe_load_all(out.stdout) if d])
    # The v0.12.0 Config leaves podGrouper out: the operator's default names it.
    defaults = _operator_default_images()
    assert {"podgrouper", "binder", "scheduler"} <= defaults
    pulled = (rendered | defaults) - NOT_PULLED
    pinned = {_name(image) for image in IMAGES["kai_scheduler"]["v0.18.6"] if image.startswith(KAI_REGISTRY)}
    assert pulled == pinned, (sorted(pulled), sorted(pinned))


@pytest.mark.skipif(not RESERVATION_SOURCE.is_file(), reason=f"needs KAI's binder source at {RESERVATION_SOURCE}")
def test_reservation_pods_on_fake_gpu_nodes_run_untagged_ubuntu():
    source = RESERVATION_SOURCE.read_text()
    assert re.search(r'Containers\[0\]\.Image = "ubuntu"', source)
    assert "docker.io/library/ubuntu:latest" in image_names("ubuntu")
    # The moving tag is not pulled: a fixed tag is, and serves that name on the VM.
    assert "docker.io/library/ubuntu:latest" not in IMAGES["kai_scheduler"]["v0.18.6"]
    fixed = VARS["k3s_image_local_tags"]["docker.io/library/ubuntu:latest"]
    assert fixed in IMAGES["kai_scheduler"]["v0.18.6"] and not fixed.endswith(":latest")


def test_kai_images_are_the_pinned_release():
    for image in IMAGES["kai_scheduler"]["v0.18.6"]:
        if image.startswith(KAI_REGISTRY):
            assert image.endswith(":v0.18.6"), image
    # The chart the kai_scheduler role installs is the one listed.
    defaults = yaml.safe_load((KAI / "defaults" / "main.yml").read_text())
    lab_defaults = yaml.safe_load((ROOT / "roles" / "kai_lab" / "defaults" / "main.yml").read_text())
    assert lab_defaults["kai_lab_k3s_kai_version"] in IMAGES["kai_scheduler"]
    assert defaults["kai_scheduler_chart_ref"].startswith("oci://" + KAI_REGISTRY)


def test_fgo_images_are_its_chart_version_and_its_literal_images():
    defaults = yaml.safe_load((ROOT / "roles" / "fake_gpu_operator" / "defaults" / "main.yml").read_text())
    version = str(defaults["fake_gpu_operator_chart_version"])
    fgo = IMAGES["fake_gpu_operator"][version]
    components = {_name(i) for i in fgo if i.startswith(FGO_REGISTRY)}
    # Deployments and DaemonSets that run on a real (non-KWOK) node with the
    # role's values; mig-faker (MIG nodes only) and the DRA/compute-domain
    # plugins (disabled) are not pulled.
    assert components == {"device-plugin", "status-updater", "topology-server", "status-exporter",
                          "kwok-gpu-device-plugin"}
    assert all(i.endswith(":" + version) for i in fgo if i.startswith(FGO_REGISTRY))
    # status-exporter's hostpath-init (ubuntu.image 24.04) and the gpu-operator placeholder (ubuntu:22.04).
    assert {"docker.io/library/ubuntu:24.04", "docker.io/library/ubuntu:22.04"} <= set(fgo)


def _lab_manifests(namespace="kai-lab"):
    yield podgroup.p1(namespace)
    yield nolimit.nl1(namespace)
    yield gang.gang_job(namespace)["spec"]["template"]
    yield from gang.gang_pods(namespace)
    yield from preempt.train_pods(namespace)
    yield preempt.build_pod(namespace)
    yield from fraction.fraction_pods(namespace)


def test_lab_images_are_what_the_lab_manifests_use():
    used = {c["image"] for pod in _lab_manifests() for c in pod["spec"]["containers"]}
    pinned = set(IMAGES["lab"])
    for image in used:
        assert image_names(image) & pinned, image
    assert all(any(image_names(u) & {p} for u in used) for p in pinned)


def test_no_image_that_nothing_pulls():
    everything = [i for versions in (IMAGES["kai_scheduler"], IMAGES["fake_gpu_operator"]) for v in versions.values()
                  for i in v] + IMAGES["lab"]
    assert not [i for i in everything if "busybox" in i]
    # Each as containerd names it, so a listing of the node compares directly.
    assert all(re.match(r"^[a-z0-9.-]+\.[a-z]+/[^:]+:[A-Za-z0-9._-]+$", i) for i in everything), everything


def _needed(**overrides):
    variables = trust(DataLoader().load_from_file(str(K3S / "defaults" / "main.yml")))
    variables.update(trust(DataLoader().load_from_file(str(K3S / "vars" / "main.yml"))))
    variables["ansible_facts"] = {"architecture": "x86_64"}
    variables.update(overrides)
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template("{{ k3s_images_needed }}"))


def test_the_vm_needs_the_union_once():
    needed = _needed(kai_lab_k3s_kai_version="v0.18.6")
    assert needed == sorted(set(IMAGES["kai_scheduler"]["v0.18.6"] + IMAGES["fake_gpu_operator"]["0.2.0"]
                                + IMAGES["lab"]))
    assert needed.count("docker.io/library/ubuntu:22.04") == 1
    # An unpinned version has no list; tasks/images.yml refuses it by name.
    assert "ghcr.io/kai-scheduler/kai-scheduler/binder:v0.18.6" not in _needed(kai_lab_k3s_kai_version="v0.19.0")


def _readme_table() -> dict[str, str]:
    """The airgap table of the instructor's guide (an RST simple table between two comments)."""
    text = (ROOT / "docs" / "docsite" / "rst" / "instructor_guide.rst").read_text()
    block = text.split(".. k3s_lab_images: begin", 1)[1].split(".. k3s_lab_images: end", 1)[0]
    rows = {}
    for line in block.strip().splitlines():
        if line.startswith("``"):
            image, users = re.split(r"(?<=``)\s+", line.strip(), maxsplit=1)
            rows[image.strip("`")] = users
    return rows


def _expected_table() -> dict[str, str]:
    by_image: dict[str, list[str]] = {}
    for version, images in IMAGES["kai_scheduler"].items():
        for image in images:
            by_image.setdefault(image, []).append("KAI-Scheduler " + version)
    for version, images in IMAGES["fake_gpu_operator"].items():
        for image in images:
            by_image.setdefault(image, []).append("fake-gpu-operator " + str(version))
    for image in IMAGES["lab"]:
        by_image.setdefault(image, []).append("the lab")
    return {image: ", ".join(users) for image, users in by_image.items()}


def test_readme_airgap_table_is_the_pinned_list():
    assert _readme_table() == _expected_table()
