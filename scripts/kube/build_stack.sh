#!/usr/bin/env bash
# Builds the real cluster of `make e2e-real` from Go modules, at the versions of scripts/kube/stack/versions.env:
# kube-apiserver, kube-controller-manager and kube-scheduler (k8s.io/kubernetes), etcd, KWOK, KAI Scheduler's
# scheduler, binder, pod grouper, pod-group controller, queue controller and admission webhook, and the Kubeflow
# training operator; and copies out of those modules the manifests scripts/kube_stack.py installs: KAI's CRDs,
# ClusterRoles and priority classes, the training operator's CRDs and ClusterRole, KWOK's Stages.
#
# Each component is a Go module of its own under scripts/kube/stack/<component>/ (go.mod + go.sum: every module
# the build downloads from the Go module proxy is checked against go.sum; `tool` lines name what is built).
# The result goes to a cache outside the tree, one folder per set of inputs:
#   ${PAAS_STACK_CACHE:-${XDG_CACHE_HOME:-~/.cache}/paas-studio/stack}/<hash of versions.env, the go.mod/go.sum
#   files, this script's commands (not its comments) and the Go version>/{bin,manifests,versions.json}
# and is built only when that folder is missing. Prints the folder (last line of stdout), the versions and the time.
#
#   scripts/kube/build_stack.sh          # build, or find built
#   scripts/kube/build_stack.sh --pin    # after editing versions.env: rewrite the go.mod/go.sum files from it
#
# Go builds run under `nice -n 15`, static (CGO_ENABLED=0), -trimpath. Go's own caches stay where Go keeps them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stack=$here/stack
# shellcheck source=stack/versions.env
. "$stack/versions.env"
components=(kubernetes etcd kwok kai training-operator)
declare -A module=([kubernetes]=k8s.io/kubernetes [etcd]=go.etcd.io/etcd/server/v3 [kwok]=sigs.k8s.io/kwok
                   [kai]=github.com/NVIDIA/KAI-scheduler [training-operator]=github.com/kubeflow/training-operator)
declare -A version=([kubernetes]=$KUBERNETES [etcd]=$ETCD [kwok]=$KWOK [kai]=$KAI_SCHEDULER
                    [training-operator]=$TRAINING_OPERATOR)
