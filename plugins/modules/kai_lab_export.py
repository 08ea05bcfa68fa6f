#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_export
short_description: Write a lab platform's package of the KAI-Scheduler lab
version_added: "0.1.0"
description:
  - Writes a ready package of the lab for a lab platform into O(dest), as
    C(kai-lab export) does on a lab machine - the lab text's pages (an intro,
    one page per step, a finish), a setup that provisions the lab on the
    platform's machine with this collection (the k3s target on localhost), and
    per step the platform's check script calling C(kai-lab check STEP
    --first-failure).
  - C(killercoda) - C(index.json) with C(details.intro), C(details.steps[])
    (C(text), C(verify)), C(details.finish) and the collection's tarball in
    C(details.assets). C(instruqt) - C(track.yml), C(config.yml),
    C(track_scripts/setup-kai-lab) and a folder per challenge with
    C(assignment.md) and C(setup-), C(check-), C(solve-), C(cleanup-kai-lab).
    C(iximiuz) - a tutorial C(index.md) with its tasks in the front matter and
    C(__static__/) with the tarball and a cover.
  - Who the learner is follows what each platform's format allows. C(instruqt) - the
    setup makes a login C(learner) without sudo and provisions it as
    C(kai_lab_learner_user) (its own ServiceAccount kubeconfig, its workdir
    C(/home/learner/gsb-kai), its sudo rule for C(kai-lab)); every terminal tab opens
    as it (its C(cmd) is C(su --login --pty learner)), so each grade asks what that account
    may write. C(killercoda) and C(iximiuz) - the learner is root (no user setting in
    C(index.json); iximiuz lets every playground log in as root), so the first page
    and every check's output end with one line saying the grade is not protected.
  - The pages use the collection's default namespace and workdir (the learner
    login's on Instruqt), which the platform's machine gets.
  - O(dest) must not exist or be an empty directory; nothing is written over
    anything.
options:
  platform:
    description: The lab platform.
    type: str
    required: true
    choices: [killercoda, instruqt, iximiuz]
  dest:
    description: The directory to write the package into.
    type: path
    required: true
  collection:
    description:
      - The collection the platform's machine installs - a built
        C(gsb-kai_lab-*.tar.gz) on the controller (copied into the package), or
        an https URL the machine fetches it from. Instruqt copies no files, so
        it needs the URL.
    type: str
    required: true
  lang:
    description: The learner's language, of the pages and of kai-lab on the platform's machine.
    type: str
    default: ko
    choices: [ko, en]
  kai_version:
    description:
      - The KAI-Scheduler the package's setup installs on the platform's machine (the k3s target's
        C(kai_lab_k3s_kai_version)). The pages write each step in the form that version needs (before v0.14.7,
        step 5 as an explicit PodGroup). Unset, the lab text's version, the k3s target's default.
      - A version no profile of the collection covers fails, naming the known ones.
    type: str
attributes:
  check_mode:
    support: full
    description: Says which files it would write and writes none.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: A Killercoda scenario in English, with the collection built beside it
  gsb.kai_lab.kai_lab_export:
    platform: killercoda
    dest: dist/killercoda
    collection: dist/gsb-kai_lab-0.1.0.tar.gz
    lang: en

- name: An Instruqt track whose machine fetches the collection
  gsb.kai_lab.kai_lab_export:
    platform: instruqt
    dest: dist/instruqt
    collection: https://downloads.example.org/gsb-kai_lab-0.1.0.tar.gz
'''

RETURN = r'''
files:
  description: The files of the package, written (or that would be, in check mode).
  returned: success
  type: list
  elements: str
  sample: [dist/killercoda/index.json, dist/killercoda/step1/text.md, dist/killercoda/step1/verify.sh]
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import platforms
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.session import DEFAULTS
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import lab_text


def main():
    module = AnsibleModule(argument_spec=dict(
        platform=dict(type='str', required=True, choices=list(platforms.PLATFORMS)),
        dest=dict(type='path', required=True),
        collection=dict(type='str', required=True),
        lang=dict(type='str', default='ko', choices=list(lab_text.LANGS)),
        kai_version=dict(type='str'),
    ), supports_check_mode=True)
    params = module.params
    lab = lab_text.Lab(params['lang'], DEFAULTS['namespace'], DEFAULTS['workdir'], DEFAULTS['kai_namespace'])
    try:
        files, tarball = platforms.package(params['platform'], lab, params['collection'],
                                           kai_version=params['kai_version'])
        if module.check_mode:
            names = sorted(list(files) + ([tarball] if tarball else []))
            module.exit_json(changed=True, files=[os.path.join(params['dest'], name) for name in names])
        written = platforms.write(params['dest'], files, tarball, params['collection'])
    except platforms.ExportError as exc:
        module.fail_json(msg='%s / %s' % (exc.args[0]['en'], exc.args[0]['ko']))
    except (IOError, OSError) as exc:
        module.fail_json(msg='could not write the package to %s: %s' % (params['dest'], exc))
    module.exit_json(changed=True, files=written)


if __name__ == '__main__':
    main()
