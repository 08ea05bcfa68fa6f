# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lab platform's package of the lab: kai-lab export PLATFORM DIR.

Each package holds the lab text's pages (steps/lab_text.py), a setup that
provisions the lab on the platform's machine with this collection, and per
step the platform's check script calling kai-lab check
(grading/platform_scripts.py), in the format the platform documents:

- Killercoda: index.json with details.intro/steps[]/finish (text, verify,
  background, foreground) and details.assets (the format Katacoda defined,
  https://www.katacoda.com/docs/scenarios/index-json, as in
  https://github.com/killercoda/scenario-examples); a verify script's exit 0
  lets the learner go on.
- Instruqt: track.yml, config.yml, track_scripts/setup-<host> and a folder
  per challenge with assignment.md and setup-, check-, solve-, cleanup-<host>
  (https://docs.instruqt.com/reference/cli/configuration-files,
  https://docs.instruqt.com/sandboxes/lifecycle-scripts/add-a-script-to-check-challenge-execution:
  a check's "FAIL: " line is shown; https://docs.instruqt.com/concepts/lifecycle-scripts:
  a check times out after 1 minute).
- iximiuz Labs: a tutorial, index.md with its tasks in the front matter: an
  init task, a regular task per step re-run about every second until it
  exits 0, hintcheck's output shown live, failcheck marking the playground
  failed (https://github.com/iximiuz/labs-content-samples/blob/main/sample-tutorial/index.md,
  https://labs.iximiuz.com/docs/custom-playgrounds/init-tasks-and-tabs);
  files under __static__/ are served at https://labs.iximiuz.com/__static__/<name>.

Who the learner is (issue 40), as each platform's documented format allows,
in LEARNER_LOGINS: where the format can open the learner's terminal as a
login of its own, the package makes that login (without sudo), provisions
it as kai_lab_learner_user (its own ServiceAccount kubeconfig, its workdir,
its sudo rule for kai-lab alone) and opens the terminal as it, so every
grade asks what that account may write. Where it cannot, the learner is
root: the package's first page and every check's output say in one line
that the grade is not protected (platform_scripts.WORDS['unprotected']).

- Instruqt: a terminal tab runs its `cmd`, "su - developer" in Instruqt's
  own example (https://docs.instruqt.com/tracks/challenges/challenge-tabs,
  Terminal; github.com/instruqt/ai-plugins references/track-format/tabs.md:
  "cmd: Startup command (e.g., su - user, ...)"), and a learner reaches
  the sandbox through the challenge's tabs only. The lifecycle scripts run
  as root (.../track-format/lifecycle-scripts.md: working directory /root),
  so a check runs kai-lab as root, which is what the learner's own `kai-lab`
  does through its sudo rule.
- Killercoda: index.json (Katacoda's format, above; the O'Reilly reference
  https://interactive-docs.oreilly.com/configuration/index-json.html lists
  every element: details, files, environment, backend) has no user setting
  and its terminal is root's shell; a foreground script that switched user
  would hand the learner back a root shell when it exits.
- iximiuz Labs: a machine's `users` only name its default login
  (sample-tutorial/index.md: "Override the default login user"); root is a
  login of every machine whatever they say (github.com/iximiuz/labctl
  api/plays.go, Machine.HasUser: "Everyone has root"; `labctl ssh --user
  root`).

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import posixpath
import struct
import zlib

try:
    import yaml
except ImportError:  # reported by the caller before any use
    yaml = None

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import platform_scripts as scripts
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import profiles as kai_profiles
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import with_particle
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.workdir_fd import DEFAULT_WORKDIR
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text, registry

PLATFORMS = ('killercoda', 'instruqt', 'iximiuz')
HOST = 'kai-lab'
# Where Killercoda puts the collection's tarball (details.assets), and iximiuz serves __static__/.
KILLERCODA_ASSETS = '/root'
IXIMIUZ_STATIC = 'https://labs.iximiuz.com/__static__/'
SCRIPT, TEXT = 0o755, 0o644
# The learner's login where the platform's terminal can open as it (see above): (name, home); its workdir is
# the role's default for a learner, ~/gsb-kai (roles/kai_lab/defaults/main.yml kai_lab_workdir).
LEARNER = ('learner', '/home/learner')
LEARNER_LOGINS = {'instruqt': LEARNER}
# Instruqt's terminal as that login: a login shell (so /etc/profile.d gives kubectl its own kubeconfig) on a
# terminal of its own (--pty: the learner's shell cannot push input into the terminal root's su holds).
INSTRUQT_TERMINAL = 'su --login --pty %s' % LEARNER[0]

WORDS = {
    'active': {'en': 'Waiting for step {number} to pass (kai-lab check {id})...',
               'ko': '{number}단계 통과를 기다리는 중 (kai-lab check {id})...'},
    'completed': {'en': 'Step {number} passed.', 'ko': '{number}단계 통과.'},
    'needs_url': {'en': 'Instruqt copies no file to its machines: give --collection the https URL of a gsb-kai_lab '
                        'tarball the machine can fetch',
                  'ko': 'Instruqt 는 머신에 파일을 복사하지 않습니다: --collection 에 머신이 받을 수 있는 gsb-kai_lab '
                        '타르볼의 https URL 을 주세요'},
    'not_tarball': {'en': '--collection must be a gsb-kai_lab-*.tar.gz (ansible-galaxy collection build) or its https '
                          'URL, not {collection}',
                    'ko': '--collection 은 gsb-kai_lab-*.tar.gz (ansible-galaxy collection build) 파일이나 그 https URL '
                          '이어야 합니다: {collection}'},
    'missing': {'en': 'the collection\'s tarball {collection} is not a file here', 'ko': '컬렉션 타르볼이 여기 파일로 없습니다: {collection}'},
}


class ExportError(Exception):
    """The package cannot be written; args[0] says why in both languages."""


def say(key, lang, **values):
    return (WORDS[key].get(lang) or WORDS[key]['en']).format(**values)


def both(key, **values):
    return dict((lang, say(key, lang, **values)) for lang in lab_text.LANGS)


def collection_source(collection):
    """(kind, name): 'url' or 'file', and the tarball's file name; ExportError for anything else."""
    name = (collection or '').rstrip('/').rsplit('/', 1)[-1]
    if not (name.startswith('gsb-kai_lab-') and name.endswith('.tar.gz')):
        raise ExportError(both('not_tarball', collection=collection))
    if collection.startswith('https://'):
        return 'url', name
    if not os.path.isfile(collection):
        raise ExportError(both('missing', collection=collection))
    return 'file', name


def dumped(data):
    """YAML with every multi-line string (a script, a page) as a literal block, as one writes it by hand."""
    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper, value):
        return dumper.represent_scalar('tag:yaml.org,2002:str', value, style='|' if '\n' in value else None)
    Dumper.add_representer(str, text)
    return yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=1000)


