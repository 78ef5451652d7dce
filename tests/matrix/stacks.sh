#!/bin/sh
# The device stacks of the kernel matrix (scripts/kernel-matrix.sh), in the
# guest after checks.sh: an NVMe disk, a virtio-scsi disk under mq-deadline
# and bfq, a GPT partition, a dm-linear volume of two segments, a dm-crypt
# volume on a second linear volume (three levels to the disk), an md RAID1
# of two partitions and an LVM logical volume over two physical volumes
# (the second a dm-crypt volume), a dm striped volume over two partitions
# and an md RAID0 of two partitions,
# each recorded around the same matrix_io load and replayed onto with
# --validate (through the stack for dm, md and LVM); a dm snapshot of one
# partition with its exceptions on another, recorded and validated at the
# bio level; then top and snoop on
# every stack at once, queue time behind the SCSI schedulers, two writers
# in a ratio of 3:1 through dm-crypt, md RAID1 and LVM, and writeback through
# dm-crypt (attribution through the stack).
#   stacks.sh KERNEL BLKRR MATRIX_IO WORKDIR
# Prints lines MATRIX KERNEL STACK-CHECK PASS|FAIL|SKIP DETAILS.
# The guest's disks (kernel-matrix-lib.sh): nvme0n1, a virtio-scsi disk and
# vdb, GPT-partitioned on the host: vdb1 (partition), vdb2 (dm-linear),
# vdb3 (dm-crypt), vdb4 and vdb5 (md RAID1), vdb6 and vdb7 (LVM), vdb8 and
# vdb9 (dm striped), vdb10 and vdb11 (md RAID0), vdb12 and vdb13 (dm
# snapshot). Modules in /modules/stacks.
K=$1 BLKRR=$2 IO=$3 W=$4
set -- "$K" /dev/null "$BLKRR" "$IO" "$W"
export MATRIX_LIB_ONLY=1
# shellcheck source=tests/matrix/checks.sh
. "${MATRIX_CHECKS:-/checks.sh}"

# A fixed test key (64 hex digits: AES-128 in XTS mode); never a secret.
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f

load_stack_modules() {
  [ -s /modules/stacks/order ] || return 0
  while read -r m; do # those already in (virtio, scsi_mod) fail with EEXIST
    insmod "/modules/stacks/$m" 2>>"$W/stacks.insmod" || echo "insmod $m failed" >>"$W/stacks.insmod"
  done </modules/stacks/order
}

# wait_dev DEV: up to 10 s for the node.
wait_dev() {
  i=0
  while [ ! -b "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  [ -b "$1" ]
}

majmin() { cat "/sys/class/block/${1#/dev/}/dev"; }
dm_majmin() { dmsetup info -c --noheadings -o major,minor "$1" | tr -d ' '; }
sectors() { cat "/sys/class/block/${1#/dev/}/size"; }

# record_stack STACK DEV SHIFT [CHUNK]: records DEV around matrix_io and
# compares every record of the trace (op, sector, bytes), exactly, with the
# load at SHIFT + its sectors, each request split at multiples of CHUNK
# sectors (a striped volume's chunks: one record per chunk); says how many
# records carry the load's pid and comm.
record_stack() {
  s=$1 dev=$2 shift=$3 chunk=${4:-0}
  # A first open may rescan the partitions (md on 5.10 reads sector 0 then):
  # done before the recording, so that it holds only the load.
  dd if="$dev" of=/dev/null bs=4096 count=1 2>/dev/null
  "$BLKRR" record -d "$dev" -o "$W/$s.blkrr" >"$W/$s.out" 2>"$W/$s.err" &
  pid=$!
  if ! wait_for "$W/$s.err" "Ctrl-C stops" $pid 120; then
    stop $pid
    result "$s-record" FAIL "record -d $dev did not start (exit $rc): $(tail_of "$W/$s.err")"
    return
  fi
  "$IO" "$dev" mtx-rec "$N" 2048 >"$W/$s.io" 2>"$W/$s.ioerr" ||
    { stop $pid; result "$s-record" FAIL "matrix_io: $(tail_of "$W/$s.ioerr")"; return; }
  sleep 0.5
  stop $pid
  [ "$rc" -eq 0 ] || { result "$s-record" FAIL "record exit $rc: $(tail_of "$W/$s.err")"; return; }
  "$BLKRR" dump --json "$W/$s.blkrr" >"$W/$s.json" 2>"$W/$s.dumperr" ||
    { result "$s-record" FAIL "dump --json: $(tail_of "$W/$s.dumperr")"; return; }
  awk -v d="$shift" -v c="$chunk" '$1 != "pid" { s = $2 + d; n = $3 / 512
      while (n > 0) { k = c > 0 ? c - s % c : n; if (k > n) k = n; print $1, s, k * 512; s += k; n -= k } }' \
    "$W/$s.io" >"$W/$s.want"
  awk "$JF"' index($0, "\"sector\":") { print opl(jf($0, "op")), jf($0, "sector"), jf($0, "bytes") }' \
    "$W/$s.json" >"$W/$s.got"
  iopid=$(awk '$1 == "pid" { print $2 }' "$W/$s.io")
  own=$(awk "$JF"' index($0, "\"sector\":") && jf($0, "pid") == p && jf($0, "comm") == "mtx-rec" { n++ }
      END { print n + 0 }' p="$iopid" "$W/$s.json")
  dev_seen=$(awk "$JF"' index($0, "\"sector\":") { print jf($0, "device") }' "$W/$s.json" | sort -u | tr '\n' ' ')
  if sum=$(compare "$W/$s.want" "$W/$s.got"); then
    result "$s-record" PASS "-d $dev: $sum (op, sector, bytes); devices in records: $dev_seen; pid and comm of the load on $own"
  else
    who=$(awk "$JF"' index($0, "\"sector\":") { n[jf($0, "comm")]++ }
        END { for (c in n) printf "%s %d ", c, n[c] }' "$W/$s.json")
    result "$s-record" FAIL "-d $dev: $sum; devices: $dev_seen; records by comm: $who"
  fi
}

# stack_counts JSON: the `stack` object of a replay --validate summary in
# words: requests per disk, volume records, and the first mirror member's writes.
stack_counts() {
  flat "$1" 2>/dev/null | awk "$JF"' { i = index($0, "\"stack\":"); if (!i) exit; s = substr($0, i)
      if (match(s, /"disks":\[[^]]*\]/)) { a = substr(s, RSTART, RLENGTH)
        while ((j = index(a, "\"name\":")) > 0) {
          a = substr(a, j); out = out jf(a, "requests") " requests on " jf(a, "name") ", "; a = substr(a, 8) } }
      out = out jf(s, "volume_records") " volume records, " jf(s, "outside") " outside the volume"
      if (jf(s, "replayed_split") + 0 > 0) out = out ", " jf(s, "replayed_split") " replayed requests split into " jf(s, "replayed_pieces") " pieces"
      m = index(s, "\"mirrors\":[{")
      if (m) { t = substr(s, m)
        out = out "; mirror copy " jf(t, "copy") ": " jf(t, "covered") " of " jf(t, "writes") " writes seen, " jf(t, "missing") " missing" }
      print "; through the stack: " out }'
}

