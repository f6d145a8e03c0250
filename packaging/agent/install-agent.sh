#!/usr/bin/env bash
# Install the Deployment Studio edge agent on a board (Debian/Ubuntu/Raspberry Pi OS/JetPack, run as root):
#   sudo ./install-agent.sh --trust studio.pub [--wheel deployment_studio-*.whl] [--host 0.0.0.0] [--port 8765]
#                           [--board auto] [--max-upload-mb 2048] [--constraints FILE] [--prefix DIR] [--no-start]
#                           [--allow-trust-push] [--dry-run]
# Installs the wheel (--wheel, else the one shipped next to this script, else one built from the checkout this
# script lives in) with the `agent` extra only (no Qt, no torch) into PREFIX/venv (/opt/studio-agent), creates
# a system user, /etc/studio-agent/{agent.env,token,trusted/}, /var/lib/studio-agent and the systemd unit.
# --dry-run prints every command instead of running it (no root needed, nothing is written).
set -euo pipefail

PREFIX=/opt/studio-agent
ETC=/etc/studio-agent
DATA=/var/lib/studio-agent
HOST=127.0.0.1
PORT=8765
BOARD=auto
MAX_UPLOAD_MB=2048
TRUST=""
WHEEL=""
CHECKOUT=""
CONSTRAINTS=""
START=1
EXTRA_ARGS=""
DRY=0
PYTHON=${PYTHON:-python3}
HERE="$(cd "$(dirname "$0")" && pwd)"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --trust) TRUST="$2"; shift 2 ;;
    --wheel) WHEEL="$2"; shift 2 ;;
    --source) CHECKOUT="$2"; shift 2 ;;  # a project checkout to build the wheel from
    --constraints) CONSTRAINTS="$2"; shift 2 ;;
    --host) HOST="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --board) BOARD="$2"; shift 2 ;;
    --max-upload-mb) MAX_UPLOAD_MB="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --no-start) START=0; shift ;;
    --allow-trust-push) EXTRA_ARGS="--allow-trust-push"; shift ;;  # studios with the token may add keys
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1" >&2; exit 2 ;;
  esac
done

die() { echo "error: $*" >&2; exit 2; }
# Run a command, or print it (shell-quoted, after "+ ") under --dry-run.
run() { if [[ $DRY -eq 1 ]]; then echo "+ ${*@Q}"; else "$@"; fi; }
runq() { if [[ $DRY -eq 1 ]]; then echo "+ ${*@Q}"; else "$@" >/dev/null; fi; }

[[ $DRY -eq 1 || $EUID -eq 0 ]] || die "run as root (sudo)"
[[ -n "$TRUST" && -f "$TRUST" ]] || \
  die "--trust FILE is required (on the studio: studio keys export-public NAME --out studio.pub)"
[[ -z "$CONSTRAINTS" || -f "$CONSTRAINTS" ]] || die "--constraints $CONSTRAINTS: no such file"

# What to install: always a wheel (never the source tree itself, whose resources/ layout is not an install).
if [[ -n "$WHEEL" ]]; then
  [[ -f "$WHEEL" ]] || die "--wheel $WHEEL: no such file"
  WHEEL="$(cd "$(dirname "$WHEEL")" && pwd)/$(basename "$WHEEL")"
elif [[ -z "$CHECKOUT" ]] && compgen -G "$HERE/deployment_studio-*.whl" >/dev/null; then
  # Shipped next to a wheel (a release folder): the newest version there.
  WHEEL="$(printf '%s\n' "$HERE"/deployment_studio-*.whl | sort -V | tail -n 1)"
