"""The whole provision.yml, where k3s's release cannot be reached (github.com
does not resolve here): it stops before it changes the VM, naming the
unreachable addresses and the remedies."""

from conftest import REPO, fatal_messages, harness, phase, run_playbook, snapshot


def test_provision_stops_before_changing_the_vm(pristine):
    done, seconds = run_playbook(REPO + '/playbooks/provision.yml')
    phase('provision.yml to its stop', seconds)
    after = snapshot('after-provision')
    failures = fatal_messages(done.stdout)
    print('\n'.join(['provision stopped with:'] + failures))
    assert done.returncode != 0, done.stdout[-3000:]
    changed = harness.differences(pristine, after)
    assert changed == [], 'provision changed the VM before it stopped:\n' + '\n'.join(changed)
    message = ' '.join(failures).replace('\n', ' ')
    # Each unreachable source by address, and what to do: a release mirror, registry mirrors, airgap.
    for words in ('github.com', 'ghcr.io', 'mirror', 'airgap'):
        assert words in message, (words, message)
