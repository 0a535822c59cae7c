#!/usr/bin/env bash
# Install everything llmsizer and its tests need on a fresh Debian/Ubuntu machine:
# LibreOffice Calc (headless recalculation checks), poppler (PDF checks), fonts,
# WeasyPrint's system libraries, and the Python package in .venv.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v soffice >/dev/null 2>&1 || need_apt+=(libreoffice-calc-nogui)
command -v pdftotext >/dev/null 2>&1 || need_apt+=(poppler-utils)
command -v ssconvert >/dev/null 2>&1 || need_apt+=(gnumeric)  # second spreadsheet engine (tests)
# the browser test drives Debian's Chromium through Playwright (`playwright install` needs
# a download the test machines may not have); tests/test_web_browser.py fails without it
{ [ -x /usr/bin/chromium ] || [ -x /usr/bin/chromium-browser ]; } || need_apt+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
# Chinese, Japanese and Korean account and workload names (DejaVu has no CJK glyphs)
[ -e /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] || need_apt+=(fonts-noto-cjk)
ldconfig -p 2>/dev/null | grep -q libpango-1.0 || need_apt+=(libpango-1.0-0 libpangoft2-1.0-0)
# HarfBuzz subsetting: WeasyPrint embeds font subsets fast (else it falls back to fontTools)
ldconfig -p 2>/dev/null | grep -q libharfbuzz-subset || need_apt+=(libharfbuzz-subset0)
python3 -m venv --help >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${need_apt[*]}"
  # Wait (up to 10 min) for another apt/dpkg process to release its lock instead of aborting.
  apt_wait=(-o DPkg::Lock::Timeout=600)
  $SUDO apt-get "${apt_wait[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${apt_wait[@]}" install -y -qq \
    --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[test,cluster]"
