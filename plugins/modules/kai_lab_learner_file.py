#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_learner_file
short_description: Write or remove a file of the KAI-Scheduler lab in a learner's home without following a link
version_added: "0.1.0"
description:
  - The learner owns its home and may put a symbolic link, a hard link or a directory at any name in it. This
    module lets root write the lab's file there (the learner's C(~/.kube/config)) and remove it at teardown
    without resolving any path the learner controls.
  - The home of O(user) is opened from C(/) one component at a time without following a link; each directory
    below it on the way to O(path) is opened relative to the one before with C(O_NOFOLLOW). A symbolic link on
    the way is refused, naming it and the command that removes it; so is a directory there that O(user) does
    not own.
  - O(state=present) creates missing directories on the way (O(directory_mode), owned by O(user)), writes
    O(content) to a new file created exclusively in the opened directory and renames it over O(path); a
    symbolic link or a hard link at O(path) is replaced, never written through. The file is O(user)'s, with
    O(mode). Unchanged when the file already is exactly that.
  - O(state=absent) removes O(path) only when it is the lab's file, a regular file with one link owned by
    O(user) whose text starts with O(marker). Anything else is kept and RV(kept) says why (a warning too); a
    link on the way is not entered.
  - O(prune=true) then removes the directory the lab made for the file (the learner's C(~/.kube)) when only
    kubectl's cache is left in it.
options:
  path:
    description: The file, an absolute path below the home of O(user) (for example C(/home/learner/.kube/config)).
    type: str
    required: true
  user:
    description: The learner's login, who owns its home, the directories on the way and the file.
    type: str
    required: true
  state:
    description: Write the file (V(present)) or remove the lab's file (V(absent)).
    type: str
    choices: [present, absent]
    default: present
  content:
    description: What the file holds, with O(state=present) (required then). Never logged.
    type: str
  mode:
    description: The file's permissions, octal.
    type: raw
    default: '0600'
  directory_mode:
    description: The permissions of a directory made on the way, octal.
    type: raw
    default: '0700'
  marker:
    description: With O(state=absent), how the lab's file begins; a file that does not is kept.
    type: str
    default: '# gsb.kai_lab'
  prune:
    description:
      - With O(state=absent), also remove the directory holding O(path) (never the home) when, the lab's file gone,
        nothing is left in it but kubectl's cache C(cache) (its discovery and HTTP caches of the lab's cluster),
        which goes with it. The cache is removed entry by entry through directory descriptors, no link followed; a
        directory holding anything else, or a cache with an entry that is not O(user)'s, is kept.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reports whether the file would be written or removed, and does neither.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Write the learner's kubeconfig
  gsb.kai_lab.kai_lab_learner_file:
    path: /home/learner/.kube/config
    user: learner
    content: "{{ lookup('ansible.builtin.template', 'learner_kubeconfig.yaml.j2') }}"
    mode: "0600"

- name: Remove it at teardown, when it is still the lab's
  gsb.kai_lab.kai_lab_learner_file:
    path: /home/learner/.kube/config
    user: learner
    state: absent
    prune: true
'''

RETURN = r'''
replaced:
  description: What stood at O(path) and was replaced by the file (V(symlink), V(hard link), V(special file)); null otherwise.
  returned: state is present
  type: str
pruned:
  description: The directory removed with O(prune=true) (kubectl's cache with it); null when none was.
  returned: state is absent
  type: str
  sample: /home/learner/.kube
kept:
  description: Why O(path) was left in place with O(state=absent), in English and Korean; null when removed or missing.
  returned: state is absent
  type: dict
  contains:
    en:
      description: In English.
      type: str
    ko:
      description: In Korean.
      type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import home_file
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.read import LearnerFileError


def _octal(module, name):
    value = module.params[name]
    try:
        number = int(value, 8) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        number = -1
    if not 0 <= number <= 0o777:
        module.fail_json(msg='%s must be permissions in octal such as 0600 (got %r)' % (name, value))
    return number


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='str', required=True),
            user=dict(type='str', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            content=dict(type='str', no_log=True),
            mode=dict(type='raw', default='0600'),
            directory_mode=dict(type='raw', default='0700'),
            marker=dict(type='str', default=home_file.LAB_MARK),
            prune=dict(type='bool', default=False),
        ),
        required_if=[('state', 'present', ('content',))],
        supports_check_mode=True,
    )
    params = module.params
    try:
        if params['state'] == 'present':
            result = home_file.put_file(params['path'], params['user'], params['content'], mode=_octal(module, 'mode'),
                                        directory_mode=_octal(module, 'directory_mode'), check_mode=module.check_mode)
        else:
            result = home_file.remove_file(params['path'], params['user'], marker=params['marker'],
                                           check_mode=module.check_mode, prune=params['prune'])
            if result['kept']:
                module.warn('%s / %s' % (result['kept']['en'], result['kept']['ko']))
    except LearnerFileError as exc:
        module.fail_json(msg='%s / %s' % (exc.problem['en'], exc.problem['ko']))
    except OSError as exc:
        module.fail_json(msg='%s: %s' % (params['path'], exc))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
