"""provision.yml in airgap mode from the bundle, on the Debian 12 VM with a
protected learner: every part of the k3s target for real (preflight, the
VM's .debs, the copy, k3s, the image import, fake-gpu-operator, KAI, the
gate), each phase timed."""

from conftest import KAI_VERSION, fatal_messages, phase, phase_times, recap, run_playbook

# The task that starts each phase, in the order provision runs them.
PHASES = [
    ('', 'provision: control-host checks and preflight'),
    ('gsb.kai_lab.k3s : Look for an installed k3s', "provision: directories, the VM's .debs, Python environment"),
    ('gsb.kai_lab.k3s : Copy the k3s binary and its images', 'provision: copy k3s, images, Helm, charts'),
    ('gsb.kai_lab.k3s : Put kubectl on PATH', 'provision: k3s start to node Ready'),
    ("gsb.kai_lab.k3s : Wait for k3s to import the lab's images", 'provision: images imported'),
    ('gsb.kai_lab.fake_gpu_operator : ', 'provision: fake-gpu-operator'),
    ('gsb.kai_lab.kai_scheduler : ', 'provision: KAI-Scheduler'),
    ('gsb.kai_lab.kai_lab : Create the lab namespace', 'provision: lab namespace and learner access'),
    ("gsb.kai_lab.kai_lab : Prove the lab's links", 'provision: readiness gate'),
    ('gsb.kai_lab.kai_lab : Install kai-lab', 'provision: kai-lab and the record'),
]


def test_provision_in_airgap_mode_from_the_bundle(pristine):
    done, seconds = run_playbook('provision.yml')
    for name, phase_seconds in phase_times(done.stdout, PHASES).items():
        phase(name, phase_seconds)
    phase('provision.yml', seconds)
    assert done.returncode == 0, '\n'.join(fatal_messages(done.stdout)) or done.stdout[-4000:]
    assert recap(done.stdout).get('failed') == 0
    # The gate proved KAI's links on the KAI that runs, and said which it is.
    assert 'KAI-Scheduler %s' % KAI_VERSION in done.stdout, done.stdout[-4000:]