def front_matter(fields, body):
    return '---\n%s---\n%s' % (dumped(fields), body)


def step_markdown(lab, step, extra=None):
    return lab_text.markdown(lab.step(step.id, level=1) + (extra or []))


def protected(platform):
    """Whether the platform's package gives the learner a login of its own (LEARNER_LOGINS)."""
    return platform in LEARNER_LOGINS


def unprotected_text(lab, platform):
    """The first page's line that the grade is not protected, where the learner is root; else nothing."""
    return [] if protected(platform) else [('p', scripts.say('unprotected', lab.lang))]


def learner_lab(lab, platform, kai_version=None):
    """The lab text as the platform's learner sees it: the k3s target the setup provisions, the KAI version it
    installs (kai_version, else the lab text's own), with the learner login's workdir where there is one."""
    workdir = lab.workdir
    if protected(platform):
        workdir = posixpath.join(LEARNER_LOGINS[platform][1], posixpath.basename(DEFAULT_WORKDIR))
    return lab_text.Lab(lab.lang, lab.values['namespace'], workdir, lab.values['kai_namespace'],
                        kai_version=kai_version or kai_profiles.LAB_VERSION, target='k3s')


# ---------------------------------------------------------------- Killercoda

def killercoda(lab, collection, kind, name):
    source = collection if kind == 'url' else '%s/%s' % (KILLERCODA_ASSETS, name)
    files = {
        'intro/text.md': (lab_text.markdown([('h', 1, lab.title()), ('p', lab.teaser())]
                                            + unprotected_text(lab, 'killercoda') + lab.intro() + lab.notes()), TEXT),
        'intro/background.sh': (scripts.setup('Killercoda', source, lab.lang, kai_version=lab.kai_version), SCRIPT),
        'intro/foreground.sh': (scripts.wait_ready(lab.lang), SCRIPT),
        'finish/text.md': (lab_text.markdown(lab.finish(level=1)), TEXT),
    }
    steps = []
    for step in registry.STEPS:
        folder = 'step%d' % step.number
        files[folder + '/text.md'] = (step_markdown(lab, step), TEXT)
        files[folder + '/verify.sh'] = (scripts.check(step.id, step.number, lab.lang, 'Killercoda',
                                                      unprotected=not protected('killercoda')), SCRIPT)
        steps.append({'title': lab.step_title(step), 'text': folder + '/text.md', 'verify': folder + '/verify.sh'})
    details = {'intro': {'title': lab.title(), 'text': 'intro/text.md', 'background': 'intro/background.sh',
                         'foreground': 'intro/foreground.sh'},
               'steps': steps,
               'finish': {'text': 'finish/text.md'}}
    if kind == 'file':
        details['assets'] = {'host01': [{'file': name, 'target': KILLERCODA_ASSETS}]}
    index = {'title': lab.title(), 'description': lab.teaser(), 'details': details,
             'backend': {'imageid': 'ubuntu'}}
    files['index.json'] = (json.dumps(index, indent=2, ensure_ascii=False) + '\n', TEXT)
    return files, ('assets/' + name if kind == 'file' else None)


