"""The k3s role's decisions: which release assets a VM needs, which sha256
each must have, what airgap mode copies, and what k3s is configured with.

The logic lives in roles/k3s/vars/main.yml as Jinja expressions; these tests
evaluate the role's real files with Ansible's own templating engine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "k3s"
SHA256 = re.compile(r"^[0-9a-f]{64}$")



def _role_vars(machine: str = "x86_64", **overrides) -> dict:
    loader = DataLoader()
    variables: dict = {}
    variables.update(trust(loader.load_from_file(str(ROLE / "defaults" / "main.yml"))))
    variables.update(trust(loader.load_from_file(str(ROLE / "vars" / "main.yml"))))
    variables["ansible_facts"] = {"architecture": machine}
    # The one KAI input of the k3s target (roles/kai_lab defaults), which the image list follows.
    variables["kai_lab_k3s_kai_version"] = "v0.18.6"
    variables.update(overrides)
    return variables


def _templar(machine: str = "x86_64", **overrides) -> Templar:
    return Templar(loader=DataLoader(), variables=_role_vars(machine, **overrides))


def _get(templar: Templar, name: str):
    return templar.template(trust_as_template("{{ %s }}" % name))


def _flat(tasks: list[dict]) -> list[dict]:
    """Every task, those inside blocks too (main.yml's root block)."""
    out = []
    for task in tasks:
        out.append(task)
        out += _flat(task.get("block", []) + task.get("rescue", []) + task.get("always", []))
    return out


def _tasks(name: str) -> list[dict]:
    return _flat(yaml.safe_load((ROLE / "tasks" / name).read_text()))


def _assert_task(name: str) -> dict:
    return next(task for task in _tasks("main.yml") if task.get("name") == name)


def _pins_hold(templar: Templar) -> bool:
    """The role's own 'pinned for this architecture' assertion, evaluated."""
    task = _assert_task("Check that k3s and Helm are pinned for this architecture")
    return all(templar.evaluate_conditional(trust_as_template(c)) for c in task["ansible.builtin.assert"]["that"])


@pytest.mark.parametrize(
    ("machine", "arch", "binary", "binary_sha", "images_sha", "helm_sha"),
    [
        (
            "x86_64",
            "amd64",
            "k3s",
            "f95350e3997165974d1d1406f01aabaf869aed7ca790cc2d83a92a82f26a06c5",
            "b8dff3265568e1be66ab72ac0ded68bd266fa37a32c010f1253dba6547a49ce8",
            "a7f81ce08007091b86d8bd696eb4d86b8d0f2e1b9f6c714be62f82f96a594496",
        ),
        (
            "aarch64",
            "arm64",
            "k3s-arm64",
            "fa37b06df7ae82b46de6679a8682b6ece2adf531709bed6299086716c1038147",
            "b6cb3c06f19859d3a5fba54b305097e89d2a86b5bce9e8360a46b9d2e67da565",
            "440cf7add0aee27ebc93fada965523c1dc2e0ab340d4348da2215737fc0d76ad",
        ),
    ],
)
def test_architecture_selects_asset_and_checksum(machine, arch, binary, binary_sha, images_sha, helm_sha):
    templar = _templar(machine)
    assert _get(templar, "k3s_arch") == arch
    assert _get(templar, "k3s_binary_asset") == binary
    assert _get(templar, "k3s_binary_sha256") == binary_sha
    assert _get(templar, "k3s_images_asset") == f"k3s-airgap-images-{arch}.tar.zst"
    assert _get(templar, "k3s_images_sha256") == images_sha
    assert _get(templar, "k3s_helm_asset") == f"helm-v3.19.0-linux-{arch}.tar.gz"
    assert _get(templar, "k3s_helm_sha256") == helm_sha
    assert _pins_hold(templar)


def test_download_urls_escape_the_plus_of_k3s_versions():
    templar = _templar("aarch64")
    assert _get(templar, "k3s_binary_url") == (
        "https://github.com/k3s-io/k3s/releases/download/v1.34.3%2Bk3s1/k3s-arm64"
    )
    assert _get(templar, "k3s_helm_url_full") == "https://get.helm.sh/helm-v3.19.0-linux-arm64.tar.gz"


def test_unsupported_architecture_has_no_pin_and_is_refused():
    templar = _templar("ppc64le")
    assert _get(templar, "k3s_arch") == ""
    assert _get(templar, "k3s_binary_sha256") == ""
    assert not _pins_hold(templar)


def test_version_without_published_checksum_is_refused():
    """Bumping k3s_version alone must not download an unverified binary."""
    templar = _templar("x86_64", k3s_version="v1.35.0+k3s1")
    assert _get(templar, "k3s_binary_sha256") == ""
    assert not _pins_hold(templar)
    templar = _templar("x86_64", k3s_helm_version="v3.20.0")
    assert _get(templar, "k3s_helm_sha256") == ""
    assert not _pins_hold(templar)


def test_every_pinned_checksum_is_a_sha256():
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    for version, arches in defaults["k3s_checksums"].items():
        for arch, assets in arches.items():
            for asset, digest in assets.items():
                assert SHA256.match(digest), (version, arch, asset)
    for version, arches in defaults["k3s_helm_checksums"].items():
        for arch, digest in arches.items():
            assert SHA256.match(digest), (version, arch)
    # The pinned version has every asset for both architectures.
    pinned = defaults["k3s_checksums"][defaults["k3s_version"]]
    assert set(pinned) == {"amd64", "arm64"}
    assert set(pinned["amd64"]) == {"k3s", "k3s-airgap-images-amd64.tar.zst"}
    assert set(pinned["arm64"]) == {"k3s-arm64", "k3s-airgap-images-arm64.tar.zst"}
    assert set(defaults["k3s_helm_checksums"][defaults["k3s_helm_version"]]) == {"amd64", "arm64"}


def test_online_mode_is_the_default():
    assert _get(_templar(), "k3s_airgap") is False


def test_airgap_sources_are_every_file_with_its_sha256():
    templar = _templar("x86_64", k3s_airgap_dir="/srv/lab", k3s_airgap_kai_scheduler_chart_sha256="1" * 64,
                       k3s_airgap_fake_gpu_operator_chart_sha256="2" * 64)
    assert _get(templar, "k3s_airgap") is True
    assert dict(_get(templar, "k3s_airgap_sources")) == {
        "/srv/lab/k3s": "f95350e3997165974d1d1406f01aabaf869aed7ca790cc2d83a92a82f26a06c5",
        "/srv/lab/k3s-airgap-images-amd64.tar.zst": "b8dff3265568e1be66ab72ac0ded68bd266fa37a32c010f1253dba6547a49ce8",
        "/srv/lab/helm-v3.19.0-linux-amd64.tar.gz": "a7f81ce08007091b86d8bd696eb4d86b8d0f2e1b9f6c714be62f82f96a594496",
        "/srv/lab/charts/kai-scheduler-v0.18.6.tgz": "1" * 64,
        "/srv/lab/charts/fake-gpu-operator-0.2.0.tgz": "2" * 64,
    }


def test_airgap_refuses_a_file_whose_sha256_differs():
    """The per-file check in tasks/airgap.yml, fed what stat would return."""
    task = next(t for t in _tasks("airgap_checks.yml") if t["name"] == "Airgap, check each file against its pinned sha256")
    conditions = task["ansible.builtin.assert"]["that"]
    pinned = "f95350e3997165974d1d1406f01aabaf869aed7ca790cc2d83a92a82f26a06c5"

    def holds(stat: dict) -> bool:
        item = {"stat": stat, "item": {"key": "/srv/lab/k3s", "value": pinned}}
        templar = _templar(item=item)
        return all(templar.evaluate_conditional(trust_as_template(c)) for c in conditions)

    assert holds({"exists": True, "checksum": pinned})
    assert not holds({"exists": True, "checksum": "0" * 64})
    assert not holds({"exists": False})


def test_airgap_requires_a_checksum_for_each_chart():
    task = next(t for t in _tasks("airgap_checks.yml")
                if t["name"] == "Airgap, check that each chart archive has its own pinned sha256")
    conditions = task["ansible.builtin.assert"]["that"]

    def holds(**settings) -> bool:
        templar = _templar(k3s_airgap_dir="/srv/lab", **settings)
        return all(templar.evaluate_conditional(trust_as_template(c)) for c in conditions)

    both = {"k3s_airgap_kai_scheduler_chart_sha256": "1" * 64, "k3s_airgap_fake_gpu_operator_chart_sha256": "2" * 64}
    assert holds(**both)
    assert not holds()
    # One chart's checksum is not enough, and the old single dict is refused by name.
    assert not holds(k3s_airgap_kai_scheduler_chart_sha256="1" * 64)
    assert not holds(**both, k3s_airgap_chart_checksums={"kai-scheduler-v0.18.6.tgz": "1" * 64})
    message = _templar(k3s_airgap_dir="/srv/lab").template(trust_as_template(task["ansible.builtin.assert"]["fail_msg"]))
    assert "kai-scheduler-v0.18.6.tgz" in message and "fake-gpu-operator-0.2.0.tgz" in message


def test_config_disables_runtimes_and_keeps_kubeconfig_private():
    templar = _templar(k3s_config_extra={"disable-network-policy": True})
    rendered = templar.template(trust_as_template((ROLE / "templates" / "config.yaml.j2").read_text()))
    config = yaml.safe_load(rendered)
    assert config == {
        "write-kubeconfig-mode": "0600",
        "node-name": "kai-lab-vm",
        "data-dir": "/var/lib/rancher/k3s",
        # The lab uses no ingress, load balancer, metrics API, cluster DNS or volume: nothing of theirs
        # is pulled or run (an airgap bundle need not carry their images).
        "disable": ["runtimes", "traefik", "servicelb", "metrics-server", "coredns", "local-storage"],
        "kube-apiserver-arg": ["event-ttl=24h"],
        "disable-network-policy": True,
    }


def test_config_extra_lists_add_to_the_roles_so_event_ttl_stays():
    # Replacing the list would drop event-ttl, and with it the Events the grader's steps 3, 5 and 6 read.
    config = _config(k3s_config_extra={"kube-apiserver-arg": ["request-timeout=3m"],
                                        "kubelet-arg": ["runtime-request-timeout=15m"],
                                        "write-kubeconfig-mode": "0640"})
    assert config["kube-apiserver-arg"] == ["event-ttl=24h", "request-timeout=3m"]
    assert config["kubelet-arg"] == ["runtime-request-timeout=15m"]
    assert config["write-kubeconfig-mode"] == "0640"


def test_no_lab_pod_claims_a_volume_so_local_storage_is_off():
    from test_k3s_images import _lab_manifests
    volumes = [volume for pod in _lab_manifests() for volume in pod["spec"].get("volumes") or []]
    assert [volume for volume in volumes if "persistentVolumeClaim" in volume or "ephemeral" in volume] == []
    assert {"coredns", "local-storage"} <= set(_config()["disable"])


def _config(**overrides) -> dict:
    templar = _templar(**overrides)
    return yaml.safe_load(templar.template(trust_as_template((ROLE / "templates" / "config.yaml.j2").read_text())))


def test_event_ttl_comes_from_the_shared_lab_variable_and_restarts_k3s():
    # Without the kai_lab role's defaults the role keeps events 24 h as well.
    assert _config()["kube-apiserver-arg"] == ["event-ttl=24h"]
    kai_lab = yaml.safe_load((ROOT / "roles" / "kai_lab" / "defaults" / "main.yml").read_text())
    assert _config(kai_lab_event_ttl=kai_lab["kai_lab_event_ttl"])["kube-apiserver-arg"] == [
        "event-ttl=" + kai_lab["kai_lab_event_ttl"]]
    assert _config(kai_lab_event_ttl="72h")["kube-apiserver-arg"] == ["event-ttl=72h"]
    # A changed config.yaml restarts k3s through its handler, and only so.
    task = _assert_task("Write the k3s configuration")
    assert task["notify"] == "Restart k3s"
    assert task["ansible.builtin.template"]["src"] == "config.yaml.j2"


def test_removing_runtimes_from_k3s_disable_is_refused():
    task = _assert_task("Check that k3s's nvidia RuntimeClass stays disabled")
    condition = trust_as_template(task["ansible.builtin.assert"]["that"])
    assert _templar().evaluate_conditional(condition)
    assert not _templar(k3s_disable=["traefik"]).evaluate_conditional(condition)


def test_unit_runs_the_installed_binary_as_a_server():
    rendered = _templar().template(trust_as_template((ROLE / "templates" / "k3s.service.j2").read_text()))
    assert "ExecStart=/usr/local/bin/k3s server\n" in rendered
    assert "Type=notify" in rendered


def test_restarts_only_through_the_handler():
    handlers = yaml.safe_load((ROLE / "handlers" / "main.yml").read_text())
    # "Restart k3s" and what it listens to first: whether k3s's unit is written yet.
    assert [h["name"] for h in handlers if "systemd_service" in str(h)] == ["Restart k3s"]
    assert [h.get("listen", h["name"]) for h in handlers] == ["Restart k3s", "Restart k3s"]
    assert handlers[1]["when"] == "k3s_restart_unit.stat.exists"
    for name in ("main.yml", "download.yml", "airgap.yml", "airgap_checks.yml", "python.yml", "wheels.yml",
                 "packages.yml", "record.yml", "reachability.yml", "interpreter.yml", "images.yml", "registries.yml"):
        for task in _tasks(name):
            text = yaml.safe_dump(task)
            assert "state: restarted" not in text, (name, task.get("name"))
            assert "state: reloaded" not in text, (name, task.get("name"))


def test_teardown_removes_what_the_role_installs():
    templar = _templar()
    removed = set(_get(templar, "k3s_teardown_paths"))
    assert {
        "/usr/local/bin/k3s", "/usr/local/bin/kubectl", "/usr/local/bin/helm",
        "/etc/systemd/system/k3s.service", "/etc/rancher/k3s", "/var/lib/rancher/k3s",
        "/root/.kube/config", "/var/lib/gsb-kai-lab", "/opt/gsb-kai-lab",
    } <= removed
    # Everything the install creates lives under those paths.
    for name in ("k3s_python_venv", "k3s_helm_dir", "k3s_charts_dir", "k3s_wheels_dir", "k3s_images_dir"):
        path = _get(templar, name)
        assert any(path == root or path.startswith(root + "/") for root in removed), (name, path)


def test_online_mode_installs_k3s_images_from_the_pinned_archive():
    """Online, k3s's own images come from the release's checksummed archive, not from Docker Hub."""
    task = next(t for t in _tasks("download.yml") if "image archive" in t["name"])
    get_url = task["ansible.builtin.get_url"]
    templar = _templar("x86_64")
    assert templar.template(trust_as_template(get_url["url"])) == (
        "https://github.com/k3s-io/k3s/releases/download/v1.34.3%2Bk3s1/k3s-airgap-images-amd64.tar.zst")
    assert templar.template(trust_as_template(get_url["checksum"])) == (
        "sha256:b8dff3265568e1be66ab72ac0ded68bd266fa37a32c010f1253dba6547a49ce8")
    assert templar.template(trust_as_template(get_url["dest"])) == (
        "/var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64.tar.zst")
    assert task["notify"] == "Restart k3s"


def _images_missing(listing: dict, **overrides) -> list[str]:
    task = next(t for t in _tasks("images.yml") if t["name"] == "Find the lab's images k3s does not have")
    templar = _templar(k3s_images_present={"stdout": json.dumps(listing)}, kai_lab_k3s_kai_version="v0.18.6", **overrides)
    templar.available_variables = {**templar.available_variables, **trust(task["vars"])}
    return templar.template(trust_as_template(task["ansible.builtin.set_fact"]["k3s_images_missing"]))


def test_images_are_pulled_online_and_required_airgapped():
    tasks = {t["name"]: t for t in _tasks("images.yml")}
    left = _images_missing({"images": [{"repoTags": ["docker.io/library/ubuntu:22.04"]}, {"repoTags": []}]})
    assert "docker.io/library/ubuntu:22.04" not in left
    assert "ghcr.io/kai-scheduler/kai-scheduler/binder:v0.18.6" in left
    assert tasks["Pull the lab's images"]["when"] == "not k3s_airgap"
    assert tasks["Pull the lab's images"]["ansible.builtin.command"]["argv"][1:3] == ["crictl", "pull"]
    assert "k3s_airgap" in tasks["Fail when an airgapped VM lacks an image"]["when"]


DIGEST = "sha256:" + "a" * 64


def test_an_image_with_a_pinned_digest_is_missing_until_its_tag_holds_that_digest():
    ubuntu = "docker.io/library/ubuntu:22.04"
    pinned = {"k3s_image_digests": {ubuntu: DIGEST}}
    other = {"repoTags": [ubuntu], "repoDigests": ["docker.io/library/ubuntu@sha256:" + "b" * 64]}
    exact = {"repoTags": [ubuntu], "repoDigests": ["docker.io/library/ubuntu@" + DIGEST]}
    assert ubuntu in _images_missing({"images": [other]}, **pinned)
    assert ubuntu not in _images_missing({"images": [exact]}, **pinned)
    # Without a pinned digest the tag alone counts.
    assert ubuntu not in _images_missing({"images": [other]})


def test_an_image_with_a_pinned_digest_is_pulled_at_it_and_tagged():
    tasks = {t["name"]: t for t in _tasks("images.yml")}
    ubuntu = "docker.io/library/ubuntu:22.04"
    pull = tasks["Pull the lab's images"]
    templar = _templar(item=ubuntu, k3s_image_digests={ubuntu: DIGEST})
    templar.available_variables = {**templar.available_variables, **trust(pull["vars"])}
    assert templar.template(trust_as_template(pull["vars"]["k3s_image_ref"])).strip() == "docker.io/library/ubuntu@" + DIGEST
    tag = tasks["Tag the images pulled by digest with their tags"]["ansible.builtin.command"]["argv"]
    assert [templar.template(trust_as_template(a)) for a in tag[-2:]] == ["docker.io/library/ubuntu@" + DIGEST, ubuntu]
    unpinned = _templar(item=ubuntu)
    unpinned.available_variables = {**unpinned.available_variables, **trust(pull["vars"])}
    assert unpinned.template(trust_as_template(pull["vars"]["k3s_image_ref"])).strip() == ubuntu


def test_a_digest_that_is_not_sha256_is_refused():
    task = next(t for t in _tasks("images.yml") if t["name"] == "Check that the lab's images are pinned for these versions")
    conditions = task["ansible.builtin.assert"]["that"]

    def holds(digests):
        templar = _templar(k3s_image_digests=digests, kai_lab_k3s_kai_version="v0.18.6")
        return all(templar.evaluate_conditional(trust_as_template(c)) for c in conditions)

    assert holds({}) and holds({"docker.io/library/ubuntu:22.04": DIGEST})
    assert not holds({"docker.io/library/ubuntu:22.04": "a" * 64})


def test_the_moving_ubuntu_tag_is_a_local_name_of_the_fixed_tag():
    task = next(t for t in _tasks("images.yml") if t["name"] == "Give the fixed-tag images the names the lab's pods ask for")
    needed = _get(_templar(kai_lab_kai_version="v0.18.6"), "k3s_images_needed")
    assert not [image for image in needed if image.endswith(":latest")]

    def to_tag(images):
        templar = _templar(k3s_images_now={"stdout": json.dumps({"images": images})})
        templar.available_variables = {**templar.available_variables, **trust(task["vars"])}
        return [item["key"] for item in templar.template(trust_as_template(task["loop"]))]

    fixed = "docker.io/library/ubuntu:24.04"
    assert fixed in needed
    assert to_tag([{"repoTags": [fixed]}]) == ["docker.io/library/ubuntu:latest"]
    # Tagged before, on the same image: nothing to do; on another image (a pulled :latest): tagged again.
    assert to_tag([{"repoTags": [fixed, "docker.io/library/ubuntu:latest"]}]) == []
    assert to_tag([{"repoTags": [fixed]}, {"repoTags": ["docker.io/library/ubuntu:latest"]}]) == [
        "docker.io/library/ubuntu:latest"]


def _brace_expand(cell: str) -> list[str]:
    match = re.search(r"\{([^}]+)\}", cell)
    if not match:
        return [cell]
    return [cell[:match.start()] + part + cell[match.end():] for part in match.group(1).split(",")]


def test_the_role_readme_says_for_each_image_whether_and_why_its_digest_is_pinned():
    text = (ROLE / "README.md").read_text().split("## Image digests", 1)[1]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| `")]
    listed = {image: (pinned, why) for cells in rows for image in _brace_expand(cells[0].strip("`"))
              for pinned, why in [(cells[1], cells[2])]}
    needed = _get(_templar(kai_lab_kai_version="v0.18.6"), "k3s_images_needed")
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    assert set(needed) == set(listed)
    for image in needed:
        pinned, why = listed[image]
        assert pinned == ("yes" if image in defaults["k3s_image_digests"] else "no"), image
        assert pinned == "yes" or "not reachable" in why, image


