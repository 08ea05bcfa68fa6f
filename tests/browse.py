#!/usr/bin/env python3
"""Open a class.html in headless Chromium: screenshot it and check its DOM.

Usage: browse.py PAGE SCREENSHOT [MARK]. Fails when Chromium is missing or
errs, when the rendered page has a <script> element, or when its title
contains MARK (text a hostile learner's script would have written there).
"""
import os
import shutil
import subprocess
import sys
import tempfile

FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--hide-scrollbars']


def chromium():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        path = shutil.which(name)
        if path:
            return path
    return None


def run(browser, args, timeout=90):
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([browser] + FLAGS + ['--user-data-dir=' + profile] + args,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, check=False)


def browse(page, screenshot, mark=None):
    browser = chromium()
    if browser is None:
        raise SystemExit('chromium is not installed (Debian: apt-get install chromium)')
    url = 'file://' + os.path.abspath(page)
    shot = run(browser, ['--window-size=1600,1000', '--screenshot=' + os.path.abspath(screenshot), url])
    if shot.returncode != 0 or not os.path.getsize(screenshot):
        raise SystemExit('chromium could not take a screenshot: %s' % shot.stderr.decode()[-2000:])
    dom = run(browser, ['--dump-dom', url])
    if dom.returncode != 0:
        raise SystemExit('chromium could not render the page: %s' % dom.stderr.decode()[-2000:])
    text = dom.stdout.decode('utf-8', 'replace')
    if '<table' not in text:
        raise SystemExit('the rendered page has no table')
    if '<script' in text.lower():
        raise SystemExit('the rendered page has a <script> element')
    title = text.split('<title>', 1)[-1].split('</title>', 1)[0]
    if mark and mark in title:
        raise SystemExit('a script ran in the page: its title is %r' % title)
    return text


if __name__ == '__main__':
    browse(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    print('   %s rendered, screenshot %s' % (sys.argv[1], sys.argv[2]))
