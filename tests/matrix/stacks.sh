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
# bio level; then top and snoop on every stack at once (and on a dm-crypt
# volume over the md RAID0), queue time behind the SCSI schedulers, two
# writers in a ratio of 3:1 through dm-crypt, md RAID1, LVM and dm-crypt
# over md RAID0, and writeback through dm-crypt (attribution through the
# stack, tests/matrix/attrib.sh).
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
# shellcheck source=tests/matrix/attrib.sh
. "${MATRIX_ATTRIB:-/attrib.sh}"

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
  split_load "$W/$s.io" "$shift" "$chunk" >"$W/$s.want"
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

# dm_create NAME CHECK: dmsetup create NAME from the table on standard input
# (the guest has no udev: no udev sync, nodes by dmsetup mknodes); when it
# fails, CHECK is FAIL with dmsetup's words.
dm_create() {
  dmsetup create --noudevsync "$1" 2>"$W/$1.err" ||
    { result "$2" FAIL "dmsetup create $1: $(tail_of "$W/$1.err")"; return 1; }
  dmsetup mknodes 2>/dev/null
}

# stack_devices STACK DEV: what `blkrr devices` says of DEV's stack, as a
# FACT (its whole output in $W/STACK.dev).
stack_devices() {
  "$BLKRR" devices "$2" >"$W/$1.dev" 2>&1
  fact "stack:$1-devices" "$(grep stack: "$W/$1.dev")"
}

# dm-linear: two segments of vdb2 in reverse order (volume 0..6144 at 32768
# of vdb2, the rest at 0): the load's requests lie in both.
stack_dm_linear() {
  p=$(majmin /dev/vdb2)
  n=$(sectors /dev/vdb2)
  printf '0 6144 linear %s 32768\n6144 %s linear %s 0\n' "$p" $((32768 - 6144)) "$p" |
    dm_create mtx-linear dm-linear-record || return
  fact "stack:dm-linear" "$(dmsetup table mtx-linear | tr '\n' ';') on vdb2 of $n sectors"
  stack_devices dm-linear /dev/mapper/mtx-linear
  record_stack dm-linear /dev/mapper/mtx-linear 0
  replay_stack dm-linear /dev/mapper/mtx-linear
}

# dm-crypt on a linear volume over vdb3 (16 sectors in): crypt > linear >
# partition > disk. The crypt table's key is the test key above.
stack_dm_crypt() {
  p=$(majmin /dev/vdb3)
  n=$(sectors /dev/vdb3)
  echo "0 $((n - 16)) linear $p 16" | dm_create mtx-base dm-crypt-record || return
  b=$(dm_majmin mtx-base)
  echo "0 $((n - 16)) crypt aes-xts-plain64 $KEY 0 $b 0" | dm_create mtx-crypt dm-crypt-record ||
    return
  stack_devices dm-crypt mtx-crypt
  record_stack dm-crypt /dev/mapper/mtx-crypt 0
  if grep -q "$KEY" "$W/dm-crypt.blkrr" "$W/dm-crypt.json" "$W/dm-crypt.err" "$W/dm-crypt.dev" 2>/dev/null; then
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
  stack_devices md-raid1 md0
  record_stack md-raid1 /dev/md0 0
  replay_stack md-raid1 /dev/md0
}

# dm striped: two stripes in chunks of 4 KiB (8 sectors) over vdb8 (64
# sectors in) and vdb9: the load's requests of 8 KiB and more are split at
# every chunk, one record per chunk.
stack_dm_striped() {
  a=$(majmin /dev/vdb8) b=$(majmin /dev/vdb9)
  n=$((($(sectors /dev/vdb8) - 64) / 8 * 8))
  echo "0 $((2 * n)) striped 2 8 $a 64 $b 0" | dm_create mtx-striped dm-striped-record || return
  fact "stack:dm-striped" "$(dmsetup table mtx-striped | tr '\n' ';')"
  stack_devices dm-striped /dev/mapper/mtx-striped
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
  echo "0 $(sectors /dev/vdb12) snapshot $o $c N 8" | dm_create mtx-snap dm-snapshot-record || return
  fact "stack:dm-snapshot" "$(dmsetup table mtx-snap | tr '\n' ';')"
  stack_devices dm-snapshot /dev/mapper/mtx-snap
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
  stack_devices md-raid0 md1
  record_stack md-raid0 /dev/md1 0 32
  replay_stack md-raid0 /dev/md1
  offline_stack md-raid0 /dev/md1
}

# dm-crypt over the md RAID0 (LUKS on RAID0; the test key): dm-crypt writes
# from its own thread, through md RAID0's chunks; its attribution is checked
# with the other stacks' (attrib.sh).
stack_raid0_crypt() {
  [ -b /dev/md1 ] || return 0 # its checks are SKIP: no device
  echo "0 $(sectors /dev/md1) crypt aes-xts-plain64 $KEY 0 $(majmin /dev/md1) 0" |
    dm_create mtx-rcrypt raid0-crypt-setup || return
  stack_devices raid0-crypt /dev/mapper/mtx-rcrypt
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
    dm_create mtx-pv2 lvm-record || return
  { lvm_do vgcreate -y -s 1m vg /dev/vdb6 /dev/mapper/mtx-pv2 &&
    lvm_do lvcreate -y -Zn -n data -l 6 vg /dev/vdb6:1-3 /dev/mapper/mtx-pv2:0-2; } ||
    { result lvm-record FAIL "LVM setup: $(tail_of "$W/lvm.out")"; return; }
  dmsetup mknodes 2>/dev/null
  lvm vgmknodes --config "$LVM_CONFIG" >/dev/null 2>&1
  wait_dev /dev/vg/data || { result lvm-record FAIL "no /dev/vg/data: $(tail_of "$W/lvm.out")"; return; }
  fact "stack:lvm" "$(dmsetup table vg-data | tr '\n' ';')"
  stack_devices lvm /dev/vg/data
  record_stack lvm /dev/vg/data 0
  replay_stack lvm /dev/vg/data
  offline_stack lvm /dev/vg/data
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
timed raid0-crypt stack_raid0_crypt
timed dm-snapshot stack_dm_snapshot
timed attribution attrib_stacks
timed attribution-striped attrib_striped
echo "MATRIX-STACKS-END $K"