else
  [[ -n "$CHECKOUT" ]] || CHECKOUT="$(cd "$HERE/../.." && pwd)"
  [[ -f "$CHECKOUT/pyproject.toml" && -f "$CHECKOUT/studio/__init__.py" ]] || \
    die "no wheel to install: pass --wheel deployment_studio-VERSION-py3-none-any.whl or put it next to $0"
  VERSION="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$CHECKOUT/studio/__init__.py")"
  [[ -n "$VERSION" ]] || die "cannot read __version__ from $CHECKOUT/studio/__init__.py"
  WHEEL="$PREFIX/wheels/deployment_studio-$VERSION-py3-none-any.whl"
fi
PIP_C=()
[[ -n "$CONSTRAINTS" ]] && PIP_C=(-c "$CONSTRAINTS")

"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 10), sys.version' || die "Python 3.10+ is needed"
"$PYTHON" -m venv --help >/dev/null 2>&1 || die "install python3-venv first (apt-get install python3-venv)"

id studio-agent >/dev/null 2>&1 || run useradd --system --home "$DATA" --shell /usr/sbin/nologin studio-agent
run install -d -m 0755 "$PREFIX"
run install -d -m 0750 -o root -g studio-agent "$ETC" "$ETC/trusted"
run install -d -m 0750 -o studio-agent -g studio-agent "$DATA"

VPY="$PREFIX/venv/bin/python"
[[ -x "$VPY" ]] || run "$PYTHON" -m venv "$PREFIX/venv"
runq "$VPY" -m pip install --upgrade pip wheel
if [[ -n "$CHECKOUT" ]]; then
  # From a checkout: build the wheel first (kept in PREFIX/wheels as the record of what is installed).
  run install -d -m 0755 "$PREFIX/wheels"
  run rm -f "$WHEEL"
  run "$VPY" -m pip wheel --no-deps "$CHECKOUT" -w "$PREFIX/wheels"
  [[ $DRY -eq 1 || -f "$WHEEL" ]] || die "building the wheel did not produce $WHEEL"
fi
run "$VPY" -m pip install ${PIP_C[@]+"${PIP_C[@]}"} "${WHEEL}[agent]"
# The same version number may be installed already (a rebuilt wheel): replace the package itself.
run "$VPY" -m pip install --no-deps --force-reinstall "$WHEEL"
runq "$PREFIX/venv/bin/studio-agent" --help

run install -m 0640 -o root -g studio-agent "$TRUST" "$ETC/trusted/$(basename "$TRUST" .pub).pub"
if [[ $DRY -eq 1 ]]; then
  echo "+ (write $ETC/token if missing, $ETC/agent.env)"
else
  if [[ ! -s "$ETC/token" ]]; then
    (umask 077; "$VPY" -c 'import secrets; print(secrets.token_urlsafe(32))' > "$ETC/token")
    chown root:studio-agent "$ETC/token"; chmod 0640 "$ETC/token"
  fi
  cat > "$ETC/agent.env" <<ENV
STUDIO_AGENT_HOST=$HOST
STUDIO_AGENT_PORT=$PORT
STUDIO_AGENT_BOARD=$BOARD
STUDIO_AGENT_MAX_UPLOAD_MB=$MAX_UPLOAD_MB
STUDIO_AGENT_EXTRA_ARGS=$EXTRA_ARGS
ENV
fi

run install -m 0644 "$HERE/studio-agent.service" /etc/systemd/system/studio-agent.service
run systemctl daemon-reload
if [[ $START -eq 1 ]]; then
  run systemctl enable --now studio-agent.service
  run systemctl --no-pager --lines=5 status studio-agent.service || true
fi
echo
[[ $DRY -eq 1 ]] && echo "(dry run: nothing was run or written)"
echo "studio-agent installed from $(basename "$WHEEL"). Copy the token to the studio machine and deploy:"
echo "  scp root@THIS-BOARD:$ETC/token agent.token"
echo "  studio deploy bundle.tar --agent http://THIS-BOARD:$PORT --token-file agent.token"
[[ "$HOST" == 127.0.0.1 ]] && echo "(bound to loopback: pass --host 0.0.0.0 to reach it from the network)"
exit 0
