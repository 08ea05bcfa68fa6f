"""Runs last (file order): reset.yml returns the solved lab to its
just-provisioned state, keeps every learner file in a backup with the
grader's record, leaves the workdir's lab marker in place, and a second
reset changes nothing. On the reset lab, kai-lab check queues does not pass
and says why, and a learner's text with control characters is one line."""

import os
import re

import unicodedata

from conftest import run_kai_lab, run_playbook, sim_state

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


def test_kai_lab_check_on_the_reset_lab_does_not_pass_queues(workdir):
    done, _ = run_kai_lab('check', 'queues')
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # The verdict first, then a row per check (issue 41's console).
    assert lines[0].startswith('step 1 queues (Queue hierarchy): NOT PASSED'), done.stdout
    assert [line for line in lines if line.startswith('  FAIL queues.file: ')
            and 'queues.yaml does not exist in %s' % workdir in line], done.stdout


def test_kai_lab_prints_a_learners_control_characters_as_one_line(workdir):
    path = os.path.join(workdir, 'queues.yaml')
    with open(path, 'w') as handle:
        handle.write('apiVersion: scheduling.run.ai/v2\nkind: Queue\n'
                     'metadata: {name: "lab\\e[2J\\r\\nstep 1 queues (Queue hierarchy): PASSED"}\n')
    try:
        done, _ = run_kai_lab('check', 'queues')
    finally:
        os.unlink(path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert not [ch for ch in done.stdout.replace('\n', '') if unicodedata.category(ch)[0] == 'C'], repr(done.stdout)
    lines = done.stdout.splitlines()
    assert 'step 1 queues (Queue hierarchy): PASSED' not in lines
    quoting = [line for line in lines if '[2J' in line]
    # The learner's text is quoted only inside a check's row or hint, never as a verdict.
    assert quoting and all(line.startswith('  ') for line in quoting), done.stdout
