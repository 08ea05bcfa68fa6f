"""Render the real KAI-Scheduler chart with the role's real values and check
what the lab depends on: GPU sharing on, no RuntimeClass injected, the GPU
reservation namespace shared with fake-gpu-operator, and the PriorityClasses
train (50) and build (100).

The only KAI chart available offline is v0.12.0's, from KAI's Go module in
the module cache (the sim builds from it). The lab's version, v0.18.6, cannot
be fetched here: for it only the values template is checked.
"""

from __future__ import annotations

import copy
import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import render as kai_profile_render
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import PRIORITIES

ROOT = Path(__file__).resolve().parents[2]
KAI = ROOT / "roles" / "kai_scheduler"
FGO = ROOT / "roles" / "fake_gpu_operator"
CHART_VERSION = "v0.12.0"
CHART_IN_MODULE = "github.com/!n!v!i!d!i!a/!k!a!i-scheduler@" + CHART_VERSION + "/deployments/kai-scheduler"
# KAI's default reservation namespace and service account (constants.DefaultResourceReservationName).
KAI_RESERVATION_DEFAULT = "kai-resource-reservation"


# --- finding helm and the chart -------------------------------------------------


def _helm() -> str | None:
    if os.environ.get("KAI_LAB_HELM"):
        return os.environ["KAI_LAB_HELM"]
    cache = os.environ.get("KAI_LAB_CACHE") or os.path.expanduser("~/.cache/gsb-kai-lab")
    built = sorted(glob.glob(os.path.join(cache, "bin", "kai-*", "helm")), key=os.path.getmtime)
    return built[-1] if built else shutil.which("helm")


def _module_cache() -> Path:
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    if shutil.which("go"):
        out = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False)
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    return Path(os.environ.get("GOPATH") or os.path.expanduser("~/go")) / "pkg" / "mod"


HELM = _helm()
CHART = _module_cache() / CHART_IN_MODULE
needs_chart = pytest.mark.skipif(
    HELM is None or not os.access(HELM, os.X_OK) or not CHART.is_dir(),
    reason=(
        f"needs helm (KAI_LAB_HELM, the sim's build in ~/.cache/gsb-kai-lab/bin or PATH: found {HELM}) "
        f"and KAI's {CHART_VERSION} chart in the Go module cache ({CHART}); the sim target's "
        "gsb.kai_lab.sim_binaries role downloads both"
    ),
)


# --- the role's templating ----------------------------------------------------------



def _role_vars(*roles: Path, **overrides) -> dict:
    variables: dict = {}
    for role in roles:
        variables.update(trust(DataLoader().load_from_file(str(role / "defaults" / "main.yml"))))
    variables.update(overrides)
    return variables


def _templar(*roles: Path, **overrides) -> Templar:
    return Templar(loader=DataLoader(), variables=_role_vars(*roles, **overrides))


def render_values(version: str, **overrides) -> dict:
    """roles/kai_scheduler/templates/values.yaml.j2 as the role renders it."""
    templar = _templar(KAI, kai_scheduler_chart_version_effective=version, **overrides)
    text = templar.template(trust_as_template((KAI / "templates" / "values.yaml.j2").read_text()))
    return yaml.safe_load(text)


def fgo_reservation_namespace(**overrides) -> str:
    """fake_gpu_operator_reservation_namespace as FGO's role sees it: FGO is
    installed before KAI, so KAI's role defaults are not loaded yet."""
    return str(_templar(FGO, **overrides).template(trust_as_template("{{ fake_gpu_operator_reservation_namespace }}")))


def helm_template(values: dict, tmp_path: Path) -> list[dict]:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    out = subprocess.run(
        [HELM, "template", "kai-scheduler", str(CHART), "--namespace", "kai-scheduler",
         "--include-crds", "--values", str(values_file)],
        capture_output=True, text=True, check=True, timeout=60,
    )
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def _merge(base: dict, patch: dict) -> dict:
    merged = copy.deepcopy(base)
    for key, value in patch.items():
        merged[key] = _merge(merged.get(key, {}), value) if isinstance(value, dict) else value
    return merged


def corrected_by_k3s_tasks(config: dict, version: str, **overrides) -> dict:
    """The Config roles/kai_scheduler/tasks/k3s_owned.yml writes: the rendered Config with the role's
    correction (kai_scheduler_k3s_config_patch, empty when the chart needs none) merged in."""
    role_vars = trust(DataLoader().load_from_file(str(KAI / "vars" / "main.yml")))
    templar = _templar(KAI, kai_scheduler_chart_version_effective=version,
                       kai_scheduler_k3s_config_patch=role_vars["kai_scheduler_k3s_config_patch"], **overrides)
    patch = templar.template(trust_as_template("{{ kai_scheduler_k3s_config_patch }}"))
    return _merge(config, patch)


