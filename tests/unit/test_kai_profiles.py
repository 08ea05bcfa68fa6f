"""The KAI version profiles rendered for the sim's settings, pinned against
the facts: the flags of KAI's operator (pkg/operator/operands/*/resources.go
of each version), the scheduler configuration it renders, the chart values
and webhooks, the committed v0.12.0 go.mod, and the measured v0.17.0 run on
the sim (../shared/research/kai-v0.17-on-the-sim.md, fixtures/kai-v0.17.0)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import render
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kp

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "roles" / "sim_binaries" / "files" / "kai-v0.12.0"
SETTINGS = {
    "scheduler_name": "kai-scheduler", "namespace": "kai-scheduler",
    "reservation_namespace": "kai-resource-reservation", "queue_label": "kai.scheduler/queue",
    "gpu_sharing": True, "runtime_class": "", "sim_dir": "/s/kai", "host": "127.0.0.1",
    "ports": kp.sim_ports(16300),
}


def args_of(version, name):
    return next(c for c in render.component_args(version, SETTINGS) if c["name"] == name)["args"]


@pytest.mark.parametrize("version,line", [("v0.12.0", "v0.12"), ("0.12.3", "v0.12"), ("v0.17.0", "v0.17"),
                                          ("v0.18.6", "v0.18")])
def test_a_version_gets_its_line(version, line):
    assert kp.profile_for(version)["line"] == line


@pytest.mark.parametrize("version", ["main", "", None, "v0.17", "latest", "v0.18.6; rm -rf /"])
def test_not_a_version_fails_naming_the_known_lines(version):
    with pytest.raises(kp.KaiProfileError, match=r"not a version.*v0\.12, v0\.17, v0\.18"):
        kp.profile_for(version)


@pytest.mark.parametrize("version", ["v0.14.7", "v0.11.0", "v1.0.0"])
def test_a_version_without_profile_fails_naming_the_known_lines(version):
    with pytest.raises(kp.KaiProfileError, match=r"No KAI profile covers .*v0\.12, v0\.17, v0\.18"):
        kp.profile_for(version)


def test_lab_switches_job_gang_and_cleared_conditions():
    assert (kp.profile_for("v0.12.0")["job_gang"], kp.profile_for("v0.12.0")["clears_conditions"]) == (False, False)
    assert (kp.profile_for("v0.17.0")["job_gang"], kp.profile_for("v0.17.0")["clears_conditions"]) == (True, True)
    assert kp.profile_for("v0.18.6")["follows"] == "v0.17"


def test_v012_flags_are_what_the_sim_ran_end_to_end():
    assert args_of("v0.12.0", "binder") == [
        "--scheduler-name=kai-scheduler", "--resource-reservation-namespace=kai-resource-reservation",
        "--resource-reservation-service-account=kai-resource-reservation",
        "--resource-reservation-app-label=kai-resource-reservation", "--resource-reservation-pod-image=ubuntu",
        "--scale-adjust-namespace=kai-scale-adjust", "--cdi-enabled=false", "--fake-gpu-nodes",
        "--metrics-bind-address=127.0.0.1:16320", "--health-probe-bind-address=127.0.0.1:16321"]
    assert "--queue-label-key=kai.scheduler/queue" in args_of("v0.12.0", "queuecontroller")
    assert "--gpu-pod-runtime-class-name=" in args_of("v0.12.0", "admission")
    assert "--webhook-addr=16340" in args_of("v0.12.0", "admission")


def test_v017_drops_the_flags_that_exit_2_and_moves_the_queue_label():
    binder, queuecontroller, scheduler = (args_of("v0.17.0", n) for n in ("binder", "queuecontroller", "scheduler"))
    assert not [a for a in binder if a.startswith("--cdi-enabled")]
    assert not [a for a in queuecontroller if a.startswith("--queue-label-key")]
    assert "--queue-label-key=kai.scheduler/queue" in scheduler
    assert {"--qps=20", "--burst=100"} <= set(binder) and {"--qps=20", "--burst=100"} <= set(args_of("v0.17.0", "podgrouper"))
    assert "--gpu-fraction-runtime-class-name=" in args_of("v0.17.0", "admission")


def test_every_listener_is_on_loopback_at_the_port_base():
    ports = kp.sim_ports(17300)
    settings = dict(SETTINGS, ports=ports)
    for version in ("v0.12.0", "v0.17.0"):
        for component in render.component_args(version, settings):
            for arg in component["args"]:
                if "address=" in arg:
                    host, port = arg.split("=", 1)[1].rsplit(":", 1)
                    assert host == "127.0.0.1" and 17300 < int(port) < 17300 + kp.SIM_PORT_SPAN, arg
            assert component["ready_url"].startswith("http://127.0.0.1:173")
    assert ports["kube_apiserver"] == 17443 and kp.sim_ports(16300)["kube_apiserver"] == 16443
    assert len(set(ports.values())) == len(ports)


def test_the_two_listeners_without_a_host_flag_get_the_host_through_the_environment():
    """KAI's scheduler plugin server and admission webhook take a port alone; the sim's own
    builds of them (sim_binaries templates) listen on KAI_LAB_SIM_LISTEN_HOST."""
    for version in ("v0.12.0", "v0.17.0"):
        env = dict((c["name"], c["env"]) for c in render.component_args(version, SETTINGS))
        assert env["scheduler"] == {"KAI_LAB_SIM_LISTEN_HOST": "127.0.0.1"}
        assert env["admission"] == {"KAI_LAB_SIM_LISTEN_HOST": "127.0.0.1", "TMPDIR": "/s/kai/admission"}
        assert not any(env[name] for name in ("binder", "podgrouper", "queuecontroller", "podgroupcontroller"))
        assert "--plugin-server-port=16311" in args_of(version, "scheduler")
        assert "--webhook-addr=16340" in args_of(version, "admission")


@pytest.mark.parametrize("base", [80, 65500, "x", None])
def test_a_port_base_out_of_range_fails(base):
    with pytest.raises(kp.KaiProfileError, match="kai_lab_sim_port_base"):
        kp.sim_ports(base)


def test_scheduler_config_v012_and_the_two_scenario_generators_of_v017():
    v012, v017 = render.scheduler_config("v0.12.0"), render.scheduler_config("v0.17.0")
    assert v012["actions"] == v017["actions"] == "allocate, consolidation, reclaim, preempt, stalegangeviction"
    names12 = [p["name"] for p in v012["tiers"][0]["plugins"]]
    names17 = [p["name"] for p in v017["tiers"][0]["plugins"]]
    assert "sg-nodelocalgreedy" not in names12
    # v0.17's operator sorts by priority: snapshot=400, sg-nodelocalgreedy=360, sg-multinodegang=350, gpupack=300.
    assert names17[names17.index("snapshot"):names17.index("snapshot") + 4] == [
        "snapshot", "sg-nodelocalgreedy", "sg-multinodegang", "gpupack"]
    assert [n for n in names17 if not n.startswith("sg-")] == names12
    assert v012["tiers"][0]["plugins"][names12.index("nodeplacement")]["arguments"] == {"cpu": "binpack", "gpu": "binpack"}


def test_chart_values_per_version():
    v012, v017 = render.chart_values("v0.12.0", SETTINGS), render.chart_values("v0.17.0", SETTINGS)
    assert v012 == {"global": {"gpuSharing": True, "resourceReservation": {"namespace": "kai-resource-reservation"}},
                    "admission": {"gpuPodRuntimeClassName": ""}}
    assert v017["kaiConfig"] == {"render": True} and v017["kaiConfigDeployer"] == {"enabled": False}
    # A Helm install (k3s) keeps the chart's Config hook: no inline render switches.
    installed = render.chart_values("v0.17.0", SETTINGS, helm_template=False)
    assert "kaiConfig" not in installed and "kaiConfigDeployer" not in installed
    assert installed == {key: value for key, value in v017.items() if key not in ("kaiConfig", "kaiConfigDeployer")}
    assert render.chart_values("v0.12.0", SETTINGS, helm_template=False) == v012
    assert v017["admission"] == {"gpuFractionRuntimeClassName": ""}
    assert render.config_patch("v0.12.0", SETTINGS) == {"spec": {"admission": {"gpuPodRuntimeClassName": ""}}}
    assert render.config_patch("v0.17.0", SETTINGS) == {}


def test_a_render_without_exactly_one_config_names_the_values_to_set():
    with pytest.raises(kp.KaiProfileError, match="0 Config.*kaiConfig.render: true and kaiConfigDeployer.enabled: false"):
        render.select_config("v0.17.0", [{"kind": "Queue"}])
    with pytest.raises(kp.KaiProfileError, match="2 Config"):
        render.select_config("v0.12.0", [{"kind": "Config"}, {"kind": "Config"}])
    assert render.select_config("v0.12.0", [{"kind": "Config", "x": 1}]) == {"kind": "Config", "x": 1}


def test_webhooks_match_the_recorded_v017_one_and_its_match_condition():
    fixture = Path("/work/shared/fixtures/kai-v0.17.0/validating-webhook.yaml")
    validating = render.webhook_configurations("v0.17.0", SETTINGS, "CA")[1]
    hook = validating["webhooks"][0]
    assert validating["metadata"]["name"] == "validating-kai-admission"
    assert hook["matchConditions"] == [{"name": "scheduler-name-match",
                                        "expression": "object.spec.schedulerName == 'kai-scheduler'"}]
    assert "matchConditions" not in render.webhook_configurations("v0.12.0", SETTINGS, "CA")[1]["webhooks"][0]
    if fixture.exists():
        recorded = yaml.safe_load(fixture.read_text())["webhooks"][0]
        for key in ("name", "rules", "namespaceSelector", "failurePolicy", "sideEffects", "timeoutSeconds"):
            assert hook[key] == recorded[key], key
        assert hook["clientConfig"]["url"] == recorded["clientConfig"]["url"]


def _helm_pin():
    defaults = yaml.safe_load((ROOT / "roles" / "sim_binaries" / "defaults" / "main.yml").read_text())
    return defaults["sim_binaries_helm_module"], defaults["sim_binaries_helm_version"]


def _require_block(go_mod_text):
    block = go_mod_text.split("require (\n", 1)[1].split("\n)", 1)[0]
    return dict(line.split()[:2] for line in block.splitlines())


def test_v012_build_module_is_the_profile_resolved():
    """The committed go.mod of v0.12.0 is the profile's head (with the Helm pin
    of the role's defaults) resolved by go mod tidy: the same module and Go
    directive, every required version kept (tidy adds those the sim's mains
    import to the first block), and its tools.go imports the profile's
    packages and Helm's: the cached build stays valid."""
    helm_module, helm_version = _helm_pin()
    head = render.go_mod("v0.12.0", {helm_module: helm_version})
    committed = (LOCK / "go.mod").read_text()
    assert committed.split("require (")[0] == head.split("require (")[0]
    required = _require_block(committed)
    assert _require_block(head).items() <= required.items()
    assert required[helm_module] == helm_version
    assert (LOCK / "tools.go").read_text() == render.tools_go("v0.12.0", [helm_module + "/cmd/helm"])


