"""Nothing of the sim answers from another address, and only root reaches etcd
(issue 13): every TCP socket a sim process listens on is bound to loopback,
a connection to any sim port on the machine's other addresses is refused, and
a non-root user reads no etcd key while the sim's own certificate does."""

import glob
import json
import os
import re
import shlex
import socket
import ssl
import urllib.error
import urllib.request

from conftest import sim_ports, sim_state

# etcd's v3 JSON gateway: count every key (key "\0" to range_end "\0" is all keys).
_COUNT_ALL = json.dumps({'key': 'AA==', 'range_end': 'AA==', 'count_only': True}).encode()
LOOPBACK = ('127.0.0.1', '::1')


def _sim_pids():
    """Every process the sim started, from the pid files of kwokctl and the roles."""
    pids = {}
    for path in glob.glob(os.path.join(sim_state(), '**', '*.pid'), recursive=True):
        with open(path) as handle:
            pids[int(handle.read().strip())] = os.path.basename(path)[:-4]
    return pids


def _sim_listeners(host):
    """(process name, address, port) of each listening TCP socket of the sim's processes."""
    pids = _sim_pids()
    found = []
    for line in host.run('ss -Hltnp').stdout.splitlines():
        fields = line.split()
        owners = set(int(pid) for pid in re.findall(r'pid=(\d+)', line))
        for pid in owners & set(pids):
            address, port = fields[3].rsplit(':', 1)
            found.append((pids[pid], address.strip('[]'), int(port)))
    return found


def _other_addresses(host):
    """The machine's addresses other than loopback (IPv4 and global IPv6)."""
    out = host.run('ip -o addr show').stdout.split('\n')
    addresses = []
    for line in out:
        fields = line.split()
        if len(fields) > 3 and fields[2] in ('inet', 'inet6') and 'scope host' not in line and 'scope link' not in line:
            addresses.append(fields[3].split('/')[0])
    return addresses


def test_every_listener_of_the_sim_is_on_loopback(host):
    listeners = _sim_listeners(host)
    ports = sim_ports()
    found_ports = set(port for _, _, port in listeners)
    # The ones that listened on every interface before, and the API server: the check sees them.
    for name in ('kube_apiserver', 'etcd', 'scheduler_plugins', 'admission_webhook', 'podgroupcontroller_metrics'):
        assert ports[name] in found_ports, (name, sorted(listeners))
    exposed = [item for item in listeners if item[1] not in LOOPBACK]
    assert not exposed, 'listening beyond loopback: %s' % exposed


def test_no_sim_port_answers_on_another_address(host):
    others = _other_addresses(host)
    assert others, 'the machine has no address but loopback, so this check cannot be made'
    ports = set(sim_ports().values()) | set(port for _, _, port in _sim_listeners(host))
    answered = []
    for address in others:
        for port in sorted(ports):
            family = socket.AF_INET6 if ':' in address else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as client:
                client.settimeout(3)
                try:
                    client.connect((address, port))
                    answered.append('%s:%d' % (address, port))
                except ConnectionRefusedError:
                    pass
    assert not answered, 'answered from another address: %s' % answered


def _etcd_count_with_sim_certificate():
    tls = os.path.join(sim_state(), 'etcd-tls')
    context = ssl.create_default_context(cafile=os.path.join(tls, 'tls.crt'))
    context.load_cert_chain(os.path.join(tls, 'tls.crt'), os.path.join(tls, 'tls.key'))
    request = urllib.request.Request('https://127.0.0.1:%d/v3/kv/range' % sim_ports()['etcd'], data=_COUNT_ALL)
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        return int(json.load(response)['count'])


# Run as uid 65534: read the sim's key, ask etcd for every key over plain
# HTTP and over TLS without a client certificate, and its peer port for the
# members. Prints what it got.
_NOBODY_CLIENT = r'''
import json, ssl, sys, urllib.request
port, peer_port, key, body = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4].encode()
result = {}
try:
    open(key).read()
    result['key'] = 'read'
except OSError as error:
    result['key'] = type(error).__name__
context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
for scheme in ('http', 'https'):
    try:
        request = urllib.request.Request('%s://127.0.0.1:%d/v3/kv/range' % (scheme, port), data=body)
        with urllib.request.urlopen(request, timeout=10, context=context if scheme == 'https' else None) as answer:
            result[scheme] = answer.read().decode(errors='replace')[:200]
    except Exception as error:
        result[scheme] = 'refused: %s' % type(error).__name__
try:
    with urllib.request.urlopen('http://127.0.0.1:%d/members' % peer_port, timeout=10) as answer:
        result['peer'] = answer.read().decode(errors='replace')[:200]
except Exception as error:
    result['peer'] = 'refused: %s' % type(error).__name__
print(json.dumps(result))
'''


def test_a_non_root_user_cannot_read_etcd(host):
    as_nobody = 'setpriv --reuid=65534 --regid=65534 --clear-groups ' if os.geteuid() == 0 else ''
    command = host.run('cd / && %s/usr/bin/python3 -c %s %d %d %s %s' % (
        as_nobody, shlex.quote(_NOBODY_CLIENT), sim_ports()['etcd'], sim_ports()['etcd_peer'],
        shlex.quote(os.path.join(sim_state(), 'etcd-tls', 'tls.key')), shlex.quote(_COUNT_ALL.decode())))
    assert command.rc == 0, command.stderr
    result = json.loads(command.stdout)
    assert result['http'].startswith('refused'), result
    assert result['https'].startswith('refused'), result
    assert result['peer'].startswith('refused'), result
    assert result['key'] == 'PermissionError', result
    # The sim's own certificate reads etcd: the port is etcd and holds the cluster.
    assert _etcd_count_with_sim_certificate() > 0


def test_no_debug_handlers_for_local_users():
    """Issue 18 row 10: kwok's debugging and profiling handlers are off
    (KwokConfiguration) and the sim's scheduler serves no /debug/pprof/ on
    its metrics port (its main drops net/http/pprof's handlers); /metrics
    still answers."""
    ports = sim_ports()
    for name in ('kwok_controller', 'scheduler_metrics'):
        try:
            with urllib.request.urlopen('http://127.0.0.1:%d/debug/pprof/' % ports[name], timeout=5) as response:
                status = response.status
        except urllib.error.HTTPError as error:
            status = error.code
        # kwok answers 405 "Debug endpoints are disabled.", the scheduler 404.
        assert status in (404, 405), '%s serves /debug/pprof/ (HTTP %s)' % (name, status)
    with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % ports['scheduler_metrics'], timeout=5) as response:
        assert response.status == 200