PY310 = {"architecture": "aarch64", "python": {"executable": "/usr/bin/python3", "version": {"major": 3, "minor": 10}}}


def test_the_vm_gets_the_pinned_set_of_its_own_python():
    templar = _templar("aarch64", ansible_facts=PY310, role_path=str(ROLE))
    pins = _get(templar, "k3s_python_pins")
    lines = (ROLE / "files" / "constraints" / "py3.10.txt").read_text().splitlines()
    assert pins == [line for line in lines if line and not line.startswith("#")]
    assert "pycparser==3.12" not in pins and any(p.startswith("typing-extensions==") for p in pins)
    assert _get(templar, "k3s_python_versions") == ["3.10", "3.11", "3.12", "3.13"]
    # The venv is made by the Python the set was chosen for.
    install = next(t for t in _tasks("python.yml") if "ansible.builtin.pip" in t)["ansible.builtin.pip"]
    assert templar.template(trust_as_template(install["virtualenv_command"])) == "/usr/bin/python3 -m venv"
    assert install["name"] == "{{ k3s_python_pins }}"


def test_airgap_wheels_are_checked_for_the_vms_python_and_machine(tmp_path):
    task = next(t for t in _tasks("airgap_checks.yml") if t["name"].startswith("Airgap, check on the control host"))
    assert task["delegate_to"] == "localhost" and task["become"] is False
    import sys
    templar = _templar("aarch64", ansible_facts=PY310, role_path=str(ROLE), k3s_airgap_dir=str(tmp_path),
                       ansible_playbook_python=sys.executable)
    argv = templar.template(trust_as_template(task["ansible.builtin.command"]["argv"]))
    assert argv[argv.index("--python-version") + 1] == "3.10"
    assert "--platform=manylinux2014_aarch64" in argv and not [a for a in argv if a.endswith("x86_64")]
    assert "--no-index" in argv and argv[argv.index("--find-links") + 1] == str(tmp_path) + "/wheels"
    # Run as the role would, on an empty wheels directory (no network: --no-index): pip names a pin.
    (tmp_path / "wheels").mkdir()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "No matching distribution" in out.stderr
    assert not (tmp_path / "wheels" / ".pip-check").exists()


