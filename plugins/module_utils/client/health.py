# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is each KAI component up? Read-only probes for the grader.

Layer: the cluster client; imports no other layer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

from urllib.request import ProxyHandler, build_opener

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.api import ClusterError


def probe_urls(urls, timeout=2):
    """name -> True when GET url answers 200 within timeout (sim: local processes).

    The probes run side by side, so all of them together take one timeout at most.
    The standard library's client (no Ansible here: kai-lab runs this too),
    without proxies: the probed processes are this machine's own.
    """
    result = {}
    opener = build_opener(ProxyHandler({}))

    def probe(name, url):
        try:
            response = opener.open(url, timeout=timeout)
            try:
                result[name] = response.getcode() == 200
            finally:
                response.close()
        except Exception:  # refused, timed out, 5xx: all mean "not serving"
            result[name] = False

    threads = [threading.Thread(target=probe, args=item) for item in sorted(urls.items())]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 1)
    return dict((name, result.get(name, False)) for name in urls)


def deployments_ready(cluster, namespace, expected=()):
    """name -> True when a Deployment has all its replicas ready (k3s: KAI's operator output).

    An expected Deployment that does not exist is reported as not ready.
    """
    try:
        deployments = cluster.list('apps/v1', 'Deployment', namespace)
    except ClusterError:
        return {}
    result = dict((name, False) for name in expected)
    for deployment in deployments:
        status = deployment.get('status') or {}
        wanted = (deployment.get('spec') or {}).get('replicas', 1)
        result[deployment['metadata']['name']] = (status.get('readyReplicas') or 0) >= wanted
    return result
