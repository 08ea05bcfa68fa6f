"""Re-provision of the solved lab is a health check that cannot hide drift.

create provisioned the lab (the full path, which recorded it); converge
solved it. A provision now finds it up and unchanged: one line per
component, the change tasks skipped, changed=0. Then one thing at a time is
changed that the roles would change back - a killed component, an edited KAI
Config, a deleted webhook, a setting that changes a flag of a component's
rendered argv, a certificate aged into its renew days - and each time the
next provision takes the full path, says first what it found, restores it,
and the provision after is fast again. Runs after test_zy_evidence and
before test_zz_reset (file order).
"""

import base64
import datetime
import json
import os
import re
import signal
import subprocess
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from conftest import run_playbook, sim_kubeconfig, sim_kubectl, sim_ports, sim_state

COMPONENTS = ('etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok-controller',
              'fake-gpu-operator', 'scheduler', 'binder', 'podgrouper', 'admission', 'queuecontroller',
              'podgroupcontroller')


def provision(*extra):
    done = run_playbook('provision.yml', *extra)
    assert done.returncode == 0, done.stdout[-3000:]
    # The YAML callback folds long messages: compare with single spaces.
    return ' '.join(done.stdout.split())


def kubectl(*args):
    done = subprocess.run([sim_kubectl(), '--kubeconfig', sim_kubeconfig()] + list(args),
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def assert_fast(out):
    for name in COMPONENTS:
        assert '%s: up, unchanged' % name in out, out[-3000:]
    assert re.search(r'TASK \[Start the cluster\] \** skipping', out), out[-3000:]
    assert 'changed=0' in out


def assert_full_and_fast_again(found, *extra):
    out = provision(*extra)
    assert 'full provision: ' + found in out, out[-3000:]
    assert 'TASK [gsb.kai_lab.kai_lab : Prove the lab' in out
    assert_fast(provision(*extra))
    return out


KAI_COMPONENTS = ('scheduler', 'binder', 'podgrouper', 'admission', 'queuecontroller', 'podgroupcontroller')


def kai_pids():
    return dict((name, running_argv(name)[0]) for name in KAI_COMPONENTS)


def restarted(before):
    """The KAI components whose process is another than in before (kai_pids())."""
    return [name for name, pid in kai_pids().items() if pid != before[name]]


def running_argv(name):
    with open(os.path.join(sim_state(), 'kai', 'pids', '%s.pid' % name)) as handle:
        pid = int(handle.read())
    with open('/proc/%d/cmdline' % pid, 'rb') as handle:
        return pid, handle.read().decode().split('\0')[:-1]


def not_after(path):
    with open(path, 'rb') as handle:
        return x509.load_pem_x509_certificate(handle.read()).not_valid_after_utc


def age(cert_path, key_path, days_left):
    """Replace the certificate with one of the same key, subject and extensions that ends in days_left days."""
    with open(key_path, 'rb') as handle:
        key = serialization.load_pem_private_key(handle.read(), password=None)
    with open(cert_path, 'rb') as handle:
        old = x509.load_pem_x509_certificate(handle.read())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(old.subject).issuer_name(old.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=days_left)))
    for extension in old.extensions:
        builder = builder.add_extension(extension.value, extension.critical)
    with open(cert_path, 'wb') as handle:
        handle.write(builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))
    return not_after(cert_path).strftime('%Y-%m-%dT%H:%M:%SZ')


def renewed(path):
    return not_after(path) > datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=30)


def test_an_unchanged_lab_is_only_checked():
    assert_fast(provision())


def test_a_full_provision_asked_for_is_followed_by_a_fast_one():
    # How a provision was asked for is not a setting of the lab: the one after it is only a check.
    out = provision('-e', 'kai_lab_full_provision=true')
    assert 'full provision: kai_lab_full_provision or kai_lab_ready_reprove is set' in out, out[-3000:]
    assert_fast(provision())


def test_a_killed_component_takes_the_full_path_and_is_restarted():
    pid_file = os.path.join(sim_state(), 'kai', 'pids', 'binder.pid')
    with open(pid_file) as handle:
        os.kill(int(handle.read()), signal.SIGKILL)
    time.sleep(1)
    out = assert_full_and_fast_again('binder: not running (pid file %s)' % pid_file)
    assert re.search(r'KAI components started: binder\b', out), out[-3000:]


def test_an_edited_kai_config_takes_the_full_path_and_is_applied_again():
    before = json.loads(kubectl('get', 'configs.kai.scheduler', 'kai-config', '-o', 'json'))['spec']
    kubectl('patch', 'configs.kai.scheduler', 'kai-config', '--type=merge', '-p',
            json.dumps({'spec': {'global': {'replicaCount': 7}}}))
    assert_full_and_fast_again('object Config kai-config: differs from what the last provision applied')
    assert json.loads(kubectl('get', 'configs.kai.scheduler', 'kai-config', '-o', 'json'))['spec'] == before


def test_a_deleted_webhook_takes_the_full_path_and_is_registered_again():
    name = kubectl('get', 'mutatingwebhookconfigurations', '-o', 'name').split()[0]
    kubectl('delete', name)
    assert_full_and_fast_again('MutatingWebhookConfiguration %s: is missing' % name.split('/', 1)[1])
    assert kubectl('get', name, '-o', 'name').strip() == name


def test_a_setting_that_changes_a_flag_takes_the_full_path_and_restarts_that_component():
    # The learner moves the queue controller's metrics port (kai_scheduler_sim_ports; base + 51 is
    # inside the sim's own port block and used by nothing): its --metrics-listen-address follows.
    ports = sim_ports()
    was = '--metrics-listen-address=127.0.0.1:%d' % ports['queuecontroller_metrics']
    moved = '--metrics-listen-address=127.0.0.1:%d' % (ports['queuecontroller_metrics'] + 1)
    setting = ('-e', json.dumps({'kai_scheduler_sim_ports': dict(ports, queuecontroller_metrics=ports[
        'queuecontroller_metrics'] + 1)}))
    before = kai_pids()
    assert_full_and_fast_again('queuecontroller: runs %s, provision renders %s' % (was, moved), *setting)
    # Only that component was restarted, with the new flag.
    assert restarted(before) == ['queuecontroller']
    assert moved in running_argv('queuecontroller')[1]
    # And back to the lab's port.
    before = kai_pids()
    assert_full_and_fast_again('queuecontroller: runs %s, provision renders %s' % (moved, was))
    assert restarted(before) == ['queuecontroller'] and was in running_argv('queuecontroller')[1]


def test_an_aged_webhook_certificate_is_renewed_and_reaches_the_webhooks():
    certs = os.path.join(sim_state(), 'kai', 'admission', 'k8s-webhook-server', 'serving-certs')
    cert = os.path.join(certs, 'tls.crt')
    before, _ = running_argv('admission')
    end = age(cert, os.path.join(certs, 'tls.key'), 10)
    assert_full_and_fast_again('certificate %s expires %s, within kai_scheduler_cert_renew_days (30)' % (cert, end))
    assert renewed(cert)
    with open(cert, 'rb') as handle:
        serving = x509.load_pem_x509_certificate(handle.read())
    for kind in ('mutatingwebhookconfigurations', 'validatingwebhookconfigurations'):
        for item in json.loads(kubectl('get', kind, '-o', 'json'))['items']:
            bundles = {w['clientConfig']['caBundle'] for w in item['webhooks']}
            assert [x509.load_pem_x509_certificate(base64.b64decode(b)) for b in bundles] == [serving], bundles
    # Restarted, so it serves the new certificate (the gate's pods went through it).
    assert running_argv('admission')[0] != before
