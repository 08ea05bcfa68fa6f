#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kai_lab_workdir
short_description: Prepare, check or reset the learner's workdir of the KAI-Scheduler lab through one directory descriptor
version_added: "0.1.0"
description:
  - Opens O(path) once, from C(/) one component at a time without following
    a link at any level, and does everything after that relative to that
    descriptor, so a learner swapping the workdir for a link while the task
    runs changes nothing.
  - Refuses, naming it, a workdir that is a link or goes through one, whose
    parent directories (any of them) someone other than root can change
    (writable by others without the sticky bit, or owned by another user),
    that is not a directory, or that is one of O(forbidden).
  - A workdir holding the O(marker) file is the lab's; one holding only names
    matching O(own_names) is adopted (the marker is written now). Any other
    is foreign.
  - O(state=present) (provisioning) creates a missing workdir (and missing
    parents) with mode 0700, sets an existing one to 0700, and marks it;
    with O(owner), it is given to that user.
  - A workdir inside a directory its owner can change (a learner's home) is
    accepted when the workdir is that user's too; all the user could swap
    in is a directory they can move, and what is opened must be theirs.
  - O(state=checked) only looks (and adopts).
  - O(state=reset) refuses a foreign workdir; otherwise moves the entries
    matching O(lab_files), and the grader's record O(record_path) as
    C(grade-record.json), into a new C(backup-<time>-<random>) directory
    (mode 0700) of the workdir. Links move as links; nothing is deleted.
options:
  path:
    description: The workdir, an absolute path.
    type: str
    required: true
  state:
    description: What to do, see above.
    type: str
    choices: [present, checked, reset]
    default: checked
  forbidden:
    description: Directories the workdir must never be (system directories); compared with its real path.
    type: list
    elements: str
    default: []
  own_names:
    description: Regular expression of the names the lab itself leaves in its workdir.
    type: str
    required: true
  marker:
    description: Name of the file that marks the workdir as the lab's.
    type: str
    default: .gsb-kai-lab
  lab_files:
    description: Regular expression of the names O(state=reset) moves; required for it.
    type: str
  record_path:
    description: The grader's record of this lab, archived by O(state=reset) with the files.
    type: path
  owner:
    description:
      - The learner's login (C(kai_lab_learner_user)), who owns the workdir. O(state=present) gives the workdir to
        this user and its primary group (mode 0700); O(state=reset) gives it the new backup directory once the
        files are in it, so the learner keeps its own files. Unset, the workdir keeps its owner.
      - A user that does not exist fails the task, naming it.
    type: str
attributes:
  check_mode:
    support: full
    description: Reports what would be created, marked or moved, and does none of it.
author:
  - gsb.kai_lab maintainers (@gsb-kai-lab)
'''

EXAMPLES = r'''
- name: Create the learner's workdir
  gsb.kai_lab.kai_lab_workdir:
    path: /root/gsb-kai
    state: present
    own_names: '^(queues\.yaml|p1\.yaml)(\.bak-[0-9-]+)?$|^(\..+\.partial|backup-.+|\.gsb-kai-lab)$'
    forbidden: [/, /etc, /root]

- name: Reset it
  gsb.kai_lab.kai_lab_workdir:
    path: /root/gsb-kai
    state: reset
    own_names: '^(queues\.yaml|p1\.yaml)(\.bak-[0-9-]+)?$|^(\..+\.partial|backup-.+|\.gsb-kai-lab)$'
    lab_files: '^(queues\.yaml|p1\.yaml)(\.bak-[0-9-]+)?$'
    record_path: /var/lib/gsb-kai-lab/grade-records/kai-lab.json
'''

RETURN = r'''
exists:
  description: Whether the workdir exists (in check mode, before anything would be created).
  returned: always
  type: bool
created:
  description: Whether it was (or would be) created.
  returned: always
  type: bool
is_lab:
  description: Whether it is the lab's workdir (marked, adopted, or missing).
  returned: always
  type: bool
marked:
  description: Whether it carries the marker (after adoption).
  returned: always
  type: bool
foreign:
  description: Names in it that the lab did not write (control characters as V(?)), sorted.
  returned: always
  type: list
  elements: str
moved:
  description: Names moved (or, in check mode, to be moved) by O(state=reset).
  returned: always
  type: list
  elements: str
record:
  description: Whether the grader's record was (or would be) archived.
  returned: always
  type: bool
backup:
  description: The new backup directory; null when nothing moved or in check mode.
  returned: always
  type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner import workdir as lab_workdir


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='str', required=True),
            state=dict(type='str', choices=['present', 'checked', 'reset'], default='checked'),
            forbidden=dict(type='list', elements='str', default=[]),
            own_names=dict(type='str', required=True),
            marker=dict(type='str', default='.gsb-kai-lab'),
            lab_files=dict(type='str'),
            record_path=dict(type='path'),
            owner=dict(type='str'),
        ),
        required_if=[('state', 'reset', ('lab_files',))],
        supports_check_mode=True,
    )
    params = module.params
    common = dict(forbidden=params['forbidden'], own_names=params['own_names'], marker=params['marker'],
                  check_mode=module.check_mode)
    result = {'moved': [], 'record': False, 'backup': None}
    try:
        owner = lab_workdir.user_ids(params['owner']) if params['owner'] else None
        if params['state'] == 'present':
            result.update(lab_workdir.prepare(params['path'], owner=owner, **common))
        elif params['state'] == 'checked':
            result.update(lab_workdir.inspect(params['path'], **common))
        else:
            result.update(lab_workdir.reset(params['path'], lab_files=params['lab_files'],
                                            record_path=params['record_path'], owner=owner, **common))
    except lab_workdir.WorkdirRefused as exc:
        module.fail_json(msg=exc.message)
    except OSError as exc:
        module.fail_json(msg='kai_lab_workdir %s: %s' % (params['path'], exc))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
