#!/usr/bin/env python3
"""Wait until the sim's processes serve, and fail at once when one exits.

Usage: wait_ready.py SPEC_JSON
SPEC: {"timeout": seconds,
       "processes": [{"name": ..., "pid_file": ..., "log_file": ...}],
       "pid_dir": dir, "log_dir": dir,   (every NAME.pid there, its log NAME.log)
       "urls": {"name": "http://127.0.0.1:port/readyz"},
       "command": ["kubectl", ..., "get", "--raw", "/readyz"]}
Ready when every URL answers 200 and the command exits 0. A process whose
pid file names no living process fails the wait within a second, printing
the last lines of its log; so does the timeout, naming what did not answer.
"""

import json
import os
import subprocess
import sys
import time
import urllib.request


def alive(pid_file):
    try:
        with open(pid_file) as handle:
            pid = int(handle.read().strip())
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, ValueError, IndexError):
        return False


def tail(path, count=15):
    try:
        with open(path, 'rb') as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(handle.tell() - 16384, 0))
            lines = handle.read().decode('utf-8', 'replace').splitlines()
        return '\n'.join('    ' + line for line in lines[-count:]) or '    (empty)'
    except OSError as error:
        return '    (no log: %s)' % error


def serves(url):
    try:
        return urllib.request.urlopen(url, timeout=2).getcode() == 200
    except Exception:  # refused, timed out, 5xx: not yet
        return False


def command_ok(argv):
    try:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=5).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    spec = json.loads(sys.argv[1])
    deadline = time.time() + float(spec.get('timeout', 60))
    processes = list(spec.get('processes', []))
    if spec.get('pid_dir') and os.path.isdir(spec['pid_dir']):
        for entry in sorted(os.listdir(spec['pid_dir'])):
            if entry.endswith('.pid'):
                name = entry[:-len('.pid')]
                processes.append({'name': name, 'pid_file': os.path.join(spec['pid_dir'], entry),
                                  'log_file': os.path.join(spec.get('log_dir', spec['pid_dir']), name + '.log')})
    waiting = dict(spec.get('urls', {}))
    command = spec.get('command')
    # A process that was just started may not have written its pid yet.
    grace = time.time() + 1
    while True:
        if time.time() > grace:
            dead = [p for p in processes if not alive(p['pid_file'])]
            if dead:
                for process in dead:
                    print('%s exited (it is not running): last lines of %s:\n%s'
                          % (process['name'], process['log_file'], tail(process['log_file'])))
                return 1
        waiting = dict((name, url) for name, url in waiting.items() if not serves(url))
        if command and command_ok(command):
            command = None
        if not waiting and not command:
            return 0
        if time.time() > deadline:
            names = sorted(waiting) + (['the API server (%s)' % ' '.join(command[-3:])] if command else [])
            print('not ready within %s s: %s' % (spec.get('timeout', 60), ', '.join(names)))
            for process in processes:
                if process['name'] in waiting or command:
                    print('last lines of %s:\n%s' % (process['log_file'], tail(process['log_file'])))
            return 1
        time.sleep(0.5)


if __name__ == '__main__':
    sys.exit(main())
