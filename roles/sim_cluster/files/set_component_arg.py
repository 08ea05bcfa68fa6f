#!/usr/bin/env python3
"""Usage: set_component_arg.py KWOK_YAML COMPONENT KEY VALUE

Sets --KEY=VALUE among COMPONENT's args (in place; appended if absent) in a kwokctl cluster's saved
configuration (kwok.yaml), which `kwokctl start cluster` starts it from, and
in its componentsPatches, so the setting survives. Prints "changed" or
"unchanged"; the file is only rewritten when it changes.
"""

import sys

import yaml


def main():
    path, component, key, value = sys.argv[1:5]
    with open(path) as handle:
        docs = list(yaml.safe_load_all(handle))
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
    if changed:
        with open(path + '.tmp', 'w') as handle:
            yaml.safe_dump_all(docs, handle, default_flow_style=False)
        import os
        os.replace(path + '.tmp', path)
    print('changed' if changed else 'unchanged')


if __name__ == '__main__':
    main()
