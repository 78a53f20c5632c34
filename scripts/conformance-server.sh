#!/usr/bin/env bash
# The official MCP server conformance suite (@modelcontextprotocol/conformance 0.1.16, spec 2025-11-25,
# every active scenario) against `sciencegate serve gateway --http --eager --upstream-names` in front of
# Sciencegate's own fixture server (test/fixtures/conformance/). Exits as the suite does with
# test/conformance/server-expected-failures.yml: 0 when exactly the listed scenarios fail.
#   CONFORMANCE_HOME  where the suite and node@22 are installed (npm install on first use)
#   TARGET=fixture    run the suite against the fixture itself instead of the gateway
#   RESULTS=DIR       keep the suite's per-check JSON there
#   EXTRA="..."       extra conformance arguments (e.g. --scenario NAME instead of the suite)
#   GATEWAY_FLAGS     flags of serve gateway after --http (default: --eager --upstream-names)
#   GATEWAY_ROOT      the checkout whose gateway runs (default: this one), e.g. to measure another branch
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HOME_DIR=${CONFORMANCE_HOME:-$HOME/.cache/sciencegate-conformance}
if [ ! -x "$HOME_DIR/node_modules/.bin/conformance" ]; then
  mkdir -p "$HOME_DIR"
  npm install --prefix "$HOME_DIR" --no-save @modelcontextprotocol/conformance@0.1.16 node@22 >/dev/null
fi
NODE22="$HOME_DIR/node_modules/.bin/node"
SUITE="$HOME_DIR/node_modules/.bin/conformance"
WORK=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_port() { for _ in $(seq 1 240); do (: >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.5; done; echo "port $1 not up" >&2; return 1; }

FIXTURE_PORT=$(free_port)
node --import tsx "$ROOT/test/fixtures/conformance/conformance-fixture-server.ts" "$FIXTURE_PORT" >"$WORK/fixture.log" 2>&1 &
pids+=($!)
wait_port "$FIXTURE_PORT"
URL="http://127.0.0.1:$FIXTURE_PORT/mcp"
if [ "${TARGET:-gateway}" != fixture ]; then
  GATEWAY_PORT=$(free_port)
  printf '{"mcpServers":{"fixture":{"type":"http","url":"%s","tool_call_timeout":30}}}\n' "$URL" >"$WORK/extensions_config.json"
  # shellcheck disable=SC2086
  (cd "${GATEWAY_ROOT:-$ROOT}" && SCIENCEGATE_HOME="$WORK/home" node --import tsx src/cli/main.ts serve gateway \
    --config "$WORK/extensions_config.json" --http "127.0.0.1:$GATEWAY_PORT" ${GATEWAY_FLAGS:---eager --upstream-names} \
    >"$WORK/gateway.log" 2>&1) &
  pids+=($!)
  wait_port "$GATEWAY_PORT"
  URL="http://127.0.0.1:$GATEWAY_PORT/mcp"
fi
args=(server --url "$URL")
# shellcheck disable=SC2206
if [ -n "${EXTRA:-}" ]; then args+=($EXTRA); else args+=(--suite active --spec-version 2025-11-25); fi
[ -n "${RESULTS:-}" ] && args+=(-o "$RESULTS")
[ "${TARGET:-gateway}" != fixture ] && [ -z "${NO_EXPECTED:-}" ] &&
  args+=(--expected-failures "$ROOT/test/conformance/server-expected-failures.yml")
"$NODE22" "$SUITE" "${args[@]}"
