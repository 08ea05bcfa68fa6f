"""The solved lab on the sim, checked independently of the collection's code:
files against the cluster through kubectl, the blank-lab grade, the solved
grade, and that grading changes nothing."""

import hashlib
import json
import os
import urllib.error
import urllib.request

import yaml

from conftest import kai_profiles, run_playbook, sim_ports, sim_state

NS = 'kai-lab'


def test_node_has_four_fake_gpus(kubectl):
    node = kubectl('get node kai-lab-vm')
    assert node['status']['allocatable']['nvidia.com/gpu'] == '4'
    assert node['metadata']['labels']['run.ai/fake.gpu'] == 'true'


def test_control_plane_listens_on_loopback_only(host):
    port = sim_ports()['kube_apiserver']
    assert host.socket('tcp://127.0.0.1:%d' % port).is_listening
    assert not host.socket('tcp://0.0.0.0:%d' % port).is_listening


def test_nothing_of_the_sim_listens_on_all_interfaces(host):
    """Every listener of the sim is on 127.0.0.1, the two KAI v0.12.0 gives no host flag
    (scheduler plugin server, admission webhook) too, through the sim's own builds;
    podgroupcontroller's metrics, :8080 upstream, are on the sim's own loopback port."""
    ports = sim_ports()
    for name, port in ports.items():
        if host.socket('tcp://127.0.0.1:%d' % port).is_listening:
            assert not host.socket('tcp://0.0.0.0:%d' % port).is_listening, name
    for name in ('podgroupcontroller_metrics', 'scheduler_plugins', 'admission_webhook'):
        assert host.socket('tcp://127.0.0.1:%d' % ports[name]).is_listening, name


def test_kube_apiserver_keeps_events_for_the_event_ttl(host):
    """kai_lab_event_ttl (24h) read back from the running kube-apiserver's command line."""
    pid = host.file(os.path.join(sim_state(), 'kwok', 'clusters', 'kai-lab', 'pids', 'kube-apiserver.pid'))
    args = host.file('/proc/%s/cmdline' % pid.content_string.strip()).content_string.split('\0')
    assert '--event-ttl=24h' in args


def test_kai_runs_from_the_given_binaries(host):
    """The default scenario gives KAI through kai_lab_sim_kai_bin_dir: each component runs from there."""
    own = os.environ.get('KAI_LAB_SIM_KAI_BIN_DIR')
    assert own, 'tests/molecule.sh gives the default scenario its KAI binaries (KAI_LAB_SIM_KAI_BIN_DIR)'
    for name in ('scheduler', 'binder', 'podgrouper', 'admission', 'queuecontroller', 'podgroupcontroller'):
        pid = host.file(os.path.join(sim_state(), 'kai', 'pids', name + '.pid')).content_string.strip()
        argv0 = host.file('/proc/%s/cmdline' % pid).content_string.split('\0')[0]
        assert argv0 == os.path.join(own, name)


def test_workdir_is_private(host, workdir):
    assert host.file(workdir).mode == 0o700


def test_podgroup_file_names_p1s_podgroup(host, kubectl, workdir):
    name = host.file(os.path.join(workdir, 'podgroup.txt')).content_string.strip()
    pod = kubectl('-n %s get pod p1' % NS)
    podgroup = kubectl('-n %s get podgroup %s' % (NS, name))
    assert pod['metadata']['annotations']['pod-group-name'] == name
    assert podgroup['metadata']['ownerReferences'][0]['name'] == 'p1'


def test_nolimit_text_is_kais_overlimit_reason(host, kubectl, workdir):
    text = host.file(os.path.join(workdir, 'nolimit.txt')).content_string.strip()
    events = kubectl('-n %s get events --field-selector involvedObject.name=nl-1,reason=Unschedulable' % NS)
    assert text.startswith('OverLimit:')
    assert any(e['message'].strip() == text for e in events['items'])


def test_gang_text_is_kais_gang_reason(host, kubectl, workdir):
    text = host.file(os.path.join(workdir, 'gang.txt')).content_string.strip()
    events = kubectl('-n %s get events --field-selector reason=Unschedulable' % NS)
    assert 'Resources were found for 2 pods while 3 are required for gang scheduling' in text
    assert any(e['message'].strip() == text for e in events['items'])


def test_one_train_pod_was_preempted_for_bd1(kubectl):
    events = kubectl('-n %s get events --field-selector reason=Evict' % NS)['items']
    victims = [e['message'].split()[1].split('/')[1] for e in events]
    assert len(victims) == 1 and victims[0] in ('p1', 'tr-1', 'tr-2')
    assert 'pg-bd-1-' in events[0]['message']
    assert kubectl('-n %s get pod bd-1' % NS)['status']['phase'] == 'Running'


