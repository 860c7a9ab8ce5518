#!/usr/bin/env bash
# GPU server probe of the LLM deployment sizing service: run it on each GPU server of a deployment and upload the
# JSON file it writes. It needs bash and coreutils only, reaches no network, and writes nothing but its output file.
# It records the raw outputs of the commands below (nvidia-smi, topo, driver and CUDA versions, CPU/RAM, container
# markers and memory limits, engine versions; rocm-smi on AMD), each with its exit status, so nothing is lost.
#
#   bash gpu_probe.sh [-o OUTPUT.json]
set -u
export LC_ALL=C

output=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o|--output) output="${2:-}"; shift 2 ;;
        -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
        *) echo "gpu_probe: unknown argument $1 (use -o OUTPUT.json)" >&2; exit 2 ;;
    esac
done
host=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname 2>/dev/null || echo unknown)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
[ -n "$output" ] || output="gpu-fingerprint-${host}-${stamp}.json"
limit=4000000  # bytes kept of one output (the service refuses pieces over 4 MiB)

# JSON string of stdin: backslashes, quotes and control characters escaped, newlines as \n.
utf8() { if command -v iconv >/dev/null 2>&1; then iconv -c -f UTF-8 -t UTF-8; else cat; fi; }
json_string() {
    head -c "$limit" | utf8 | tr -d '\000-\010\013\014\016-\037' \
        | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' -e 's/\r/\\r/g' \
        | awk 'BEGIN { ORS = "" } { if (NR > 1) print "\\n"; print } END { }'
}

first=1
tmp_out=$(mktemp 2>/dev/null || echo "/tmp/gpu_probe.$$")
trap 'rm -f "$tmp_out"' EXIT

# record NAME COMMAND...: run the command (when it exists) and add {"name", "command", "exit_code", "output"}
record() {
    local name="$1"; shift
    if ! command -v "$1" >/dev/null 2>&1; then
        return 0
    fi
    "$@" >"$tmp_out" 2>&1
    local code=$?
    [ $first -eq 1 ] || printf ',\n' >>"$output"
    first=0
    {
        printf '    {"name": "%s", "command": "' "$name"
        printf '%s' "$*" | json_string
        printf '", "exit_code": %d, "output": "' "$code"
        json_string <"$tmp_out"
        printf '"}'
    } >>"$output"
}

# GPU_PROBE_ROOT (a testing aid, unset in normal use): read the files below under this directory instead of /, so
# that the tests can replay a recorded machine's /proc and /sys. Commands are faked through PATH instead.
root="${GPU_PROBE_ROOT:-}"
root="${root%/}"

# record_file NAME PATH: the file's content when it exists and can be read (PATH under $root)
record_file() {
    [ -r "$root$2" ] || return 0
    record "$1" cat "$root$2"
}

# container_markers: which container markers this process sees, one "NAME present|absent" or "NAME set|unset" line
# each (Docker's /.dockerenv, Podman's /run/.containerenv, Kubernetes' service variable, whose value is not printed,
# and the "container" variable systemd-nspawn, LXC and Podman set, printed only when it is a short plain word)
container_markers() {
    local marker
    for marker in /.dockerenv /run/.containerenv; do
        if [ -e "$root$marker" ]; then echo "$marker present"; else echo "$marker absent"; fi
    done
    if [ -n "${KUBERNETES_SERVICE_HOST:-}" ]; then
        echo "KUBERNETES_SERVICE_HOST set"
    else
        echo "KUBERNETES_SERVICE_HOST unset"
    fi
    case "${container:-}" in
        "") echo "container unset" ;;
        *[!A-Za-z0-9_.-]*) echo "container set" ;;
        *) echo "container ${container:0:32}" ;;
    esac
}

: >"$output" || { echo "gpu_probe: cannot write $output" >&2; exit 1; }
{
    printf '{\n  "probe": "llm-sizing gpu_probe 1",\n'
    printf '  "host": "'; printf '%s' "$host" | json_string; printf '",\n'
    printf '  "captured_at": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '  "pieces": [\n'
} >>"$output"

record nvidia_smi_xml nvidia-smi -q -x
if ! grep -q "<nvidia_smi_log" "$output" 2>/dev/null; then
    record nvidia_smi_csv nvidia-smi --query-gpu=index,name,memory.total,memory.used,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,mig.mode.current,ecc.mode.current,persistence_mode,driver_version --format=csv
fi
record nvidia_smi_table nvidia-smi
record nvidia_smi_topo nvidia-smi topo -m
record nvidia_smi_compute_apps nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv
record_file driver_version /proc/driver/nvidia/version
record_file cuda_version_json /usr/local/cuda/version.json
record_file cuda_version_txt /usr/local/cuda/version.txt
record nvcc_version nvcc --version
record rocm_smi rocm-smi --showproductname --showmeminfo vram --showdriverversion --json
record amd_smi_xgmi amd-smi xgmi --json
record cpu_count nproc
record lscpu lscpu
record numa numactl --hardware
record_file meminfo /proc/meminfo
record_file cgroup_v2_memory_max /sys/fs/cgroup/memory.max
record_file cgroup_v1_memory_limit /sys/fs/cgroup/memory/memory.limit_in_bytes
record_file cgroup_membership /proc/1/cgroup
record container_markers container_markers
for python in python3 python; do
    if command -v "$python" >/dev/null 2>&1; then
        record python_packages "$python" -c 'import importlib.metadata as m, platform
print("python", platform.python_version())
for name in ("torch", "vllm", "sglang", "tensorrt_llm", "transformers"):
    try: print(name, m.version(name))
    except Exception: print(name, "not installed")'
        break
    fi
done

printf '\n  ]\n}\n' >>"$output"
echo "gpu_probe: wrote $output ($(wc -c <"$output") bytes); send it to the sizing team (they read it with POST /api/v1/fingerprints/parse or manage.py fingerprint parse)"