def corrected_by_sim_tasks(config: dict, version: str, **overrides) -> dict:
    """The Config correction of roles/kai_scheduler/tasks/sim.yml (applied there): the version
    profile's patch for the role's settings, merged into the rendered Config."""
    settings = {"runtime_class": str(_role_vars(KAI, **overrides)["kai_scheduler_runtime_class"])}
    return _merge(config, kai_profile_render.config_patch(version, settings))


def sim_values(version: str, **overrides) -> dict:
    """The chart values roles/kai_scheduler/tasks/sim_files.yml passes (the profile's, for the role's settings)."""
    variables = _role_vars(KAI, **overrides)
    return kai_profile_render.chart_values(version, {
        "gpu_sharing": bool(variables["kai_scheduler_gpu_sharing"]),
        "reservation_namespace": str(variables["kai_scheduler_reservation_namespace"]),
        "runtime_class": str(variables["kai_scheduler_runtime_class"]),
        "disabled_plugins": list(variables["kai_scheduler_disabled_plugins"])})


def sim_scheduler_config(version: str, **overrides) -> dict:
    """The scheduler configuration roles/kai_scheduler/tasks/sim_files.yml writes, as its task templates it."""
    tasks = yaml.safe_load((KAI / "tasks" / "sim_files.yml").read_text())
    task = next(t for t in tasks if t["name"].startswith("Write the scheduler configuration"))
    templar = _templar(KAI, kai_scheduler_sim_kai_version=version, **overrides)
    return yaml.safe_load(templar.template(trust_as_template(task["ansible.builtin.copy"]["content"])))


def _one(objects: list[dict], kind: str, name: str) -> dict | None:
    found = [o for o in objects if o.get("kind") == kind and o.get("metadata", {}).get("name") == name]
    return found[0] if found else None


def lab_problems(objects: list[dict], fgo_namespace: str, correct=lambda config: config) -> list[str]:
    """What in a rendered chart (plus the role's Config correction) breaks the lab."""
    problems = []
    config = _one(objects, "Config", "kai-config")
    if config is None:
        return ["the chart rendered no Config kai-config"]
    admission = correct(config)["spec"]["admission"]
    if admission.get("gpuSharing") is not True:
        problems.append(f"GPU sharing is {admission.get('gpuSharing')!r}, fractions (step 7) are rejected")
    runtime_class = admission.get("gpuPodRuntimeClassName", admission.get("gpuFractionRuntimeClassName"))
    if runtime_class != "":
        problems.append(f"KAI injects RuntimeClass {runtime_class!r} into GPU pods; fake GPUs have none")
    # Where KAI's binder creates GPU reservation pods, and with which service
    # account: the Config's values, else KAI's defaults (pkg/apis/kai/v1/binder).
    reservation = correct(config)["spec"].get("binder", {}).get("resourceReservation", {})
    namespace = reservation.get("namespace") or KAI_RESERVATION_DEFAULT
    account = reservation.get("serviceAccountName") or KAI_RESERVATION_DEFAULT
    if namespace != fgo_namespace:
        problems.append(f"KAI reserves GPUs in {namespace!r}, fake-gpu-operator annotates pods in {fgo_namespace!r}")
    if _one(objects, "Namespace", namespace) is None:
        problems.append(f"the chart creates no namespace {namespace!r} for KAI's reservation pods")
    if not any(o.get("kind") == "ServiceAccount" and o["metadata"]["name"] == account
               and o["metadata"].get("namespace") == namespace for o in objects):
        problems.append(f"the chart creates no service account {namespace}/{account} for KAI's reservation pods")
    priorities = {o["metadata"]["name"]: o.get("value") for o in objects if o.get("kind") == "PriorityClass"}
    for name, value in sorted(PRIORITIES.items()):
        if priorities.get(name) != value:
            problems.append(f"PriorityClass {name} is {priorities.get(name)!r}, the lab needs {value}")
    return problems


# --- v0.12.0: the real chart -----------------------------------------------------


@pytest.fixture(scope="module")
def rendered_v012(tmp_path_factory):
    return helm_template(render_values(CHART_VERSION), tmp_path_factory.mktemp("kai"))


