"""An environment fault the doctor must name: fake-gpu-operator's
RuntimeClass nvidia deleted. kai-lab doctor exits 2 naming it; made again as
the chart made it, the doctor is healthy again."""

import json

from conftest import phase, ssh

STRIP = ('uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'generation')


def _doctor():
    code, out, err, seconds = ssh('sudo /usr/local/bin/kai-lab doctor --json --lang en')
    return code, json.loads(out), err, seconds


def test_a_deleted_runtime_class_is_named_and_put_right():
    code, out, err, _ = ssh('sudo kubectl get runtimeclass nvidia -o json')
    assert code == 0, err
    saved = json.loads(out)
    for key in STRIP:
        saved['metadata'].pop(key, None)
    code, out, err, _ = ssh('sudo kubectl delete runtimeclass nvidia')
    assert code == 0, err
    try:
        code, answer, err, seconds = _doctor()
        phase('kai-lab doctor naming a fault', seconds)
        assert code == 2, answer
        assert [fault['id'] for fault in answer['faults']] == ['runtime_class_missing'], answer
        assert 'RuntimeClass nvidia does not exist' in answer['faults'][0]['text']
    finally:
        code, out, err, _ = ssh("sudo kubectl create -f - <<'EOF'\n%s\nEOF" % json.dumps(saved))
        assert code == 0, out + err
    code, answer, err, _ = _doctor()
    assert code == 0 and answer['faults'] == [], answer