# ---------------------------------------------------------------- Instruqt

def instruqt(lab, collection, kind, name):
    if kind != 'url':
        raise ExportError(both('needs_url'))
    track = {'slug': 'kai-scheduler-lab', 'type': 'track', 'title': lab.title(),
             'teaser': lab.teaser(),
             'description': lab_text.markdown(lab.intro(level=2)),
             'tags': ['kubernetes', 'kai-scheduler', 'gpu'], 'skipping_enabled': True, 'show_timer': True}
    config = {'version': '3', 'virtualmachines': [{'name': HOST, 'image': 'ubuntu-os-cloud/ubuntu-2204-lts',
                                                   'shell': '/bin/bash', 'machine_type': 'n1-standard-2'}]}
    files = {
        'track.yml': (dumped(track), TEXT),
        'config.yml': (dumped(config), TEXT),
        'track_scripts/setup-' + HOST: (scripts.setup('Instruqt', collection, lab.lang,
                                                      wait_for='/opt/instruqt/bootstrap/host-bootstrap-completed',
                                                      learner=LEARNER_LOGINS.get('instruqt'),
                                                      kai_version=lab.kai_version), SCRIPT),
    }
    for step in registry.STEPS:
        folder = '%02d-%s' % (step.number, step.id.replace('_', '-'))
        fields = {'slug': step.id.replace('_', '-'), 'type': 'challenge', 'title': lab.step_title(step),
                  'teaser': lab.summary(step.id),
                  'tabs': [{'title': 'Terminal', 'type': 'terminal', 'hostname': HOST, 'cmd': INSTRUQT_TERMINAL}],
                  'difficulty': 'basic', 'timelimit': 900}
        files[folder + '/assignment.md'] = (front_matter(fields, step_markdown(lab, step)), TEXT)
        files['%s/setup-%s' % (folder, HOST)] = (scripts.ready_for(step.id, step.number, lab.lang), SCRIPT)
        files['%s/check-%s' % (folder, HOST)] = (scripts.check(step.id, step.number, lab.lang, 'Instruqt',
                                                               prefix='FAIL: ', unprotected=not protected('instruqt')),
                                                 SCRIPT)
        files['%s/solve-%s' % (folder, HOST)] = (scripts.solve(step.id, step.number), SCRIPT)
        files['%s/cleanup-%s' % (folder, HOST)] = (scripts.nothing_to_clean(step.id, step.number), SCRIPT)
    return files, None


# ---------------------------------------------------------------- iximiuz Labs

