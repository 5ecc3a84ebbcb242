#!/usr/bin/env bash
# The project's Python environment alone (.venv: pip install -e '.[dev]'), installed when pyproject.toml
# changed, and put first on PATH.  Sourced by toolchain.sh (the whole toolchain) and, on its own, by the light
# checks (`make lint`, `make test-fast`), which need no npm, no Java, no Chromium and no root.
set -euo pipefail
ROOT="${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
PYTHON="${PYTHON:-python3}"

stamp_ok() { # stamp_ok STAMPFILE INPUT... : true when the stamp matches the inputs' hash
  local want; want="$(cat "${@:2}" | sha256sum | cut -d' ' -f1)"
  [[ -f "$1" && "$(cat "$1")" == "$want" ]]
}
stamp_write() { cat "${@:2}" | sha256sum | cut -d' ' -f1 >"$1"; }

ensure_project_env() {
  if ! stamp_ok "$ROOT/.venv/.installed" "$ROOT/pyproject.toml"; then
    echo "==> Python environment .venv" >&2
    [[ -x "$ROOT/.venv/bin/python" ]] || "$PYTHON" -m venv "$ROOT/.venv"
    "$ROOT/.venv/bin/python" -m pip install -q --upgrade pip >&2
    "$ROOT/.venv/bin/python" -m pip install -q -e "$ROOT[dev]" >&2
    stamp_write "$ROOT/.venv/.installed" "$ROOT/pyproject.toml"
  fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then  # run, not sourced: install and say so
  ensure_project_env
  echo "python environment ready: $("$ROOT/.venv/bin/python" --version)"
else
  ensure_project_env
  export PATH="$ROOT/.venv/bin:$PATH"
fi
