# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the k3s VM's node is Ready, and why not yet, for the wait after k3s
starts (action gsb.kai_lab.k3s_node_wait), from one `k3s kubectl get node
<name> -o json` on the VM per look.

Under QEMU without KVM the node took 196 s to be Ready after k3s started
(the API server answers first, then the node registers, then the kubelet
reports Ready once the network plugin runs): each of these is said, with
the kubelet's own reason, instead of a retry count.

Layer: the targets (k3s); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import fill
from ansible_collections.gsb.kai_lab.plugins.module_utils.targets.k3s.progress import WAIT_ARGS

ARGUMENT_SPEC = dict(
    name=dict(type='str', required=True),
    kubeconfig=dict(type='path', default='/root/.kube/config'),
    timeout=dict(type='int', default=300),
)
ARGUMENT_SPEC.update(WAIT_ARGS)


def argv(args):
    """The command run on the VM per look."""
    return [args['k3s'], 'kubectl', '--kubeconfig=' + args['kubeconfig'], 'get', 'node', args['name'], '-o', 'json']


def _short(text, size=160):
    return ' '.join((text or '').split())[:size]


def status(answer):
    """(ready, why not) from the command's answer (rc, stdout, stderr of ansible.legacy.command)."""
    if answer.get('rc') != 0:
        error = _short(answer.get('stderr') or answer.get('msg'))
        if 'NotFound' in error or 'not found' in error:
            return False, 'not registered yet (the kubelet registers it once k3s runs)'
        return False, 'the API server does not answer yet (%s)' % (error or 'no answer')
    try:
        node = json.loads(answer.get('stdout') or '')
    except ValueError:
        return False, 'kubectl did not answer JSON (%s)' % _short(answer.get('stdout'))
    conditions = (node.get('status') or {}).get('conditions') or [] if isinstance(node, dict) else []
    ready = [c for c in conditions if isinstance(c, dict) and c.get('type') == 'Ready']
    if not ready:
        return False, 'registered, no Ready condition yet'
    if ready[0].get('status') == 'True':
        return True, 'Ready'
    reason = ready[0].get('reason') or 'Ready=%s' % ready[0].get('status')
    message = _short(ready[0].get('message'))
    return False, 'not Ready: %s%s' % (reason, ': ' + message if message else '')


def line(name, why, elapsed, timeout):
    """One progress line a person reads."""
    return 'k3s node %s: %s; %d s of at most %d s' % (name, why, elapsed, timeout)


def failure(name, why, elapsed):
    """Why the wait ended, in English and Korean."""
    return ('Node %s was not Ready within %d s (%s). See `journalctl -u k3s` and `k3s kubectl describe node %s` on '
            'the VM. / ' % (name, elapsed, why, name)
            + fill('{name} 노드가 {elapsed} 초 안에 Ready 가 되지 않았습니다({why}). VM 에서 `journalctl -u k3s` 출력과 '
                   '`k3s kubectl describe node {name}` 출력을 보세요.', name=name, elapsed=elapsed, why=why))