def test_fraction_pods_share_one_gpu(host, kubectl, workdir):
    docs = list(yaml.safe_load_all(host.file(os.path.join(workdir, 'fraction.yaml')).content_string))
    assert [d['metadata']['annotations']['gpu-fraction'] for d in docs] == ['0.5', '0.5']
    groups = set(kubectl('-n %s get pod %s' % (NS, n))['metadata']['labels']['runai-gpu-group'] for n in ('fr-1', 'fr-2'))
    reservations = kubectl('-n kai-resource-reservation get pods')['items']
    assert len(groups) == 1 and len(reservations) == 1
    assert reservations[0]['metadata']['labels']['runai-gpu-group'] in groups


def test_report_equals_an_independent_count(host, kubectl, workdir):
    report = json.loads(host.file(os.path.join(workdir, 'report.json')).content_string)
    pods = kubectl('get pods -A')['items']
    allocated = sum(int(c.get('resources', {}).get('limits', {}).get('nvidia.com/gpu', 0))
                    for p in pods if p['spec'].get('nodeName') and p['status']['phase'] in ('Pending', 'Running')
                    for c in p['spec']['containers'])
    fr1 = kubectl('-n %s get pod fr-1' % NS)
    ref = [e for e in fr1['spec']['containers'][0]['env'] if e['name'] == 'NVIDIA_VISIBLE_DEVICES'][0]
    cm = kubectl('-n %s get configmap %s' % (NS, ref['valueFrom']['configMapKeyRef']['name']))
    assert report == {
        'gpu_allocated': allocated,
        'reservation_pods': len(kubectl('-n kai-resource-reservation get pods')['items']),
        'shared_gpu': cm['data']['NVIDIA_VISIBLE_DEVICES'],
    }
    assert report['gpu_allocated'] == 4 and report['reservation_pods'] == 1


def test_blank_lab_graded_zero_for_the_right_reasons():
    path = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'blank-grade', 'grade.json')
    with open(path) as handle:
        grade = json.load(handle)
    checks = {c['id']: c for s in grade['steps'] for c in s['checks']}
    assert grade['score'] == 0 and not grade['passed']
    assert all(c['status'] == 'failed' for c in checks.values())
    assert 'queues.yaml does not exist' in checks['queues.file']['message']
    assert 'queue lab is not in the cluster' in checks['queues.applied']['message']
    assert 'pod p1 does not exist' in checks['podgroup.running']['message']
    assert 'no Evict event' in checks['preempt.evicted']['message']
    assert grade['environment'][0]['status'] == 'passed'


def _lab_state(kubectl, workdir):
    """resourceVersion of every lab object and the hash of every learner file."""
    versions = {}
    for args in ('get pods,jobs,configmaps -n %s' % NS, 'get podgroups -n %s' % NS, 'get queues',
                 'get pods -n kai-resource-reservation'):
        for item in kubectl(args)['items']:
            versions['%s/%s/%s' % (item['kind'], item['metadata'].get('namespace'), item['metadata']['name'])] = \
                item['metadata']['resourceVersion']
    files = {}
    for name in sorted(os.listdir(workdir)):
        path = os.path.join(workdir, name)
        if os.path.isfile(path) and not name.startswith('grade'):
            with open(path, 'rb') as handle:
                files[name] = hashlib.sha256(handle.read()).hexdigest()
    return versions, files


def test_solved_lab_grades_100_and_grading_is_read_only(kubectl, workdir, grade_run):
    before = _lab_state(kubectl, workdir)
    grade = grade_run('ko', workdir)
    after = _lab_state(kubectl, workdir)
    assert grade['score'] == 100.0 and grade['passed'], [
        (c['id'], c['message']) for s in grade['steps'] for c in s['checks'] if not c['passed']]
    assert before == after
    assert os.path.exists(os.path.join(workdir, 'grade-junit.xml'))


