# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The events KAI-Scheduler leaves, and when an event is KAI's word about an object.

Pure functions over Event objects (as returned by the API, JSON-decoded):
which scheduler placed a pod, KAI's evictions (preemption and reclaim) and
Unschedulable notices, and the proof that an event is KAI's and about this
very object. Anyone allowed to create events in a namespace can write one
with any reason, message and reporter, so an event counts as KAI's word
about an object only when the scheduler reported it (reported_by_scheduler)
and it names the object's uid and was stored no earlier than the object was
created (event_is_about); see steps/evidence.py.

Layer: the KAI domain; may use the cluster client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai_objects
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai.objects import meta

# Who reports KAI's events (source.component and reportingComponent, as the
# recordings show: tests/unit/fixtures/kai-v0.17.0): the scheduler, whose status
# updater writes the PodGroups' conditions and the Scheduled, Unschedulable,
# Pipelined and Evict events, reports under its own scheduler name (KAI's
# scheduler cache: record.NewRecorder(..., EventSource{Component: schedulerName}),
# v0.17.0 and after), the lab's SCHEDULER_NAME, which pods name in
# spec.schedulerName; the binder reports Bound as 'binder', the pod-grouper
# its warnings as 'pod-grouper' (GetEventRecorderFor of each controller). Only
# the scheduler's word is evidence here. A shard's scheduler (a node-pool
# partition, which the lab does not use) would add '-<partition>'.


def events_for(events, kind, name):
    """Events about one object, oldest first."""
    selected = [e for e in events
                if (e.get('involvedObject') or {}).get('kind') == kind
                and (e.get('involvedObject') or {}).get('name') == name]
    return sorted(selected, key=event_time)


def event_time(event):
    return event.get('lastTimestamp') or event.get('eventTime') or event.get('firstTimestamp') \
        or meta(event).get('creationTimestamp') or ''


def event_summary(event):
    source = event.get('source') or {}
    return {
        'type': event.get('type'),
        'reason': event.get('reason'),
        'message': event.get('message') or '',
        'object': '%s/%s' % ((event.get('involvedObject') or {}).get('kind'),
                             (event.get('involvedObject') or {}).get('name')),
        'source': source.get('component') or event.get('reportingComponent') or '',
        'time': event_time(event),
    }


def scheduled_by(events, pod_name):
    """Which scheduler placed a pod, from its Scheduled event.

    KAI's message is 'Successfully assigned pod ns/p to node n at node-pool
    np'; the default scheduler's 'Successfully assigned ns/p to n' comes from
    source default-scheduler.
    """
    for event in reversed(events_for(events, 'Pod', pod_name)):
        if event.get('reason') == 'Scheduled':
            summary = event_summary(event)
            if 'at node-pool' in summary['message']:
                return kai_objects.SCHEDULER_NAME
            return summary['source'] or 'default-scheduler'
    return None


def involved(event):
    """The object an event says it is about (involvedObject: kind, name, uid)."""
    return (event or {}).get('involvedObject') or {}


def event_stored(event):
    """When the API server stored the event: metadata.creationTimestamp, which its creator cannot set,
    else the event's own first time."""
    return meta(event).get('creationTimestamp') or (event or {}).get('firstTimestamp') \
        or (event or {}).get('eventTime') or event_time(event or {})


def not_before(stamp, since):
    """Whether RFC 3339 time stamp is not before since, to the second; True when either is unknown."""
    if not isinstance(stamp, str) or not isinstance(since, str) or not stamp or not since:
        return True
    return stamp[:19] >= since[:19]


def event_is_about(event, kind, name, uid, created=None):
    """Whether an event is about this very object: its involvedObject has this kind, name and uid
    (an object without a known uid is nothing an event can be proved about), and it was stored no
    earlier than the object was created (created unknown: not compared)."""
    obj = involved(event)
    return bool(uid) and obj.get('kind') == kind and obj.get('name') == name and obj.get('uid') == uid \
        and not_before(event_stored(event), created)


