#!/usr/bin/env bash
# Build tf2_msgs/msg/TFMessage from interfaces/tf2_msgs into a venv (default .venv) when the
# venv has no tf2_msgs: there is no tf2_msgs wheel. The rosidl generators come as wheels
# (build-requirements.txt); CMake and a C/C++ compiler come from the system. The same
# definition gives the same RIHS01 type hash as tf2_msgs on a lab machine (docs/lab.md, TF).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="$(cd "${1:-.venv}" && pwd)"
PY="$VENV/bin/python"
if "$PY" -c 'import tf2_msgs.msg' 2>/dev/null; then
  echo "tf2_msgs: present in $VENV"
  exit 0
fi
for tool in cmake c++; do
  command -v "$tool" >/dev/null || { echo "tf2_msgs: '$tool' is needed (apt-get install cmake g++)" >&2; exit 1; }
done
"$PY" -m pip install --quiet --disable-pip-version-check -r "$HERE/build-requirements.txt"
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
export PATH="$VENV/bin:$PATH"
cmake -S "$HERE" -B "$BUILD" -DCMAKE_PREFIX_PATH="$VENV" -DCMAKE_INSTALL_PREFIX="$VENV" \
  -DPython3_EXECUTABLE="$PY" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release > "$BUILD/configure.log" \
  || { cat "$BUILD/configure.log" >&2; exit 1; }
cmake --build "$BUILD" -j 2 > "$BUILD/build.log" || { tail -50 "$BUILD/build.log" >&2; exit 1; }
cmake --install "$BUILD" > "$BUILD/install.log"
"$PY" -c 'from tf2_msgs.msg import TFMessage; print("tf2_msgs: built into '"$VENV"'")'
