"""The cold build's progress line (plugins/action/build_progress.py) read from
a build log in the format of roles/sim_binaries/files/build.sh: its plan
line, then `go build -v`'s one line per compiled package."""

from __future__ import annotations

from ansible_collections.gsb.kai_lab.plugins.action.build_progress import progress_line

PLAN = "== 2372 packages to compile for 7 binaries: binder podgrouper queuecontroller kube-apiserver\n"
LOG = (
    "go: downloading k8s.io/api v0.34.1\n"
    + PLAN
    + "internal/goarch\n"
    "k8s.io/api/core/v1\n"
    "github.com/NVIDIA/KAI-scheduler/pkg/binder\n"
)


def test_a_running_build_counts_compiled_packages_of_the_plan_and_names_the_last():
    assert progress_line("kai (kai-v0.12.0)", LOG, 7, 125) == (
        "kai (kai-v0.12.0): 3 of 2372 packages compiled (last github.com/NVIDIA/KAI-scheduler/pkg/binder), "
        "0/7 binaries, build log 0 kB, 2m05s elapsed")


def test_compiler_errors_and_downloads_are_not_counted_as_packages():
    log = LOG + "# k8s.io/kubernetes/pkg/x\npkg/x/a.go:3:1: syntax error\ngo: downloading sigs.k8s.io/yaml v1.4.0\n"
    assert progress_line("kai", log, 7, 5).startswith("kai: 3 of 2372 packages compiled (last github.com/NVIDIA")


def test_a_finished_build_counts_every_binary():
    assert progress_line("etcd", LOG + "== done\n", 1, 61) == "etcd: 1/1 binaries built, build log 0 kB, 1m01s elapsed"


def test_a_build_still_downloading_modules_says_so():
    log = "go: downloading k8s.io/api v0.34.1\ngo: downloading k8s.io/apimachinery v0.34.1\n"
    assert progress_line("helm", log, 1, 3) == (
        "helm: finding the packages to compile (2 modules downloaded), build log 0 kB, 0m03s elapsed")


def test_a_build_that_has_not_logged_yet():
    assert progress_line("helm", "", 1, 0) == (
        "helm: finding the packages to compile (0 modules downloaded), build log 0 kB, 0m00s elapsed")
