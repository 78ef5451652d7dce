# shellcheck shell=bash
# Functions of scripts/kernel-matrix.sh (sourced; uses its ROOT, CACHE, BLKRR,
# WORK, GUEST_TIMEOUT, log). Kernel packages, initramfs, qemu, the host run.

# Debian suites to look in, per kernel of the matrix (first that has it wins).
suites_of() {
  case $1 in
  5.10) echo bullseye ;;
  6.1) echo bookworm ;;
  6.12) echo bookworm-backports trixie ;;
  esac
}

install_tools() {
  local need=() c p
  for c in qemu-system-x86_64:qemu-system-x86 cpio:cpio bpftool:bpftool g++:g++ \
    modinfo:kmod xz:xz-utils strip:binutils dpkg-deb:dpkg dmsetup:dmsetup mdadm:mdadm \
    sfdisk:fdisk lvm:lvm2; do
    command -v "${c%%:*}" >/dev/null || need+=("${c#*:}")
  done
  [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || need+=(busybox-static)
  [ ${#need[@]} -eq 0 ] && return
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_get install -y --no-install-recommends "${need[@]}" >/dev/null ||
    { apt_get update >/dev/null && apt_get install -y --no-install-recommends "${need[@]}" >/dev/null; } ||
    die "could not install ${need[*]} with apt-get"
  for p in qemu-system-x86_64 cpio bpftool g++ dmsetup mdadm sfdisk lvm; do command -v $p >/dev/null || die "$p missing after install"; done
}

# The Debian archive URI this machine's apt sources use (not the security one).
mirror_uri() {
  [ -n "${BLKRR_MATRIX_MIRROR:-}" ] && { echo "$BLKRR_MATRIX_MIRROR"; return; }
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk '/^deb / { sub(/\[[^]]*\] */, ""); if ($3 ~ /^(bullseye|bookworm|trixie|stable|oldstable)$/) { print $2; exit } }
         /^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++)
           if ($i ~ /^(bullseye|bookworm|trixie|stable|oldstable)$/ && u != "") { print u; exit } }
         /^$/ { u = "" }' "$f"
  done | head -n 1
}

APT_READY=0
apt_private() {
  local a=$CACHE/apt
  APT_OPTS=(-o "Dir::Etc::sourcelist=$a/sources.list" -o Dir::Etc::sourceparts=-
    -o "Dir::State=$a/state" -o "Dir::State::status=$a/state/status" -o "Dir::Cache=$a/cache"
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  [ "$APT_READY" = 1 ] && return 0
  local mirror s
  mirror=$(mirror_uri)
  [ -n "$mirror" ] || { echo "no Debian mirror found in /etc/apt/sources.list*"; return 1; }
  mkdir -p "$a/state/lists/partial" "$a/cache/archives/partial"
  touch "$a/state/status"
  : >"$a/sources.list"
  for s in bullseye bookworm bookworm-backports trixie; do
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $s main" >>"$a/sources.list"
  done
  log "apt-get update (private lists for bullseye, bookworm, bookworm-backports, trixie from $mirror)"
  apt-get "${APT_OPTS[@]}" update >"$a/update.log" 2>&1 ||
    { echo "apt-get update of the private lists failed ($mirror): $(tail -n 2 "$a/update.log" | tr '\n' ' ')"; return 1; }
  APT_READY=1
}

# fetch_kernel LABEL: unpacks the kernel into $CACHE/kernels/LABEL/root once;
# prints the reason and returns 1 when it cannot.
fetch_kernel() {
  local k=$1 dir=$CACHE/kernels/$1 s pkg=
  [ -f "$dir/ready" ] && return 0
  apt_private || return 1
  for s in $(suites_of "$k"); do
    pkg=$(apt-cache "${APT_OPTS[@]}" show "linux-image-cloud-amd64/$s" 2>/dev/null |
      awk '/^Depends:/ { print $2; exit }')
    [[ $pkg == linux-image-$k.* ]] && break
    pkg=
  done
  [ -n "$pkg" ] || { echo "no linux-image-$k.*-cloud-amd64 in suite(s) $(suites_of "$k")"; return 1; }
  mkdir -p "$CACHE/debs" && rm -rf "$dir" && mkdir -p "$dir"
  log "downloading $pkg from $s"
  (cd "$CACHE/debs" && apt-get "${APT_OPTS[@]}" download "$pkg/$s" >"$dir/download.log" 2>&1) ||
    { echo "apt-get download $pkg/$s failed: $(tail -n 2 "$dir/download.log" | tr '\n' ' ')"; return 1; }
  # shellcheck disable=SC2012  # the newest download; names have no odd characters
  dpkg-deb -x "$(ls -t "$CACHE/debs/${pkg}"_*.deb | head -n 1)" "$dir/root" ||
    { echo "dpkg-deb -x of $pkg failed"; return 1; }
  echo "$pkg ($s)" >"$dir/package"
  touch "$dir/ready"
}

# module_order MODDIR NAME...: module files in dependency order (deps first).
module_order() {
  local dir=$1 m f seen=" "
  shift
  visit() {
    local n=${1//-/_} f d g
    case $seen in *" $n "*) return ;; esac
    seen="$seen$n "
    g=${n//_/[-_]} # Debian names some files with hyphens (dm-mod.ko, mq-deadline.ko)
    f=$(find "$dir" -name "$g.ko" -o -name "$g.ko.xz" -o -name "$g.ko.zst" | head -n 1)
    [ -n "$f" ] || return 0 # built in
    for d in $(modinfo -F depends "$f" | tr , ' '); do visit "$d"; done
    echo "$f"
  }
  for m in "$@"; do visit "$m"; done
}

build_helper() {
  g++ -std=c++20 -O2 -static -o "$1" "$ROOT/tests/matrix/matrix_io.cpp" ||
    die "could not build tests/matrix/matrix_io.cpp (static; needs g++ and libc6-dev)"
}

# copy_with_libs BIN STAGE NAME: BIN as STAGE/usr/local/bin/NAME, its libraries beside.
copy_with_libs() {
  local lib
  strip -o "$2/usr/local/bin/$3" "$1"
  for lib in $(ldd "$1" | grep -o '/[^ ]*'); do
    mkdir -p "$2$(dirname "$lib")"
    cp -L "$lib" "$2$lib"
  done
}

# The guest's /init: mounts, virtio modules, the checks, power off.
write_init() {
  cat >"$1" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/local/bin:/bin
K=$(cat /label)
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
ulimit -l unlimited
echo "FACT $K uname $(uname -r)"
for m in $(cat /modules/order); do insmod /modules/$m || echo "insmod $m failed"; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ -b /dev/vda ]; then
  echo "MATRIX $K boot PASS booted $(uname -r), /dev/vda after $((i * 100)) ms"
  # BTF to the host (its bpftool reads the prototypes much faster than TCG).
  if [ -r /sys/kernel/btf/vmlinux ]; then
    cat /sys/kernel/btf/vmlinux >/tmp/btf
    echo "FACT $K btf-bytes $(wc -c </tmp/btf)"
    dd if=/tmp/btf of=/dev/vda bs=1M seek=200 conv=fsync 2>/dev/null
    rm -f /tmp/btf
  fi
  MATRIX_TP_ON_HOST=1 sh /checks.sh "$K" /dev/vda /usr/local/bin/blkrr /usr/local/bin/matrix_io /tmp/matrix
  sh /stacks.sh "$K" /usr/local/bin/blkrr /usr/local/bin/matrix_io /tmp/stacks
else
  echo "MATRIX $K boot FAIL no /dev/vda after loading $(cat /modules/order | tr '\n' ' ')"
fi
echo "MATRIX-DONE $K"
sync
poweroff -f
INIT
  chmod 755 "$1"
}

# build_initramfs LABEL KROOT STAGE OUT: busybox, blkrr and its libraries,
# bpftool, matrix_io, the checks and the virtio modules, as an uncompressed cpio.
build_initramfs() {
  local k=$1 kroot=$2 st=$3 out=$4 kver
  kver=$(ls "$kroot/lib/modules")
  mkdir -p "$st"/{bin,usr/local/bin,proc,sys,dev,tmp,modules,lib64}
  cp /bin/busybox "$st/bin/busybox"
  copy_with_libs "$BLKRR" "$st" blkrr
  copy_with_libs "$(command -v bpftool)" "$st" bpftool
  copy_with_libs "$(command -v dmsetup)" "$st" dmsetup
  copy_with_libs "$(command -v mdadm)" "$st" mdadm
  copy_with_libs "$(command -v lvm)" "$st" lvm
  cp "$WORK/matrix_io" "$st/usr/local/bin/"
  cp "$ROOT/tests/matrix/checks.sh" "$st/checks.sh"
  cp "$ROOT/tests/matrix/stacks.sh" "$st/stacks.sh"
  cp "$ROOT/tests/matrix/attrib.sh" "$st/attrib.sh"
  echo "$k" >"$st/label"
  write_init "$st/init"
  stage_modules "$kroot/lib/modules/$kver" "$st/modules" virtio_pci virtio_blk
  # scsi_debug for the device-fault check, which loads it with its own
  # parameters (none when the kernel has no scsi_debug).
  stage_modules "$kroot/lib/modules/$kver" "$st/modules/faults" sd_mod scsi_debug
  grep -q scsi_debug "$st/modules/faults/order" || : >"$st/modules/faults/order"
  # The stacks (tests/matrix/stacks.sh): virtio-scsi, schedulers, device-mapper
  # linear, striped and crypt with AES-XTS, snapshot (recorded at the bio
  # level), md RAID1 and RAID0 (NVMe is built into these kernels; dm-mod
  # holds the striped target).
  stage_modules "$kroot/lib/modules/$kver" "$st/modules/stacks" virtio_scsi sd_mod mq-deadline \
    bfq dm-mod dm-crypt xts aesni-intel md-mod raid1 raid0 dm-snapshot
  (cd "$st" && find . | cpio -o -H newc --quiet) >"$out"
}

# stage_modules MODDIR DEST NAME...: the modules NAME and their dependencies,
# unpacked into DEST, their load order in DEST/order.
stage_modules() {
  local dir=$1 dest=$2 f n=0 name
  shift 2
  mkdir -p "$dest"
  : >"$dest/order"
  for f in $(module_order "$dir" "$@"); do
    n=$((n + 1))
    name=$(printf '%02d-%s' $n "$(basename "${f%.xz}" | sed 's/\.zst$//')")
    case $f in
    *.xz) xz -dc "$f" >"$dest/$name" ;;
    *.zst) zstd -qdc "$f" >"$dest/$name" ;;
    *) cp "$f" "$dest/$name" ;;
    esac
    echo "$name" >>"$dest/order"
  done
}

