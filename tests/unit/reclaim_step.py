# -*- coding: utf-8 -*-
"""A step that is not the lab's: KAI's reclaim, as a lab author would add it.

A pod of queue `ops` asks for the GPU that `research` borrows beyond its
quota; KAI reclaims it (on the sim's KAI v0.12.0 it evicts both fraction
pods of step 7, whose shared GPU it takes back), and the learner names the
evicted pods in reclaimed.txt. Everything a lab author writes for a step is
here: its data, solve, checks, words, values and text, and what it declares
it does to earlier steps' pods (Evicts: reclaim, for ops-1). Its recorded
states are tests/unit/fixtures/added/{report,reclaim}.json:

  python tests/record_fixtures.py --kubeconfig <sim kubeconfig> --add tests/unit/reclaim_step.py \
      --step report --step reclaim --out tests/unit/fixtures/added

Used by tests/unit/test_evictions.py (registered per test) and, through
--add, by tests/record_fixtures.py.
"""

from __future__ import annotations

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import events as kai_events
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import evictions, learner
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    FRACTION_PODS, P1, Check, Step, bilingual, failed, gpu_pod, passed)

OPS = "ops"
OPS_POD = "ops-1"
FILE = "reclaimed.txt"
# research's pods KAI may reclaim: the preemptible ones (bd-1, of priority build, it never evicts).
EVICTS = evictions.Evicts(evictions.RECLAIM, OPS_POD, (P1,) + FRACTION_PODS)


def ops_pod(namespace):
    return gpu_pod(OPS_POD, namespace, OPS)


def reclaimed(view):
    """The pods KAI evicted for ops-1 (its reclaim), as the solver sees the events."""
    group = kai.workload_podgroup_name(OPS_POD, "")
    return sorted(set(e["victim"] for e in kai_events.eviction_events(view.events())
                      if (kai_events.preemptor(e["message"]) or "").startswith(group)
                      and kai_events.eviction_action(e["message"]) == evictions.RECLAIM))


def solve(runner):
    if runner.view.pod(OPS_POD) is None:
        runner.apply(ops_pod(runner.namespace))
    runner.wait_pods([OPS_POD], "Running", "%s to run by KAI's reclaim" % OPS_POD)
    names = runner.wait("KAI's Evict events for %s" % OPS_POD, lambda: reclaimed(runner.view), bool,
                        lambda seen: ", ".join(seen) or "none", expected="KAI's reclaim of a research pod",
                        cause="research borrowed no GPU beyond its quota")
    runner.wait_pods(names, "gone", "the reclaimed pods to go")
    runner.write_file(FILE, "".join(name + "\n" for name in names))
    return {"pod": runner.view.pod_state(OPS_POD), "reclaimed": names}


WORDS = {
    "reclaim.running": {
        "desc": {"en": "{ops_pod} runs in queue {ops_queue}", "ko": "{ops_pod} 이 {ops_queue} 큐에서 실행 중"},
        "fail": {"en": "{ops_pod}: {problem}", "ko": "{ops_pod}: {problem}"},
        "hint": {"en": "Pod {ops_pod}: queue {ops_queue}, schedulerName {scheduler}, limits {gpu_resource}: 1.",
                 "ko": "{ops_pod} 파드: {ops_queue} 큐, schedulerName {scheduler}, limits {gpu_resource}: 1."},
    },
    "reclaim.file": {
        "desc": {"en": "{reclaimed_file} names the pods KAI reclaimed for {ops_pod}",
                 "ko": "{reclaimed_file} 에 KAI가 {ops_pod} 을 위해 되찾은 파드"},
        "fail": {"en": "{reclaimed_file}: {problem}", "ko": "{reclaimed_file}: {problem}"},
        "hint": {"en": "kubectl -n {namespace} get events --field-selector reason=Evict names them; one per line in "
                       "{reclaimed_path}.",
                 "ko": "kubectl -n {namespace} get events --field-selector reason=Evict 에 나옵니다. {reclaimed_path} 에 "
                       "한 줄에 하나씩 쓰세요."},
    },
}


def check_running(snapshot):
    pod = learner.require_running(snapshot, OPS_POD)
    return passed({"phase": kai.pod_phase(pod), "queue": kai.pod_queue(pod)})


def check_file(snapshot):
    claimed = sorted(line.strip() for line in learner.text_file(snapshot, FILE).splitlines() if line.strip())
    by_kai = sorted(set(e.victim for e in evictions.record(snapshot) if e.step_id == STEP.id))
    if not by_kai:
        return failed(bilingual("KAI reclaimed nothing for %s" % OPS_POD, "KAI가 %s 을 위해 되찾은 것이 없습니다" % OPS_POD))
    if claimed != by_kai:
        return failed(bilingual("these are not the pods KAI evicted for %s" % OPS_POD,
                                "KAI가 %s 을 위해 밀어낸 파드가 아닙니다" % OPS_POD), {"claimed": claimed})
    return passed({"reclaimed": by_kai})


def values(namespace, path):
    return {"ops_pod": OPS_POD, "ops_queue": OPS, "reclaimed_file": FILE, "reclaimed_path": path(FILE)}


STEP = Step(
    "reclaim", {"en": "Ops takes its GPUs back", "ko": "ops 가 GPU 를 되찾는다"}, [FILE],
    "%s Running; KAI reclaimed research's borrowed GPU; %s names the pods" % (OPS_POD, FILE), solve, (
        Check("reclaim.running", 2, check_running, WORDS["reclaim.running"]),
        Check("reclaim.file", 2, check_file, WORDS["reclaim.file"]),
    ), words=[WORDS], values=values, began_by=[OPS_POD], evicts=[EVICTS],
    objects=lambda namespace: {"pods": [ops_pod(namespace)]})

TEXT = {
    "en": {
        "summary": "Run `{ops_pod}` in queue `{ops_queue}` and write the pods KAI reclaims for it to `{reclaimed_path}`.",
        "task": ["Run pod `{ops_pod}` in queue `{ops_queue}` with one `{gpu_resource}` and KAI's scheduler. Every GPU "
                 "is in use: KAI takes back what `{research}` borrows beyond its quota. Write the pods it evicts, one "
                 "per line, to `{reclaimed_path}`."],
        "context": ["A queue within its quota gets its GPUs back from a queue above its own: KAI's reclaim, told in "
                    "`Evict` events that name the queues' shares."],
    },
    "ko": {
        "summary": "`{ops_queue}` 큐에서 `{ops_pod}` 을 실행하고 KAI가 그 파드를 위해 되찾은 파드를 `{reclaimed_path}` 에 쓰세요.",
        "task": ["`{ops_queue}` 큐에서 `{gpu_resource}` 하나와 KAI 스케줄러로 `{ops_pod}` 파드를 실행하세요. GPU 가 모두 "
                 "쓰이는 중이라 KAI는 `{research}` 가 quota 를 넘겨 빌린 것을 되찾습니다. 밀려난 파드를 한 줄에 하나씩 "
                 "`{reclaimed_path}` 에 쓰세요."],
        "context": ["quota 안의 큐는 quota 를 넘겨 쓰는 큐에게서 GPU 를 되찾습니다: KAI의 reclaim 이며, 큐의 몫을 적은 "
                    "`Evict` 이벤트로 알려 줍니다."],
    },
}
