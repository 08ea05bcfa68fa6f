# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does an admission policy of the learner still refuse what provision made it refuse?

The grade reads the cluster's ValidatingAdmissionPolicies and their bindings
(client/access.py) and compares each policy the settings name
(``learner_policies``) with the one provision applies: the objects of
roles/kai_lab/templates/learner_access.yaml.j2, which provision writes into
kai-lab's settings and gives the grade module (``learner_policy_objects``),
so what a policy should be is written once, in the template. A difference
that lets the learner pass what provision's policy refuses is a problem:
``problems()`` gives each as (id, detail).

The API server's defaults are not differences (failurePolicy Fail,
matchPolicy Equivalent, empty selectors, a rule's scope ``*``); a policy or
binding that only refuses more is not a problem: rules that match more
requests, an added validation. What narrows one is: rules that no longer
cover a resource and operation provision's cover, excludeResourceRules,
selectors, matchPolicy Exact, matchConditions other than provision's, a
validation of provision's gone or changed, failurePolicy Ignore, parameters
(paramKind, paramRef: a missing parameter may allow), and a binding that is
not Deny or whose matchResources leave requests out.

Without the expected objects (a module call that gives names only) a policy
is checked as before: present, failurePolicy Fail, its matchConditions
naming the learner, bound with Deny.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

POLICY_KIND = 'ValidatingAdmissionPolicy'
BINDING_KIND = 'ValidatingAdmissionPolicyBinding'
DEFAULT_FAILURE_POLICY = 'Fail'
DEFAULT_MATCH_POLICY = 'Equivalent'


def expected_policies(objects):
    """{policy name: {'policy': spec or None, 'bindings': [spec]}} of the objects provision applies (any kinds)."""
    found = {}
    for obj in objects or []:
        if not isinstance(obj, dict):
            continue
        spec = obj.get('spec') if isinstance(obj.get('spec'), dict) else {}
        if obj.get('kind') == POLICY_KIND:
            name = (obj.get('metadata') or {}).get('name')
            found.setdefault(name, {'policy': None, 'bindings': []})['policy'] = spec
        elif obj.get('kind') == BINDING_KIND:
            found.setdefault(spec.get('policyName'), {'policy': None, 'bindings': []})['bindings'].append(spec)
    return found


