#!/usr/bin/env bash
# Upstream's conformance specs against skiff's API server, with upstream's
# kube-controller-manager, kube-scheduler (v1.34) and kwok (fake nodes, fake
# pod lifecycles) attached: the check issue 7 names. Not part of `.ci/run`
# (a run takes 30-60 minutes on two cores); run it by hand:
#
#   test/conformance/run.sh [ginkgo focus regexp]     # default: api-machinery, apps, cli conformance
#   APISERVER=upstream OUT=/tmp/upstream-conformance test/conformance/run.sh   # the baseline: upstream's
#                                                      # kube-apiserver 1.34 on etcd in skiff's place
#   CONTROLLER_MANAGER=skiff test/conformance/run.sh '\[sig-apps\].*\[Conformance\]'   # skiff's own
#                                                      # controller manager instead of upstream's
#   SCHEDULER=skiff SKIP='\[Disruptive\]|\[Flaky\]' test/conformance/run.sh '\[sig-scheduling\].*\[Conformance\]'
#                                                      # skiff's own scheduler instead of upstream's
#                                                      # (the scheduling specs are [Serial]: unskip them)
#
# Results: $OUT (default /tmp/skiff-conformance)/{junit.xml,e2e.log,*.log}.
# Specs that need real containers (exec, logs, networking, webhooks served
# by pods) cannot pass on kwok's fake nodes, against upstream's API server
# either; compare with a run against upstream's kube-apiserver on the same
# machine before calling a failure skiff's.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
V=${K8S_VERSION:-v1.34.4}
UP=${UPSTREAM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skiff-upstream-$V}
OUT=${OUT:-/tmp/skiff-conformance}
FOCUS=${1:-'\[sig-(api-machinery|apps|cli)\].*\[Conformance\]'}
SKIP=${SKIP:-'\[Serial\]|\[Disruptive\]|\[Flaky\]'}
NODES=${NODES:-3}