# boot_guest LABEL KERNEL_ROOT DIR: one boot under qemu; its console in DIR/console.log.
boot_guest() {
  local k=$1 kroot=$2 d=$3
  log "$k: booting $(cat "$CACHE/kernels/$k/package") under qemu (TCG)"
  # shellcheck disable=SC2086  # MATRIX_QEMU_CPU holds several options
  timeout "$GUEST_TIMEOUT" qemu-system-x86_64 -accel tcg ${MATRIX_QEMU_CPU:--cpu max,la57=off,cx16=off -smp 2} -m 1024 \
    -nodefaults -no-reboot -display none -monitor none -serial "file:$d/console.log" \
    -kernel "$(ls "$kroot"/boot/vmlinuz-*)" -initrd "$d/initrd.cpio" \
    -append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init" \
    -drive "file=$d/scratch.img,if=virtio,format=raw,cache=unsafe" \
    -drive "file=$d/gpt.img,if=virtio,format=raw,cache=unsafe" \
    -drive "file=$d/nvme.img,if=none,id=nv0,format=raw,cache=unsafe" \
    -device nvme,serial=blkrr-nvme0,drive=nv0 \
    -device virtio-scsi-pci,id=scsi0 \
    -drive "file=$d/scsi.img,if=none,id=sd0,format=raw,cache=unsafe" \
    -device scsi-hd,drive=sd0,bus=scsi0.0
}