def uid_from_events(events, kind, name, stored_before=None):
    """The one uid the events give an object (the object's own events), or None when none or several.

    For an object that is gone, its events are what is left of it; a
    learner's Event naming it with another uid makes the answer None.
    stored_before: only events the API server stored no later than this time.
    """
    uids = set(involved(e).get('uid') for e in events
               if involved(e).get('kind') == kind and involved(e).get('name') == name and involved(e).get('uid')
               and (stored_before is None or not_before(stored_before, event_stored(e))))
    return uids.pop() if len(uids) == 1 else None


def reported_by_scheduler(event):
    """Did KAI's scheduler report this event?

    Anyone allowed to create events in the namespace can write one with any
    reason and message, so an event counts as KAI's only when its reporter
    (source.component, reportingComponent, reportingController: whichever
    are set) is the scheduler, as on every real KAI event recorded
    (v0.12.0 sim fixtures, v0.17.0 hand-preempt: source.component and
    reportingComponent 'kai-scheduler').

    Its creator sets these fields, so this alone proves nothing: an event
    counts as KAI's word about an object only together with event_is_about
    (the object's uid and creation time), see steps/evidence.py.
    """
    reporters = [value for value in ((event.get('source') or {}).get('component'),
                                     event.get('reportingComponent'), event.get('reportingController'))
                 if value]
    return bool(reporters) and all(value == kai_objects.SCHEDULER_NAME for value in reporters)


# KAI's eviction actions as its Evict events tell them (evictor-action-type; the message's form).
PREEMPT, RECLAIM, CONSOLIDATION = 'preempt', 'reclaim', 'consolidation'
# The messages' forms (pkg/scheduler/api/unschedule_info.go, v0.12.0 to v0.18): GetPreemptMessage,
# GetReclaimMessage (then the queues' shares, one per line), GetConsolidateMessage.
_PREEMPT_MARK = 'higher priority workload '
_RECLAIM_MARK = 'was preempted by workload '
_CONSOLIDATION_MARK = ' was preempted and rescheduled due to bin packing'


def eviction_events(events):
    """KAI's preemption/reclaim notices: 'Evict' events the scheduler reported about a PodGroup.

    Message: 'Pod ns/victim was preempted by higher priority workload ns/pg'
    (preempt) or 'Pod ns/victim was preempted by workload ns/pg.' (reclaim).
    Others (another reporter, another kind of object) are not KAI's decision.
    """
    result = []
    for event in sorted(events, key=event_time):
        if event.get('reason') == 'Evict' and reported_by_scheduler(event) \
                and (event.get('involvedObject') or {}).get('kind') == 'PodGroup':
            summary = event_summary(event)
            summary['victim'] = victim_of(summary['message'])
            result.append(summary)
    return result


def eviction_action(message):
    """KAI's action an Evict message tells: PREEMPT, RECLAIM, CONSOLIDATION, or None."""
    for mark, action in ((_PREEMPT_MARK, PREEMPT), (_RECLAIM_MARK, RECLAIM), (_CONSOLIDATION_MARK, CONSOLIDATION)):
        if mark in (message or ''):
            return action
    return None


def preemptor(message):
    """The PodGroup an Evict message names as the evictor: '... by higher priority workload ns/pg' (preempt)
    or '... by workload ns/pg.' (reclaim) -> 'pg'."""
    for mark in (_PREEMPT_MARK, _RECLAIM_MARK):
        if mark in message:
            words = message.split(mark, 1)[1].split()
            return words[0].split('/', 1)[-1].rstrip('.') if words else None
    return None


def victim_of(message):
    """The pod an Evict message names as evicted: 'Pod kai-lab/tr-1 was preempted by ...' -> 'tr-1'."""
    words = message.split()
    if len(words) > 1 and words[0] == 'Pod' and '/' in words[1]:
        return words[1].split('/', 1)[1]
    return None


def unschedulable_messages(events, kind, name):
    """Texts of KAI's Unschedulable events for an object, oldest first."""
    return [e.get('message') or '' for e in events_for(events, kind, name) if e.get('reason') == 'Unschedulable']