def _spec(obj):
    spec = (obj or {}).get('spec')
    return spec if isinstance(spec, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def _text(expression):
    """A CEL expression with its whitespace made one space each (YAML's folding is not a difference)."""
    return ' '.join(str(expression or '').split())


def _atoms(rules):
    """Every (group, version, operation, resource, scope) provision's resourceRules name."""
    atoms = []
    for rule in _list(rules):
        if not isinstance(rule, dict):
            continue
        for group in _list(rule.get('apiGroups')):
            for version in _list(rule.get('apiVersions')):
                for operation in _list(rule.get('operations')):
                    for resource in _list(rule.get('resources')):
                        atoms.append((group, version, operation, resource, rule.get('scope') or '*'))
    return atoms


def _covers(rule, atom, names_narrow=True):
    """Whether a resource rule matches every request of atom (names_narrow: a rule naming resourceNames does not)."""
    if not isinstance(rule, dict):
        return False
    group, version, operation, resource, scope = atom

    def within(values, value):
        values = _list(values)
        return value in values or '*' in values
    resources = _list(rule.get('resources'))
    resource_ok = resource in resources or '*/*' in resources or ('/' not in resource and '*' in resources) or (
        '/' in resource and resource.split('/', 1)[0] + '/*' in resources)
    return (within(rule.get('apiGroups'), group) and within(rule.get('apiVersions'), version)
            and within(rule.get('operations'), operation) and resource_ok
            and (rule.get('scope') or '*') in ('*', scope)
            and not (names_narrow and _list(rule.get('resourceNames'))))


def _shown(atoms):
    return ', '.join(sorted(set('%s %s' % (atom[2], atom[3]) for atom in atoms)))


def _selector(value):
    """A label selector with its empty parts dropped: {} matches everything, as no selector does."""
    if not isinstance(value, dict):
        return {}
    return dict((key, item) for key, item in value.items() if item)


def _narrowing(match, atoms, expected_match, own_rules):
    """What of match (matchConstraints or a binding's matchResources) leaves out requests expected_match does
    not: the field names, and the atoms its rules no longer cover (own_rules: the rules are match's own; a
    binding's resourceRules only narrow when set)."""
    match = match if isinstance(match, dict) else {}
    expected_match = expected_match if isinstance(expected_match, dict) else {}
    fields, uncovered = [], []
    for key in ('namespaceSelector', 'objectSelector'):
        if _selector(match.get(key)) != _selector(expected_match.get(key)):
            fields.append(key)
    if (match.get('matchPolicy') or DEFAULT_MATCH_POLICY) != (expected_match.get('matchPolicy') or DEFAULT_MATCH_POLICY):
        fields.append('matchPolicy %s' % match.get('matchPolicy'))
    excluded = [atom for atom in atoms
                if any(_covers(rule, atom, names_narrow=False) for rule in _list(match.get('excludeResourceRules')))
                and not any(_covers(rule, atom, names_narrow=False)
                            for rule in _list(expected_match.get('excludeResourceRules')))]
    if excluded:
        fields.append('excludeResourceRules (%s)' % _shown(excluded))
    rules = _list(match.get('resourceRules'))
    if own_rules or rules:
        uncovered = [atom for atom in atoms if not any(_covers(rule, atom) for rule in rules)]
    return fields, uncovered


def _policy_problems(spec, expected):
    """[(id, detail)] of a policy's own spec against provision's."""
    found = []
    constraints = spec.get('matchConstraints')
    expected_constraints = expected.get('matchConstraints')
    atoms = _atoms((expected_constraints or {}).get('resourceRules'))
    fields, uncovered = _narrowing(constraints, atoms, expected_constraints, own_rules=True)
    if uncovered:
        found.append(('rules', _shown(uncovered)))
    if fields:
        found.append(('excluded', ', '.join(fields)))
    conditions = [(c.get('name'), _text(c.get('expression'))) for c in _list(spec.get('matchConditions'))
                  if isinstance(c, dict)]
    if sorted(conditions) != sorted((c.get('name'), _text(c.get('expression')))
                                    for c in _list(expected.get('matchConditions')) if isinstance(c, dict)):
        found.append(('conditions', ', '.join(str(condition[0]) for condition in conditions) or '-'))
    expressions = set(_text(v.get('expression')) for v in _list(spec.get('validations')) if isinstance(v, dict))
    wanted = [_text(v.get('expression')) for v in _list(expected.get('validations')) if isinstance(v, dict)]
    gone = ['validations[%d]' % index for index, expression in enumerate(wanted) if expression not in expressions]
    variables = dict((v.get('name'), _text(v.get('expression'))) for v in _list(spec.get('variables'))
                     if isinstance(v, dict))
    gone += ['variables.%s' % v.get('name') for v in _list(expected.get('variables'))
             if isinstance(v, dict) and variables.get(v.get('name')) != _text(v.get('expression'))]
    if gone:
        found.append(('validations', '%s (%d of %d)' % (', '.join(gone), len(gone), len(wanted))))
    if spec.get('paramKind') != expected.get('paramKind'):
        found.append(('params', 'paramKind'))
    return found


def _binding_problems(bindings, expected_bindings, atoms):
    """[(id, detail)] of the policy's bindings: none, none Deny, or every Deny one narrowed."""
    if not bindings:
        return [('unbound', '')]
    deny = [(name, spec) for name, spec in bindings if 'Deny' in _list(spec.get('validationActions'))]
    if not deny:
        actions = sorted(set(action for binding in bindings for action in _list(binding[1].get('validationActions'))))
        return [('not_deny', ', '.join(actions) or '-')]
    expected = expected_bindings[0] if expected_bindings else {}
    problems = []
    for name, spec in deny:
        fields, uncovered = _narrowing(spec.get('matchResources'), atoms, expected.get('matchResources'),
                                       own_rules=False)
        if uncovered:
            fields.append('resourceRules (%s)' % _shown(uncovered))
        if spec.get('paramRef') != expected.get('paramRef'):
            fields.append('paramRef')
        if not fields:
            return []
        problems.append(('binding_narrowed', '%s: %s' % (name, ', '.join(fields))))
    return problems[:1]


def problems(name, found, identity, expected=None):
    """[(id, detail)] of policy name as the cluster has it (found: access.read_policies' answer), empty when it
    refuses what provision's refuses. expected: {'policy': spec, 'bindings': [spec]} as provision applies
    it, or None (names only: the checks that need no expected spec)."""
    policy = found['policies'].get(name)
    if policy is None:
        return [('missing', '')]
    spec = _spec(policy)
    result = []
    if (spec.get('failurePolicy') or DEFAULT_FAILURE_POLICY) != DEFAULT_FAILURE_POLICY:
        result.append(('ignore', str(spec.get('failurePolicy'))))
    expressions = ' '.join(str(c.get('expression') or '') for c in _list(spec.get('matchConditions'))
                           if isinstance(c, dict))
    if identity and "'%s'" % identity not in expressions and '"%s"' % identity not in expressions:
        result.append(('other_user', ''))
    expected_policy = (expected or {}).get('policy')
    atoms = []
    if expected_policy is not None:
        atoms = _atoms((expected_policy.get('matchConstraints') or {}).get('resourceRules'))
        result.extend(problem for problem in _policy_problems(spec, expected_policy)
                      if not (problem[0] == 'conditions' and any(p[0] == 'other_user' for p in result)))
    bindings = sorted((binding_name, _spec(binding)) for binding_name, binding in found['bindings'].items()
                      if _spec(binding).get('policyName') == name)
    result.extend(_binding_problems(bindings, (expected or {}).get('bindings') or [], atoms))
    return result
