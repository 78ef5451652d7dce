#!/bin/sh
# Attribution checks of the kernel matrix, sourced by tests/matrix/stacks.sh
# in the guest (its functions and variables: K, BLKRR, IO, W, N, KEY; the
# result and fact helpers of checks.sh).
# shellcheck disable=SC2154  # set by stacks.sh and checks.sh

# Attribution on every stack at once (three captures in all, to keep the
# matrix short): one top over every stack's device and two snoops (the
# request devices, the volumes), the load of each stack under its own name
# (stack_io), then two writers in a ratio of 3:1 through dm-crypt, md RAID1
# and LVM (share_check), then each stack's rows and lines (attrib_check).
# The striped stacks follow in three captures of their own (a capture holds
# at most 8 ranges of one disk, and all lie on vdb): attrib_striped.
ATTRIB_STACKS="nvme:/dev/nvme0n1 scsi-mq-deadline:SCSI scsi-bfq:SCSI partition:/dev/vdb1 dm-linear:/dev/mapper/mtx-linear dm-crypt:/dev/mapper/mtx-crypt md-raid1:/dev/md0 lvm:/dev/vg/data"
STRIPED_STACKS="dm-striped:/dev/mapper/mtx-striped md-raid0:/dev/md1 raid0-crypt:/dev/mapper/mtx-rcrypt"

# snoop_start OUT DEV...: snoop --json --queue on DEVs in the background (pid in $spid).
snoop_start() {
  out=$1
  shift
  # shellcheck disable=SC2046  # one -d per device
  set -- $(for d in "$@"; do [ -b "$d" ] && printf -- '-d %s ' "$d"; done)
  "$BLKRR" snoop --json --queue "$@" >"$out" 2>"$out.err" &
  spid=$!
}

# split_load IO SHIFT CHUNK: the load's requests (matrix_io's output) at
# SHIFT + their sectors, each split at multiples of CHUNK sectors (none: 0).
split_load() {
  awk -v d="$2" -v c="$3" '$1 != "pid" { s = $2 + d; n = $3 / 512
      while (n > 0) { k = c > 0 ? c - s % c : n; if (k > n) k = n; print $1, s, k * 512; s += k; n -= k } }' "$1"
}

# stack_io STACK DEV: the stack's load, under the name mt-STACK (15 characters at most).
stack_io() {
  tag=$(printf 'mt-%s' "$1" | cut -c1-15)
  "$IO" "$2" "$tag" "$N" 2048 >"$W/at-$1.io" 2>"$W/at-$1.ioerr" || echo "$1" >>"$W/at-failed"
}

