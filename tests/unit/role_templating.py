"""Helpers for tests that evaluate a role's YAML through Ansible's templating."""

from ansible.template import trust_as_template


def trust(value):
    """Mark strings from a role's YAML as templates, as Ansible does for role files."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {key: trust(item) for key, item in value.items()}
    if isinstance(value, list):
        return [trust(item) for item in value]
    return value