@needs_chart
def test_chart_with_role_values_gives_the_lab_what_it_needs(rendered_v012):
    fgo_namespace = fgo_reservation_namespace()
    assert lab_problems(rendered_v012, fgo_namespace, lambda c: corrected_by_k3s_tasks(c, CHART_VERSION)) == []
    assert lab_problems(rendered_v012, fgo_namespace, lambda c: corrected_by_sim_tasks(c, CHART_VERSION)) == []


@needs_chart
def test_chart_with_the_sim_profiles_values_gives_one_config_and_what_the_lab_needs(tmp_path):
    objects = helm_template(sim_values(CHART_VERSION), tmp_path)
    config = kai_profile_render.select_config(CHART_VERSION, objects)
    assert config["metadata"]["name"] == "kai-config"
    assert lab_problems(objects, fgo_reservation_namespace(), lambda c: corrected_by_sim_tasks(c, CHART_VERSION)) == []


@needs_chart
def test_chart_render_without_config_is_refused_naming_the_values(tmp_path):
    """v0.17's chart renders no Config unless kaiConfig.render is set: the profile refuses such a render."""
    objects = [o for o in helm_template(sim_values(CHART_VERSION), tmp_path) if o.get("kind") != "Config"]
    with pytest.raises(kai_profiles.KaiProfileError, match="kaiConfig.render: true"):
        kai_profile_render.select_config("v0.17.0", objects)


@needs_chart
def test_chart_renders_gpu_sharing_on(rendered_v012):
    config = _one(rendered_v012, "Config", "kai-config")
    assert config["spec"]["admission"]["gpuSharing"] is True


@needs_chart
def test_v012_chart_ignores_the_empty_runtime_class_and_the_role_corrects_it(rendered_v012):
    """The chart renders `| default "nvidia"`: the "" in the values does not
    get through, and the k3s and sim tasks' correction is what makes it ""."""
    assert render_values(CHART_VERSION)["admission"]["gpuPodRuntimeClassName"] == ""
    config = _one(rendered_v012, "Config", "kai-config")
    assert config["spec"]["admission"]["gpuPodRuntimeClassName"] == "nvidia"
    assert corrected_by_k3s_tasks(config, CHART_VERSION)["spec"]["admission"]["gpuPodRuntimeClassName"] == ""
    assert corrected_by_sim_tasks(config, CHART_VERSION)["spec"]["admission"]["gpuPodRuntimeClassName"] == ""
    # The rest of the Config is left as rendered, but for the binder's
    # reservation namespace, which the v0.12.0 chart does not pass on.
    corrected = corrected_by_k3s_tasks(config, CHART_VERSION)
    assert "namespace" not in config["spec"]["binder"]["resourceReservation"]
    assert corrected["spec"]["binder"]["resourceReservation"] == {
        **config["spec"]["binder"]["resourceReservation"], "namespace": "kai-resource-reservation"
    }
    assert {k: v for k, v in corrected["spec"].items() if k not in ("admission", "binder")} == {
        k: v for k, v in config["spec"].items() if k not in ("admission", "binder")
    }
    # Without the correction the lab breaks.
    assert any("RuntimeClass 'nvidia'" in p for p in lab_problems(rendered_v012, fgo_reservation_namespace()))


@needs_chart
def test_reservation_namespace_is_the_same_for_kai_and_fake_gpu_operator(rendered_v012):
    fgo_namespace = fgo_reservation_namespace()
    assert fgo_namespace == "kai-resource-reservation"
    assert _one(rendered_v012, "Namespace", fgo_namespace) is not None
    account = _one(rendered_v012, "ServiceAccount", fgo_namespace)
    assert account is not None and account["metadata"]["namespace"] == fgo_namespace
    # Loading KAI's defaults as well (the order of the sim's play) changes nothing.
    assert fgo_reservation_namespace(**_role_vars(KAI)) == fgo_namespace


@needs_chart
def test_priority_classes_train_50_and_build_100(rendered_v012):
    """KAI's chart gives the priorities the lab's steps (and its text) name: train 50, build 100."""
    assert PRIORITIES == {"train": 50, "build": 100}
    for name, value in PRIORITIES.items():
        assert _one(rendered_v012, "PriorityClass", name)["value"] == value


@needs_chart
def test_queues_crd_is_part_of_the_chart(rendered_v012):
    crd = _one(rendered_v012, "CustomResourceDefinition", "queues.scheduling.run.ai")
    assert crd["spec"]["scope"] == "Cluster"
    assert [v["name"] for v in crd["spec"]["versions"] if v.get("served")] == ["v2"]


