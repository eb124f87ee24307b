# The README's two commands: `make app` and `make test`.
PYTHON ?= python3
PORT ?= 5006

.PHONY: app test install install-test chromium

install:
	$(PYTHON) -m pip install -q -e ".[dist]"

install-test:
	$(PYTHON) -m pip install -q -e ".[test,dist]"

# Debian's chromium for the real-browser tests (Playwright cannot download one here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }

app: install
	$(PYTHON) -m panel serve apps/faceoff.py --port $(PORT) --show

test: install-test chromium
	$(PYTHON) -m pytest -q
