"""The reports behind the general modules (kai_queue, kai_podgroup_info,
kai_gpu_allocation_info), on objects recorded from the real sim."""

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import objects as kai
from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import reports as kai_reports

import lab_states
from conftest import find


def test_queue_definition_leaves_an_unset_limit_out_and_kai_reads_it_as_zero():
    queue = kai.queue_definition('nolimit', parent='lab', resources={'gpu': {'quota': 1}})
    assert queue['spec'] == {'parentQueue': 'lab', 'resources': {'gpu': {'quota': 1}}}
    summary = kai.queue_summary(queue)
    assert summary['gpu']['limit'] == 0 and summary['gpu']['limit_set'] is False
    assert kai.effective_gpu_limit(queue) == 0


def test_queue_definition_writes_minus_one_as_unlimited_and_weights():
    queue = kai.queue_definition('ops', parent='lab', display_name='Ops', priority=120,
                                 resources={'gpu': {'quota': 2, 'limit': -1, 'over_quota_weight': 3}})
    assert queue['spec']['resources']['gpu'] == {'quota': 2, 'limit': -1, 'overQuotaWeight': 3}
    assert queue['spec']['displayName'] == 'Ops' and queue['spec']['priority'] == 120
    assert kai.effective_gpu_limit(queue) is None


def test_podgroup_report_of_the_pending_gang_has_kais_reason_pods_and_events():
    state = lab_states.lab_after('gang')
    podgroup = find(state['podgroups'], 'gang')
    report = kai_reports.podgroup_report(podgroup, state['pods'], state['events'])
    assert report['min_member'] == 3
    assert sorted(p['name'] for p in report['pods']) == ['gang-0', 'gang-1', 'gang-2']
    assert all(p['phase'] == 'Pending' and not p['node'] for p in report['pods'])
    assert report['reasons'][0]['reason'] == kai.REASON_POD_SCHEDULING_ERRORS
    assert any(kai.GANG_MESSAGE_MARK in e['message'] for e in report['events'] if e['object'] == 'PodGroup/gang')
    assert any(e['object'].startswith('Pod/gang-') for e in report['events'])
    times = [e['time'] for e in report['events']]
    assert times == sorted(times)


def test_gpu_allocation_of_the_finished_lab():
    state = lab_states.lab_after('report')
    pods = state['pods'] + state['reservation_pods']
    ledger = kai_reports.gpu_allocation(pods, {'kai-lab': state['configmaps']})
    assert ledger['gpu_allocated'] == 4 and ledger['by_node'] == {'kai-lab-vm': 4}
    assert len(ledger['reservation_pods']) == 1
    reserved = ledger['reservation_pods'][0]
    fractions = {f['name']: f for f in ledger['fraction_pods']}
    assert sorted(fractions) == ['fr-1', 'fr-2']
    assert {f['visible_devices'] for f in fractions.values()} == {reserved['gpu']}
    assert {f['gpu_group'] for f in fractions.values()} == {reserved['gpu_group']}
    assert all(f['fraction'] == 0.5 for f in fractions.values())
