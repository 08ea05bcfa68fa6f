"""The one pinned list of images the lab's VM runs (k3s_lab_images in
roles/k3s/vars/main.yml, with KAI-Scheduler's images derived from its version
by the filter kai_chart_images) against what references them:

- KAI-Scheduler: a version's images are its released chart's registry, image
  names and version (plugins/module_utils/kai/profiles.py, chart_images). They
  are checked against KAI v0.17.0's applied Config, recorded on the sim
  (tests/unit/fixtures/kai-v0.17.0/kai-config.yaml), and, where the charts are
  on this machine, against v0.12.0's chart rendered with the role's values (Go
  module cache) and v0.17.0's (a source checkout: KAI_LAB_K3S_SOURCES, as the
  k3s bundle's builder reads it): the components whose images a cluster would
  pull (the operator, the install hooks, the services its Config enables, with
  the operator's default image for a service the Config leaves out), except
  those named in NOT_PULLED with the reason. KAI's binder source (same module)
  says which image reservation pods get on fake GPU nodes.
- fake-gpu-operator 0.2.0: its chart is not available offline; the list is
  checked for the form its chart renders (repository/<component>:<chart
  version>) and for the images its templates name literally.
- The lab: every image the lab's own manifests (plugins/module_utils/steps/) use.
- The instructor guide's airgap table (docs/docsite/rst/instructor_guide.rst) is exactly this list.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust
from test_chart_render import CHART, HELM, KAI, needs_chart, render_values

from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import fraction, gang, nolimit, podgroup, preempt
from ansible_collections.gsb.kai_lab.plugins.module_utils.gate.probes import image_names
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles

ROOT = Path(__file__).resolve().parents[2]
K3S = ROOT / "roles" / "k3s"
VARS = yaml.safe_load((K3S / "vars" / "main.yml").read_text())
IMAGES = VARS["k3s_lab_images"]
KAI_REGISTRY = "ghcr.io/kai-scheduler/kai-scheduler/"
FGO_REGISTRY = "ghcr.io/run-ai/fake-gpu-operator/"
RESERVATION_SOURCE = CHART.parent.parent / "pkg" / "binder" / "binding" / "resourcereservation" / "resource_reservation.go"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
LAB_VERSION = kai_profiles.LAB_VERSION
# KAI v0.17.0's source, where the k3s bundle's builder finds it (tests/k3s_bundle/build.py --sources).
KAI_V017 = Path(os.environ.get("KAI_LAB_K3S_SOURCES") or Path(os.environ.get("KAI_LAB_CACHE")
                or Path.home() / ".cache" / "gsb-kai-lab") / "k3s-sources") / "kai-scheduler"


def _is_kai_v017(tree: Path) -> bool:
    """A KAI checkout at v0.17.0: its .source-version (a `git archive`) or its git tag says so."""
    marker = tree / ".source-version"
    if marker.is_file():
        return marker.read_text().split()[:1] == ["v0.17.0"]
    done = subprocess.run(["git", "-C", str(tree), "describe", "--tags", "--exact-match"], capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() == "v0.17.0"


needs_v017_source = pytest.mark.skipif(
    HELM is None or not (KAI_V017 / "deployments" / "kai-scheduler" / "Chart.yaml").is_file() or not _is_kai_v017(KAI_V017),
    reason=f"needs KAI-Scheduler v0.17.0's source at {KAI_V017} (KAI_LAB_K3S_SOURCES/kai-scheduler) and helm")

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


def _pulled(rendered: set[str], defaults: set[str]) -> set[str]:
    return (rendered | defaults) - NOT_PULLED


def _derived(version: str) -> list[str]:
    return _needed(kai_lab_k3s_kai_version=version)


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
    registry = kai_profiles.profile_for("v0.12.0")["chart"]["registry"]
    derived = {_name(image) for image in _derived("v0.12.0") if image.startswith(registry + "/")}
    assert _pulled(rendered, defaults) == derived, (sorted(_pulled(rendered, defaults)), sorted(derived))


def test_kai_v017_images_are_its_recorded_configs_services_the_operator_and_the_hook_image():
    """The VM's images for KAI v0.17.0 (the newest tag anywhere; no v0.18 list existed but the lab text's)
    are the services its applied Config enables, recorded on the sim, its operator and crd-upgrader
    (the chart's hooks), in the release's registry at the tag; the reservation image is not pulled."""
    config = yaml.safe_load((FIXTURES / "kai-v0.17.0" / "kai-config.yaml").read_text())
    enabled = {section["service"]["image"]["name"] for section in config["spec"].values()
               if isinstance(section, dict) and (section.get("service") or {}).get("enabled") is True}
    assert {"scheduler", "binder", "admission"} <= enabled
    registry = "ghcr.io/kai-scheduler/kai-scheduler/"
    needed = _derived("v0.17.0")
    kai = {_name(image) for image in needed if image.startswith(registry)}
    assert kai == enabled | {"operator", "crd-upgrader"}
    assert all(image.endswith(":v0.17.0") for image in needed if image.startswith(registry))
    assert "resourcereservation" not in kai and "docker.io/library/ubuntu:24.04" in needed
    # The lab text's version and any other a profile covers, from the same derivation.
    assert {_name(i) for i in _derived(LAB_VERSION) if i.startswith(registry)} == kai
    assert all(i.endswith(":" + LAB_VERSION) for i in _derived(LAB_VERSION) if i.startswith(registry))


def test_a_kai_version_no_profile_covers_is_refused_naming_the_known_lines():
    with pytest.raises(AnsibleError, match=r"No KAI profile covers v0\.19\.0\. Known KAI lines: v0\.12, v0\.17, v0\.18"):
        _derived("v0.19.0")


@needs_v017_source
def test_kai_v017_chart_pulls_the_derived_images_from_the_release_registry(tmp_path):
    """KAI v0.17.0's chart, packaged as its release workflow does (its registry into values.yaml),
    rendered with the role's values: the images it and its operator pull are the derived ones."""
    workflow = (KAI_V017 / ".github" / "workflows" / "on-release.yaml").read_text()
    registry = re.search(r'DOCKER_REGISTRY: "([^"]+)"', workflow).group(1)
    assert registry == kai_profiles.profile_for("v0.17.0")["chart"]["registry"]
    chart = tmp_path / "kai-scheduler"
    subprocess.run(["cp", "-r", str(KAI_V017 / "deployments" / "kai-scheduler"), str(chart)], check=True)
    values_yaml = chart / "values.yaml"
    values_yaml.write_text(values_yaml.read_text().replace("registry/local/kai-scheduler", registry))
    (chart / "Chart.yaml").write_text((chart / "Chart.yaml").read_text().replace("0.0.0", "v0.17.0"))
    # The Config inline, as `helm template` (the sim) renders it: the profile's template values.
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(render_values("v0.17.0")))
    inline = tmp_path / "inline.yaml"
    inline.write_text(yaml.safe_dump(kai_profiles.profile_for("v0.17.0")["chart"]["template_values"]))
    out = subprocess.run([HELM, "template", "kai-scheduler", str(chart), "--namespace", "kai-scheduler",
                          "--values", str(values), "--values", str(inline)],
                         capture_output=True, text=True, check=True, timeout=60)
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    images = set()
    for doc in docs:
        if doc.get("kind") in ("Deployment", "Job"):
            hook = (doc["metadata"].get("annotations") or {}).get("helm.sh/hook", "")
            if "post-delete" not in hook:
                images |= {c["image"] for c in doc["spec"]["template"]["spec"]["containers"]}
        if doc.get("kind") == "Config":
            for section in doc["spec"].values():
                service = section.get("service") if isinstance(section, dict) else None
                if service and service.get("enabled") is True:
                    image = service["image"]
                    images.add("%s/%s:%s" % (image["repository"], image["name"], image["tag"]))
    derived = {i for i in _derived("v0.17.0") if i.startswith(registry + "/")}
    assert images == derived, (sorted(images), sorted(derived))