# replay_stack STACK DEV: replay --validate of the small load (checks.sh); on a
# volume with what the validator saw on the disks below it.
replay_stack() {
  DEV=$2 # check_replay's device
  check_replay >"$W/$1.rv"
  awk -v s="$1" -v e="$(stack_counts "$W/replay.json")" '{ sub(/ replay-validate /, " " s "-replay-validate "); print $0 e }' "$W/$1.rv"
}

# offline_stack STACK DEV: record -d DEV during a replay of the small load
# onto it (no --validate), then blkrr validate of the replay's result with
# that trace: both in the volume's sectors, complete.
offline_stack() {
  s=$1 dev=$2
  "$BLKRR" record -d "$dev" -o "$W/$s.off.blkrr" >/dev/null 2>"$W/$s.off.err" &
  pid=$!
  if ! wait_for "$W/$s.off.err" "Ctrl-C stops" $pid 120; then
    stop $pid
    result "$s-validate" FAIL "record -d $dev did not start (exit $rc): $(tail_of "$W/$s.off.err")"
    return
  fi
  "$BLKRR" replay "$W/small.load.gz" "$dev" --force --quiet -o "$W/$s.off.replay.gz" \
    >/dev/null 2>"$W/$s.off.rerr"
  r1=$?
  sleep 0.5
  stop $pid
  "$BLKRR" validate "$W/$s.off.replay.gz" "$W/$s.off.blkrr" --quiet --json-file "$W/$s.off.json" \
    >/dev/null 2>"$W/$s.off.verr"
  r2=$?
  pct=$(awk "$JF"' { v = jf($0, "completeness_pct"); if (v != "") { print v; exit } }' "$W/$s.off.json" 2>/dev/null)
  verdict=$(awk "$JF"' { v = jf($0, "verdict"); if (v != "") { print v; exit } }' "$W/$s.off.json" 2>/dev/null)
  detail="blkrr validate of a replay onto $dev with record -d $dev: verdict ${verdict:-none}, completeness ${pct:-none} %, replay exit $r1, record exit $rc, validate exit $r2"
  case "$r1:$rc:$r2:$verdict:$pct" in
  0:0:0:complete:100 | 0:0:0:complete:100.0) result "$s-validate" PASS "$detail" ;;
  *) result "$s-validate" FAIL "$detail: $(tail_of "$W/$s.off.rerr") $(tail_of "$W/$s.off.verr")" ;;
  esac
}

stack_nvme() {
  wait_dev /dev/nvme0n1 || { result nvme-record FAIL "no /dev/nvme0n1"; return; }
  fact "stack:nvme" "nvme0n1: $(cat /sys/block/nvme0n1/mq/*/nr_tags 2>/dev/null | wc -l) hardware queues, scheduler $(cat /sys/block/nvme0n1/queue/scheduler)"
  record_stack nvme /dev/nvme0n1 0
  replay_stack nvme /dev/nvme0n1
}