# --- the checks catch lab-breaking values ------------------------------------------


@needs_chart
def test_gpu_sharing_off_is_caught(tmp_path):
    objects = helm_template(render_values(CHART_VERSION, kai_scheduler_gpu_sharing=False), tmp_path)
    problems = lab_problems(objects, fgo_reservation_namespace(), lambda c: corrected_by_k3s_tasks(c, CHART_VERSION))
    assert len(problems) == 1 and "GPU sharing is False" in problems[0]


@needs_chart
def test_a_runtime_class_is_caught(rendered_v012):
    fgo_namespace = fgo_reservation_namespace()
    for correct in (corrected_by_k3s_tasks, corrected_by_sim_tasks):
        problems = lab_problems(
            rendered_v012, fgo_namespace, lambda c: correct(c, CHART_VERSION, kai_scheduler_runtime_class="nvidia")
        )
        assert problems == ["KAI injects RuntimeClass 'nvidia' into GPU pods; fake GPUs have none"]


@needs_chart
def test_reservation_namespaces_that_differ_are_caught(tmp_path, rendered_v012):
    correct = lambda c: corrected_by_k3s_tasks(c, CHART_VERSION)  # noqa: E731
    # FGO pointed elsewhere (its chart's own default).
    other = fgo_reservation_namespace(fake_gpu_operator_reservation_namespace="runai-reservation")
    assert other == "runai-reservation"
    assert any("fake-gpu-operator annotates pods in 'runai-reservation'" in p
               for p in lab_problems(rendered_v012, other, correct))
    # KAI moved elsewhere through its role default only: FGO, installed first,
    # does not see it. The chart and the k3s Config patch follow the variable.
    objects = helm_template(render_values(CHART_VERSION, kai_scheduler_reservation_namespace="elsewhere"), tmp_path)
    problems = lab_problems(
        objects,
        fgo_reservation_namespace(),
        lambda c: corrected_by_k3s_tasks(c, CHART_VERSION, kai_scheduler_reservation_namespace="elsewhere"),
    )
    assert problems == ["KAI reserves GPUs in 'elsewhere', fake-gpu-operator annotates pods in 'kai-resource-reservation'"]
    # Set for both (an inventory variable is seen by both roles): consistent again.
    assert lab_problems(
        objects,
        fgo_reservation_namespace(kai_scheduler_reservation_namespace="elsewhere"),
        lambda c: corrected_by_k3s_tasks(c, CHART_VERSION, kai_scheduler_reservation_namespace="elsewhere"),
    ) == []
    # Without the k3s Config patch, a v0.12.0 binder would stay in KAI's default namespace.
    assert any(p.startswith("KAI reserves GPUs in 'kai-resource-reservation'") for p in lab_problems(objects, "elsewhere"))


@needs_chart
def test_missing_priority_class_is_caught(rendered_v012):
    correct = lambda c: corrected_by_k3s_tasks(c, CHART_VERSION)  # noqa: E731
    without_train = [o for o in rendered_v012 if not (o.get("kind") == "PriorityClass" and o["metadata"]["name"] == "train")]
    assert lab_problems(without_train, fgo_reservation_namespace(), correct) == [
        "PriorityClass train is None, the lab needs 50"
    ]


# --- v0.18.6: values only (its chart cannot be fetched here) -------------------------


def test_v0186_values_turn_off_the_fraction_runtime_class():
    values = render_values("v0.18.6")
    assert values["global"]["gpuSharing"] is True
    assert values["global"]["resourceReservation"]["namespace"] == fgo_reservation_namespace()
    assert values["admission"] == {"gpuFractionRuntimeClassName": ""}
    assert values["defaultPriorityClasses"] == {"enabled": True}
    # A Helm install runs the chart's Config hook: the inline render is the sim's only.
    assert "kaiConfig" not in values and "kaiConfigDeployer" not in values


def test_v0186_is_the_k3s_default_and_needs_no_config_patch():
    lab_defaults = yaml.safe_load((ROOT / "roles" / "kai_lab" / "defaults" / "main.yml").read_text())
    assert lab_defaults["kai_lab_k3s_kai_version"] == "v0.18.6"
    # The role's chart version is that input (vars/main.yml), not a second setting.
    kai_vars = yaml.safe_load((KAI / "vars" / "main.yml").read_text())
    assert kai_vars["kai_scheduler_chart_version"] == "{{ kai_lab_k3s_kai_version }}"
    config = {"spec": {"admission": {"gpuFractionRuntimeClassName": "", "gpuSharing": True}}}
    assert corrected_by_k3s_tasks(config, "v0.18.6") == config


