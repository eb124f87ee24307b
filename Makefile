# The README's two commands: `make app` and `make test`.
#
# Both install into a project virtual environment (.venv, made by PYTHON) unless one is already
# active ($VIRTUAL_ENV), so they work on a system Python that refuses system-wide installs (PEP 668).
PYTHON ?= python3
PORT ?= 5006
ADDRESS ?= 127.0.0.1

ifdef VIRTUAL_ENV
VENV := $(VIRTUAL_ENV)
else
VENV := .venv
endif
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# a page served on every interface is opened from other machines' names: accept any origin then
ORIGIN := $(if $(filter 0.0.0.0,$(ADDRESS)),*,$(ADDRESS):$(PORT))

.PHONY: app test install install-test chromium venv

# Debian/Ubuntu ship venv's pip bootstrap apart (python3-venv): installed when missing.
$(PY):
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "cdlab: $(PYTHON) cannot make a virtual environment; installing Debian's python3-venv"; \
	  rm -rf $(VENV); \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -q --upgrade pip

venv: $(PY)

$(VENV)/.cdlab-installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[dist]"
	@touch $@

$(VENV)/.cdlab-test-installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[test,dist]"
	@touch $@ $(VENV)/.cdlab-installed

install: $(VENV)/.cdlab-installed

install-test: $(VENV)/.cdlab-test-installed

# Debian's chromium for the real-browser tests (Playwright cannot download one here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium; }

app: install
	@$(PY) -c 'from cdlab.ui.warmup import warm_cache; warm_cache()'
	@echo "cdlab: serving the face-off page; open http://$(ADDRESS):$(PORT)/faceoff (ADDRESS=0.0.0.0 to serve other machines)"
	$(PY) -m panel serve apps/faceoff.py --address $(ADDRESS) --port $(PORT) --allow-websocket-origin='$(ORIGIN)' --allow-websocket-origin=localhost:$(PORT)

test: install-test chromium
	$(PY) -m pytest -q
