"""The lab on the provisioned VM: solve.yml and grade.yml (100, graded as the
KAI that runs), kai-lab doctor healthy, and as the learner (a login without
sudo): sudo kai-lab check (100) and plain kubectl, which prints no warning."""

import json

from conftest import KAI_VERSION, fatal_messages, phase, run_playbook, ssh

WORKDIR = '/home/learner/gsb-kai'


def test_solve_solves_every_step():
    done, seconds = run_playbook('solve.yml')
    phase('solve.yml', seconds)
    assert done.returncode == 0, '\n'.join(fatal_messages(done.stdout)) or done.stdout[-4000:]


def test_grade_is_100_graded_as_the_kai_that_runs():
    done, seconds = run_playbook('grade.yml', '-e', 'kai_lab_lang=en')
    phase('grade.yml', seconds)
    assert done.returncode == 0, '\n'.join(fatal_messages(done.stdout)) or done.stdout[-4000:]
    code, out, err, _ = ssh('sudo cat %s/grade.json' % WORKDIR)
    assert code == 0, err
    grade = json.loads(out)
    assert grade['score'] == 100 and grade['passed'], [
        (c['id'], c['message']) for s in grade['steps'] for c in s['checks'] if c['status'] != 'passed']
    assert grade['kai_version'] == KAI_VERSION
    assert grade['protection']['protected'] is True, grade['protection']


def test_kai_lab_doctor_says_the_environment_is_healthy():
    code, out, err, seconds = ssh('sudo /usr/local/bin/kai-lab doctor --lang en')
    phase('kai-lab doctor', seconds)
    assert code == 0 and 'environment is healthy' in out, out + err


def test_the_learners_kai_lab_check_passes_the_whole_lab():
    code, out, err, seconds = ssh("sudo -u learner -i sudo -n /usr/local/bin/kai-lab check --lang en")
    phase('sudo kai-lab check as the learner', seconds)
    assert code == 0, out + err
    assert 'the lab: PASSED (100' in out or 'score 100.0%' in out, out


def test_the_learners_plain_kubectl_prints_no_warning():
    """k3s's multicall binary read root's 0600 /etc/rancher/k3s/config.yaml on every command and warned the
    learner three times; the kubectl on PATH now reads none of k3s's files, in a login shell and without one."""
    for how, command in (('login shell', 'sudo -u learner -i kubectl get queues'),
                         ('no profile', 'sudo -u learner -H env -u KUBECONFIG /usr/local/bin/kubectl get queues')):
        code, out, err, _ = ssh(command)
        assert code == 0, (how, out, err)
        assert err.strip() == '', (how, err)
        names = [line.split()[0] for line in out.splitlines()[1:] if line.strip()]
        assert {'lab', 'research', 'ops'} <= set(names), (how, out)
