# -*- coding: utf-8 -*-
"""kai-lab's code is named by its sources (roles/kai_lab/tasks/cli.yml): every module_utils/**/*.py.

Once module_utils moved into packages, the fileglob lookup that listed the
sources (plugins/module_utils/*/*.py) found nothing, since fileglob globs file
names only: every checkout's bundle was named by the hash of nothing
(kai-lab-0.1.0-e3b0c44298fc1c14.zip in the shared cache), and a provision
installed whichever checkout packed it first, stale code included.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from role_templating import trust

ROOT = Path(__file__).resolve().parents[2]


def _describe():
    task = yaml.safe_load((ROOT / "roles" / "kai_lab" / "tasks" / "cli.yml").read_text())[1]
    assert task["name"] == "Describe kai-lab's code"
    variables = dict(trust(task["vars"]), kai_lab_collection_dir=str(ROOT))
    return Templar(loader=DataLoader(), variables=variables)


def test_every_module_utils_source_names_kai_labs_code():
    templar = _describe()
    files = templar.template(trust_as_template("{{ kai_lab_cli_source_files }}"))
    expected = sorted(str(p) for p in (ROOT / "plugins" / "module_utils").rglob("*.py") if "__pycache__" not in p.parts)
    assert files == expected and len(files) > 50
    stamp = templar.template(trust_as_template("{{ kai_lab_cli_hash }}"))
    assert stamp != hashlib.sha256(b"").hexdigest()
