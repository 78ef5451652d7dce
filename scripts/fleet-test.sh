#!/usr/bin/env bash
# The fleet playbooks (scripts/fleet/ansible) end to end on this machine:
# six inventory hosts reached over ssh on distinct loopback addresses
# (127.0.0.2-127.0.0.7, an sshd this script starts on a private port with its
# own config and keys), each with its own scratch loop device over /dev/shm.
# Records three "production" hosts while fio runs on each, replays their
# traces on three "lab" hosts in step with --validate, makes the fleet report,
# and checks: every trace arrived, every replay validated 100 % complete, the
# start spread is reported, the fleet report exists, ansible-lint is clean.
# Never touches a real disk and never listens on anything but loopback.
# Cleans up sshd, loop devices, keys, processes and temporary files on exit,
# and what an earlier run killed with SIGKILL left. Run as root.
#   bash scripts/fleet-test.sh          (BLKRR=path/to/blkrr to use another binary;
#                                        BLKRR_FLEET_KEEP=DIR keeps the fleet directory
#                                        and the logs)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
t_begin=$(date +%s)
say() { echo "fleet-test: [$(($(date +%s) - t_begin)) s] $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || { say "SKIP: needs root (ssh as root, loop devices, BPF)"; exit 0; }

# --- tools (Debian packages), without starting any service while installing ---
# shellcheck source=scripts/apt-lock.sh
. scripts/apt-lock.sh
install_missing() {
  local missing=()
  command -v ansible-playbook >/dev/null || missing+=(ansible)
  command -v ansible-lint >/dev/null || missing+=(ansible-lint)
  [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
  command -v ssh >/dev/null || missing+=(openssh-client)
  command -v fio >/dev/null || missing+=(fio)
  command -v ss >/dev/null || missing+=(iproute2)
  command -v pgrep >/dev/null || missing+=(procps)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  local policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then  # no sshd on port 22 from the package
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
  fi
  local rc=0
  { apt_get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt_get install -y -qq "${missing[@]}" >/dev/null; } || rc=$?
  [ -n "$policy" ] && rm -f "$policy"
  return $rc
}
install_missing || fail "could not install the tools (apt-get as root, network)"
blkrr=${BLKRR:-$repo/build/userspace/cli/blkrr}
[ -x "$blkrr" ] || ninja -C "$repo/build" blkrr >/dev/null || bash scripts/build.sh
[ -x "$blkrr" ] || fail "no blkrr binary at $blkrr"

# --- what a run killed with SIGKILL left (its owner process is gone) ---
# The run's processes: an executable under its directory $1 (the hosts' blkrr
# copies), $1 in the command line (sshd, ansible-playbook, ssh, the job
# wrappers) or the environment (ansible-lint and ansible's workers), tag $2
# in the command line (fio). TERM, then KILL what is left.
run_processes() {
  local dir=$1 tag=$2
  {
    grep -alsF -e "$dir/" -e "blkrr-fleet-$tag-" /proc/[0-9]*/cmdline /proc/[0-9]*/environ
    for e in /proc/[0-9]*/exe; do
      case $(readlink "$e" 2> /dev/null) in "$dir"/*) echo "$e" ;; esac
    done
  } | sed -n 's|.*/proc/\([0-9][0-9]*\)/[a-z]*.*|\1|p' | sort -u | grep -vxF -e $$ -e "$BASHPID" |
    while read -r p; do [ -d "/proc/$p" ] && echo "$p"; done  # not the greps above
  return 0
}
kill_run_processes() {
  local p left
  for p in $(run_processes "$1" "$2"); do kill "$p" 2>/dev/null || true; done
  for _ in 1 2 3 4 5; do
    left=$(run_processes "$1" "$2")
    [ -z "$left" ] && return 0
    sleep 0.5
  done
  for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
}
detach_run_loops() {
  local tag=$1 l
  for l in $(losetup -n -O NAME,BACK-FILE -l | awk -v t="/dev/shm/blkrr-fleet-$tag-" 'index($2, t) == 1 {print $1}'); do
    losetup -d "$l" 2>/dev/null || true
  done
  rm -f /dev/shm/blkrr-fleet-"$tag"-*.img
}
reap_stale_runs() {
  local d owner tag
  for d in /tmp/blkrr-fleet-test.*; do
    [ -d "$d" ] || continue
    owner=$(cat "$d/owner.pid" 2>/dev/null || true)
    [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null && continue  # a run in progress
    [ -z "$owner" ] && [ -z "$(find "$d" -maxdepth 0 -mmin +60)" ] && continue  # just created
    tag=${d##*.}
    say "removing what an earlier, killed run left: $d"
    kill_run_processes "$d" "$tag"
    detach_run_loops "$tag"
    rm -rf "$d"
  done
}
reap_stale_runs

# --- scratch state, removed on exit ---
tmp=$(mktemp -d /tmp/blkrr-fleet-test.XXXXXX)
echo $$ >"$tmp/owner.pid"
tag=${tmp##*.}
chmod 700 "$tmp"
pids=() fio_pids=() sshd_pid="" made_run_sshd=""
cleanup() {
  set +e
  for p in "${pids[@]}" "${fio_pids[@]}"; do kill "$p" 2>/dev/null; done
  # ansible's persistent ssh connections, then sshd and its per-connection children
  for s in "$tmp"/ansible/cp/*; do [ -S "$s" ] && ssh -o ControlPath="$s" -O exit x 2>/dev/null; done
  if [ -n "$sshd_pid" ]; then
    for c in $(pgrep -P "$sshd_pid"); do kill "$c" 2>/dev/null; done
    kill "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null
  fi
  kill_run_processes "$tmp" "$tag"  # the hosts' detached blkrr jobs, fio
  for p in "${pids[@]}" "${fio_pids[@]}"; do wait "$p" 2>/dev/null; done
  detach_run_loops "$tag"
  [ -n "$made_run_sshd" ] && rmdir /run/sshd 2>/dev/null
  if [ -n "${BLKRR_FLEET_KEEP:-}" ] && [ -d "$tmp/fleet" ]; then
    mkdir -p "$BLKRR_FLEET_KEEP" && cp -r "$tmp/fleet/." "$tmp"/*.log "$BLKRR_FLEET_KEEP/"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'say "interrupted: cleaning up"; exit 130' INT TERM HUP

prod=(prod1 prod2 prod3)
lab=(lab1 lab2 lab3)
declare -A addr=([prod1]=127.0.0.2 [prod2]=127.0.0.3 [prod3]=127.0.0.4
                 [lab1]=127.0.0.5 [lab2]=127.0.0.6 [lab3]=127.0.0.7)
declare -A dev

# --- one scratch loop device over /dev/shm per host ---
for h in "${prod[@]}" "${lab[@]}"; do
  img=/dev/shm/blkrr-fleet-$tag-$h.img
  truncate -s 128M "$img"
  dev[$h]=$(losetup --find --show --direct-io=on "$img")
done
say "devices: $(for h in "${prod[@]}" "${lab[@]}"; do printf '%s=%s ' "$h" "${dev[$h]}"; done)"

# The capture must be able to start here, else this is a skip (not a pass).
# How long it takes to load is the least the hosts need before the start instant.
t0=$(date +%s%N)
if ! probe=$("$blkrr" record -d "${dev[prod1]}" -D 0.2 -q -o "$tmp/probe.blkrr" 2>&1); then
  say "SKIP: blkrr record cannot run on this machine: $probe"
  exit 0
fi
load_ms=$((($(date +%s%N) - t0) / 1000000))
start_delay=${BLKRR_FLEET_START_DELAY:-$((2 + 3 * load_ms / 1000))}
say "the capture loads in $load_ms ms: start instants at least $start_delay s ahead"

# The hosts get a copy without debug information (as the package installs
# it): the same program, a fraction of the bytes to push six times.
objcopy --strip-debug "$blkrr" "$tmp/blkrr" 2>/dev/null || cp "$blkrr" "$tmp/blkrr"

# --- sshd on loopback addresses only, private port, config and keys ---
mkdir -p "$tmp/ssh"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/ssh/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/ssh/client_key"
cp "$tmp/ssh/client_key.pub" "$tmp/ssh/authorized_keys"
port=""
for p in $(seq 22220 22299); do
  if [ -z "$(ss -Hltn "sport = :$p")" ]; then port=$p; break; fi
done
[ -n "$port" ] || fail "no free port in 22220-22299"
{
  echo "Port $port"
  for h in "${prod[@]}" "${lab[@]}"; do echo "ListenAddress ${addr[$h]}"; done
  echo "HostKey $tmp/ssh/host_key"
  echo "PidFile $tmp/ssh/sshd.pid"
  echo "AuthorizedKeysFile $tmp/ssh/authorized_keys"
  echo "PermitRootLogin prohibit-password"
  echo "AllowUsers root"
  echo "PasswordAuthentication no"
  echo "KbdInteractiveAuthentication no"
  echo "UsePAM no"
  echo "UseDNS no"
  echo "StrictModes no"
  echo "MaxStartups 50"
  echo "MaxSessions 50"
  echo "Subsystem sftp internal-sftp"
} >"$tmp/ssh/sshd_config"
if [ ! -d /run/sshd ]; then mkdir -p /run/sshd && made_run_sshd=1; fi
/usr/sbin/sshd -f "$tmp/ssh/sshd_config" -D -e 2>"$tmp/sshd.log" &
sshd_pid=$!
for _ in $(seq 50); do
  [ -n "$(ss -Hltn "sport = :$port")" ] && break
  sleep 0.2
done
[ -n "$(ss -Hltn "sport = :$port")" ] || fail "sshd did not start: $(cat "$tmp/sshd.log")"
say "sshd pid $sshd_pid on 127.0.0.2-7:$port"

# --- inventory: every host its own install and scratch directories ---
inv=$tmp/inventory.yml
{
  echo "all:"
  echo "  vars:"
  echo "    ansible_user: root"
  echo "    ansible_port: $port"
  echo "    ansible_ssh_private_key_file: $tmp/ssh/client_key"
  echo "    ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes"
  echo "    ansible_python_interpreter: /usr/bin/python3"
  echo "    blkrr_binary: $tmp/blkrr"
  echo "    blkrr_controller_cmd: $blkrr"
  echo "    blkrr_fleet_dir: $tmp/fleet"
  echo "    blkrr_start_delay: $start_delay"
  echo "    blkrr_record_duration: 5"
  echo "    blkrr_replay_max_seconds: 120"
  echo "  children:"
  echo "    production:"
  echo "      hosts:"
  for h in "${prod[@]}"; do
    echo "        $h:"
    echo "          ansible_host: ${addr[$h]}"
    echo "          blkrr_install_dir: $tmp/hosts/$h/bin"
    echo "          blkrr_work_dir: $tmp/hosts/$h/work"
    echo "          blkrr_record_devices: [${dev[$h]}]"
  done
  echo "    lab:"
  echo "      hosts:"
  for i in 0 1 2; do
    h=${lab[$i]}
    echo "        $h:"
    echo "          ansible_host: ${addr[$h]}"
    echo "          blkrr_install_dir: $tmp/hosts/$h/bin"
    echo "          blkrr_work_dir: $tmp/hosts/$h/work"
    echo "          blkrr_replays: [{source: ${prod[$i]}, device: ${dev[$h]}}]"
  done
} >"$inv"

mkdir -p "$tmp/ansible"/{local,remote,cp,async,home,cache}
export ANSIBLE_LOCAL_TEMP=$tmp/ansible/local ANSIBLE_REMOTE_TMP=$tmp/ansible/remote
export ANSIBLE_SSH_CONTROL_PATH_DIR=$tmp/ansible/cp ANSIBLE_ASYNC_DIR=$tmp/ansible/async
export ANSIBLE_HOME=$tmp/ansible/home XDG_CACHE_HOME=$tmp/ansible/cache ANSIBLE_HOST_KEY_CHECKING=False
export ANSIBLE_RETRY_FILES_ENABLED=False ANSIBLE_FORKS=10 ANSIBLE_NOCOLOR=1 ANSIBLE_PIPELINING=True
# Loopback needs no compression (-C would zlib every pushed byte); keep the
# connections open across the playbooks. A loaded machine can take longer
# than ssh's 10 s to answer.
export ANSIBLE_SSH_ARGS="-o ControlMaster=auto -o ControlPersist=120s"
export ANSIBLE_TIMEOUT=60 ANSIBLE_SSH_RETRIES=3
# Per-task times in the logs (where the time goes, on a loaded machine too).
export ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks
playbooks=$repo/scripts/fleet/ansible
# Playbooks and lint run in the background so that INT/TERM clean up at once.
play() {
  local t0=$SECONDS rc=0
  ansible-playbook -i "$inv" "$playbooks/$1" >"$tmp/$1.log" 2>&1 &
  pids+=($!)
  wait $! || rc=$?
  [ $rc -eq 0 ] || { tail -n 60 "$tmp/$1.log" >&2; fail "ansible-playbook $1 failed (log above)"; }
  local rt
  rt=$(grep -o 'round trip to all hosts [0-9.]* s' "$tmp/$1.log" | head -1 || true)
  say "$1 ran in $((SECONDS - t0)) s${rt:+ ($rt)}"
}

# --- the playbooks stay lint-clean (meanwhile: its CPU time overlaps the waits) ---
(cd "$playbooks" && exec ansible-lint -q --offline record.yml replay.yml report.yml roles/blkrr) \
  >"$tmp/lint.log" 2>&1 &
lint_pid=$!
pids+=("$lint_pid")

# --- record the production hosts while fio runs on each ---
for h in "${prod[@]}"; do
  fio --name="blkrr-fleet-$tag-$h" --filename="${dev[$h]}" --direct=1 --ioengine=psync \
      --rw=randrw --bs=4k --size=96M --rate_iops=100 --time_based --runtime=300 >/dev/null 2>&1 &
  fio_pids+=($!)
done
play record.yml
for p in "${fio_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
fio_pids=()
for h in "${prod[@]}"; do
  t=$tmp/fleet/traces/$h.blkrr
  [ -s "$t" ] || fail "the trace of $h did not arrive ($t)"
  n=$("$blkrr" dump -H "$t" | grep -c '^ *[0-9]' || true)
  [ "$n" -gt 0 ] || fail "the trace of $h holds no request"
  say "trace of $h arrived: $n requests"
done

# --- replay on the lab hosts in step, validated ---
play replay.yml
for i in 0 1 2; do
  j=$tmp/fleet/results/${lab[$i]}-${prod[$i]}.json
  { [ -s "$j" ] && [ -s "${j%.json}.replay.gz" ]; } || fail "the result of ${lab[$i]} did not arrive"
  python3 - "$j" <<'EOF' || fail "the replay of ${lab[$i]} is not validated complete"
import json, sys
j = json.load(open(sys.argv[1]))
v = j.get("validation") or {}
cmd = j.get("settings", {}).get("command_line", "")
ok = v.get("verdict") == "complete" and v.get("completeness_pct") == 100
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: verdict {v.get('verdict')} {v.get('completeness_pct')} %, "
      f"{j['requests']['done']} requests, start_unix {j.get('start_unix')}", file=sys.stderr)
if "--start-at" not in cmd.split() or "--validate" not in cmd.split():
    print(f"not run in step and validated: {cmd}", file=sys.stderr)
    ok = False
if "--force" in cmd.split():
    print("--force was passed without the inventory asking for it", file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
EOF
done

# --- the fleet report ---
play report.yml
rep=$tmp/fleet/report
for f in fleet.txt fleet.json fleet.html index.html; do
  [ -s "$rep/$f" ] || fail "the fleet report has no $f"
done
python3 - "$rep/fleet.json" <<'EOF' || fail "the fleet summary lacks hosts, verdicts or the start spread"
import json, sys
j = json.load(open(sys.argv[1]))
g = {x["kind"]: x for x in j["groups"]}
assert len(g["trace"]["hosts"]) == 3 and len(g["replay"]["hosts"]) == 3, "3 traces, 3 results"
assert g["replay"]["verdicts"] == {"complete": 3}, g["replay"]["verdicts"]
for kind in ("trace", "replay"):
    s = g[kind]["start"]
    assert s and s["hosts"] == 3 and s["requested_unix"] is not None, (kind, s)
    assert isinstance(s["spread_ns"], int), s
    print(f"{kind}: start spread {s['spread_ns'] / 1e6:.3f} ms, worst offset "
          f"{s['worst_offset_ns'] / 1e6:.3f} ms from {s['requested_unix']}", file=sys.stderr)
EOF
cat "$rep/fleet.txt"

rc=0
wait "$lint_pid" || rc=$?
[ $rc -eq 0 ] || { cat "$tmp/lint.log" >&2; fail "ansible-lint found problems"; }
say "ansible-lint clean"
say "PASS in $(($(date +%s) - t_begin)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