# stack_disks DIR: the stacks' disks (tests/matrix/stacks.sh): NVMe and SCSI
# disks of 64 MiB, and a GPT disk whose partitions (sectors) are vdb1
# 2048+65536, vdb2 67584+65536, vdb3 133120+65536, vdb4 198656+32768,
# vdb5 231424+32768, vdb6 264192+16384, vdb7 280576+16384, vdb8 296960+8192,
# vdb9 305152+8192, vdb10 313344+16384, vdb11 329728+16384, vdb12
# 346112+16384 and vdb13 362496+16384.
stack_disks() {
  truncate -s 64M "$1/nvme.img" "$1/scsi.img"
  truncate -s 192M "$1/gpt.img"
  printf 'label: gpt\n2048,65536\n67584,65536\n133120,65536\n198656,32768\n231424,32768\n264192,16384\n280576,16384\n296960,8192\n305152,8192\n313344,16384\n329728,16384\n346112,16384\n362496,16384\n' |
    sfdisk --quiet "$1/gpt.img" >/dev/null
}

# run_kernel LABEL DIR: result lines of one guest on stdout.
run_kernel() {
  local k=$1 d=$2 why kroot t0 rc=0
  mkdir -p "$d"
  if ! why=$(fetch_kernel "$k" 2>&1); then
    echo "MATRIX $k kernel SKIP download failed: $why"
    log "$k: SKIP: $why"
    return
  fi
  kroot=$CACHE/kernels/$k/root
  build_initramfs "$k" "$kroot" "$d/stage" "$d/initrd.cpio"
  truncate -s 256M "$d/scratch.img"
  stack_disks "$d"
  t0=$(date +%s)
  boot_guest "$k" "$kroot" "$d" || rc=$?
  # A guest that died before its init ran (seen once: a panic in start_kernel
  # under TCG on a loaded host) is booted once more; the first console is kept.
  if [ "$rc" != 124 ] && ! grep -q "^MATRIX $k boot" "$d/console.log"; then
    mv "$d/console.log" "$d/console.first.log"
    echo "FACT $k boot-retry $(tr -d '\r' <"$d/console.first.log" | tail -n 3 | tr '\n' ' ' | cut -c1-200)"
    log "$k: the guest died before its init; booting it once more"
    rc=0
    boot_guest "$k" "$kroot" "$d" || rc=$?
  fi
  tr -d '\r' <"$d/console.log" | grep -E '^(MATRIX|FACT|FEATURES) ' | grep -v '^MATRIX-' || true
  guest_tp_facts "$k" "$d"
  echo "FACT $k package $(cat "$CACHE/kernels/$k/package")"
  echo "FACT $k guest-seconds $(($(date +%s) - t0))"
  if ! grep -q "^MATRIX-DONE $k" "$d/console.log"; then
    echo "MATRIX $k guest FAIL guest did not finish (qemu exit $rc$([ $rc = 124 ] && echo ", time-out ${GUEST_TIMEOUT}s")): $(tr -d '\r' <"$d/console.log" | tail -n 5 | tr '\n' ' ' | cut -c1-300)"
  fi
  rm -f "$d/scratch.img" "$d/gpt.img" "$d/nvme.img" "$d/scsi.img"
}

