"""Stand-in for pip's get-pip.py bootstrap script.

ansible-test bootstraps pip in the virtual environments it makes for sanity
tests with get-pip.py, which it downloads from a host this project's
machines cannot reach (only PyPI is). This does the same job from what is
here: pip from Python's own ensurepip wheel, then the requested packages
(ansible-test's pinned pip) from PyPI. That first old pip trusts only its
bundled CA list, so it is pointed at the system's trust store, which pip
24.2 and later use by themselves. tests/sanity.sh puts this file where
ansible-test looks for its cached copy.
"""

import ensurepip
import os
import ssl
import subprocess
import sys

# get-pip.py's own flags; pip install does not know them.
ARGS = [arg for arg in sys.argv[1:] if arg not in ('--no-setuptools', '--no-wheel')]
CA_FILES = (ssl.get_default_verify_paths().cafile, '/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt')

ensurepip.bootstrap()
cert = [path for path in CA_FILES if path and os.path.isfile(path)][:1]
sys.exit(subprocess.call([sys.executable, '-m', 'pip', 'install'] + (['--cert', cert[0]] if cert else []) + ARGS))