def test_the_build_module_requires_the_tools_sorted_beside_kai_and_kubernetes():
    text = render.go_mod("v0.12.0", {"helm.sh/helm/v3": "v3.19.0"})
    assert _require_block(text) == {"github.com/NVIDIA/KAI-scheduler": "v0.12.0", "helm.sh/helm/v3": "v3.19.0",
                                    "k8s.io/kubernetes": "v1.34.1"}
    assert list(_require_block(text)) == sorted(_require_block(text))
    assert render.tools_go("v0.12.0", ["helm.sh/helm/v3/cmd/helm"]).endswith('\t_ "helm.sh/helm/v3/cmd/helm"\n)\n')
    assert "helm" not in render.go_mod("v0.12.0") + render.tools_go("v0.12.0")


def test_v017_build_module_repeats_kais_replace_lines():
    text = render.go_mod("v0.17.0")
    assert "\tgithub.com/kai-scheduler/KAI-scheduler v0.17.0\n" in text
    assert "\tk8s.io/kubernetes v1.35.4\n" in text
    assert "replace k8s.io/api => k8s.io/api v0.35.4\n" in text
    assert 'github.com/kai-scheduler/KAI-scheduler/cmd/binder' in render.tools_go("v0.17.0")


def test_the_sim_can_leave_out_the_snapshot_plugin_and_keeps_the_rest_in_order():
    full = [p["name"] for p in render.scheduler_config("v0.12.0")["tiers"][0]["plugins"]]
    sim = [p["name"] for p in render.scheduler_config("v0.12.0", ["snapshot"])["tiers"][0]["plugins"]]
    assert "snapshot" in full and "snapshot" not in sim
    assert sim == [name for name in full if name != "snapshot"]
