#!/usr/bin/env bash
# The laptop-to-node path on a GPU node, from a bundle (deploy/make_bundle.sh): gemmprofd
# on the cuda backend behind TLS and tokens (a throwaway CA made here with openssl), the
# seed 5B job in both modes through worker processes, then a worker killed with SIGKILL
# in the middle of a job: that item fails with the signal named, the job ends partial,
# the daemon keeps answering and the next job runs on the restarted worker.
# usage: deploy/gpu_worker_check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
bundle=$(cd "${1:?usage: gpu_worker_check.sh BUNDLE_DIR OUT_DIR}" && pwd)
out=${2:?usage: gpu_worker_check.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
work=$(mktemp -d)
cd "$work" || exit 1

# A throwaway CA and a server certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key \
  -out ca.pem -days 2 -subj "/CN=check CA" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key \
  -out server.csr -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
  -days 2 -extfile server.ext 2>/dev/null
cli="$bundle/bin/gemmprof"
token=$("$cli" token new --name ci --role submit | head -1)
printf 'ci submit %s\n' "$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)" >tokens

"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --db results.db --backend cuda --port-file port \
  --tls-cert server.pem --tls-key server.key --tokens tokens --log-file "$out/gemmprofd.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 300); do [ -s port ] && break; sleep 0.1; done
export GEMMPROF_SERVER="localhost:$(cat port)" GEMMPROF_TLS_CA="$work/ca.pem"

{
  echo "== without a token"; "$cli" jobs; echo "exit $?"
  export GEMMPROF_TOKEN="$token"
  echo "== devices"; "$cli" devices
  echo "== workers: $(pgrep -P $daemon | tr '\n' ' ')"
  seed=(--hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32
        --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512)
  t0=$SECONDS
  job=$("$cli" submit "${seed[@]}" --mode both --label "5B both modes")
  "$cli" watch "$job" >/dev/null; echo "watch exit $?"
  echo "5B both modes through the worker: $((SECONDS - t0)) s"
  "$cli" report "$job" | head -60

  echo "== SIGKILL to the worker in the middle of a job"
  kill_job=$("$cli" submit "${seed[@]}" --recipes bf16,fp8-current --force --label "kill")
  for _ in $(seq 100); do
    "$cli" jobs | grep -q "^ *$kill_job .*running" && break; sleep 0.1
  done
  sleep 2
  worker=$(pgrep -P $daemon | head -1)
  echo "killing worker $worker"; kill -9 "$worker"
  "$cli" jobs | head -5; echo "jobs exit $? (while the worker is down)"
  "$cli" watch "$kill_job" >/dev/null; echo "watch exit $? (3 = partial)"
  "$cli" report "$kill_job" | grep -iE "failed|signal|partial" | head -10
  echo "== workers now: $(pgrep -P $daemon | tr '\n' ' ')"
  after=$("$cli" submit --shapes 4096x4096x4096 --recipes bf16,fp8-current --force --label after)
  "$cli" watch "$after" >/dev/null; echo "next job watch exit $?"
  "$cli" jobs | head -6
} 2>&1 | tee "$out/worker_check.txt"
