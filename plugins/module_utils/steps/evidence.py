# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""KAI's word as a check's proof: seen live in the cluster, or kept by an
earlier grade in the grader's record (grade_record) once the live one is
gone (events past their TTL, conditions KAI v0.17+ clears, the gang's
PodGroup deleted with its Job).

The record stands in for KAI's word only: a check still reads the learner's
files and the objects that exist now, and compares them with the proof.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils import grade_record
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import (
    PASSED, UNVERIFIED, Result, bilingual, passed)


def live(proofs, subject_pods, **evidence):
    """A passed Result on KAI's proof seen now; the record keeps proofs and subjects."""
    evidence[grade_record.PROOF_KEY] = sorted(proofs, key=lambda p: p['kind'] != 'event')
    evidence[grade_record.SUBJECTS_KEY] = grade_record.subjects_of(subject_pods)
    return passed(evidence)


def recalled(snapshot, check_id):
    """(entry, stale): the recorded proof of check_id about the pods that exist now (see grade_record.recall)."""
    return grade_record.recall(getattr(snapshot, 'record', None), check_id, snapshot.pods)


def from_record(entry, **evidence):
    """A passed Result on a recorded proof, saying when it was verified and from what."""
    recorded = grade_record.recorded_evidence(entry)
    evidence.update(recorded)
    words = recorded[grade_record.RECORDED_KEY]
    return Result(PASSED, evidence=evidence, message=bilingual('OK, %s' % words['en'], 'OK, %s' % words['ko']))


def gone(step_id, why, stale, evidence=None):
    """Unverified: KAI's live proof is gone and no earlier grade kept one (or kept one about another pod).

    The hint tells the learner that checking each step as it is done keeps its proof.
    """
    if stale:
        why = bilingual('%s; %s' % (why['en'], stale['en']), '%s; %s' % (why['ko'], stale['ko']))
    return Result(UNVERIFIED, why, evidence, hint=bilingual(grade_record.keep_proof_hint(step_id, 'en'),
                                                            grade_record.keep_proof_hint(step_id, 'ko')))
