# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU KAI gave a fraction pod, as steps 7 and 8 read it: what is wrong with the device a pod is told to
use (kai_gpu.kai_shared_device's fault) and where to look, in both languages. Shared, so that neither step
reads the other's module.

Layer: the lab's steps; may use the cluster client, the KAI domain, the learner's files, the grader's record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gsb.kai_lab.plugins.module_utils.kai import gpu as kai_gpu
from ansible_collections.gsb.kai_lab.plugins.module_utils.learner.text import printable
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps.base import say_both

WORDS = {
    # The device: KAI's word only from the ConfigMap KAI's binder wrote for that very pod (kai_shared_device).
    kai_gpu.NO_VARIABLE: {
        'en': 'pod {name} has no {variable} in its environment: KAI\'s admission webhook gives a pod that asks for a '
              'GPU fraction a {variable} read from the ConfigMap KAI\'s binder writes for that pod',
        'ko': '{name} 파드의 환경 변수에 {variable:이} 없습니다: KAI 어드미션 웹훅은 GPU 일부를 요청한 파드에 KAI '
              '바인더가 그 파드를 위해 쓰는 ConfigMap 에서 읽는 {variable:을} 넣습니다'},
    kai_gpu.NOT_FROM_CONFIGMAP: {
        'en': '{variable} of pod {name} is written in the pod itself, not read from the ConfigMap KAI\'s binder '
              'writes for it: a value a pod is created with is no proof of a GPU KAI gave it',
        'ko': '{name} 파드의 {variable:은} KAI 바인더가 그 파드를 위해 쓰는 ConfigMap 에서 읽은 것이 아니라 파드에 '
              '직접 적힌 값입니다: 파드를 만들 때 적은 값은 KAI가 준 GPU 의 증거가 아닙니다'},
    kai_gpu.NO_CONFIGMAP: {
        'en': '{variable} of pod {name} is read from ConfigMap {configmap}, which is not in namespace {namespace}: '
              'KAI\'s binder writes it there when it binds the pod',
        'ko': '{name} 파드의 {variable:은} ConfigMap {configmap} 에서 읽는데, 그 ConfigMap 이 {namespace} '
              '네임스페이스에 없습니다: KAI 바인더가 파드를 바인딩할 때 씁니다'},
    kai_gpu.NOT_OWNED: {
        'en': '{variable} of pod {name} is read from ConfigMap {configmap}, which KAI\'s binder did not write for '
              '{name}: its ownerReferences do not name this pod, so it tells another pod\'s GPU, not this one\'s',
        'ko': '{name} 파드의 {variable:은} ConfigMap {configmap} 에서 읽는데, 그 ConfigMap 은 KAI 바인더가 {name:을} '
              '위해 쓴 것이 아닙니다: ownerReferences 가 이 파드가 아니므로 이 파드가 아닌 다른 파드의 GPU 입니다'},
    kai_gpu.NO_VALUE: {
        'en': '{variable} of pod {name} is read from ConfigMap {configmap}, which holds no value for it yet',
        'ko': '{name} 파드의 {variable:은} ConfigMap {configmap} 에서 읽는데, 아직 그 값이 없습니다'},
    kai_gpu.DISAGREE: {
        'en': 'pod {name} sets {variable} more than once, to different GPUs',
        'ko': '{name} 파드가 {variable:을} 여러 번, 서로 다른 GPU 로 정합니다'},
    'device_hint': {
        'en': 'kubectl -n {namespace} get pod {name} -o yaml shows where its environment comes from, and kubectl -n '
              '{namespace} get configmaps -o yaml which pod owns each ConfigMap. Delete {fraction_list} and create '
              'them again with kubectl apply -f {fraction_path}, written as the lab text writes them: KAI gives '
              'each its GPU.',
        'ko': 'kubectl -n {namespace} get pod {name} -o yaml 로 환경 변수가 어디서 오는지, kubectl -n {namespace} get '
              'configmaps -o yaml 로 각 ConfigMap 의 주인 파드를 보세요. {fraction_list:를} 지우고 실습 설명대로 '
              '다시 만드세요 (kubectl apply -f {fraction_path}): GPU 는 KAI가 정해 줍니다.'},
}


def device_problem(snapshot, name, fault):
    """What is wrong with the device a pod is told to use (kai_gpu.kai_shared_device's fault), en and ko."""
    kind, configmap = fault
    return say_both(WORDS[kind], name=printable(name, 120), variable=kai_gpu.VISIBLE_DEVICES,
                    configmap=printable(str(configmap), 120), namespace=snapshot.namespace)


def device_hint(snapshot, name):
    return say_both(WORDS['device_hint'], **dict(snapshot.lab, name=printable(name, 120)))
