"""teardown.yml with the guide's inventory (kai_lab_learner_user set) after
the parts before k3s: the VM is as create left it, packages, files under
/etc, /var/lib, /opt, /usr/local and the .kube directories, users, groups and
sudo rules compared; a second teardown passes too."""

from conftest import REPO, fatal_messages, harness, phase, run_playbook, snapshot


def test_teardown_leaves_the_vm_as_it_found_it(pristine):
    done, seconds = run_playbook(REPO + '/playbooks/teardown.yml')
    phase('teardown.yml', seconds)
    # What is left is worth knowing also when teardown failed.
    changed = harness.differences(pristine, snapshot('after-teardown'))
    failed = [] if done.returncode == 0 else ['teardown failed: ' + ('\n'.join(fatal_messages(done.stdout))
                                                                    or done.stdout[-3000:])]
    assert failed + changed == [], '\n'.join(failed + ['teardown left the VM changed:'] + changed)


def test_a_second_teardown_passes():
    done, seconds = run_playbook(REPO + '/playbooks/teardown.yml')
    phase('teardown.yml again', seconds)
    assert done.returncode == 0, '\n'.join(fatal_messages(done.stdout)) or done.stdout[-3000:]
