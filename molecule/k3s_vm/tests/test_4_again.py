"""provision.yml again on the provisioned, solved VM, nothing changed: told
"unchanged" from what the last provision recorded, without hashing the
airgap files or waiting again (issue 43: it took 765 s; at most 120 s here)."""

from conftest import fatal_messages, phase, recap, run_playbook

LIMIT = 120


def test_a_provision_that_changes_nothing_is_told_so_quickly():
    done, seconds = run_playbook('provision.yml')
    phase('provision.yml again, nothing changed', seconds)
    assert done.returncode == 0, '\n'.join(fatal_messages(done.stdout)) or done.stdout[-4000:]
    assert recap(done.stdout).get('changed') == 0, done.stdout[-4000:]
    assert 'is as the last full provision left it' in done.stdout, done.stdout[-4000:]
    assert seconds <= LIMIT, '%d s (at most %d s)' % (seconds, LIMIT)