def iximiuz_tasks(lab, source):
    tasks = {'init_provision': {'init': True, 'timeout_seconds': 3600,
                                'run': scripts.setup('iximiuz Labs', source, lab.lang, kai_version=lab.kai_version)}}
    previous = None
    unprotected = not protected('iximiuz')
    for step in registry.STEPS:
        task = {'run': scripts.iximiuz_run(step.id, lab.lang, unprotected),
                'hintcheck': scripts.iximiuz_hint(step.id, lab.lang, unprotected),
                'failcheck': scripts.iximiuz_fail(step.id, lab.lang, unprotected),
                'timeout_seconds': scripts.CHECK_SECONDS + 10}
        if previous:
            task['needs'] = [previous]
        previous = 'verify_' + step.id
        tasks[previous] = task
    return tasks


def simple_task(lab, step):
    values = {'number': step.number, 'id': step.id}
    return ('raw', '::simple-task\n---\n:tasks: tasks\n:name: verify_%s\n---\n#active\n%s\n\n#completed\n%s\n::'
            % (step.id, say('active', lab.lang, **values), say('completed', lab.lang, **values)))


def iximiuz(lab, collection, kind, name, today):
    source = collection if kind == 'url' else IXIMIUZ_STATIC + name
    fields = {'kind': 'tutorial', 'title': lab.title(), 'description': lab.teaser(),
              'categories': ['kubernetes'], 'tagz': ['kai-scheduler', 'gpu', 'scheduling'],
              'createdAt': today, 'cover': '__static__/cover.png',
              'playground': {'name': 'ubuntu-24-04',
                             'machines': [{'name': 'ubuntu-01', 'users': [{'name': 'root', 'default': True}]}]},
              'tasks': iximiuz_tasks(lab, source)}
    nodes = unprotected_text(lab, 'iximiuz') + lab.intro()
    for step in registry.STEPS:
        nodes.extend(lab.step(step.id) + [simple_task(lab, step)])
    body = lab_text.markdown(nodes + lab.notes() + lab.finish())
    files = {'index.md': (front_matter(fields, body), TEXT), '__static__/cover.png': (cover_png(), TEXT)}
    return files, ('__static__/' + name if kind == 'file' else None)


def cover_png(size=(1200, 630), colour=(0x76, 0xb9, 0x00)):
    """A plain cover image (iximiuz requires one), as PNG bytes."""
    width, height = size
    row = b'\x00' + bytes(bytearray(colour)) * width

    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(row * height, 9)) + chunk(b'IEND', b''))


# ---------------------------------------------------------------- writing

def package(platform, lab, collection, today=None, kai_version=None):
    """({relative path: (content, mode)}, where the collection's tarball goes or None) of platform's package.

    kai_version: the KAI-Scheduler the package's setup installs (kai_lab_k3s_kai_version), whose form of each
    step its pages write; the lab text's own when None. A version no profile covers raises ExportError."""
    kind, name = collection_source(collection)
    if kai_version:
        try:
            kai_profiles.profile_for(kai_version)
        except kai_profiles.KaiProfileError as exc:
            raise ExportError({'en': '--kai-version: %s' % exc, 'ko': '--kai-version: %s' % exc})
    lab = learner_lab(lab, platform, kai_version)
    if platform == 'killercoda':
        files, tarball = killercoda(lab, collection, kind, name)
    elif platform == 'instruqt':
        files, tarball = instruqt(lab, collection, kind, name)
    else:
        files, tarball = iximiuz(lab, collection, kind, name, today or datetime.date.today().isoformat())
    return files, tarball


def write(dest, files, tarball=None, collection=None):
    """Write files (and a copy of the collection's tarball) into dest, which must not exist or be empty;
    the paths written."""
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        raise ExportError({'en': '%s exists and is not an empty directory: nothing was written' % dest,
                           'ko': '%s 이미 있고 빈 디렉터리가 아닙니다: 아무것도 쓰지 않았습니다' % with_particle(dest, '이')})
    written = []
    if tarball:
        files = dict(files)
        with open(collection, 'rb') as handle:
            files[tarball] = (handle.read(), TEXT)
    for relative in sorted(files):
        content, mode = files[relative]
        path = os.path.join(dest, relative)
        if not os.path.isdir(os.path.dirname(path)):
            os.makedirs(os.path.dirname(path))
        with open(path, 'wb') as handle:
            handle.write(content if isinstance(content, bytes) else content.encode('utf-8'))
        os.chmod(path, mode)
        written.append(path)
    return written
