"""teardown.yml: the VM is as create left it (packages, the .debs provision
installed among them, users, groups, sudo rules, files under /etc, /var/lib,
/opt, /usr/local and the .kube directories)."""

from conftest import fatal_messages, harness, phase, run_playbook, snapshot


def test_teardown_leaves_the_vm_as_it_found_it(pristine):
    done, seconds = run_playbook('teardown.yml')
    phase('teardown.yml', seconds)
    changed = harness.differences(pristine, snapshot('after-teardown'))
    failed = [] if done.returncode == 0 else ['teardown failed: ' + ('\n'.join(fatal_messages(done.stdout))
                                                                    or done.stdout[-3000:])]
    assert failed + changed == [], '\n'.join(failed + ['teardown left the VM changed:'] + changed)
