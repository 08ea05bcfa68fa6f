# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of the lab's images a k3s VM holds as pinned (roles/k3s/tasks/images.yml),
from one entry of `k3s crictl images -o json` (repoTags, repoDigests).

Layer: the targets (k3s); may use the cluster client, the readiness gate, this host's processes, the KAI domain, the learner's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


def repository(reference):
    """docker.io/library/ubuntu:24.04 -> docker.io/library/ubuntu (a registry port stays)."""
    return re.sub(r':[^:/]+$', '', reference.split('@', 1)[0])


def exact_tags(image, digests):
    """The tags of this image whose pinned digest (digests: tag -> sha256:...) is its content."""
    held = set(image.get('repoDigests') or [])
    return [tag for tag in image.get('repoTags') or []
            if tag in digests and '%s@%s' % (repository(tag), digests[tag]) in held]


def aliases_held(tags, aliases):
    """The names (aliases: name -> fixed tag) already on the same image as their fixed tag."""
    tags = set(tags or [])
    return [name for name, fixed in aliases.items() if name in tags and fixed in tags]