@pytest.mark.skipif(not RESERVATION_SOURCE.is_file(), reason=f"needs KAI's binder source at {RESERVATION_SOURCE}")
def test_reservation_pods_on_fake_gpu_nodes_run_untagged_ubuntu():
    source = RESERVATION_SOURCE.read_text()
    assert re.search(r'Containers\[0\]\.Image = "ubuntu"', source)
    assert "docker.io/library/ubuntu:latest" in image_names("ubuntu")
    # The moving tag is not pulled: a fixed tag is, and serves that name on the VM.
    assert "docker.io/library/ubuntu:latest" not in IMAGES["kai_scheduler"]
    fixed = VARS["k3s_image_local_tags"]["docker.io/library/ubuntu:latest"]
    assert fixed in IMAGES["kai_scheduler"] and not fixed.endswith(":latest")


def test_kai_images_are_the_pinned_release():
    needed = _derived(LAB_VERSION)
    for image in needed:
        if image.startswith(KAI_REGISTRY):
            assert image.endswith(":" + LAB_VERSION), image
    # The chart the kai_scheduler role installs is the one listed.
    defaults = yaml.safe_load((KAI / "defaults" / "main.yml").read_text())
    lab_defaults = yaml.safe_load((ROOT / "roles" / "kai_lab" / "defaults" / "main.yml").read_text())
    assert lab_defaults["kai_lab_k3s_kai_version"] == LAB_VERSION
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
    everything = ([i for v in IMAGES["fake_gpu_operator"].values() for i in v] + IMAGES["kai_scheduler"]
                  + IMAGES["lab"] + _derived(LAB_VERSION))
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
    needed = _needed(kai_lab_k3s_kai_version=LAB_VERSION)
    assert needed == sorted(set(kai_profiles.chart_images(LAB_VERSION) + IMAGES["kai_scheduler"]
                                + IMAGES["fake_gpu_operator"]["0.2.0"] + IMAGES["lab"]))
    assert needed.count("docker.io/library/ubuntu:22.04") == 1


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
    """The lab text's KAI version's images (another version's are the same names at its tag)."""
    by_image: dict[str, list[str]] = {}
    for image in kai_profiles.chart_images(LAB_VERSION) + IMAGES["kai_scheduler"]:
        by_image.setdefault(image, []).append("KAI-Scheduler " + LAB_VERSION)
    for version, images in IMAGES["fake_gpu_operator"].items():
        for image in images:
            by_image.setdefault(image, []).append("fake-gpu-operator " + str(version))
    for image in IMAGES["lab"]:
        by_image.setdefault(image, []).append("the lab")
    return {image: ", ".join(users) for image, users in by_image.items()}


def test_readme_airgap_table_is_the_pinned_list():
    assert _readme_table() == _expected_table()