@pytest.mark.parametrize("version", ["v0.12.0", "v0.17.0", "v0.18.6"])
def test_values_template_gives_the_profiles_values_for_a_helm_install(version):
    """One place for version differences: the k3s values are the profile's, the sim's add only the render switches."""
    values = render_values(version)
    sim = sim_values(version)
    assert values == kai_profile_render.chart_values(version, {
        "gpu_sharing": True, "reservation_namespace": "kai-resource-reservation", "runtime_class": "",
        "disabled_plugins": ["snapshot"]}, False)
    assert {key: value for key, value in sim.items() if key not in values} == \
        kai_profiles.profile_for(version)["chart"]["template_values"]


@pytest.mark.parametrize("version", ["v0.17.0", "v0.18.6"])
def test_kais_snapshot_plugin_is_off_through_the_charts_values_on_k3s(version):
    """Issue 40: the snapshot plugin serves the whole cluster (ConfigMaps of every namespace) on the scheduler's
    plugin server. From KAI v0.13 the chart's scheduler.plugins goes into the default SchedulingShard, whose
    disabled plugins KAI's operator leaves out of the scheduler's ConfigMap: the k3s values turn it off."""
    values = render_values(version)
    assert values["scheduler"] == {"plugins": {"snapshot": {"enabled": False}}}
    # The sim's render of the same chart carries the same SchedulingShard values.
    assert sim_values(version)["scheduler"] == values["scheduler"]


def test_the_k3s_values_and_the_sims_scheduler_config_take_the_disabled_plugins_from_one_setting():
    off = ["snapshot", "elastic"]
    assert render_values("v0.18.6", kai_scheduler_disabled_plugins=off)["scheduler"]["plugins"] == {
        "snapshot": {"enabled": False}, "elastic": {"enabled": False}}
    for version in ("v0.12.0", "v0.17.0"):
        plugins = [p["name"] for p in sim_scheduler_config(version, kai_scheduler_disabled_plugins=off)["tiers"][0][
            "plugins"]]
        assert "snapshot" not in plugins and "elastic" not in plugins and "predicates" in plugins
        assert "snapshot" not in [p["name"] for p in sim_scheduler_config(version)["tiers"][0]["plugins"]]
        assert "snapshot" in [p["name"] for p in sim_scheduler_config(version, kai_scheduler_disabled_plugins=[])[
            "tiers"][0]["plugins"]]
    # Nothing off: the chart's own defaults (every plugin on), no value written.
    assert "scheduler" not in render_values("v0.18.6", kai_scheduler_disabled_plugins=[])


@pytest.mark.parametrize("bad", ["snapshot", [""], [3], {"snapshot": True}])
def test_disabled_plugins_that_are_not_a_list_of_names_are_refused_naming_the_setting(bad):
    settings = {"gpu_sharing": True, "reservation_namespace": "kai-resource-reservation", "runtime_class": "",
                "disabled_plugins": bad}
    with pytest.raises(kai_profiles.KaiProfileError, match="disabled_plugins must be a list of scheduler plugin names"):
        kai_profile_render.chart_values("v0.18.6", settings, False)


def test_v012s_chart_has_no_plugin_values():
    """KAI v0.12's chart renders its SchedulingShard without plugins (and its scheduler serves them on every
    interface): nothing to set; kai-lab doctor names the plugin there (test_kai_lab_doctor.py)."""
    assert "scheduler" not in render_values("v0.12.0")
    assert kai_profiles.profile_for("v0.12.0")["chart"]["plugins_values_key"] == ""


def test_values_template_follows_the_profiles_runtime_class_key():
    assert render_values("v0.12.0")["admission"] == {"gpuPodRuntimeClassName": ""}
    assert render_values("v0.17.0")["admission"] == {"gpuFractionRuntimeClassName": ""}
    assert "defaultPriorityClasses" not in render_values("v0.12.0")
    assert render_values("v0.17.0", kai_scheduler_runtime_class="nvidia")["admission"] == {
        "gpuFractionRuntimeClassName": "nvidia"}


@pytest.mark.parametrize("version", ["v0.15.9", "main"])
def test_values_template_refuses_a_version_without_a_profile_naming_the_known_ones(version):
    with pytest.raises(Exception, match="Known KAI lines: v0.12, v0.17, v0.18"):
        render_values(version)
