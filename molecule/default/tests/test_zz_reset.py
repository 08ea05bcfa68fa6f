"""Runs last (file order): reset.yml returns the solved lab to its
just-provisioned state, keeps every learner file in a backup with the
grader's record, leaves the workdir's lab marker in place, and a second
reset changes nothing."""

import os
import re

from conftest import run_playbook, sim_state

NS = 'kai-lab'
MARKER = '.gsb-kai-lab'  # provision marks the workdir as the lab's; reset keeps it


def test_reset_backs_up_files_empties_the_lab_and_is_idempotent(kubectl, workdir):
    before = sorted(n for n in os.listdir(workdir) if os.path.isfile(os.path.join(workdir, n)) and n != MARKER)
    assert MARKER in os.listdir(workdir)
    first = run_playbook('reset.yml')
    assert first.returncode == 0, first.stdout[-3000:]
    backups = [n for n in os.listdir(workdir) if n.startswith('backup-')]
    assert len(backups) == 1
    # The grader's record of this lab is archived with the learner's files.
    assert sorted(os.listdir(os.path.join(workdir, backups[0]))) == sorted(before + ['grade-record.json'])
    assert not os.path.exists(os.path.join(sim_state(), 'grade-records', '%s.json' % NS))
    assert [n for n in os.listdir(workdir) if os.path.isfile(os.path.join(workdir, n))] == [MARKER]
    assert kubectl('-n %s get pods' % NS)['items'] == []
    assert kubectl('-n %s get podgroups' % NS)['items'] == []
    assert sorted(q['metadata']['name'] for q in kubectl('get queues')['items']) == ['default-parent-queue',
                                                                                     'default-queue']
    second = run_playbook('reset.yml')
    assert second.returncode == 0, second.stdout[-3000:]
    assert re.search(r'localhost\s+: ok=\d+\s+changed=0 ', second.stdout), second.stdout[-1500:]
