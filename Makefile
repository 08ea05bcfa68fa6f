# Two entry points (see README): `make lab` and `make test`.
# Everything is installed from the pinned files in this repository into a
# cache outside it, keyed by the content of those files, and reused.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3.11
KAI_LAB_CACHE ?= $(HOME)/.cache/gsb-kai-lab
REQ_KEY := $(shell cat requirements.txt requirements-test.txt constraints.txt | sha256sum | cut -c1-12)
VENV := $(KAI_LAB_CACHE)/venv-$(REQ_KEY)
export PATH := $(VENV)/bin:$(KAI_LAB_CACHE)/bin:$(PATH)
# This checkout is gsb.kai_lab through its committed link .collections/
# (ansible.cfg says the same; set here too so nothing from the caller's
# environment shadows it).
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.collections
export KAI_LAB_CACHE

.PHONY: lab test test-k3s venv venv-test provision solve grade reset teardown bench docs

# `make venv` then `. .venv/bin/activate`: afterwards plain
# `ansible-playbook playbooks/<name>.yml` works from the repository root.
# It holds what the lab runs (requirements.txt); `make test`, `make docs`
# and `make venv-test` add the test tools (requirements-test.txt) to the same
# environment, so a learner's first `make lab` does not wait for them.
venv: $(VENV)/.installed-lab
	ln -sfn $(VENV) .venv

venv-test: $(VENV)/.installed
	ln -sfn $(VENV) .venv

# The directory name carries the hash of the requirement files, so its
# presence is enough (a fresh clone's file times say nothing). --no-compile:
# Python compiles what is imported on first use; compiling all of the
# ansible package's collections up front took 28-33 s (requirements.txt from
# pip's cache: 39.3 and 51.9 s against 11.0 and 18.8 s).
# Unless PYTHONDONTWRITEBYTECODE is set: then nothing is ever compiled
# for good, and each kubernetes.core call compiled the kubernetes client
# again (2 s a call; a provision from empty took 50 s, 42 s compiled). So
# with it set the environment is compiled once, in parallel, without the
# collections of the ansible package the lab does not use (3303 files, 10 s).
VENV_COMPILE = if [ -n "$$PYTHONDONTWRITEBYTECODE" ]; then \
	echo "== PYTHONDONTWRITEBYTECODE is set: compiling $(VENV) once"; \
	$(VENV)/bin/python -m compileall -q -j 0 \
	  -x '/ansible_collections/(?!(kubernetes/core|community/crypto|ansible/posix|ansible/utils)/)' \
	  "$$($(VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" >/dev/null; fi

$(VENV)/.installed-lab:
	@echo "== creating Python environment $(VENV) (first use only)"
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-compile -r requirements.txt -c constraints.txt
	@$(VENV_COMPILE)
	touch $@

$(VENV)/.installed: | $(VENV)/.installed-lab
	@echo "== adding the test tools to $(VENV) (first use only)"
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-compile -r requirements-test.txt -c constraints.txt
	@$(VENV_COMPILE)
	touch $@

# The main job: provision the sim lab, solve it, grade it.
lab: venv
	ansible-playbook playbooks/provision.yml
	ansible-playbook playbooks/solve.yml
	ansible-playbook playbooks/grade.yml

provision solve grade reset teardown: venv
	ansible-playbook playbooks/$@.yml

# The whole test suite; .ci/run calls this. System packages first (Chromium),
# so a fresh machine needs nothing but these two commands.
test: venv-test
	tests/system-deps.sh
	tests/run-all.sh

# The k3s target on a real VM in airgap mode (molecule/k3s_vm), not part of
# `make test` (an hour and more under QEMU without KVM): from a bundle built
# from source checkouts (KAI_LAB_K3S_SOURCES=DIR) or built before
# (KAI_LAB_K3S_BUNDLE=DIR); without either it says what to set.
test-k3s: venv-test
	tests/k3s-vm.sh

# The docs site, built offline into docs/build/ (open docs/build/build/html/index.html);
# lints every plugin's and role's docs and the guides first.
docs: venv-test
	tests/docs.sh

# Benchmarks print numbers; they are not part of the test suite. The lab's
# figures run on a sim of their own; the fresh build (10-20 min) last,
# skipped with `make bench BENCH_BUILD=0`.
BENCH_BUILD ?= 1
bench: venv
	tests/benchmarks/bench_lab.sh 5
	if [ "$(BENCH_BUILD)" = 1 ]; then tests/benchmarks/bench_build.sh; fi