# guest_tp_facts LABEL DIR: the tracepoint prototypes from the BTF the guest
# left on its scratch disk at 200 MiB.
guest_tp_facts() {
  local n
  n=$(tr -d '\r' <"$2/console.log" | awk -v k="$1" '$1 == "FACT" && $2 == k && $3 == "btf-bytes" { print $4 }')
  [ -n "$n" ] || return 0
  dd if="$2/scratch.img" of="$2/btf" bs=1M skip=200 count=$(((n + 1048575) / 1048576)) 2>/dev/null
  truncate -s "$n" "$2/btf"
  sh "$ROOT/tests/matrix/checks.sh" --tp-facts "$2/btf" "$1" "$2"
}

# run_host DIR: the same checks on the running kernel, on a loop device over /dev/shm.
run_host() {
  local d=$1 img loop
  mkdir -p "$d"
  img=$(mktemp /dev/shm/blkrr-matrix.XXXXXX)
  truncate -s 256M "$img"
  if ! loop=$(losetup -f --show "$img" 2>&1); then
    echo "MATRIX host kernel SKIP losetup failed: $loop"
    rm -f "$img"
    return
  fi
  echo "FACT host uname $(uname -r)"
  local sec=0 # securityfs for the lockdown fact, mounted only for the run
  if [ ! -e /sys/kernel/security/lockdown ] && mount -t securityfs securityfs /sys/kernel/security 2>/dev/null; then sec=1; fi
  PATH=$PATH:/usr/sbin sh "$ROOT/tests/matrix/checks.sh" host "$loop" "$BLKRR" "$WORK/matrix_io" "$d"
  [ $sec = 0 ] || umount /sys/kernel/security
  losetup -d "$loop"
  rm -f "$img"
}

