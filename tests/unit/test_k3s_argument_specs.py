"""meta/argument_specs.yml of the k3s and fake_gpu_operator roles tells the
truth: every default variable is documented, with the default the role
really has and a type its value has."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TYPES = {"str": str, "int": int, "bool": bool, "list": list, "dict": dict}


@pytest.mark.parametrize("role", ["k3s", "fake_gpu_operator"])
def test_every_default_is_documented_with_its_real_default_and_type(role):
    defaults = yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text())
    specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    options = specs["main"]["options"]
    assert set(options) == set(defaults)
    for name, spec in options.items():
        assert spec["description"], name
        assert isinstance(defaults[name], TYPES[spec["type"]]), (name, spec["type"], defaults[name])
        if "default" in spec:
            assert spec["default"] == defaults[name], name
        if "choices" in spec:
            values = defaults[name] if spec["type"] == "list" else [defaults[name]]
            assert set(values) <= set(spec["choices"]), name
    # Entry points other than main describe the same defaults.
    for entry, spec in specs.items():
        for name, option in spec.get("options", {}).items():
            assert option.get("default", defaults[name]) == defaults[name], (entry, name)
