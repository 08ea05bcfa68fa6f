"""Issue 18 row 10: the sim's components keep their profiling and debugging
endpoints off where upstream has a setting for it. Local users could read
/debug/pprof/ of the kwok controller (port base + 3).

- kwok v0.8.0: the controller's KwokConfiguration options
  enableDebuggingHandlers and enableProfilingHandler (+default=true,
  pkg/apis/config/v1alpha1/kwok_configuration_types.go); kwokctl saves a
  KwokConfiguration given in its --config into the cluster's kwok.yaml.
- KAI's scheduler: --enable-profiler (cmd/scheduler/app/options/options.go).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import render
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kp

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "roles" / "sim_cluster" / "templates" / "kwokctl.yaml.j2"


def _kwokctl_documents():
    binaries = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "etcd", "kubectl")
    templar = Templar(loader=DataLoader(), variables={
        "ansible_managed": "managed", "kai_lab_sim_state_dir": "/s",
        "sim_cluster_ports": kp.sim_ports(17700), "sim_cluster_event_ttl": "24h",
        "sim_binaries_bin": dict((name, "/bin/" + name) for name in binaries),
        "sim_cluster_component_args": [{"component": "etcd", "key": "cert-file", "value": "/s/etcd.crt"}],
    })
    return list(yaml.safe_load_all(templar.template(trust_as_template(TEMPLATE.read_text()))))


def test_the_kwok_controller_runs_without_debugging_and_profiling_handlers():
    documents = _kwokctl_documents()
    assert [d["kind"] for d in documents] == ["KwokctlConfiguration", "KwokConfiguration"]
    kwok = documents[1]
    assert kwok["apiVersion"] == "config.kwok.x-k8s.io/v1alpha1"
    options = kwok["options"]
    assert (options["enableDebuggingHandlers"], options["enableProfilingHandler"],
            options["enableContentionProfiling"]) == (False, False, False)
    # kwokctl saves the document without kwok's defaults and the controller
    # takes it as is: a parallelism left out is 0 and the controller exits at
    # start ("node leases parallelism must be greater than 0", seen on the sim).
    for name in ("podPlayStageParallelism", "nodePlayStageParallelism", "nodeLeaseParallelism",
                 "podsOnNodeSyncParallelism"):
        assert options.get(name, 0) > 0, name
    # The cluster's own settings are still there.
    assert documents[0]["options"]["kwokControllerPort"] == 17703


@pytest.mark.parametrize("version", ["v0.12.0", "v0.17.0", "v0.18.6"])
def test_kais_scheduler_is_started_with_its_profiler_off(version):
    settings = {
        "scheduler_name": "kai-scheduler", "namespace": "kai-scheduler",
        "reservation_namespace": "kai-resource-reservation", "queue_label": "kai.scheduler/queue",
        "gpu_sharing": True, "runtime_class": "", "sim_dir": "/s/kai", "host": "127.0.0.1",
        "ports": kp.sim_ports(17700),
    }
    scheduler = next(c for c in render.component_args(version, settings) if c["name"] == "scheduler")
    assert "--enable-profiler=false" in scheduler["args"]
    assert not [a for a in scheduler["args"] if a.startswith(("--enable-profiler=true", "--profiler-port"))]