staging_version=v0.${KUBERNETES#v1.}  # k8s.io/kubernetes v1.X.Y <-> its staging modules k8s.io/* v0.X.Y

gomod() {  # gomod COMPONENT ARGS...: the go command inside a component's module, quietly niced
  (cd "$stack/$1" && shift && nice -n 15 go "$@")
}

if [ "${1:-}" = --pin ]; then
  for c in "${components[@]}"; do
    gomod "$c" mod edit -require="${module[$c]}@${version[$c]}"
    if [ "$c" = kubernetes ]; then  # every staging module the release replaces, at the matching v0.X.Y
      for m in $(gomod "$c" mod edit -json | python3 -c 'import json,sys
print(" ".join(r["Old"]["Path"] for r in json.load(sys.stdin).get("Replace") or []))'); do
        gomod "$c" mod edit -replace="$m=$m@$staging_version"
      done
    fi
    gomod "$c" mod tidy
    echo "pinned $c: ${module[$c]} ${version[$c]}"
  done
  exit 0
fi

start=$EPOCHREALTIME
# Refuse a go.mod that does not require what versions.env says (an edit of one without the other).
for c in "${components[@]}"; do
  have=$(gomod "$c" mod edit -json | python3 -c 'import json,sys
m=sys.argv[1]; print(next((r["Version"] for r in json.load(sys.stdin).get("Require") or [] if r["Path"]==m), ""))' \
    "${module[$c]}")
  if [ "$have" != "${version[$c]}" ]; then
    echo "build_stack: scripts/kube/stack/$c/go.mod requires ${module[$c]} ${have:-nothing}, versions.env says" \
         "${version[$c]}; run: scripts/kube/build_stack.sh --pin" >&2
    exit 1
  fi
done

go_version=$(go env GOVERSION)
key=$( { grep -v '^ *#' "$stack/versions.env" "${BASH_SOURCE[0]}"; for c in "${components[@]}"; do
           cat "$stack/$c/go.mod" "$stack/$c/go.sum"; done; echo "$go_version"; } | sha256sum | cut -c1-16)
cache=${PAAS_STACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/paas-studio/stack}
out=$cache/$key
mkdir -p "$cache"
exec 9>"$cache/$key.lock"
flock 9  # a second build of the same inputs waits for the first, then finds it done

report() {
  cat "$out/versions.json" >&2
  awk -v what="$1" -v t0="$start" -v t1="$EPOCHREALTIME" 'BEGIN { printf "build_stack: %s in %.1fs\n", what, t1 - t0 }' >&2
  echo "$out"
}
if [ -f "$out/versions.json" ]; then
  report "cached (nothing to build)"
  exit 0
fi

rm -rf "$out.partial" && mkdir -p "$out.partial/bin"
export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
build() {  # build COMPONENT LDFLAGS PACKAGE=NAME...
  local c=$1 ld=$2 t0 spec; shift 2
  t0=$(date +%s)
  for spec in "$@"; do
    echo "build_stack: go build ${spec%%=*} (${module[$c]} ${version[$c]})" >&2
    gomod "$c" build -trimpath -ldflags "-s -w $ld" -o "$out.partial/bin/${spec#*=}" "${spec%%=*}"
  done
  echo "build_stack: $c built in $(( $(date +%s) - t0 ))s" >&2
}
k8s_minor=${KUBERNETES#v1.}; k8s_minor=${k8s_minor%%.*}
# What /version says (a module's files carry no commit: gitCommit stays empty rather than the tree's placeholder).
kv="-X k8s.io/component-base/version.gitVersion=$KUBERNETES -X k8s.io/component-base/version.gitMajor=1
    -X k8s.io/component-base/version.gitCommit= -X k8s.io/client-go/pkg/version.gitCommit=
    -X k8s.io/component-base/version.gitMinor=$k8s_minor -X k8s.io/component-base/version.gitTreeState=clean
    -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES -X k8s.io/client-go/pkg/version.gitMajor=1
    -X k8s.io/client-go/pkg/version.gitMinor=$k8s_minor"
build kubernetes "$kv" k8s.io/kubernetes/cmd/kube-apiserver=kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager=kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler=kube-scheduler
build etcd "" go.etcd.io/etcd/server/v3=etcd
build kwok "" sigs.k8s.io/kwok/cmd/kwok=kwok
kai=github.com/NVIDIA/KAI-scheduler
build kai "-X $kai/pkg/scheduler/version.gitVersion=$KAI_SCHEDULER -X $kai/pkg/scheduler/version.gitTreeState=clean" \
  $kai/cmd/scheduler=kai-scheduler $kai/cmd/binder=kai-binder $kai/cmd/podgrouper=kai-podgrouper \
  $kai/cmd/podgroupcontroller=kai-podgroupcontroller $kai/cmd/queuecontroller=kai-queuecontroller \
  $kai/cmd/admission=kai-admission
build training-operator "" github.com/kubeflow/training-operator/cmd/training-operator.v1=training-operator

# The CRDs, from the same module versions (the module cache holds them once downloaded; go.sum checks them).
module_dir() { gomod "$1" mod download -json "${module[$1]}@${version[$1]}" | python3 -c 'import json,sys
print(json.load(sys.stdin)["Dir"])'; }
m=$out.partial/manifests
mkdir -p "$m/kai/crds" "$m/kai/rbac" "$m/training-operator/crds" "$m/training-operator/rbac"
kai_dir=$(module_dir kai)/deployments/kai-scheduler
cp "$kai_dir"/crds/*.yaml "$m/kai/crds/"
for role in scheduler binder podgrouper podgroupcontroller queuecontroller admission resourcereservation; do
  cp "$kai_dir/templates/rbac/$role.yaml" "$m/kai/rbac/"  # ClusterRoles (controller-gen's, no templating)
done
mkdir -p "$m/kai/priorityclasses" "$m/kwok/stages"
cp "$kai_dir"/templates/priorityclasses/*.yaml "$m/kai/priorityclasses/"  # train 50, build 100, inference 125...
kwok_dir=$(module_dir kwok)/kustomize/stage  # KWOK's own Stages: nodes Ready + lease heartbeats; pods' lifecycle
for stage in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease pod/general/pod-create \
             pod/general/pod-init-container-running pod/general/pod-init-container-completed pod/general/pod-ready \
             pod/general/pod-complete pod/general/pod-delete; do
  cp "$kwok_dir/$stage.yaml" "$m/kwok/stages/"
done
to_dir=$(module_dir training-operator)/manifests/base
cp "$to_dir"/crds/kubeflow.org_*.yaml "$m/training-operator/crds/"
cp "$to_dir"/rbac/role.yaml "$m/training-operator/rbac/"
chmod -R u+w "$m"

elapsed=$(awk -v t0="$start" -v t1="$EPOCHREALTIME" 'BEGIN { print t1 - t0 }')
python3 - "$out.partial/versions.json" "$go_version" "$key" "$elapsed" <<PY
import json, sys
path, go, key, seconds = sys.argv[1:]
json.dump({"kubernetes": "$KUBERNETES", "etcd": "$ETCD", "kwok": "$KWOK", "kai-scheduler": "$KAI_SCHEDULER",
           "training-operator": "$TRAINING_OPERATOR", "go": go, "key": key,
           "build_seconds": round(float(seconds))}, open(path, "w"), indent=1)
open(path, "a").write("\n")
PY
mv "$out.partial" "$out"
report "built"
