"""teardown.yml with the guide's inventory (kai_lab_learner_user set) after
the parts before k3s, the learner's ~/.kube a link it planted to a directory
holding root's `config` (issue 40 row 2): that file stays, and the VM is as
create left it, packages, files under /etc, /var/lib, /opt, /usr/local and
the .kube directories, users, groups and sudo rules compared; a second
teardown passes too."""

from conftest import REPO, fatal_messages, harness, phase, run_playbook, snapshot


# Issue 40 row 2: the learner's ~/.kube a link to a directory holding a root-owned `config`. Teardown removes
# the learner's kubeconfig only where it is the file provision wrote, never through a link.
PLANT = ("sudo install -d -m 0755 /etc/gsb-kai-lab-canary && echo root-only | sudo tee /etc/gsb-kai-lab-canary/config"
         " >/dev/null && sudo chmod 0600 /etc/gsb-kai-lab-canary/config"
         " && sudo -u learner ln -sfn /etc/gsb-kai-lab-canary /home/learner/.kube")
LOOK = "sudo test -f /etc/gsb-kai-lab-canary/config && sudo -u learner test -L /home/learner/.kube"
UNPLANT = "sudo rm -rf /etc/gsb-kai-lab-canary && sudo -u learner rm -f /home/learner/.kube"


def test_teardown_leaves_the_vm_as_it_found_it(pristine):
    assert harness.ssh(PLANT) == 0
    done, seconds = run_playbook(REPO + '/playbooks/teardown.yml')
    phase('teardown.yml', seconds)
    kept = harness.ssh(LOOK) == 0
    assert harness.ssh(UNPLANT) == 0
    assert kept, "teardown followed the learner's ~/.kube link and removed root's config behind it"
    # What is left is worth knowing also when teardown failed.
    changed = harness.differences(pristine, snapshot('after-teardown'))
    failed = [] if done.returncode == 0 else ['teardown failed: ' + ('\n'.join(fatal_messages(done.stdout))
                                                                    or done.stdout[-3000:])]
    assert failed + changed == [], '\n'.join(failed + ['teardown left the VM changed:'] + changed)


def test_a_second_teardown_passes():
    done, seconds = run_playbook(REPO + '/playbooks/teardown.yml')
    phase('teardown.yml again', seconds)
    assert done.returncode == 0, '\n'.join(fatal_messages(done.stdout)) or done.stdout[-3000:]
