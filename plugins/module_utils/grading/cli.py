# -*- coding: utf-8 -*-
# Copyright: gsb.kai_lab developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kai-lab: the learner's check button, on the VM and on the sim.

  kai-lab check STEP   grade one step now, as grade.yml -e kai_lab_grade_steps=STEP
  kai-lab check        grade the whole lab (writes grade.json and grade-junit.xml)
  kai-lab status       every step's last result from the grader's record, and what is next
  kai-lab hint STEP    the step's hints
  kai-lab task [STEP], kai-lab export PLATFORM DIR, kai-lab check STEP --first-failure: grading/cli_task.py
  kai-lab doctor       the environment's faults, each with what to do: grading/cli_doctor.py

The grade is grade_session.grade(), the very code the module kai_lab_grade
runs. The lab's settings come from the config file provision writes
(roles/kai_lab/tasks/cli.yml); the command takes no path from its caller, so
a learner allowed to run it through sudo reads and writes nothing else.

Exit codes, the contract a lab platform's verify script relies on:
0 passed, 1 not passed, 2 could not grade (cluster unreachable, unknown
step, no or broken config).

The command line is here: the settings file, the arguments (worded in the
learner's language), and which verb runs. The verbs are in
grading/cli_verbs.py, the words and the console output in
grading/cli_output.py.

Layer: grading; may use the cluster client, the KAI domain, the learner's files, the grader's record, the lab's steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import pwd
import sys

from ansible_collections.gsb.kai_lab.plugins.module_utils.grading import cli_doctor, cli_task
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.cli_output import CANNOT_GRADE_EXIT, LANGS, Output, _say
from ansible_collections.gsb.kai_lab.plugins.module_utils.grading.cli_verbs import check, hint, status
from ansible_collections.gsb.kai_lab.plugins.module_utils.steps import registry as steps

# The config's keys that are grade settings (grade_session.DEFAULTS); others:
# version (the collection's), target, sim_state_dir.
SETTING_KEYS = ('namespace', 'workdir', 'kai_version', 'kai_record', 'kubeconfig', 'context', 'request_timeout', 'lang',
                'health_urls', 'kai_namespace', 'kai_deployments', 'output_dir', 'time_limit', 'record_path',
                'learner_identity', 'learner_policies', 'learner_policy_objects')


class ConfigError(Exception):
    pass


def load_config(path):
    """The settings provision wrote (a JSON object), or ConfigError in both languages."""
    try:
        with open(path) as handle:
            config = json.load(handle)
    except (IOError, OSError):
        why = 'missing' if not os.path.exists(path) else 'not_root'
        raise ConfigError(dict((lang, _say('no_config', lang, path=path, why=_say(why, lang))) for lang in LANGS))
    except ValueError as exc:
        raise ConfigError(dict((lang, _say('no_config', lang, path=path, why=_say('broken', lang, error=exc)))
                               for lang in LANGS))
    if not isinstance(config, dict) or not isinstance(config.get('namespace'), str):
        raise ConfigError(dict((lang, _say('no_config', lang, path=path, why=_say('broken', lang, error='no namespace')))
                               for lang in LANGS))
    return config


def settings_of(config, lang):
    """The grade settings of the config, in lang; a kubeconfig under ~ is the running user's (root under sudo)."""
    settings = dict((key, config[key]) for key in SETTING_KEYS if config.get(key) is not None)
    settings['lang'] = lang
    # Where the lab runs: the text states what differs there (kai-lab task).
    settings['target'] = config.get('target')
    kubeconfig = settings.get('kubeconfig')
    if isinstance(kubeconfig, str) and kubeconfig.startswith('~'):
        home = pwd.getpwuid(os.geteuid()).pw_dir
        settings['kubeconfig'] = home + kubeconfig[1:] if kubeconfig[1:2] in ('', '/') else os.path.expanduser(kubeconfig)
    return settings


def parser_for(lang, config):
    """The argument parser with its help in lang."""
    epilog = _say('epilog', lang, steps=', '.join(steps.STEP_IDS))
    parser = argparse.ArgumentParser(prog='kai-lab', description=_say('description', lang), epilog=epilog,
                                     add_help=False)
    parser.add_argument('-h', '--help', action='help', help=_say('help', lang))
    parser.add_argument('--version', action='version', help=_say('version', lang),
                        version='kai-lab (gsb.kai_lab) %s' % config.get('version', 'unknown'))
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('--lang', choices=LANGS, help=_say('lang', lang, default=config.get('lang') or 'ko'))
    common.add_argument('--json', action='store_true', help=_say('json', lang))
    parser.add_argument('--lang', choices=LANGS, dest='top_lang', help=_say('lang', lang, default=config.get('lang') or 'ko'))
    parser.add_argument('--json', action='store_true', dest='top_json', help=_say('json', lang))
    verbs = ('check', 'status', 'hint') + cli_task.VERBS + cli_doctor.VERBS
    commands = parser.add_subparsers(dest='command', title=_say('commands', lang), metavar='{%s}' % ','.join(verbs))
    commands.required = True
    check = commands.add_parser('check', parents=[common], help=_say('check', lang), description=_say('check', lang),
                                epilog=epilog, add_help=False)
    check.add_argument('-h', '--help', action='help', help=_say('help', lang))
    check.add_argument('step', nargs='?', help=_say('check_step', lang))
    cli_task.add_check_options(check, lang)
    status = commands.add_parser('status', parents=[common], help=_say('status', lang),
                                 description=_say('status', lang), add_help=False)
    status.add_argument('-h', '--help', action='help', help=_say('help', lang))
    hint = commands.add_parser('hint', parents=[common], help=_say('hint', lang), description=_say('hint', lang),
                               epilog=epilog, add_help=False)
    hint.add_argument('-h', '--help', action='help', help=_say('help', lang))
    hint.add_argument('step', help=_say('hint_step', lang))
    cli_task.add_parsers(commands, common, lang, _say('help', lang), epilog)
    cli_doctor.add_parsers(commands, common, lang, _say('help', lang), epilog)
    return parser


def _early_lang(argv, default):
    """--lang as given anywhere on the line (the help is worded in it), else default."""
    for index, arg in enumerate(argv):
        if arg == '--lang' and index + 1 < len(argv) and argv[index + 1] in LANGS:
            return argv[index + 1]
        if arg.startswith('--lang=') and arg.split('=', 1)[1] in LANGS:
            return arg.split('=', 1)[1]
    return default if default in LANGS else 'ko'


def main(argv=None, config_path=None, stdout=None, stderr=None, cluster=None):
    """Run kai-lab; the exit code. cluster: a client to grade with instead of connecting (tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = Output(stdout or sys.stdout), Output(stderr or sys.stderr)
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        if '--version' in argv:
            err.line('kai-lab (gsb.kai_lab) unknown')
        err.line(exc.args[0][_early_lang(argv, 'ko')])
        return CANNOT_GRADE_EXIT
    lang = _early_lang(argv, config.get('lang'))
    parser = parser_for(lang, config)
    # argparse prints help, version and usage errors to sys.stdout and sys.stderr itself.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out.stream, err.stream
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (argparse's own 2)
        return exc.code if isinstance(exc.code, int) else CANNOT_GRADE_EXIT
    finally:
        sys.stdout, sys.stderr = streams
    lang = args.lang or args.top_lang or lang
    as_json = args.json or args.top_json
    settings = settings_of(config, lang)
    try:
        if args.command == 'check' and args.first_failure:
            return cli_task.first_failure(settings, args.step, lang, out, cluster=cluster)
        if args.command == 'check':
            return check(settings, args.step, lang, out, as_json, cluster=cluster, err=err)
        if args.command == 'status':
            return status(settings, lang, out, as_json, cluster=cluster)
        if args.command in cli_doctor.VERBS:
            return cli_doctor.run(settings, cli_doctor.target_of(config, settings), lang, out, as_json, cluster=cluster,
                                  fake_gpu_namespace=config.get('fake_gpu_operator_namespace'))
        if args.command in cli_task.VERBS:
            return cli_task.run(args, settings, lang, out, err, as_json)
        return hint(settings, args.step, lang, out, as_json)
    except Exception as exc:  # never a traceback for the learner
        err.line(_say('internal', lang, error='%s: %s' % (type(exc).__name__, exc)))
        return CANNOT_GRADE_EXIT
