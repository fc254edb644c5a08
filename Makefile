# hil_suite: `make demo` runs the Hexafloat graph on the mock, `make test` runs the test suite.
# Both create .venv on first use and install everything pinned in constraints.txt.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
# DDS discovery stays on this machine unless you say otherwise (hil run --network for lab use).
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST
export RMW_IMPLEMENTATION ?= rmw_fastrtps_cpp
export MPLBACKEND ?= Agg
PACKAGES := src/hil_core src/hil_nodes src/hil_sim

.PHONY: venv tf2-msgs warmup demo test test-faults bench clean
venv: $(VENV)/.installed tf2-msgs

$(VENV)/.installed: requirements.txt constraints.txt $(addsuffix /setup.py,$(PACKAGES))
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps $(addprefix -e ,$(PACKAGES))
	@touch $@

# tf2_msgs (TFMessage for /tf, /tf_static) has no wheel: built from its interface definition into
# the venv, only when the venv lacks it (interfaces/tf2_msgs/build.sh; docs/lab.md, TF).
tf2-msgs: $(VENV)/.installed
	@$(PY) -c 'import tf2_msgs.msg' 2>/dev/null || bash interfaces/tf2_msgs/build.sh $(VENV)

# Every compiled (numba) kernel compiled or loaded from its cache before anything runs, so no node
# ever compiles in the middle of a frame (about a minute on a fresh checkout, seconds after).
warmup: venv
	$(PY) -m hil_core.warmup

# The seed-000 transparency experiment (3 Hz model, four impulses, 30 s of sim time, lockstep)
# on the whole Hexafloat graph, then its report: runs/demo/<bag>/report/report.html
demo: warmup
	$(VENV)/bin/hil run hexafloat --scenario impulse_3hz --record runs/demo
	$(VENV)/bin/hil report "$$(ls -td runs/demo/*/ | head -n 1)"

# The suite without its unit tests on two workers (one file to a worker), then the files judged
# on the wall clock alone (test/conftest.py SERIAL_FILES: real-time runs, watchdogs, the lockstep
# stall limit) with the unit tests beside them at nice 19 (test/serial_beside_unit.sh: the serial
# files leave one core idle), then the fault matrix (test/system/test_fault_matrix.py,
# docs/fault_matrix.md: 22 whole lockstep runs that kill, stop or feed bad input to each node) on
# two workers, each row on its own DDS domain (docs/testing.md gives the minutes). The machine's
# calibration (bench/_calibration.py) is printed before and after: the suite's minutes follow the
# machine's speed, which differs 2-3x between machines of one kind and from hour to hour.
test: warmup
	@$(PY) bench/_calibration.py | sed 's/^/make test, before: /'
	$(PY) -m pytest -n 2 --dist loadfile --durations=8 -m "not fault_matrix and not serial" --ignore=test/unit
	bash test/serial_beside_unit.sh $(PY)
	$(PY) -m pytest -n 2 --dist load -m fault_matrix test/system/test_fault_matrix.py
	@$(PY) bench/_calibration.py | sed 's/^/make test, after: /'

# The fault matrix alone, one row after the other, with each row's figures and the table printed.
test-faults: warmup
	$(PY) -m pytest -n 0 -s -m fault_matrix test/system/test_fault_matrix.py

bench: warmup
	$(VENV)/bin/hil bench

clean:
	rm -rf $(VENV) runs .pytest_cache