# attrib_check STACK DEV SNOOP_OUT SHIFT COPIES [CHUNK]: the load's pid in
# top (every request and byte, writes COPIES times: a mirror's members) and
# its name in snoop (the exact requests, at SHIFT + the load's sectors). On
# a striped volume (chunks of CHUNK sectors) each request of the load is
# split at the chunks: snoop must give one line per piece, and top between
# one request per request of the load and one per piece (a member's pieces
# of one request lie side by side on its disk and may be merged there).
attrib_check() {
  s=$1 dev=$2 sout=$3 shift=$4 copies=$5 chunk=${6:-0}
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
      END { printf "%d %d %d %s\n", req, b, t, ds }' p="$iopid" "$TOP")
  split_load "$W/at-$s.io" "$shift" "$chunk" >"$W/at-$s.pieces"
  want=$(awk -v c="$copies" '$1 == "W" { n += c; b += c * $3 } $1 == "R" { n++; b += $3 }
      END { printf "%d %d\n", n, b }' "$W/at-$s.io")
  pieces=$(awk -v c="$copies" '{ n += $1 == "W" ? c : 1 } END { print n + 0 }' "$W/at-$s.pieces")
  # shellcheck disable=SC2086  # requests, bytes, disk time, devices
  set -- $got
  detail="-d $dev: pid $iopid ($tag) charged $1 requests, $2 bytes, disk time $3 ns on $4 (issued: $want$([ "$copies" = 1 ] || echo ", writes on both members")$([ "$chunk" = 0 ] || echo ", $pieces pieces in chunks of $chunk sectors"))"
  if [ "${2:-0}" = "${want#* }" ] && [ "${1:-0}" -ge "${want% *}" ] && [ "${1:-0}" -le "$pieces" ] &&
    [ "${3:-0}" -gt 0 ]; then result "$s-top" PASS "$detail"; else
    result "$s-top" FAIL "$detail; top: $(tail_of "$TOP.err")"
  fi
  awk -v p="$iopid" -v c="$tag" '{ print $0, p, c }' "$W/at-$s.pieces" >"$W/at-$s.want"
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
# the four a quarter period apart, each taking every place in time in turn,
# interleaved with gaps over the first 4 MiB of $dev), run in cgroup CGROUP;
# its output in $W/share-K.
stream() {
  (echo 0 >"/sys/fs/cgroup/$1/cgroup.procs" || exit 1 # 0: this subshell
    exec "$IO" --paced "$dev" "$1" 5 4 "$2" 4 8192 "$3" >"$W/share-$2" 2>&1)
}

# share_check STACK DEV: two writers at once through DEV over the same 5 s,
# writer A (cgroup mt-a) three paced streams, writer B (mt-b) one stream of
# the same kind: the four streams are alike (same size and rate, places
# spread over the same span, evenly spaced in time, none adjacent to another
# so that no write merges into another stream's request), so A
# is due 3/4 of the disk time and B 1/4. In the intervals of the same top
# that cover them, all the disk time must go to the two cgroups (at most 2 %
# to anything else, such as dm-crypt's or md's threads) and the split must
# be 3:1 within 5 points. Nothing else writes meanwhile.
# share_measure STACK DEV: one measurement of share_check (cgroups $ca,
# $cb): sets sa, sb, so (the shares of A, B and anyone else), rs (the
# streams' exit statuses), within and detail; prints its FACT line.
share_measure() {
  s=$1 dev=$2
  l0=$(wc -l <"$TOP")
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
  l1=$(wc -l <"$TOP")
  # Also the window's length (its intervals) and the largest io_ticks of a
  # device in it (the kernel's own count, whole milliseconds of a device
  # with a request in flight): a witness of how busy it was that blkrr did
  # not make.
  r=$(sed -n "$((l0 + 1)),${l1}p" "$TOP" | awk "$JF"' { n = split($0, o, "{");
      for (i = 1; i <= n; i++) { v = jf(o[i], "interval_ns"); if (v != "") win += v
        v = jf(o[i], "io_ticks_ns"); if (v != "" && jf(o[i], "busy_ns") != "") { dt[jf(o[i], "device")] += v; fl[jf(o[i], "device")] = jf(o[i], "in_flight") }
        c = jf(o[i], "cgroup_id"); t = jf(o[i], "disk_time_ns"); if (c == "" || t == "") continue
        if (c == a) ta += t; else if (c == b) tb += t; else { to += t; if (t > 0) w[jf(o[i], "comm") " " jf(o[i], "device")] += t } } }
      END { for (d in dt) if (dt[d] > ticks) { ticks = dt[d]; td = d }
        all = ta + tb + to; if (all == 0) { print "0 0 0 0 0 0 - 0"; exit }
        for (k in w) ws = ws sprintf("%s %.1f%%; ", k, 100 * w[k] / all)
        printf "%.1f %.1f %.1f %.0f %.0f %.0f %s %s %s\n", 100 * ta / all, 100 * tb / all, 100 * to / all, all, win, ticks, td, fl[td] + 0, ws }' a="$ca" b="$cb")
  writes=$(cat "$W/share-0" "$W/share-1" "$W/share-2" "$W/share-3" 2>/dev/null | awk '$1 == "writes" { printf "%s ", $2 }')
  # shellcheck disable=SC2086  # shares of the two writers and the rest, total, who the rest was
  set -- $r
  sa=$1 sb=$2 so=$3 all=$4 win=$5 ticks=$6 tdev=$7 tfl=$8
  shift 8
  # A disk never idle: blkrr's disk time is at least 85 % of the window.
  idle=yes
  awk -v t="$all" -v w="$win" 'BEGIN { exit !(w > 0 && t >= 0.85 * w) }' && idle=no
  detail="-d $dev: writer A (cgroup mt-a, 3 streams) $sa % and writer B (mt-b, 1 stream) $sb % of $all ns of disk time in a $win ns window (the busiest device, $tdev: io_ticks $ticks ns, $tfl in flight at the window's end by blkrr's count; want 75 and 25 +-5; writes per stream: ${writes:-none}); others $so %${1:+: $*}"
  within=outside
  awk -v a="$sa" -v b="$sb" 'BEGIN { exit !(a >= 70 && a <= 80 && b >= 20 && b <= 30) }' && within=within
  fact "$s-share-3to1" "$within 5 points: A $sa %, B $sb %"
}

# share_check STACK DEV: share_measure; a split outside 5 points with all
# the disk time to the two writers is measured once more (a stall of the
# TCG guest can decide one window: docs/kernels.md), and both are said. When
# in both windows blkrr found the disk never idle (its disk time at least
# 85 % of the window, where the paced load keeps it busy about a third of
# the time), the check is SKIP with both: docs/kernels.md says what is
# known of that state.
share_check() {
  s=$1 dev=$2
  [ -e /sys/fs/cgroup/cgroup.controllers ] && mkdir -p /sys/fs/cgroup/mt-a /sys/fs/cgroup/mt-b 2>/dev/null
  ca=$(stat -c %i /sys/fs/cgroup/mt-a 2>/dev/null) cb=$(stat -c %i /sys/fs/cgroup/mt-b 2>/dev/null)
  if [ -z "$ca" ] || [ -z "$cb" ] || [ ! -e /sys/fs/cgroup/mt-a/cgroup.procs ]; then
    result "$s-share" SKIP "no cgroup v2 directories for the two writers"
    return
  fi
  first=""
  share_measure "$s" "$dev"
  if [ "$rs" = 0000 ] && [ "$within" = outside ] && awk -v o="$so" 'BEGIN { exit !(o <= 2) }'; then
    first="a first window outside 5 points (A $sa %, B $sb % of $all ns in $win ns; $tdev io_ticks $ticks ns, $tfl in flight at its end), measured again: "
    idle1=$idle
    share_measure "$s" "$dev"
    [ "$idle1" = no ] && [ "$idle" = no ] && [ "$within" = outside ] &&
      awk -v o="$so" 'BEGIN { exit !(o <= 2) }' && [ "$rs" = 0000 ] && {
      result "$s-share" SKIP "the disk was never idle in either window, under a load due to keep it busy a third of the time (docs/kernels.md: a state of 5.10's LVM whose split is not the load's); $first$detail"
      return
    }
  fi
  if [ "$rs" != "0000" ]; then
    result "$s-share" FAIL "a stream failed (exits $rs: $(cat "$W/share-0" "$W/share-1" "$W/share-2" "$W/share-3" 2>/dev/null | grep -v '^pid\|^writes' | one_line)); $first$detail"
  elif awk -v o="$so" 'BEGIN { exit !(o <= 2) }' && [ "$within" = within ]; then
    result "$s-share" PASS "$first$detail"
  else
    result "$s-share" FAIL "$first$detail"
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
  l0=$(wc -l <"$TOP")
  (echo 0 >/sys/fs/cgroup/mt-w/cgroup.procs 2>/dev/null
    exec dd if=/dev/zero of="$dev" bs=64k count=16 seek=64 conv=notrunc 2>"$W/wb.err")
  rd=$?
  sleep 3.5
  l1=$(wc -l <"$TOP")
  wait "$holder" 2>/dev/null
  echo "$e0" >/proc/sys/vm/dirty_expire_centisecs
  echo "$w0" >/proc/sys/vm/dirty_writeback_centisecs
  rmdir /sys/fs/cgroup/mt-w 2>/dev/null
  vol=$(basename "$(readlink -f "$dev")")
  # shellcheck disable=SC2046  # bytes: labelled kernel, dd's cgroup, other; who
  set -- $(sed -n "$((l0 + 1)),${l1}p" "$TOP" | awk "$JF"' { n = split($0, o, "{");
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

# prog_cost: the run count and mean run time of blkrr's programs over every
# capture loaded now (bpf_stats on since attrib_stacks began), one fact:
# the cost of noting a volume's bio (blkrr_bio_queue) against a disk
# request's start and completion in the same run. TCG's times are not a
# machine's: the ratio is the measure.
prog_cost() {
  bpftool -j prog show 2>/dev/null | awk "$JF"' { n = split($0, o, "\"name\":");
      for (i = 2; i <= n; i++) { nm = o[i]; sub(/^"/, "", nm); sub(/".*/, "", nm)
        if (nm !~ /^blkrr_(bio_queue|io_start|issue|complete)/) continue
        c = jf(o[i], "run_cnt"); t = jf(o[i], "run_time_ns"); cnt[nm] += c; tm[nm] += t } }
      END { for (k in cnt) if (cnt[k] > 0) printf "%s %d runs, mean %.0f ns; ", k, cnt[k], tm[k] / cnt[k] }'
}

attrib_stacks() {
  TOP=$W/at-top.out
  echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
  sd=$(scsi_disk)
  devs=""
  for e in $ATTRIB_STACKS; do d=${e#*:}; [ "$d" = SCSI ] && d=/dev/$sd; devs="$devs $d"; done
  # shellcheck disable=SC2046  # one -d per device
  "$BLKRR" top --json $(for d in $devs; do [ -b "$d" ] && printf -- '-d %s ' "$d"; done) 0.5 \
    >"$TOP" 2>"$TOP.err" &
  tpid=$!
  snoop_start "$W/at-snoop1.out" /dev/nvme0n1 "/dev/$sd" /dev/vdb1
  s1=$spid
  snoop_start "$W/at-snoop2.out" /dev/mapper/mtx-linear /dev/mapper/mtx-crypt /dev/md0 /dev/vg/data
  s2=$spid
  wait_for "$TOP" '"seq":1' "$tpid" 120 || echo "top: $(tail_of "$TOP.err")" >>"$W/at-start"
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
  fact attribution-cost "$(prog_cost)"
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
      END { for (k in r) printf "%s: %d requests; ", k, r[k] }' "$TOP")"
}

# top_start OUT DEV...: top --json at 0.5 s on DEVs in the background (pid in $tpid).
top_start() {
  out=$1
  shift
  # shellcheck disable=SC2046  # one -d per device
  "$BLKRR" top --json $(for d in "$@"; do [ -b "$d" ] && printf -- '-d %s ' "$d"; done) 0.5 \
    >"$out" 2>"$out.err" &
  tpid=$!
}

# The striped stacks as attrib_stacks does the others, in captures of their
# own: a top over the three, a snoop over dm striped and md RAID0 and one
# over dm-crypt over md RAID0 (on md RAID0's sectors: alone, so that its
# lines are its volume's), then the 3:1 share through dm-crypt over md RAID0.
attrib_striped() {
  TOP=$W/at-top2.out
  # shellcheck disable=SC2046  # the devices of the list
  top_start "$TOP" $(for e in $STRIPED_STACKS; do echo "${e#*:}"; done)
  snoop_start "$W/at-snoop3.out" /dev/mapper/mtx-striped /dev/md1
  s3=$spid
  snoop_start "$W/at-snoop4.out" /dev/mapper/mtx-rcrypt
  s4=$spid
  wait_for "$TOP" '"seq":1' "$tpid" 120 || echo "top: $(tail_of "$TOP.err")" >>"$W/at-start2"
  wait_for "$W/at-snoop3.out" origin_ns "$s3" 120 || echo "snoop: $(tail_of "$W/at-snoop3.out.err")" >>"$W/at-start2"
  wait_for "$W/at-snoop4.out" origin_ns "$s4" 120 || echo "snoop: $(tail_of "$W/at-snoop4.out.err")" >>"$W/at-start2"
  for e in $STRIPED_STACKS; do [ -b "${e#*:}" ] && stack_io "${e%%:*}" "${e#*:}"; done
  sleep 0.6
  : >"$W/at-share2"
  [ -b /dev/mapper/mtx-rcrypt ] && share_check raid0-crypt /dev/mapper/mtx-rcrypt >>"$W/at-share2"
  rmdir /sys/fs/cgroup/mt-a /sys/fs/cgroup/mt-b 2>/dev/null
  sleep 0.5
  stop "$s3"
  stop "$s4"
  stop "$tpid"
  for e in $STRIPED_STACKS; do
    s=${e%%:*} d=${e#*:}
    if [ ! -b "$d" ]; then result "$s-top" SKIP "no $d"; result "$s-snoop" SKIP "no $d"; continue; fi
    case $s in
    dm-striped) attrib_check "$s" "$d" "$W/at-snoop3.out" 0 1 8 ;;
    md-raid0) attrib_check "$s" "$d" "$W/at-snoop3.out" 0 1 32 ;;
    *) attrib_check "$s" "$d" "$W/at-snoop4.out" 0 1 32 ;;
    esac
  done
  cat "$W/at-share2" 2>/dev/null
  [ -s "$W/at-start2" ] && fact attribution-striped-start "$(cat "$W/at-start2")"
  fact "attribution-striped-kernel-rows" "$(awk "$JF"' { n = split($0, o, "{"); for (i = 1; i <= n; i++) if (index(o[i], "[kernel via")) { k = jf(o[i], "comm") " " jf(o[i], "device"); r[k] += jf(o[i], "requests") } }
      END { for (k in r) printf "%s: %d requests; ", k, r[k] }' "$TOP")"
}
