# One install path for machines without an apt ROS install (see README.md).
#   make setup   .venv with the pinned wheels, the interface packages without a wheel, the package
#   make test    setup + Debian's chromium (make browser) + the whole test suite (ruff included)
#   make demo    setup + the demo
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP_VERSION := 26.3

.PHONY: setup sysdeps browser test lint demo bench fuzz clean
setup: $(VENV)/.package

# cmake and a C++ compiler build the interface packages; install them from Debian if missing.
sysdeps:
	@if ! command -v cmake >/dev/null || ! command -v c++ >/dev/null; then \
	  echo "installing cmake and g++ from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ >/dev/null; \
	fi

# Debian's Chromium and its driver: the browser view's test loads the page in a real browser.
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  echo "installing chromium and chromium-driver from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	fi

$(PY):
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "the ROS 2 wheels are cp311: need Python 3.11"'
	$(PYTHON) -m venv $(VENV)

$(VENV)/.deps: requirements.txt | $(PY)
	$(PY) -m pip install -q pip==$(PIP_VERSION)
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.interfaces: $(VENV)/.deps uvms_sim/rosidl_build.py $(wildcard uvms_sim/interfaces/*/*.txt uvms_sim/interfaces/*/*.xml uvms_sim/interfaces/*/msg/* uvms_sim/interfaces/*/srv/* uvms_sim/interfaces/*/action/*) | sysdeps
	$(PY) -m uvms_sim.rosidl_build
	touch $@

$(VENV)/.package: $(VENV)/.interfaces setup.py setup.cfg
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	$(PY) -m uvms_sim.kernels
	$(PY) -m uvms_sim.ros.message_kernels
	touch $@

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test: setup browser
	$(PY) -m pytest

demo: setup
	$(PY) -m uvms_sim.demo

$(VENV)/.bench: benchmarks/requirements.txt | $(PY)
	$(PY) -m pip install -q -r benchmarks/requirements.txt
	touch $@

bench: setup $(VENV)/.bench
	$(PY) benchmarks/bench_performance.py --write benchmarks/RESULTS.md
	$(PY) benchmarks/bench_dynamics.py
	$(PY) benchmarks/bench_constraints.py
	$(PY) benchmarks/bench_contacts.py
	$(PY) benchmarks/bench_node.py
	$(PY) benchmarks/bench_entities.py
	$(PY) benchmarks/bench_water.py
	$(PY) benchmarks/bench_view.py
	$(PY) benchmarks/bench_replay.py
	$(PY) benchmarks/bench_sitl.py
	$(PY) benchmarks/bench_validation.py
	$(PY) benchmarks/bench_gym.py

# the fuzz suite of the tests, twenty times as long (the log, run-time parameter and sensor
# description suites alone take about 2.5, 1 and 2.5 min at FUZZ_SCALE=1 on a loaded 2-core
# machine, so well over an hour here)
fuzz: setup
	FUZZ_SCALE=20 $(PY) -m pytest -q test/test_fuzz*.py

clean:
	rm -rf $(VENV) build install log *.egg-info