# The virtio-scsi disk (qemu's scsi-hd, model "QEMU HARDDISK"; scsi_debug of
# the fault check may have taken sda before it): its name, or "".
scsi_disk() {
  for b in /sys/block/sd*; do
    grep -q "QEMU HARDDISK" "$b/device/model" 2>/dev/null && { echo "${b##*/}"; return; }
  done
}

stack_scsi() {
  i=0
  while [ -z "$(scsi_disk)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  sd=$(scsi_disk)
  [ -n "$sd" ] || { result scsi-mq-deadline-record FAIL "no virtio-scsi disk"; return; }
  for sched in mq-deadline bfq; do
    if ! echo "$sched" >"/sys/block/$sd/queue/scheduler" 2>/dev/null; then
      result "scsi-$sched-record" FAIL "cannot select $sched: $(cat "/sys/block/$sd/queue/scheduler")"
      continue
    fi
    fact "stack:scsi-$sched" "$sd scheduler: $(cat "/sys/block/$sd/queue/scheduler")"
    record_stack "scsi-$sched" "/dev/$sd" 0
    replay_stack "scsi-$sched" "/dev/$sd"
  done
}

stack_partition() {
  wait_dev /dev/vdb1 || { result partition-record FAIL "no /dev/vdb1 (GPT)"; return; }
  start=$(cat /sys/class/block/vdb1/start)
  # A partition's records keep the disk's sectors and name the partition.
  record_stack partition /dev/vdb1 "$start"
  replay_stack partition /dev/vdb1
}

# dm-linear: two segments of vdb2 in reverse order (volume 0..6144 at 32768
# of vdb2, the rest at 0): the load's requests lie in both.
stack_dm_linear() {
  p=$(majmin /dev/vdb2)
  n=$(sectors /dev/vdb2)
  printf '0 6144 linear %s 32768\n6144 %s linear %s 0\n' "$p" $((32768 - 6144)) "$p" |
    dmsetup create --noudevsync mtx-linear 2>"$W/dmlin.err" ||
    { result dm-linear-record FAIL "dmsetup create: $(tail_of "$W/dmlin.err")"; return; }
  dmsetup mknodes 2>/dev/null
  fact "stack:dm-linear" "$(dmsetup table mtx-linear | tr '\n' ';') on vdb2 of $n sectors"
  "$BLKRR" devices /dev/mapper/mtx-linear >"$W/dmlin.dev" 2>&1
  fact "stack:dm-linear-devices" "$(grep stack: "$W/dmlin.dev")"
  record_stack dm-linear /dev/mapper/mtx-linear 0
  replay_stack dm-linear /dev/mapper/mtx-linear
}

# dm-crypt on a linear volume over vdb3 (16 sectors in): crypt > linear >
# partition > disk. The crypt table's key is the test key above.
stack_dm_crypt() {
  p=$(majmin /dev/vdb3)
  n=$(sectors /dev/vdb3)
  echo "0 $((n - 16)) linear $p 16" | dmsetup create --noudevsync mtx-base 2>"$W/dmc.err" ||
    { result dm-crypt-record FAIL "dmsetup create mtx-base: $(tail_of "$W/dmc.err")"; return; }
  dmsetup mknodes 2>/dev/null
  b=$(dm_majmin mtx-base)
  echo "0 $((n - 16)) crypt aes-xts-plain64 $KEY 0 $b 0" |
    dmsetup create --noudevsync mtx-crypt 2>"$W/dmc.err" ||
    { result dm-crypt-record FAIL "dmsetup create mtx-crypt: $(tail_of "$W/dmc.err")"; return; }
  dmsetup mknodes 2>/dev/null
  "$BLKRR" devices mtx-crypt >"$W/dmc.dev" 2>&1
  fact "stack:dm-crypt-devices" "$(grep stack: "$W/dmc.dev")"
  record_stack dm-crypt /dev/mapper/mtx-crypt 0
  if grep -q "$KEY" "$W/dm-crypt.blkrr" "$W/dm-crypt.json" "$W/dm-crypt.err" "$W/dmc.dev" 2>/dev/null; then
    result dm-crypt-key FAIL "the crypt key is in the recording or blkrr's output"
  else
    result dm-crypt-key PASS "the key is in neither the trace, its dump nor blkrr's output"
  fi
  replay_stack dm-crypt /dev/mapper/mtx-crypt
}

stack_md_raid1() {
  mkdir -p /run/mdadm /etc/mdadm
  mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --metadata=1.2 --assume-clean \
    --bitmap=none /dev/vdb4 /dev/vdb5 >"$W/md.out" 2>&1 ||
    { result md-raid1-record FAIL "mdadm --create: $(tail_of "$W/md.out")"; return; }
  wait_dev /dev/md0 || { result md-raid1-record FAIL "no /dev/md0"; return; }
  fact "stack:md-raid1" "md0 $(cat /sys/block/md0/md/level), data offsets $(cat /sys/block/md0/md/dev-*/offset | tr '\n' ' ')sectors, $(sectors /dev/md0) sectors"
  "$BLKRR" devices md0 >"$W/md.dev" 2>&1
  fact "stack:md-raid1-devices" "$(grep stack: "$W/md.dev")"
  record_stack md-raid1 /dev/md0 0
  replay_stack md-raid1 /dev/md0
}

# dm striped: two stripes in chunks of 4 KiB (8 sectors) over vdb8 (64
# sectors in) and vdb9: the load's requests of 8 KiB and more are split at
# every chunk, one record per chunk.
stack_dm_striped() {
  a=$(majmin /dev/vdb8) b=$(majmin /dev/vdb9)
  n=$((($(sectors /dev/vdb8) - 64) / 8 * 8))
  echo "0 $((2 * n)) striped 2 8 $a 64 $b 0" |
    dmsetup create --noudevsync mtx-striped 2>"$W/dmstr.err" ||
    { result dm-striped-record FAIL "dmsetup create: $(tail_of "$W/dmstr.err")"; return; }
  dmsetup mknodes 2>/dev/null
  fact "stack:dm-striped" "$(dmsetup table mtx-striped | tr '\n' ';')"
  "$BLKRR" devices /dev/mapper/mtx-striped >"$W/dmstr.dev" 2>&1
  fact "stack:dm-striped-devices" "$(grep stack: "$W/dmstr.dev")"
  record_stack dm-striped /dev/mapper/mtx-striped 0 8
  replay_stack dm-striped /dev/mapper/mtx-striped
  offline_stack dm-striped /dev/mapper/mtx-striped
}

# dm snapshot of vdb12 with its exceptions on vdb13 (chunks of 4 KiB, not
# persistent): a target blkrr does not map, recorded at the bio level. The
# load's requests are the records, exactly, each flagged bio-level, in the
# volume's own sectors.
stack_dm_snapshot() {
  o=$(majmin /dev/vdb12) c=$(majmin /dev/vdb13)
  echo "0 $(sectors /dev/vdb12) snapshot $o $c N 8" |
    dmsetup create --noudevsync mtx-snap 2>"$W/dmsnap.err" ||
    { result dm-snapshot-record FAIL "dmsetup create: $(tail_of "$W/dmsnap.err")"; return; }
  dmsetup mknodes 2>/dev/null
  fact "stack:dm-snapshot" "$(dmsetup table mtx-snap | tr '\n' ';')"
  "$BLKRR" devices /dev/mapper/mtx-snap >"$W/dmsnap.dev" 2>&1
  fact "stack:dm-snapshot-devices" "$(grep stack: "$W/dmsnap.dev")"
  record_stack dm-snapshot /dev/mapper/mtx-snap 0
  [ -s "$W/dm-snapshot.json" ] || return
  n=$(awk "$JF"' index($0, "\"sector\":") { n++ } END { print n + 0 }' "$W/dm-snapshot.json")
  b=$(awk "$JF"' index($0, "\"sector\":") && index(jf($0, "record_flags"), "bio-level") { n++ }
      END { print n + 0 }' "$W/dm-snapshot.json")
  why=$(grep -o '"bio_level\.[^"]*":"[^"]*"' "$W/dm-snapshot.json" | head -1)
  if [ "$n" -gt 0 ] && [ "$b" -eq "$n" ] && [ -n "$why" ]; then
    result dm-snapshot-bio-level PASS "$b of $n records flagged bio-level; header $why"
  else
    result dm-snapshot-bio-level FAIL "$b of $n records flagged bio-level; header: ${why:-no bio_level setting}"
  fi
  replay_stack dm-snapshot /dev/mapper/mtx-snap
}

# md RAID0 of vdb10 and vdb11 (equal sizes) in chunks of 16 KiB: the load's
# requests of 32 KiB are split in two.
stack_md_raid0() {
  mkdir -p /run/mdadm /etc/mdadm
  mdadm --create /dev/md1 --run --level=0 --raid-devices=2 --chunk=16 --metadata=1.2 \
    /dev/vdb10 /dev/vdb11 >"$W/md0.out" 2>&1 ||
    { result md-raid0-record FAIL "mdadm --create: $(tail_of "$W/md0.out")"; return; }
  wait_dev /dev/md1 || { result md-raid0-record FAIL "no /dev/md1"; return; }
  fact "stack:md-raid0" "md1 $(cat /sys/block/md1/md/level), chunk $(cat /sys/block/md1/md/chunk_size) bytes, data offsets $(cat /sys/block/md1/md/dev-*/offset | tr '\n' ' ')sectors, $(sectors /dev/md1) sectors"
  "$BLKRR" devices md1 >"$W/md0.dev" 2>&1
  fact "stack:md-raid0-devices" "$(grep stack: "$W/md0.dev")"
  record_stack md-raid0 /dev/md1 0 32
  replay_stack md-raid0 /dev/md1
  offline_stack md-raid0 /dev/md1
}

# LVM without udev (the guest has none): no udev sync, nodes by dmsetup mknodes.
LVM_CONFIG='devices { obtain_device_list_from_udev=0 use_devicesfile=0 } activation { udev_sync=0 udev_rules=0 monitoring=0 } global { use_lvmpolld=0 }'
lvm_do() { lvm "$@" --config "$LVM_CONFIG" >>"$W/lvm.out" 2>&1; }

# An LVM linear volume in two segments, the second through dm-crypt (LVM on
# LUKS): volume group vg (1 MiB extents) of vdb6 and mtx-pv2, a crypt volume
# over vdb7 (the test key); vg/data is extents 1-3 of vdb6, then extents 0-2
# of mtx-pv2 (one lvcreate: each LVM command scans the disks, slowly under TCG).
stack_lvm() {
  command -v lvm >/dev/null || { result lvm-record FAIL "no lvm in the guest"; return; }
  mkdir -p /run/lock/lvm /run/lvm /etc/lvm
  echo "0 $(sectors /dev/vdb7) crypt aes-xts-plain64 $KEY 0 $(majmin /dev/vdb7) 0" |
    dmsetup create --noudevsync mtx-pv2 2>"$W/lvm.out" ||
    { result lvm-record FAIL "dmsetup create mtx-pv2: $(tail_of "$W/lvm.out")"; return; }
  dmsetup mknodes 2>/dev/null
  { lvm_do vgcreate -y -s 1m vg /dev/vdb6 /dev/mapper/mtx-pv2 &&
    lvm_do lvcreate -y -Zn -n data -l 6 vg /dev/vdb6:1-3 /dev/mapper/mtx-pv2:0-2; } ||
    { result lvm-record FAIL "LVM setup: $(tail_of "$W/lvm.out")"; return; }
  dmsetup mknodes 2>/dev/null
  lvm vgmknodes --config "$LVM_CONFIG" >/dev/null 2>&1
  wait_dev /dev/vg/data || { result lvm-record FAIL "no /dev/vg/data: $(tail_of "$W/lvm.out")"; return; }
  fact "stack:lvm" "$(dmsetup table vg-data | tr '\n' ';')"
  "$BLKRR" devices /dev/vg/data >"$W/lvm.dev" 2>&1
  fact "stack:lvm-devices" "$(grep stack: "$W/lvm.dev")"
  record_stack lvm /dev/vg/data 0
  replay_stack lvm /dev/vg/data
  offline_stack lvm /dev/vg/data
}

# Attribution on every stack at once (three captures in all, to keep the
# matrix short): one top over every stack's device and two snoops (the
# request devices, the volumes), the load of each stack under its own name
# (stack_io), then two writers in a ratio of 3:1 through dm-crypt and md
# RAID1 (share_check), then each stack's rows and lines (attrib_check).
ATTRIB_STACKS="nvme:/dev/nvme0n1 scsi-mq-deadline:SCSI scsi-bfq:SCSI partition:/dev/vdb1 dm-linear:/dev/mapper/mtx-linear dm-crypt:/dev/mapper/mtx-crypt md-raid1:/dev/md0 lvm:/dev/vg/data"

# snoop_start OUT DEV...: snoop --json --queue on DEVs in the background (pid in $spid).
snoop_start() {
  out=$1
  shift
  # shellcheck disable=SC2046  # one -d per device
  set -- $(for d in "$@"; do [ -b "$d" ] && printf -- '-d %s ' "$d"; done)
  "$BLKRR" snoop --json --queue "$@" >"$out" 2>"$out.err" &
  spid=$!
}

# stack_io STACK DEV: the stack's load, under the name mt-STACK (15 characters at most).
stack_io() {
  tag=$(printf 'mt-%s' "$1" | cut -c1-15)
  "$IO" "$2" "$tag" "$N" 2048 >"$W/at-$1.io" 2>"$W/at-$1.ioerr" || echo "$1" >>"$W/at-failed"
}

# attrib_check STACK DEV SNOOP_OUT SHIFT COPIES: the load's pid in top (every
# request and byte, writes COPIES times: a mirror's members) and its name in
# snoop (the exact requests, at SHIFT + the load's sectors).
attrib_check() {
  s=$1 dev=$2 sout=$3 shift=$4 copies=$5
  tag=$(printf 'mt-%s' "$s" | cut -c1-15)
  if grep -qx "$s" "$W/at-failed" 2>/dev/null || [ ! -s "$W/at-$s.io" ]; then
    result "$s-top" FAIL "matrix_io on $dev: $(tail_of "$W/at-$s.ioerr")"
    result "$s-snoop" FAIL "matrix_io on $dev: $(tail_of "$W/at-$s.ioerr")"
    return
  fi
  iopid=$(awk '$1 == "pid" { print $2 }' "$W/at-$s.io")
  got=$(awk "$JF"' { n = split($0, o, "{"); for (i = 1; i <= n; i++)
      if (jf(o[i], "pid") == p) { req += jf(o[i], "requests"); t += jf(o[i], "disk_time_ns")
        b += jf(o[i], "bytes"); if (!(jf(o[i], "device") in d)) { d[jf(o[i], "device")]; ds = ds jf(o[i], "device") " " } } }
      END { printf "%d %d %d %s\n", req, b, t, ds }' p="$iopid" "$W/at-top.out")
  want=$(awk -v c="$copies" '$1 == "W" { n += c; b += c * $3 } $1 == "R" { n++; b += $3 }
      END { printf "%d %d\n", n, b }' "$W/at-$s.io")
  # shellcheck disable=SC2086  # requests, bytes, disk time, devices
  set -- $got
  detail="-d $dev: pid $iopid ($tag) charged $1 requests, $2 bytes, disk time $3 ns on $4 (issued: $want$([ "$copies" = 1 ] || echo ", writes on both members"))"
  if [ "$1 $2" = "$want" ] && [ "${3:-0}" -gt 0 ]; then result "$s-top" PASS "$detail"; else
    result "$s-top" FAIL "$detail; top: $(tail_of "$W/at-top.out.err")"
  fi
  awk -v d="$shift" -v c="$tag" '$1 != "pid" { print $1, $2 + d, $3, p, c } $1 == "pid" { p = $2 }' \
    "$W/at-$s.io" >"$W/at-$s.want"
  awk "$JF"' jf($0, "comm") == c {
      print opl(jf($0, "op")), jf($0, "sector"), jf($0, "bytes"), jf($0, "pid"), jf($0, "comm") }' \
    c="$tag" "$sout" >"$W/at-$s.got"
  if sum=$(compare "$W/at-$s.want" "$W/at-$s.got"); then
    result "$s-snoop" PASS "-d $dev: $sum (op, sector, bytes, pid, comm)"
  else
    result "$s-snoop" FAIL "-d $dev: $sum; snoop: $(tail_of "$sout.err")"
  fi
  case $s in scsi-*) queue_check "$s" "$dev" "$sout" "$tag" ;; esac
}

# queue_check STACK DEV SNOOP_OUT TAG: behind an I/O scheduler every request
# of the load passes through its queue, so snoop --queue must give each of
# the load's lines a queue time (block_rq_insert to issue). A kernel without
# block_rq_insert has none: SKIP.
queue_check() {
  s=$1 dev=$2 sout=$3 tag=$4
  # shellcheck disable=SC2046  # lines of the load, with a queue time, their median (us)
  set -- $(awk "$JF"' jf($0, "comm") == c { n++; q = jf($0, "queue_ns"); if (q != "" && q != "null") { k++; v[k] = q } }
      END { m = 0; if (k) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
        m = v[int((k + 1) / 2)] / 1000 } printf "%d %d %.1f\n", n, k, m }' c="$tag" "$sout")
  detail="-d $dev (scheduler ${s#scsi-}): $2 of the load's $1 lines with a queue time, median $3 us"
  if [ ! -e /sys/kernel/tracing/events/block/block_rq_insert ] && [ "${2:-0}" = 0 ]; then
    result "$s-queue" SKIP "$detail: no block_rq_insert on this kernel (capture.md: queue time)"
  elif [ "${1:-0}" -gt 0 ] && [ "$1" = "$2" ]; then
    result "$s-queue" PASS "$detail"
  else
    result "$s-queue" FAIL "$detail; snoop: $(tail_of "$sout.err")"
  fi
}

# stream CGROUP K START: stream K of 4 paced writers (matrix_io --paced: 16 KiB
# O_DIRECT writes every 4 ms for 5 s from START (boot time in centiseconds),
# stream K a quarter period after stream K - 1, interleaved over the first 4 MiB of $dev), run in cgroup CGROUP;
# its output in $W/share-K.
stream() {
  (echo 0 >"/sys/fs/cgroup/$1/cgroup.procs" || exit 1 # 0: this subshell
    exec "$IO" --paced "$dev" "$1" 5 4 "$2" 4 8192 "$3" >"$W/share-$2" 2>&1)
}

# share_check STACK DEV: two writers at once through DEV over the same 5 s,
# writer A (cgroup mt-a) three paced streams, writer B (mt-b) one stream of
# the same kind: the four streams are alike (same size and rate, places
# spread over the same span, evenly spaced in time), so A
# is due 3/4 of the disk time and B 1/4. In the intervals of the same top
# that cover them, all the disk time must go to the two cgroups (at most 2 %
# to anything else, such as dm-crypt's or md's threads) and the split must
# be 3:1 within 5 points. Nothing else writes meanwhile.
share_check() {
  s=$1 dev=$2
  [ -e /sys/fs/cgroup/cgroup.controllers ] && mkdir -p /sys/fs/cgroup/mt-a /sys/fs/cgroup/mt-b 2>/dev/null
  ca=$(stat -c %i /sys/fs/cgroup/mt-a 2>/dev/null) cb=$(stat -c %i /sys/fs/cgroup/mt-b 2>/dev/null)
  if [ -z "$ca" ] || [ -z "$cb" ] || [ ! -e /sys/fs/cgroup/mt-a/cgroup.procs ]; then
    result "$s-share" SKIP "no cgroup v2 directories for the two writers"
    return
  fi
  l0=$(wc -l <"$W/at-top.out")
  go=$(awk '{ printf "%d", $1 * 100 + 50 }' /proc/uptime) # in half a second
  stream mt-a 0 "$go" &
  p0=$!
  stream mt-a 1 "$go" &
  p1=$!
  stream mt-a 2 "$go" &
  p2=$!
  stream mt-b 3 "$go" &
  p3=$!
  rs=""
  for p in $p0 $p1 $p2 $p3; do
    wait "$p"
    rs="$rs$?"
  done
  sleep 1.2 # two more intervals of top
  l1=$(wc -l <"$W/at-top.out")
  r=$(sed -n "$((l0 + 1)),${l1}p" "$W/at-top.out" | awk "$JF"' { n = split($0, o, "{");
      for (i = 1; i <= n; i++) { c = jf(o[i], "cgroup_id"); t = jf(o[i], "disk_time_ns"); if (c == "" || t == "") continue
        if (c == a) ta += t; else if (c == b) tb += t; else { to += t; if (t > 0) w[jf(o[i], "comm") " " jf(o[i], "device")] += t } } }
      END { all = ta + tb + to; if (all == 0) { print "0 0 0 0"; exit }
        for (k in w) ws = ws sprintf("%s %.1f%%; ", k, 100 * w[k] / all)
        printf "%.1f %.1f %.1f %.0f %s\n", 100 * ta / all, 100 * tb / all, 100 * to / all, all, ws }' a="$ca" b="$cb")
  writes=$(cat "$W/share-0" "$W/share-1" "$W/share-2" "$W/share-3" 2>/dev/null | awk '$1 == "writes" { printf "%s ", $2 }')
  # shellcheck disable=SC2086  # shares of the two writers and the rest, total, who the rest was
  set -- $r
  sa=$1 sb=$2 so=$3 all=$4
  shift 4
  detail="-d $dev: writer A (cgroup mt-a, 3 streams) $sa % and writer B (mt-b, 1 stream) $sb % of $all ns of disk time (want 75 and 25 +-5; writes per stream: ${writes:-none}); others $so %${1:+: $*}"
  within=outside
  awk -v a="$sa" -v b="$sb" 'BEGIN { exit !(a >= 70 && a <= 80 && b >= 20 && b <= 30) }' && within=within
  fact "$s-share-3to1" "$within 5 points: A $sa %, B $sb %"
  if [ "$rs" != "0000" ]; then
    result "$s-share" FAIL "a stream failed (exits $rs: $(cat "$W/share-0" "$W/share-1" "$W/share-2" "$W/share-3" 2>/dev/null | grep -v '^pid\|^writes' | one_line)); $detail"
  elif awk -v o="$so" 'BEGIN { exit !(o <= 2) }' && [ "$within" = within ]; then
    result "$s-share" PASS "$detail"
  else
    result "$s-share" FAIL "$detail"
  fi
}

# writeback_check DEV: 1 MiB of buffered writes to DEV by dd (cgroup mt-w)
# while another process holds DEV open (so that dd's close does not write
# it back), written back by the kernel's flusher within about a second
# (dirty_expire 0.5 s): in the same top, the write bytes of that window on
# DEV must all be charged to a kernel thread labelled "[kernel via ...]"
# (blkrr cannot know the dirtier of a page written back by the kernel), none
# to dd's cgroup and none unlabelled.
writeback_check() {
  s=$1 dev=$2
  mkdir -p /sys/fs/cgroup/mt-w 2>/dev/null
  cw=$(stat -c %i /sys/fs/cgroup/mt-w 2>/dev/null)
  e0=$(cat /proc/sys/vm/dirty_expire_centisecs) w0=$(cat /proc/sys/vm/dirty_writeback_centisecs)
  echo 50 >/proc/sys/vm/dirty_expire_centisecs
  echo 50 >/proc/sys/vm/dirty_writeback_centisecs
  # shellcheck disable=SC2217  # sleep only holds DEV open
  sleep 6 <"$dev" &
  holder=$!
  l0=$(wc -l <"$W/at-top.out")
  (echo 0 >/sys/fs/cgroup/mt-w/cgroup.procs 2>/dev/null
    exec dd if=/dev/zero of="$dev" bs=64k count=16 seek=64 conv=notrunc 2>"$W/wb.err")
  rd=$?
  sleep 3.5
  l1=$(wc -l <"$W/at-top.out")
  wait "$holder" 2>/dev/null
  echo "$e0" >/proc/sys/vm/dirty_expire_centisecs
  echo "$w0" >/proc/sys/vm/dirty_writeback_centisecs
  rmdir /sys/fs/cgroup/mt-w 2>/dev/null
  vol=$(basename "$(readlink -f "$dev")")
  # shellcheck disable=SC2046  # bytes: labelled kernel, dd's cgroup, other; who
  set -- $(sed -n "$((l0 + 1)),${l1}p" "$W/at-top.out" | awk "$JF"' { n = split($0, o, "{");
      for (i = 1; i <= n; i++) { d = jf(o[i], "direction"); b = jf(o[i], "bytes")
        if (b == "" || b == 0 || d !~ /^w/) continue
        c = jf(o[i], "comm"); if (jf(o[i], "cgroup_id") == w) u += b; else if (index(c, "[kernel via")) k += b; else { x += b; who = who c "; " } } }
      END { printf "%d %d %d %s\n", k, u, x, who }' w="$cw")
  detail="-d $dev ($vol): 1048576 bytes written by dd, buffered: $1 bytes charged to a kernel thread labelled [kernel via ...], $2 to dd's cgroup, $3 to others${4:+ ($*)}"
  if [ "$rd" = 0 ] && [ "${1:-0}" -ge 1048576 ] && [ "${2:-1}" = 0 ] && [ "${3:-1}" = 0 ]; then
    result "$s-writeback" PASS "$detail"
  else
    result "$s-writeback" FAIL "$detail; dd exit $rd $(tail_of "$W/wb.err")"
  fi
}

attrib_stacks() {
  sd=$(scsi_disk)
  devs=""
  for e in $ATTRIB_STACKS; do d=${e#*:}; [ "$d" = SCSI ] && d=/dev/$sd; devs="$devs $d"; done
  # shellcheck disable=SC2046  # one -d per device
  "$BLKRR" top --json $(for d in $devs; do [ -b "$d" ] && printf -- '-d %s ' "$d"; done) 0.5 \
    >"$W/at-top.out" 2>"$W/at-top.out.err" &
  tpid=$!
  snoop_start "$W/at-snoop1.out" /dev/nvme0n1 "/dev/$sd" /dev/vdb1
  s1=$spid
  snoop_start "$W/at-snoop2.out" /dev/mapper/mtx-linear /dev/mapper/mtx-crypt /dev/md0 /dev/vg/data
  s2=$spid
  wait_for "$W/at-top.out" '"seq":1' "$tpid" 120 || echo "top: $(tail_of "$W/at-top.out.err")" >>"$W/at-start"
  wait_for "$W/at-snoop1.out" origin_ns "$s1" 120 || echo "snoop: $(tail_of "$W/at-snoop1.out.err")" >>"$W/at-start"
  wait_for "$W/at-snoop2.out" origin_ns "$s2" 120 || echo "snoop: $(tail_of "$W/at-snoop2.out.err")" >>"$W/at-start"
  : >"$W/at-failed"
  for e in $ATTRIB_STACKS; do
    s=${e%%:*} d=${e#*:}
    case $s in
    scsi-*) echo "${s#scsi-}" >"/sys/block/$sd/queue/scheduler" 2>/dev/null; d=/dev/$sd ;;
    esac
    [ -b "$d" ] && stack_io "$s" "$d"
  done
  sleep 0.6
  : >"$W/at-share"
  [ -b /dev/mapper/mtx-crypt ] && share_check dm-crypt /dev/mapper/mtx-crypt >>"$W/at-share"
  [ -b /dev/md0 ] && share_check md-raid1 /dev/md0 >>"$W/at-share"
  [ -b /dev/vg/data ] && share_check lvm /dev/vg/data >>"$W/at-share"
  rmdir /sys/fs/cgroup/mt-a /sys/fs/cgroup/mt-b 2>/dev/null
  [ -b /dev/mapper/mtx-crypt ] && writeback_check dm-crypt /dev/mapper/mtx-crypt >>"$W/at-share"
  sleep 0.5
  stop "$s1"
  stop "$s2"
  stop "$tpid"
  for e in $ATTRIB_STACKS; do
    s=${e%%:*} d=${e#*:}
    [ "$d" = SCSI ] && d=/dev/$sd
    if [ ! -b "$d" ]; then result "$s-top" SKIP "no $d"; result "$s-snoop" SKIP "no $d"; continue; fi
    case $s in
    nvme | scsi-*) attrib_check "$s" "$d" "$W/at-snoop1.out" 0 1 ;;
    partition) attrib_check "$s" "$d" "$W/at-snoop1.out" "$(cat /sys/class/block/vdb1/start)" 1 ;;
    md-raid1) attrib_check "$s" "$d" "$W/at-snoop2.out" 0 2 ;;
    *) attrib_check "$s" "$d" "$W/at-snoop2.out" 0 1 ;;
    esac
  done
  cat "$W/at-share" 2>/dev/null
  [ -s "$W/at-start" ] && fact attribution-start "$(cat "$W/at-start")"
  fact "attribution-kernel-rows" "$(awk "$JF"' { n = split($0, o, "{"); for (i = 1; i <= n; i++) if (index(o[i], "[kernel via")) { k = jf(o[i], "comm") " " jf(o[i], "device"); r[k] += jf(o[i], "requests") } }
      END { for (k in r) printf "%s: %d requests; ", k, r[k] }' "$W/at-top.out")"
}

load_stack_modules
make_load "$W/small.load.gz"
timed nvme stack_nvme
timed scsi stack_scsi
timed partition stack_partition
timed dm-linear stack_dm_linear
timed dm-crypt stack_dm_crypt
timed md-raid1 stack_md_raid1
timed lvm stack_lvm
timed dm-striped stack_dm_striped
timed md-raid0 stack_md_raid0
timed dm-snapshot stack_dm_snapshot
timed attribution attrib_stacks
echo "MATRIX-STACKS-END $K"
