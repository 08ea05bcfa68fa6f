#!/usr/bin/env python3
"""Usage: set_component_arg.py KWOK_YAML COMPONENT KEY VALUE [COMPONENT KEY VALUE ...]

Sets each --KEY=VALUE among COMPONENT's args (in place; appended if absent)
in a kwokctl cluster's saved configuration (kwok.yaml), which `kwokctl start
cluster` starts it from, and in its componentsPatches, so the setting
survives. Prints "changed" or "unchanged" (for all settings together); the
file is only rewritten when it changes, through a temporary file of its own.
"""

import os
import sys
import tempfile

import yaml


def set_arg(docs, component, key, value):
    """Set one argument in the parsed documents; True when something changed."""
    wanted = '--%s=%s' % (key, value)
    changed = False
    for doc in docs:
        if not doc or doc.get('kind') != 'KwokctlConfiguration':
            continue
        for item in doc.get('components') or []:
            if item.get('name') != component:
                continue
            args = item.setdefault('args', [])
            # In place, so setting several keys of one component stays idempotent.
            ours = [index for index, arg in enumerate(args) if arg.startswith('--%s=' % key)]
            if not ours:
                args.append(wanted)
                changed = True
            elif args[ours[-1]] != wanted or len(ours) > 1:
                args[ours[-1]] = wanted
                item['args'] = [arg for index, arg in enumerate(args) if index not in ours[:-1]]
                changed = True
        for patch in doc.get('componentsPatches') or []:
            if patch.get('name') == component:
                for extra in patch.get('extraArgs') or []:
                    if extra.get('key') == key and str(extra.get('value')) != value:
                        extra['value'] = value
                        changed = True
    return changed


def main():
    path, settings = sys.argv[1], sys.argv[2:]
    if not settings or len(settings) % 3:
        sys.exit(__doc__)
    with open(path) as handle:
        docs = list(yaml.safe_load_all(handle))
    changed = False
    for index in range(0, len(settings), 3):
        changed = set_arg(docs, *settings[index:index + 3]) or changed
    if changed:
        fd, temporary = tempfile.mkstemp(prefix='.kwok.yaml.', dir=os.path.dirname(os.path.abspath(path)))
        os.fchmod(fd, os.stat(path).st_mode & 0o777)
        with os.fdopen(fd, 'w') as handle:
            yaml.safe_dump_all(docs, handle, default_flow_style=False)
        os.replace(temporary, path)
    print('changed' if changed else 'unchanged')


if __name__ == '__main__':
    main()
