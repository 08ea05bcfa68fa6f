"""The k3s-target task files of fake_gpu_operator and kai_scheduler: chart
choice, Helm values, readiness conditions and the KAI < v0.16 Config fix,
evaluated from the real task files with Ansible's templating engine."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu

ROOT = Path(__file__).resolve().parents[2]
FGO = ROOT / "roles" / "fake_gpu_operator"
KAI = ROOT / "roles" / "kai_scheduler"
K3S = ROOT / "roles" / "k3s"



def _defaults(role: Path) -> dict:
    variables = trust(DataLoader().load_from_file(str(role / "defaults" / "main.yml")))
    if (role / "vars" / "main.yml").exists():  # derived values (kai_scheduler_chart_version)
        variables.update(trust(DataLoader().load_from_file(str(role / "vars" / "main.yml"))))
    return variables


def _templar(*roles: Path, **overrides) -> Templar:
    variables: dict = {}
    for role in roles:
        variables.update(_defaults(role))
    variables.update(overrides)
    return Templar(loader=DataLoader(), variables=variables)


def _task(role: Path, name_start: str) -> dict:
    tasks = yaml.safe_load((role / "tasks" / "k3s.yml").read_text())
    return next(task for task in tasks if task["name"].startswith(name_start))


def _render(templar: Templar, value):
    return templar.template(trust(value))


# --- fake-gpu-operator -------------------------------------------------------


def _node(name: str, gpus: str | None, fake: str | None) -> dict:
    labels = {kai_gpu.NODE_POOL_LABEL: kai_gpu.NODE_POOL, "kubernetes.io/hostname": name}
    if fake is not None:
        labels["run.ai/fake.gpu"] = fake
    allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    if gpus is not None:
        allocatable["nvidia.com/gpu"] = gpus
    return {"metadata": {"name": name, "labels": labels}, "status": {"allocatable": allocatable}}


@pytest.mark.parametrize(
    ("nodes", "ready"),
    [
        ([_node("kai-lab-vm", "4", "true")], True),
        ([], False),
        ([_node("kai-lab-vm", None, None)], False),
        ([_node("kai-lab-vm", "4", None)], False),
        ([_node("kai-lab-vm", "2", "true")], False),
        ([_node("kai-lab-vm", "4", "true"), _node("other", "0", "true")], False),
        ([_node("kai-lab-vm", "4", "true"), _node("other", "4", "true")], True),
    ],
)
def test_fgo_waits_for_gpu_count_and_fake_label(nodes, ready):
    task = _task(FGO, "Wait until the node shows its fake GPUs")
    templar = _templar(FGO, fake_gpu_operator_k3s_nodes={"resources": nodes})
    assert templar.evaluate_conditional(trust_as_template(task["until"])) is ready


def test_fgo_values_match_the_lab_and_kai():
    templar = _templar(FGO, fake_gpu_operator_chart_version="0.2.0")
    values = yaml.safe_load(_render(templar, (FGO / "templates" / "k3s-values.yaml.j2").read_text()))
    assert values["topology"]["nodePools"][kai_gpu.NODE_POOL]["gpuCount"] == 4
    assert values["topology"]["nodePoolLabelKey"] == kai_gpu.NODE_POOL_LABEL
    # Without KAI's defaults loaded (FGO is installed first) and with them.
    assert values["environment"]["resourceReservationNamespace"] == "kai-resource-reservation"
    kai = yaml.safe_load((KAI / "defaults" / "main.yml").read_text())
    templar = _templar(FGO, KAI)
    values = yaml.safe_load(_render(templar, (FGO / "templates" / "k3s-values.yaml.j2").read_text()))
    assert values["environment"]["resourceReservationNamespace"] == kai["kai_scheduler_reservation_namespace"]


def test_fgo_images_are_not_pulled_in_airgap_mode():
    template = (FGO / "templates" / "k3s-values.yaml.j2").read_text()
    online = yaml.safe_load(_render(_templar(FGO, fake_gpu_operator_chart_version="0.2.0"), template))
    assert "statusUpdater" not in online
    airgap = yaml.safe_load(
        _render(_templar(FGO, fake_gpu_operator_chart_version="0.2.0", k3s_airgap_dir="/srv/lab"), template)
    )
    assert airgap["topology"] == online["topology"]
    components = {key: value for key, value in airgap.items() if key not in ("topology", "environment")}
    assert len(components) == 11
    assert all(value == {"image": {"pullPolicy": "IfNotPresent"}} for value in components.values())


def test_fgo_reservation_rbac_comes_from_the_chart_alone():
    """FGO 0.2.0's chart binds status-updater to ClusterRole fake-status-updater-pod-patch
    (pods: patch, update) by default; the role must not keep a duplicate Role."""
    text = (FGO / "tasks" / "k3s.yml").read_text()
    assert "pods-patcher" not in yaml.safe_dump(yaml.safe_load(text))
    values = yaml.safe_load(_render(_templar(FGO), (FGO / "templates" / "k3s-values.yaml.j2").read_text()))
    # The chart's default (podPatchRbac.enabled: true) is not turned off.
    assert "podPatchRbac" not in yaml.safe_dump(values)


def _fgo_render(values: dict, with_topology: bool = True) -> str:
    """A `helm template` of fake-gpu-operator's chart as it prints it: `# Source:` headers, documents without a
    namespace; its templates/topology-cm.yml holds the values' topology as YAML (Helm's toYaml: keys sorted)."""
    docs = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "status-updater"}}]
    if with_topology:
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "topology"},
                     "data": {"topology.yml": yaml.safe_dump(values["topology"], sort_keys=True).rstrip("\n")}})
    return "".join("---\n# Source: fake-gpu-operator/templates/x.yml\n" + yaml.safe_dump(d) for d in docs)


def test_fgo_puts_back_its_namespace_and_the_charts_topology_every_run():
    templar = _templar(FGO, fake_gpu_operator_chart_version="0.2.0")
    values = yaml.safe_load(_render(templar, (FGO / "templates" / "k3s-values.yaml.j2").read_text()))
    templar = _templar(FGO, fake_gpu_operator_chart_version="0.2.0",
                       fake_gpu_operator_k3s_rendered={"stdout": _fgo_render(values)})
    owned = _render(templar, "{{ fake_gpu_operator_k3s_owned }}")
    assert owned == [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-operator", "labels": {"name": "gpu-operator"}}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "topology", "namespace": "gpu-operator"},
         "data": {"topology.yml": yaml.safe_dump(values["topology"], sort_keys=True).rstrip("\n")}}]
    put = _task(FGO, "Put back fake-gpu-operator's namespace and cluster topology")
    assert put["gsb.kai_lab.kai_lab_owned_objects"]["objects"] == "{{ fake_gpu_operator_k3s_owned }}"
    assert "when" not in put
    # The render is the release's: the same chart, version and values as the install.
    render = _task(FGO, "Render fake-gpu-operator's chart")["kubernetes.core.helm_template"]
    install = _task(FGO, "Install fake-gpu-operator")["kubernetes.core.helm"]
    for key in ("chart_ref", "chart_version", "release_values", "binary_path"):
        assert render[key] == install[key], key
    # A chart without the topology ConfigMap is named, not passed over.
    check = _task(FGO, "Fail when the chart renders no cluster topology")["ansible.builtin.assert"]
    assert templar.evaluate_conditional(trust_as_template(check["that"])) is True
    without = _templar(FGO, fake_gpu_operator_chart_version="0.2.0",
                       fake_gpu_operator_k3s_rendered={"stdout": _fgo_render(values, with_topology=False)})
    assert without.evaluate_conditional(trust_as_template(check["that"])) is False


def test_fgo_makes_the_reservation_namespace_only_when_missing():
    task = _task(FGO, "Create the GPU reservation namespace")["gsb.kai_lab.kai_lab_owned_objects"]
    assert set(task) == {"kubeconfig", "kubectl", "create_only"}
    assert _render(_templar(FGO), task["create_only"]) == [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kai-resource-reservation"}}]


def test_kai_puts_back_its_release_every_run_after_the_install():
    names = [t["name"] for t in yaml.safe_load((KAI / "tasks" / "k3s.yml").read_text())]
    assert names.index("Put back what provision owns of KAI") == names.index(
        "Install KAI-Scheduler {{ kai_scheduler_chart_version }}") + 1
    owned = {t["name"]: t for t in yaml.safe_load((KAI / "tasks" / "k3s_owned.yml").read_text())}
    render = owned["Render KAI's chart as its release was installed, with its CRDs"]["kubernetes.core.helm_template"]
    install = _task(KAI, "Install KAI-Scheduler")["kubernetes.core.helm"]
    for key in ("chart_ref", "chart_version", "binary_path", "release_namespace"):
        assert render[key] == install[key], key
    assert render["include_crds"] is True and "'values.yaml.j2'" in render["release_values"]
    assert not any("when" in task for task in owned.values() if "gsb.kai_lab.kai_lab_owned_objects" in task)


# --- chart source, both roles -------------------------------------------------


@pytest.mark.parametrize(
    ("role", "fact", "version", "chart_archive_var", "file_name"),
    [
        (FGO, "fake_gpu_operator_k3s_archive", "0.2.0", "fake_gpu_operator_chart_archive", "fake-gpu-operator-0.2.0.tgz"),
        (KAI, "kai_scheduler_k3s_archive", "v0.18.6", "kai_scheduler_chart_archive", "kai-scheduler-v0.18.6.tgz"),
    ],
)
def test_chart_source_registry_airgap_or_archive(role, fact, version, chart_archive_var, file_name):
    set_fact = _task(role, "Choose the" if role is FGO else "Set the chart version")["ansible.builtin.set_fact"]
    expression = set_fact[fact]

    # KAI's chart version is the lab's one k3s input (kai_lab_k3s_kai_version).
    lab = {"kai_lab_k3s_kai_version": version} if role is KAI else {}
    online = _templar(role, **lab)
    assert _render(online, expression).strip() == ""

    airgap = _templar(role, k3s_airgap_dir="/srv/lab", k3s_charts_dir="/var/lib/gsb-kai-lab/charts", **lab)
    assert _render(airgap, expression).strip() == f"/var/lib/gsb-kai-lab/charts/{file_name}"

    explicit = _templar(role, **{chart_archive_var: "/root/chart.tgz", "k3s_airgap_dir": "/srv/lab"}, **lab)
    assert _render(explicit, expression).strip() == "/root/chart.tgz"


def test_other_roles_use_only_facts_the_k3s_role_publishes():
    tasks = yaml.safe_load((K3S / "tasks" / "main.yml").read_text())[-1]["block"]
    published = set(next(t for t in tasks if t["name"].startswith("Share Helm"))["ansible.builtin.set_fact"])
    assert {"k3s_helm_binary", "k3s_charts_dir", "k3s_airgap_dir"} <= published
    # ... and the play goes on with the Python environment that has the Kubernetes client.
    assert tasks[-1]["ansible.builtin.include_tasks"]["file"] == "interpreter.yml"
    interpreter = yaml.safe_load((K3S / "tasks" / "interpreter.yml").read_text())
    assert interpreter[-1]["ansible.builtin.set_fact"] == {
        "ansible_python_interpreter": "{{ k3s_python_venv }}/bin/python"
    }

    for role in (FGO, KAI):
        text = (role / "tasks" / "k3s.yml").read_text()
        for name in ("k3s_helm_binary", "k3s_charts_dir", "k3s_airgap_dir"):
            assert name in text
            assert name in published


@pytest.mark.parametrize(
    ("exists", "required", "fails", "switches"),
    [(True, True, False, True), (False, True, True, False), (False, False, False, False), (True, False, False, True)],
)
def test_interpreter_switch(exists, required, fails, switches):
    fail_task, switch_task = yaml.safe_load((K3S / "tasks" / "interpreter.yml").read_text())[1:]
    templar = _templar(K3S, k3s_python_venv_stat={"stat": {"exists": exists}}, k3s_python_venv_required=required)
    assert templar.evaluate_conditional(trust_as_template(fail_task["when"])) is fails
    assert templar.evaluate_conditional(trust_as_template(switch_task["when"])) is switches


# --- KAI ----------------------------------------------------------------------


# The profiles say which charts leave the Config to correct: v0.12's (before v0.16).
@pytest.mark.parametrize(("version", "patched"), [("v0.12.0", True), ("v0.12.3", True), ("v0.17.0", False), ("v0.18.6", False)])
def test_kai_config_is_corrected_only_before_v016(version, patched):
    templar = _templar(KAI, kai_scheduler_chart_version_effective=version)
    patch = _render(templar, "{{ kai_scheduler_k3s_config_patch }}")
    if not patched:
        assert patch == {}
        return
    assert patch == {"spec": {"admission": {"gpuPodRuntimeClassName": ""},
                              "binder": {"resourceReservation": {"namespace": "kai-resource-reservation"}}}}
    # Merged into the chart's Config that provision writes (tasks/k3s_owned.yml), every run.
    owned = yaml.safe_load((KAI / "tasks" / "k3s_owned.yml").read_text())
    put = next(t for t in owned if t["name"].startswith("Put back KAI's namespace"))
    assert "combine(kai_scheduler_k3s_config_patch, recursive=true)" in put["gsb.kai_lab.kai_lab_owned_objects"]["objects"]


def test_kai_waits_for_the_operator_and_every_component():
    task = _task(KAI, "Wait for KAI's Deployments")["gsb.kai_lab.k3s_workloads_wait"]
    names = _render(_templar(KAI), task["deployments"])
    assert set(names) == {
        "kai-operator",
        "kai-scheduler-default",
        "binder",
        "pod-grouper",
        "admission",
        "queue-controller",
        "podgroup-controller",
    }


def test_kai_is_installed_with_the_role_values_template():
    helm = _task(KAI, "Install KAI-Scheduler")["kubernetes.core.helm"]
    assert "'values.yaml.j2'" in helm["release_values"]
    assert helm["release_namespace"] == "{{ kai_scheduler_namespace }}"
    # Its workloads are waited for after, with progress (test_k3s_workloads_wait).
    assert helm["wait"] is False