need=()
for b in kube-scheduler kube-controller-manager kwok e2e.test ginkgo; do
  [ -x "$UP/$b" ] || need+=("${b%.test}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "building ${need[*]} into $UP (first time: 10-20 minutes)"
  K8S_VERSION=$V bash ../shared/tools/build-upstream.sh "$UP" "${need[@]}"
fi

rm -rf "$OUT" && mkdir -p "$OUT"
go build -o "$OUT/skiff" ./cmd/skiff
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

DATA=$OUT/data
CM=${CONTROLLER_MANAGER:-upstream}
SCHED=${SCHEDULER:-upstream}
dis=()
[ "$CM" = skiff ] || dis+=(controller-manager)
[ "$SCHED" = skiff ] || dis+=(scheduler)
DISABLE=$(IFS=,; echo "${dis[*]:-}")
"$OUT/skiff" up --storage=memory --data-dir "$DATA" --secure-port "$(port)" \
  ${DISABLE:+--disable=$DISABLE} >"$OUT/skiff.log" 2>&1 & pids+=($!)
KC=$DATA/kubeconfig
for _ in $(seq 1 120); do
  [ -f "$KC" ] && kubectl --kubeconfig "$KC" get --raw /readyz >/dev/null 2>&1 && break
  sleep 0.5
done
if [ "${APISERVER:-skiff}" = upstream ]; then
  # The baseline: upstream's kube-apiserver (on etcd, built from the Go
  # module proxy) in skiff's place, with skiff's PKI and an admin
  # kubeconfig pointing at it; everything else is the same.
  kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true; pids=()
  [ -x "$UP/etcd" ] || (cd "$UP/.wrapper" && GOFLAGS=-mod=mod go build -o "$UP/etcd" go.etcd.io/etcd/server/v3)
  [ -x "$UP/kube-apiserver" ] || K8S_VERSION=$V bash ../shared/tools/build-upstream.sh "$UP" kube-apiserver
  EP=$(port); PP=$(port); AP=$(port)
  "$UP/etcd" --data-dir "$OUT/etcd" --listen-client-urls "http://127.0.0.1:$EP" --advertise-client-urls "http://127.0.0.1:$EP" \
    --listen-peer-urls "http://127.0.0.1:$PP" --initial-advertise-peer-urls "http://127.0.0.1:$PP" \
    --initial-cluster "default=http://127.0.0.1:$PP" >"$OUT/etcd.log" 2>&1 & pids+=($!)
  "$UP/kube-apiserver" --etcd-servers "http://127.0.0.1:$EP" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --secure-port "$AP" --tls-cert-file "$DATA/pki/apiserver.crt" --tls-private-key-file "$DATA/pki/apiserver.key" \
    --client-ca-file "$DATA/pki/ca.crt" --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$DATA/pki/sa.pub" --service-account-signing-key-file "$DATA/pki/sa.key" \
    --service-cluster-ip-range 10.96.0.0/12 --authorization-mode AlwaysAllow >"$OUT/kube-apiserver.log" 2>&1 & pids+=($!)
  sed -i "s#server: https://.*#server: https://127.0.0.1:$AP#" "$KC"
  for _ in $(seq 1 240); do
    kubectl --kubeconfig "$KC" get --raw /readyz >/dev/null 2>&1 && break
    sleep 0.5
  done
fi
kubectl --kubeconfig "$KC" get --raw /readyz >/dev/null || { echo "skiff did not become ready"; tail "$OUT/skiff.log"; exit 1; }

if [ "$SCHED" = upstream ]; then
"$UP/kube-scheduler" --kubeconfig "$KC" --authentication-kubeconfig "$KC" --authorization-kubeconfig "$KC" \
  --leader-elect=false --secure-port "$(port)" --bind-address=127.0.0.1 >"$OUT/kube-scheduler.log" 2>&1 & pids+=($!)
fi
if [ "$CM" = upstream ]; then
"$UP/kube-controller-manager" --kubeconfig "$KC" --authentication-kubeconfig "$KC" --authorization-kubeconfig "$KC" \
  --leader-elect=false --secure-port "$(port)" --bind-address=127.0.0.1 --controllers='*' \
  --root-ca-file "$DATA/pki/ca.crt" --service-account-private-key-file "$DATA/pki/sa.key" \
  --use-service-account-credentials=false \
  --cluster-signing-cert-file "$DATA/pki/ca.crt" --cluster-signing-key-file "$DATA/pki/ca.key" \
  >"$OUT/kube-controller-manager.log" 2>&1 & pids+=($!)
fi
STAGES=$(go env GOMODCACHE)/sigs.k8s.io/kwok@${KWOK_VERSION:-v0.8.0}/kustomize/stage
"$UP/kwok" --kubeconfig "$KC" --manage-all-nodes=false \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --server-address "127.0.0.1:$(port)" --node-lease-duration-seconds=40 --node-ip=10.0.0.10 \
  $(for f in "$STAGES"/node/fast/*.yaml "$STAGES"/node/heartbeat-with-lease/*.yaml "$STAGES"/pod/general/*.yaml; do echo --config "$f"; done) \
  >"$OUT/kwok.log" 2>&1 & pids+=($!)

for i in $(seq 0 $((NODES - 1))); do
  kubectl --kubeconfig "$KC" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux}
EOF
done
kubectl --kubeconfig "$KC" wait --for=condition=Ready node -l type=kwok --timeout=120s

echo "running: focus=$FOCUS skip=$SKIP (logs in $OUT)"
set +e
"$UP/ginkgo" --nodes="${GINKGO_NODES:-4}" --timeout=3h --no-color --focus="$FOCUS" --skip="$SKIP" \
  --junit-report="$OUT/junit.xml" "$UP/e2e.test" -- \
  --kubeconfig="$KC" --provider=skeleton --report-dir="$OUT" \
  --allowed-not-ready-nodes=0 --minStartupPods=0 >"$OUT/e2e.log" 2>&1
rc=$?
set -e
grep -E '^(Ran|FAIL|PASS|SUCCESS)|\[FAIL\]' "$OUT/e2e.log" | sort | uniq -c | sort -rn | head -80
exit $rc
