#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (the zip is unpacked in
# /autograder/source). It installs Python 3.11 or newer, the pinned dependencies (the CPU build of torch, and
# triton so that no check is skipped) and infergrade into a virtual environment, /autograder/venv.
# Written by `infergrade gradescope`; the pins are the versions installed where it ran.
set -euo pipefail
ROOT="${INFERGRADE_AUTOGRADER_ROOT:-/autograder}"
VENV="$ROOT/venv"
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1

# a Python of at least 3.11: Ubuntu 22.04 ships 3.10, and has 3.11 in its universe component
PYTHON=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    PYTHON="$candidate"
    break
  fi
done
if [ -z "$PYTHON" ]; then
  apt-get update && apt-get install -y python3.11 python3.11-venv
  PYTHON=python3.11
fi
if ! "$PYTHON" -m venv --clear "$VENV"; then  # Debian and Ubuntu keep venv in a package of its own
  apt-get update && apt-get install -y "$(basename "$PYTHON")-venv"
  "$PYTHON" -m venv --clear "$VENV"
fi

@PIP_COMMANDS@
"$VENV/bin/python" -m pip install "$ROOT/source"

# fail the build here, not at the first submission: the grader imports, and finds torch and triton
cd "$ROOT/source" && "$VENV/bin/python" -c 'import torch, triton, grader.topics; print("torch", torch.__version__, "triton", triton.__version__)'
