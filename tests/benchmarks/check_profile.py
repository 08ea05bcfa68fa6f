# -*- coding: utf-8 -*-
"""Where the time of one `kai-lab check` goes, phase by phase (bench_check.sh).

Run with kai-lab's own Python and code directory:
  PYTHON -I check_profile.py LIB_DIR CONFIG [STEP]
Prints one line per phase: the collection's modules, the kubeconfig, each
read of the snapshot, the health probes, the checks and the access review
(the phases grade_session.grade() runs), then, for comparison, the import of the
kubernetes client that the grade's light transport skips (client/api.py).
"""

import json
import sys
import time

started = time.monotonic()
marks = []


def mark(what):
    global started
    now = time.monotonic()
    marks.append((what, now - started))
    started = now


lib, config_path = sys.argv[1], sys.argv[2]
step = sys.argv[3] if len(sys.argv) > 3 else None
sys.path.insert(0, lib)
import yaml  # noqa: E402,F401
mark('import yaml')
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import session as grade_session
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli as kai_lab_cli  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.grader import Grader, Snapshot  # noqa: E402
from ansible_collections.gsb.kai_lab.plugins.module_utils.client.health import probe_urls  # noqa: E402
mark('import the grader (module_utils)')
with open(config_path) as handle:
    settings = grade_session.complete(kai_lab_cli.settings_of(json.load(handle), 'en'))
cluster = grade_session.connect(settings)
mark('load the kubeconfig (Cluster, %s transport)' % type(getattr(cluster, 'api', None)).__name__)


class Timed(object):
    """The cluster, timing each read the snapshot makes."""

    def __init__(self, inner):
        self.inner = inner

    def get(self, api_version, kind, name, namespace=None):
        result = self.inner.get(api_version, kind, name, namespace)
        mark('GET %s %s' % (kind, name))
        return result

    def list(self, api_version, kind, namespace=None, **kwargs):
        result = self.inner.list(api_version, kind, namespace, **kwargs)
        mark('LIST %s%s (%d)' % (kind, ' -n ' + namespace if namespace else '', len(result)))
        return result


health = probe_urls(settings['health_urls']) if settings['health_urls'] else {}
mark('health probes (%d URLs, in parallel)' % len(settings['health_urls']))
snapshot = Snapshot(Timed(cluster), settings['namespace'], settings['workdir'], health=health,
                    kai_version=settings['kai_version'])
grade = Grader(snapshot, lang='en').run([step] if step else None)
mark('run the checks (%d)' % sum(len(s['checks']) for s in grade['steps']))
# What protects KAI's word (issues 33, 40): SubjectAccessReviews of each identity the learner can use (its own, the
# lab namespace's ServiceAccounts its pods may run under), the policies compared with provision's, the label.
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.protection import protection  # noqa: E402
asked = protection(cluster, settings, settings['kai_version'] or 'v0.12.0', lang='en')
mark('the access review (%d kinds of evidence, %s%s): %s' % (
    len(asked['reviews']), 'learner ' + asked['identity'] if asked['identity'] else 'the lab\'s own kubeconfig',
    ' and %d ServiceAccounts' % len(asked['pod_identities']) if asked.get('pod_identities') else '',
    'protected' if asked['protected'] else 'not protected'))
total = sum(s for _, s in marks)
import kubernetes.client  # noqa: E402,F401
import kubernetes.config  # noqa: E402,F401
mark('(not in the grade) import the kubernetes client')
width = max(len(what) for what, _ in marks)
for what, seconds in marks[:-1]:
    print('  %-*s %7.3f s' % (width, what, seconds))
print('  %-*s %7.3f s' % (width, 'total (no interpreter start, no record)', total))
print('  %-*s %7.3f s' % (width, marks[-1][0], marks[-1][1]))
