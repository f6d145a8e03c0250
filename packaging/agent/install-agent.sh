#!/usr/bin/env bash
# Install the Deployment Studio edge agent on a board (Debian/Ubuntu/Raspberry Pi OS/JetPack, run as root):
#   sudo ./install-agent.sh --trust studio.pub [--wheel deployment_studio-*.whl] [--host 0.0.0.0] [--port 8765]
#                           [--board auto] [--max-upload-mb 2048] [--no-start]
# Creates a venv in /opt/studio-agent/venv with the `agent` extra only (no Qt, no torch), a system user,
# /etc/studio-agent/{agent.env,token,trusted/}, /var/lib/studio-agent, and the systemd unit.
set -euo pipefail

PREFIX=/opt/studio-agent
ETC=/etc/studio-agent
DATA=/var/lib/studio-agent
HOST=127.0.0.1
PORT=8765
BOARD=auto
MAX_UPLOAD_MB=2048
TRUST=""
SOURCE=""
START=1
PYTHON=${PYTHON:-python3}
HERE="$(cd "$(dirname "$0")" && pwd)"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --trust) TRUST="$2"; shift 2 ;;
    --wheel|--source) SOURCE="$2"; shift 2 ;;
    --host) HOST="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --board) BOARD="$2"; shift 2 ;;
    --max-upload-mb) MAX_UPLOAD_MB="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --no-start) START=0; shift ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1" >&2; exit 2 ;;
  esac
done

[[ $EUID -eq 0 ]] || { echo "error: run as root (sudo)" >&2; exit 2; }
[[ -n "$TRUST" && -f "$TRUST" ]] || {
  echo "error: --trust FILE is required (on the studio: studio keys export-public NAME --out studio.pub)" >&2; exit 2; }
# The source to install: a wheel, or the project checkout this script lives in.
[[ -n "$SOURCE" ]] || SOURCE="$(cd "$HERE/../.." && pwd)"

"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 10), sys.version' || {
  echo "error: Python 3.10+ is needed" >&2; exit 2; }
"$PYTHON" -m venv --help >/dev/null 2>&1 || { echo "error: install python3-venv first (apt-get install python3-venv)" >&2; exit 2; }

id studio-agent >/dev/null 2>&1 || useradd --system --home "$DATA" --shell /usr/sbin/nologin studio-agent
install -d -m 0755 "$PREFIX"
install -d -m 0750 -o root -g studio-agent "$ETC" "$ETC/trusted"
install -d -m 0750 -o studio-agent -g studio-agent "$DATA"

if [[ ! -x "$PREFIX/venv/bin/python" ]]; then
  "$PYTHON" -m venv "$PREFIX/venv"
fi
"$PREFIX/venv/bin/python" -m pip install --upgrade pip wheel >/dev/null
"$PREFIX/venv/bin/python" -m pip install "${SOURCE}[agent]"
"$PREFIX/venv/bin/studio-agent" --help >/dev/null

install -m 0640 -o root -g studio-agent "$TRUST" "$ETC/trusted/$(basename "$TRUST" .pub).pub"
if [[ ! -s "$ETC/token" ]]; then
  umask 077
  "$PREFIX/venv/bin/python" -c 'import secrets; print(secrets.token_urlsafe(32))' > "$ETC/token"
  chown root:studio-agent "$ETC/token"; chmod 0640 "$ETC/token"
fi
cat > "$ETC/agent.env" <<ENV
STUDIO_AGENT_HOST=$HOST
STUDIO_AGENT_PORT=$PORT
STUDIO_AGENT_BOARD=$BOARD
STUDIO_AGENT_MAX_UPLOAD_MB=$MAX_UPLOAD_MB
STUDIO_AGENT_EXTRA_ARGS=
ENV

install -m 0644 "$HERE/studio-agent.service" /etc/systemd/system/studio-agent.service
systemctl daemon-reload
if [[ $START -eq 1 ]]; then
  systemctl enable --now studio-agent.service
  systemctl --no-pager --lines=5 status studio-agent.service || true
fi
echo
echo "studio-agent installed. Copy the token to the studio machine and deploy:"
echo "  scp root@THIS-BOARD:$ETC/token agent.token"
echo "  studio deploy bundle.tar --agent http://THIS-BOARD:$PORT --token-file agent.token"
[[ "$HOST" == 127.0.0.1 ]] && echo "(bound to loopback: pass --host 0.0.0.0 to reach it from the network)"
