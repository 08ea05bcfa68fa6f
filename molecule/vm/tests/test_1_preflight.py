"""The k3s role's preflight on a VM of the instructor guide's size (4 GiB,
2 vCPUs, a stock 10 GiB disk): it passes, and leaves nothing behind."""

from conftest import SCENARIO, fatal_messages, harness, phase, run_playbook, snapshot


def test_preflight_passes_on_a_vm_sized_as_the_guide_says(pristine):
    done, seconds = run_playbook(SCENARIO + '/preflight.yml')
    phase('preflight (guide size)', seconds)
    assert done.returncode == 0, '\n'.join(fatal_messages(done.stdout)) or done.stdout[-3000:]
    assert 'kai-lab-vm: the preflight passed.' in done.stdout
    assert harness.differences(pristine, snapshot('after-preflight')) == []
