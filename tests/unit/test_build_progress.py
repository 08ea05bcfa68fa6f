"""The cold build's progress line (plugins/action/build_progress.py) read from
a build log in the format of roles/sim_binaries/files/build.sh."""

from __future__ import annotations

from ansible_collections.gsb.kai_lab.plugins.action.build_progress import progress_line

LOG = (
    "== 1/3 go build github.com/NVIDIA/KAI-scheduler/cmd/scheduler\n"
    "go: downloading k8s.io/api v0.34.1\n"
    "== 2/3 go build k8s.io/kubernetes/cmd/kube-apiserver\n"
)


def test_a_running_build_shows_packages_built_of_total_the_current_one_and_elapsed():
    assert progress_line("kai (kai-v0.12.0)", LOG, 3, 125) == (
        "kai (kai-v0.12.0): 1/3 packages built (now k8s.io/kubernetes/cmd/kube-apiserver), "
        "build log 0 kB, 2m05s elapsed")


def test_a_finished_build_counts_every_package():
    assert progress_line("etcd", LOG + "== 3/3 go build x\n== done\n", 3, 61).startswith("etcd: 3/3 packages built,")


def test_a_build_that_has_not_logged_yet():
    assert progress_line("helm", "", 1, 0) == "helm: 0/1 packages built, build log 0 kB, 0m00s elapsed"