def test_the_grade_reports_the_kai_the_sim_provisioned(tmp_path, grade_run):
    """grade.json, its JUnit file and the table name the version the sim recorded when it started KAI,
    which is what the binaries' Go build info says (v0.12.0: step 5 in its PodGroup form)."""
    with open(os.path.join(sim_state(), 'kai', 'kai-version.json')) as handle:
        record = json.load(handle)
    assert record['version'] == 'v0.12.0' and record['own_binaries'] is True
    assert {entry['version'] for entry in record['binaries'].values()} == {'v0.12.0'}
    grade = grade_run('en', str(tmp_path))
    assert grade['kai_version'] == record['version'] == grade['kai']['version']
    assert os.path.join(sim_state(), 'kai', 'kai-version.json') in grade['kai']['source']
    # The steps whose form differs on the sim's KAI, as the profiles say (issue 41: gang and preempt).
    differing = [entry['step'] for entry in kai_profiles.form_differences(record['version'])]
    assert differing and [d['step'] for d in grade['kai']['differences']] == differing
    assert 'step 5 uses an explicit PodGroup' in grade['kai']['line']
    with open(os.path.join(str(tmp_path), 'grade-junit.xml')) as handle:
        assert '<property name="kai_version" value="v0.12.0"/>' in handle.read()


def test_a_mismatched_kai_version_is_refused_naming_both(tmp_path):
    proc = run_playbook('grade.yml', '-e', 'kai_lab_kai_version=v0.17.0', '-e', 'kai_lab_grade_dir=%s' % tmp_path,
                        timeout=120)
    assert proc.returncode != 0
    # The YAML callback may fold a long message over lines.
    assert 'kai_lab_kai_version is v0.17.0 but this sim lab gets KAI v0.12.0' in ' '.join(proc.stdout.split()), \
        proc.stdout[-3000:]
    assert not os.path.exists(os.path.join(str(tmp_path), 'grade.json'))


def test_gpu_allocation_info_module_agrees_with_report_json(host, workdir):
    from conftest import sim_kubeconfig
    ledger = host.ansible('gsb.kai_lab.kai_gpu_allocation_info', 'kubeconfig=%s' % sim_kubeconfig(), check=False)
    report = json.loads(host.file(os.path.join(workdir, 'report.json')).content_string)
    assert ledger['gpu_allocated'] == report['gpu_allocated']
    assert len(ledger['reservation_pods']) == report['reservation_pods']
    fr1 = [f for f in ledger['fraction_pods'] if f['name'] == 'fr-1'][0]
    assert fr1['visible_devices'] == report['shared_gpu'] == ledger['reservation_pods'][0]['gpu']


def test_podgroup_info_module_shows_the_overlimit_story_of_nl1(host):
    from conftest import sim_kubeconfig
    result = host.ansible('gsb.kai_lab.kai_podgroup_info', 'kubeconfig=%s namespace=%s pod=nl-1' % (sim_kubeconfig(), NS),
                          check=False)
    podgroup = result['podgroups'][0]
    assert podgroup['pods'] == [{'name': 'nl-1', 'phase': 'Running', 'node': 'kai-lab-vm'}]
    assert any('OverLimit' in e['message'] for e in podgroup['events'])


def test_queue_module_in_check_mode_reports_a_diff_and_changes_nothing(host, kubectl):
    from conftest import sim_kubeconfig
    before = kubectl('get queue research')['metadata']['resourceVersion']
    args = 'kubeconfig=%s name=research parent=lab gpu={"quota":2,"limit":3}' % sim_kubeconfig()
    result = host.ansible('gsb.kai_lab.kai_queue', args, check=True)
    assert result['changed'] is True
    assert result['queue']['spec']['resources']['gpu']['limit'] == 3
    assert kubectl('get queue research')['metadata']['resourceVersion'] == before
    same = host.ansible('gsb.kai_lab.kai_queue', 'kubeconfig=%s name=research parent=lab gpu={"quota":2,"limit":4}'
                        % sim_kubeconfig(), check=True)
    assert same['changed'] is False


def test_the_scheduler_plugin_server_serves_no_snapshot_from_any_address(host):
    """The sim runs without the snapshot plugin, so /get-snapshot (the whole cluster,
    unauthenticated) answers 404 on 127.0.0.1, and the plugin server, which upstream binds
    to all interfaces, refuses connections on every other address."""
    port = sim_ports()['scheduler_plugins']
    addresses = host.run("ip -4 -o addr show | awk '{print $4}' | cut -d/ -f1").stdout.split()
    assert '127.0.0.1' in addresses
    for address in addresses:
        try:
            code = urllib.request.urlopen('http://%s:%d/get-snapshot' % (address, port), timeout=5).getcode()
        except urllib.error.HTTPError as error:
            code = error.code
        except urllib.error.URLError as error:
            code = type(error.reason).__name__
        assert code == (404 if address == '127.0.0.1' else 'ConnectionRefusedError'), address