# print_table RESULTS KERNEL...: check x kernel, then every non-PASS line in full.
print_table() {
  local res=$1
  shift
  awk -v ks="$*" 'BEGIN { nk = split(ks, K, " ") }
    $1 == "MATRIX" { if (!($3 in seen)) { seen[$3] = 1; C[++nc] = $3 } r[$2, $3] = $4 }
    END { printf "%-16s", "check"; for (i = 1; i <= nk; i++) printf " %-8s", K[i]; print ""
          for (j = 1; j <= nc; j++) { printf "%-16s", C[j]
            for (i = 1; i <= nk; i++) printf " %-8s", ((K[i], C[j]) in r ? r[K[i], C[j]] : "-"); print "" } }' "$res"
  grep -E '^MATRIX [^ ]+ [^ ]+ (FAIL|SKIP)' "$res" || true
}

# print_markdown RESULTS KERNEL...: the measured table of docs/kernels.md
# (kernel facts, `blkrr features`, what the capture ran with, each check).
print_markdown() {
  local res=$1
  shift
  awk -v ks="$*" 'BEGIN { nk = split(ks, K, " ") }
    function add(row, k, v) { if (!(row in seen)) { seen[row] = 1; R[++nr] = row } c[row, k] = v }
    function rest(from,   i, s) { s = $from; for (i = from + 1; i <= NF; i++) s = s " " $i; return s }
    $1 == "FACT" && $3 == "uname" { add("kernel release", $2, $4) }
    $1 == "FACT" && $3 == "btf" { add("BTF (/sys/kernel/btf/vmlinux)", $2, $4) }
    $1 == "FACT" && $3 == "lockdown" { add("lockdown", $2, rest(4)) }
    $1 == "FACT" && $3 ~ /^tp:/ { add("prototype " substr($3, 4) " (after ctx)", $2, "`" rest(4) "`") }
    $1 == "FACT" && $3 == "program_type" { add("bpftool: program type " $4, $2, $5) }
    $1 == "FACT" && $3 == "map_type" { add("bpftool: map type " $4, $2, $5) }
    $1 == "FEATURES" && ($4 == "required" || $4 == "optional") { add("blkrr features: " $3, $2, $5) }
    $1 == "FEATURES" && $3 == "capture:" { add("blkrr features: capture", $2, rest(4)) }
    $1 == "FEATURES" && $3 == "A" && $4 == "capture" { runs[$2] = 1; next }
    $1 == "FEATURES" && runs[$2] && NF >= 4 && $3 != "capture:" { add("capture runs with: " $3, $2, rest(4)) }
    $1 == "FACT" && $3 ~ /^insns:/ { split($3, p, ":"); add("verified insns, " p[2] ": " p[3], $2, $4) }
    $1 == "MATRIX" { add("check " $3, $2, $4 ($4 == "PASS" ? "" : ": " rest(5))) }
    END { printf "|  |"; for (i = 1; i <= nk; i++) printf " %s |", K[i]; print ""
          printf "|---|"; for (i = 1; i <= nk; i++) printf "---|"; print ""
          for (j = 1; j <= nr; j++) { printf "| %s |", R[j]
            for (i = 1; i <= nk; i++) { v = ((R[j], K[i]) in c) ? c[R[j], K[i]] : "-"; gsub(/\|/, "/", v); printf " %s |", v }
            print "" } }' "$res"
}