def _kubectl_wrapper(tmp_path, data_dir):
    """roles/k3s/templates/kubectl.j2 rendered for data_dir, as a file to run."""
    rendered = _templar(k3s_data_dir=str(data_dir)).template(
        trust_as_template((ROLE / "templates" / "kubectl.j2").read_text()))
    wrapper = tmp_path / "kubectl"
    wrapper.write_text(rendered)
    wrapper.chmod(0o755)
    return wrapper


def test_the_learners_kubectl_is_k3s_bundled_kubectl_with_its_own_kubeconfig():
    """The kubectl on PATH was a link to k3s, whose self-extracting binary reads root's 0600
    /etc/rancher/k3s/config.yaml on every command: the learner's `kubectl get queues` printed
    `level=warning msg="open /etc/rancher/k3s/config.yaml: permission denied"` three times (issue 43).
    Now it runs the kubectl of k3s's data directory (which reads no k3s configuration), with the
    user's own kubeconfig unless KUBECONFIG is set; root keeps k3s's default."""
    task = _assert_task("Put kubectl on PATH (k3s's bundled kubectl, for every user)")
    assert task["ansible.builtin.template"]["src"] == "kubectl.j2"
    assert task["ansible.builtin.template"]["follow"] is False   # replaces an older link, never writes through it
    # The data directory's kubectl, standing in here for k3s's (a link named kubectl, as k3s's
    # package-cli makes it): `env`, which shows what the wrapper gives it. In a directory
    # anyone may enter: the wrapper runs as a user other than root.
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        base.chmod(0o755)
        (base / "k3s" / "data" / "current" / "bin").mkdir(parents=True)
        (base / "k3s" / "data" / "current" / "bin" / "kubectl").symlink_to(shutil.which("env"))
        wrapper = _kubectl_wrapper(base, base / "k3s")
        home = base / "learner"
        home.mkdir()
        # As a user other than root: nobody (from root), or this user.
        user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []

        def run(argv, **env):
            return subprocess.run(argv, env=dict({"HOME": str(home), "PATH": "/usr/bin:/bin"}, **env),
                                  capture_output=True, text=True, check=True)

        learner = run(user + [str(wrapper)])
        assert "KUBECONFIG=%s/.kube/config" % home in learner.stdout.splitlines()
        assert learner.stderr == ""
        assert "KUBECONFIG=/srv/other" in run(user + [str(wrapper)], KUBECONFIG="/srv/other").stdout.splitlines()
        if os.geteuid() == 0:
            root = run([str(wrapper)], HOME="/root")
            assert not [line for line in root.stdout.splitlines() if line.startswith("KUBECONFIG=")]
    # Teardown removes it.
    assert "{{ k3s_install_dir }}/kubectl" in yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["k3s_teardown_paths"]
