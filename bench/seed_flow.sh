#!/usr/bin/env bash
# The seed's flow on a Qwen2-VL folder, each step timed (wall s, peak KB): export with KV cache and generation
# parity, generate with an image vs HF, inspect every target, FP16 / INT8 fixes, package, deploy to a real agent on
# loopback, generate there. Usage: bench/seed_flow.sh MODEL_DIR WORK_DIR [MAX_NEW_TOKENS]   (SKIP_EXPORT=1 reuses WORK_DIR/export)
# Real size: .venv/bin/python -m bench.real_models qwen2-vl-2b /tmp/studio-bench-models/qwen2-vl-2b
set -u
M=$1; W=$2; N=${3:-16}
cd "$(dirname "$0")/.."; S=".venv/bin/python -m studio.cli.main"; T="/usr/bin/time -f STEP_TIME:%e:s:%M:KB"
[ -n "${SKIP_EXPORT:-}" ] || rm -rf $W; mkdir -p $W; O=$W/export
step() { echo "=== $(date -u +%T) $1"; }
[ -n "${SKIP_EXPORT:-}" ] || { step export; $T .venv/bin/multimodal-export --model $M --output $O/model.onnx 2>&1 | grep -v "^\[ " | tail -40
ls -la $O; du -sh $O; }
.venv/bin/python -c "
from PIL import Image; import numpy as np
Image.fromarray((np.random.default_rng(0).random((224,224,3))*255).astype('uint8')).save('$W/img.png')"
step generate-hf-parity; $T $S generate $O --prompt "describe the picture" --image $W/img.png --max-new-tokens $N --hf-parity --threads 2 --json > $W/gen.json 2> $W/gen.err; tail -2 $W/gen.err
.venv/bin/python -c "
import json; d=json.load(open('$W/gen.json'))
print({k: v for k, v in d.items() if not isinstance(v, (dict, list))})
for k, v in d.items():
    if isinstance(v, dict): print(k, {a: b for a, b in v.items() if not isinstance(b, (dict, list)) or a in ('match',)})
print('token_ids', d.get('token_ids') or d.get('ids'))"
for p in model vision; do step inspect-$p; $T $S inspect $O/$p.onnx --target all --quiet 2>&1 | grep -v "^  - \[input\]" | sed -n "1,/^dynamic dims/p"; $S inspect $O/$p.onnx --target all --quiet 2>&1 | awk '/^target /{f=1} f&&n<26{print;n++}'; done
step fix-fp16-vision; $T $S fix $O/vision.onnx --fp16 --out $W/fp16/vision.onnx 2>&1 | grep -E "parity|nodes|fix:|STEP"
step fix-int8-model; $T $S fix $O/model.onnx --int8 --out $W/int8/model.onnx 2>&1 | grep -E "parity|nodes|fix:|STEP"
du -sh $W/fp16 $W/int8
step package; export STUDIO_KEY_PASSPHRASE=seed; $S keys --keys-dir $W/keys generate seedkey 2>&1 | tail -2
$S keys --keys-dir $W/keys export-public seedkey --out $W/seed.pub 2>&1 | tail -1
$T $S package $O --board generic-x86_64 --key seedkey --keys-dir $W/keys --name qwen --out $W/qwen.tar 2>&1 | tail -12; ls -la $W/qwen.tar
step agent; echo tok-seed-0123456789abcdef > $W/token; mkdir -p $W/agent
.venv/bin/studio-agent --host 127.0.0.1 --port 18765 --data $W/agent --trust $W/seed.pub --token-file $W/token --no-mdns > $W/agent.log 2>&1 & AG=$!
sleep 5; $T $S deploy $W/qwen.tar --agent http://127.0.0.1:18765 --token-file $W/token 2>&1 | tail -5
for i in $(seq 1 60); do curl -sf http://127.0.0.1:18765/v2/models/qwen/ready >/dev/null && break; sleep 5; done
step agent-generate-image
.venv/bin/python - "$W" "$N" <<'PY'
import base64, json, sys, time, urllib.request
w, n = sys.argv[1], int(sys.argv[2])
body = {"text_input": "describe the picture", "max_tokens": n, "image": base64.b64encode(open(f"{w}/img.png","rb").read()).decode()}
t = time.perf_counter()
req = urllib.request.Request("http://127.0.0.1:18765/v2/models/qwen/generate", data=json.dumps(body).encode(),
                             headers={"Content-Type": "application/json", "Authorization": "Bearer tok-seed-0123456789abcdef"})
r = json.load(urllib.request.urlopen(req, timeout=1800))
print(json.dumps(r)[:800]); print("agent generate wall s", round(time.perf_counter() - t, 2))
PY
grep -i "rss\|memory" $W/agent.log | tail -3
kill $AG; wait $AG 2>/dev/null
step done
