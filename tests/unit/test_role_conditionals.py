"""Every conditional in the roles and playbooks yields a boolean.

ansible-core 2.19 refuses a conditional whose value is not a boolean
("Conditional result (True) was derived from value of type 'list'"), and
only when the task runs: the k3s teardown failed so on a real VM with a
learner user (issue 36). Each `when`, `changed_when`, `failed_when`,
`until` and assert `that` is parsed with Jinja and its top expression
classified: comparisons, tests, `not`, boolean constants, `| bool`, and
`and`/`or`/`if` of those are booleans; a variable is one when every
definition of it in the roles (defaults, vars, set_fact, task vars) is; a
registered result's attribute is one when its module's RETURN says `bool`
(this collection's modules) or it is a status every module returns
(changed, failed, ...) or a stat's exists/isdir.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from jinja2 import Environment, nodes

ROOT = Path(__file__).resolve().parents[2]
ENV = Environment()
STATUS = {"changed", "failed", "skipped", "finished", "succeeded", "unreachable"}
STAT = {"exists", "isdir", "isreg", "islnk"}
MAGIC = {"ansible_check_mode", "ansible_diff_mode"}
METHODS = {"startswith", "endswith", "isdigit"}


def _walk(tasks, path, out):
    for task in tasks or []:
        if isinstance(task, dict):
            out.append((task, path))
            for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
                _walk(task.get(key), path, out)


def _all_tasks():
    out: list = []
    for path in sorted(ROOT.glob("roles/*/tasks/*.yml")) + sorted(ROOT.glob("roles/*/handlers/*.yml")) \
            + sorted(ROOT.glob("playbooks/*.yml")):
        _walk(yaml.safe_load(path.read_text()), path, out)
    return out


def _module_returns(name: str) -> dict:
    path = ROOT / "plugins" / "modules" / (name.split(".")[-1] + ".py")
    if not name.startswith("gsb.kai_lab.") or not path.exists():
        return {}
    text = path.read_text()
    return yaml.safe_load(text.split("RETURN = r'''", 1)[1].split("'''", 1)[0]) or {}


def _definitions(tasks):
    defined: dict[str, list] = {}
    registered: dict[str, dict] = {}
    for path in list(ROOT.glob("roles/*/defaults/*.yml")) + list(ROOT.glob("roles/*/vars/*.yml")):
        for key, value in (yaml.safe_load(path.read_text()) or {}).items():
            defined.setdefault(key, []).append(value)
    for task, _ in tasks:
        for key, value in (task.get("vars") or {}).items():
            defined.setdefault(key, []).append(value)
        facts = task.get("ansible.builtin.set_fact")
        if isinstance(facts, dict):
            for key, value in facts.items():
                defined.setdefault(key, []).append(value)
        if "register" in task:
            module = next((key for key in task if "." in key and key.count(".") >= 2), "")
            registered[task["register"]] = _module_returns(module)
    return defined, registered


TASKS = _all_tasks()
DEFINED, REGISTERED = _definitions(TASKS)


def _expression(value):
    if isinstance(value, bool):
        return nodes.Const(value)
    match = re.fullmatch(r"\s*\{\{(.*)\}\}\s*", value, re.S) if isinstance(value, str) else None
    if match and "{{" not in match.group(1):
        return ENV.parse("{{ %s }}" % match.group(1)).body[0].nodes[0]
    return None


def _attribute_path(node):
    path = []
    while isinstance(node, (nodes.Getattr, nodes.Getitem)):
        if isinstance(node, nodes.Getattr):
            path.insert(0, node.attr)
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            path.insert(0, node.arg.value)
        else:
            return None, []
        node = node.node
    return (node.name if isinstance(node, nodes.Name) else None), path


def _returns_bool(returns: dict, path: list[str]) -> bool:
    spec = {"contains": returns}
    for key in path:
        spec = (spec.get("contains") or {}).get(key)
        if not isinstance(spec, dict):
            return False
    return spec.get("type") == "bool"


def _is_bool(node, seen=()) -> bool:
    if isinstance(node, (nodes.Compare, nodes.Test, nodes.Not)):
        return True
    if isinstance(node, nodes.Const):
        return isinstance(node.value, bool)
    if isinstance(node, (nodes.And, nodes.Or)):
        return _is_bool(node.left, seen) and _is_bool(node.right, seen)
    if isinstance(node, nodes.CondExpr):
        return node.expr2 is not None and _is_bool(node.expr1, seen) and _is_bool(node.expr2, seen)
    if isinstance(node, nodes.Filter):
        if node.name == "bool":
            return True
        if node.name in ("default", "d"):
            return _is_bool(node.node, seen) and all(_is_bool(arg, seen) for arg in node.args[:1])
        return False
    if isinstance(node, (nodes.Getattr, nodes.Getitem)):
        name, path = _attribute_path(node)
        if not path:
            return False
        if path[-1] in STATUS or (path[-2:-1] == ["stat"] and path[-1] in STAT):
            return True
        return name in REGISTERED and _returns_bool(REGISTERED[name], path)
    if isinstance(node, nodes.Call):
        return isinstance(node.node, nodes.Getattr) and node.node.attr in METHODS
    if isinstance(node, nodes.Name):
        if node.name in MAGIC:
            return True
        if node.name in seen or node.name not in DEFINED:
            return False
        expressions = [_expression(value) for value in DEFINED[node.name]]
        return all(e is not None and _is_bool(e, seen + (node.name,)) for e in expressions)
    return False


def _conditions(task):
    for key in ("when", "changed_when", "failed_when", "until"):
        if key in task:
            values = task[key] if isinstance(task[key], list) else [task[key]]
            yield from ((key, value) for value in values)
    check = task.get("ansible.builtin.assert")
    if isinstance(check, dict) and "that" in check:
        values = check["that"] if isinstance(check["that"], list) else [check["that"]]
        yield from (("that", value) for value in values)


def test_the_classifier_finds_what_2_19_refuses():
    """The teardown condition that failed on the VM is found; its fix and plain tests are not."""
    parse = lambda text: ENV.parse("{{ %s }}" % text).body[0].nodes[0]  # noqa: E731
    assert not _is_bool(parse("user | length > 0 and (facts | default({})).get(user)"))
    assert _is_bool(parse("user | length > 0 and user in (facts | default({}))"))
    assert not _is_bool(parse("result.stdout_lines"))
    assert _is_bool(parse("result.stat.exists and not ansible_check_mode"))
    # This collection's module results: RETURN says bool (kai_lab_workdir's record) or not (its backup).
    assert _is_bool(parse("kai_lab_workdir_reset.record"))
    assert not _is_bool(parse("kai_lab_workdir_reset.backup"))


def test_every_conditional_yields_a_boolean():
    found = []
    for task, path in TASKS:
        for key, condition in _conditions(task):
            if isinstance(condition, bool):
                continue
            node = ENV.parse("{{ %s }}" % condition).body[0].nodes[0]
            if not _is_bool(node):
                found.append("%s: %r %s: %s" % (path.relative_to(ROOT), task.get("name"), key, condition))
    assert found == []
