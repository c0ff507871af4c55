#!/usr/bin/env bash
# run.sh boots a Debian kernel that has kTLS (CONFIG_TLS=m) in qemu and runs
# net/server's TLS tests (and, with KTLS_BENCH=1, the kTLS benchmark) inside
# it, so the kernel TLS path is exercised on hosts whose own kernel cannot
# (`make test-ktls`). Everything comes from Debian's packages: qemu-system-x86
# is installed when missing; the kernel (linux-image-amd64's dependency) and
# busybox-static are fetched with `apt-get download` and unpacked with
# `dpkg -x` into KTLS_WORK, never installed. The guest is an initramfs: busybox,
# the kernel's TLS and crypto modules, and statically linked Go binaries; it
# has loopback only, prints to the serial console, and powers off when the
# tests end. The exit status is the tests'.
#
#   KTLS_WORK     cache and build folder (default: ${TMPDIR:-/tmp}/kzero-ktls)
#   KTLS_RUN      -test.run pattern (default: TLS)
#   KTLS_BENCH=1  also run BenchmarkKTLSConsume (kTLS, user-space TLS, plaintext;
#                 KTLS_BENCHTIME fetches of 1 MiB each, default 256x)
#   KTLS_TIMEOUT  seconds before the guest is killed (default: 900; 3600 with KTLS_BENCH)
#   KTLS_MEM      guest memory (default: 2G)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=${KTLS_WORK:-${TMPDIR:-/tmp}/kzero-ktls}
run=${KTLS_RUN:-TLS}
timeout_s=${KTLS_TIMEOUT:-$([ "${KTLS_BENCH:-}" = 1 ] && echo 3600 || echo 900)}
mem=${KTLS_MEM:-2G}
mkdir -p "$work/debs"

say() { echo "ktls: $*" >&2; }

# qemu, from Debian.
if ! command -v qemu-system-x86_64 >/dev/null; then
	say "installing qemu-system-x86"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86 >&2
fi

# fetch PKG downloads a package's .deb into debs/ (once) and prints its path.
fetch() {
	local f
	f=$(ls "$work/debs/$1"_*.deb 2>/dev/null | head -1 || true)
	if [ -z "$f" ]; then
		(cd "$work/debs" && apt-get download "$1" >&2 2>/dev/null) ||
			{ apt-get update -qq >&2 && (cd "$work/debs" && apt-get download "$1" >&2); }
		f=$(ls "$work/debs/$1"_*.deb | head -1)
	fi
	echo "$f"
}

# The kernel: linux-image-amd64 names the versioned image it depends on.
if [ ! -f "$work/kernel.name" ]; then
	meta=$(fetch linux-image-amd64)
	dpkg-deb -f "$meta" Depends | grep -o 'linux-image-[0-9][^ ,]*-amd64' | head -1 >"$work/kernel.name"
fi
kpkg=$(cat "$work/kernel.name")
kver=${kpkg#linux-image-}
if [ ! -d "$work/kernel/lib/modules/$kver" ]; then
	say "unpacking $kpkg"
	rm -rf "$work/kernel"
	dpkg -x "$(fetch "$kpkg")" "$work/kernel"
fi
if [ ! -x "$work/busybox/bin/busybox" ]; then
	rm -rf "$work/busybox"
	dpkg -x "$(fetch busybox-static)" "$work/busybox"
fi
bb=$work/busybox/bin/busybox
grep -q '^CONFIG_TLS=[ym]' "$work/kernel/boot/config-$kver" || { say "$kpkg has no CONFIG_TLS"; exit 1; }

# The guest's binaries: the net/server tests, static.
say "building the test binary"
(cd "$root" && CGO_ENABLED=0 go test -c -o "$work/server.test" ./net/server/)

# The initramfs.
rootfs=$work/rootfs
rm -rf "$rootfs"
mkdir -p "$rootfs"/{bin,sbin,proc,sys,dev,tmp,etc,lib/modules/"$kver"/kernel}
cp "$bb" "$rootfs/bin/busybox"
for a in sh mount ip modprobe insmod lsmod poweroff cat echo mkdir sleep grep awk; do
	ln -s busybox "$rootfs/bin/$a"
done
ln -s ../bin/busybox "$rootfs/sbin/modprobe" # the kernel's request_module runs /sbin/modprobe
mods=$work/kernel/lib/modules/$kver/kernel
for d in net/tls crypto arch/x86/crypto lib; do
	mkdir -p "$rootfs/lib/modules/$kver/kernel/$d"
	cp -r "$mods/$d/." "$rootfs/lib/modules/$kver/kernel/$d/"
done
find "$rootfs/lib/modules" -name '*.ko.xz' -exec "$bb" unxz {} \;
"$bb" depmod -b "$rootfs" "$kver"
cp "$work/server.test" "$rootfs/bin/"
echo "127.0.0.1 localhost" >"$rootfs/etc/hosts"
bench=
if [ "${KTLS_BENCH:-}" = 1 ]; then
	bench="-test.bench=KTLSConsume -test.benchtime=${KTLS_BENCHTIME:-256x}"
fi
cat >"$rootfs/init" <<INIT
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
echo "ktls-guest: booted"
ip link set lo up
for m in tls gcm ccm ctr ghash_generic ghash_clmulni_intel aesni_intel chacha20poly1305 chacha_x86_64 poly1305_x86_64; do
	modprobe \$m || echo "ktls-guest: modprobe \$m failed"
done
echo "ktls-guest: kernel \$(cat /proc/sys/kernel/osrelease), modules: \$(lsmod | awk 'NR>1{print \$1}' | grep -E '^(tls|gcm|aesni_intel|chacha20poly1305)\$' | tr '\n' ' ')"
cd /tmp
KZERO_KTLS_REQUIRED=1 GOMAXPROCS=\$(grep -c ^processor /proc/cpuinfo) /bin/server.test -test.v -test.count=1 -test.timeout=$((timeout_s > 120 ? timeout_s - 60 : timeout_s))s -test.run '$run' $bench
echo "ktls-guest: exit \$?"
poweroff -f
INIT
chmod +x "$rootfs/init"
(cd "$rootfs" && find . | "$bb" cpio -o -H newc 2>/dev/null | gzip -1 >"$work/initramfs.gz")

cpus=${KTLS_CPUS:-$(nproc)}
log=$work/console.log

# boot ACCEL... runs the guest, its console into $log, and returns qemu's
# status. With KVM it gives up (status 125) when the guest has not reached
# its init within KTLS_KVM_PROBE seconds: nested KVM can hang silently in
# early boot (seen on a Firecracker host), and TCG is then the way.
boot() {
	local probe=$1
	shift
	local cmd=(qemu-system-x86_64 "$@" -smp "$cpus" -m "$mem" -nographic -no-reboot
		-kernel "$work/kernel/boot/vmlinuz-$kver" -initrd "$work/initramfs.gz"
		-append "console=ttyS0 quiet panic=-1 rdinit=/init"
		-nic none)
	say "booting $kpkg: ${cmd[*]}"
	: >"$log"
	timeout -k 10 "$timeout_s" "${cmd[@]}" </dev/null >"$log" 2>&1 &
	local pid=$! shown=0 waited=0
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$probe" -gt 0 ] && [ "$waited" -ge "$probe" ] && ! grep -q 'ktls-guest:' "$log"; then
			say "no sign of the guest after ${probe}s under KVM"
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			return 125
		fi
		sleep 1
		waited=$((waited + 1))
		n=$(wc -l <"$log")
		if [ "$n" -gt "$shown" ]; then
			sed -n "$((shown + 1)),${n}p" "$log"
			shown=$n
		fi
	done
	local rc=0
	wait "$pid" || rc=$?
	sed -n "$((shown + 1)),\$p" "$log"
	return $rc
}

qrc=125
if [ -r /dev/kvm ] && [ -w /dev/kvm ] && [ "${KTLS_ACCEL:-}" != tcg ]; then
	set +e
	boot "${KTLS_KVM_PROBE:-60}" -enable-kvm -cpu host
	qrc=$?
	set -e
	if ! grep -q 'ktls-guest:' "$log"; then
		qrc=125
		say "KVM did not boot the guest; falling back to TCG (software emulation, slower)"
	fi
fi
if [ "$qrc" = 125 ]; then
	set +e
	boot 0 -accel tcg -cpu max
	qrc=$?
	set -e
fi
rc=$(grep -a -o 'ktls-guest: exit [0-9]*' "$log" | tail -1 | awk '{print $3}')
if [ -z "$rc" ]; then
	say "the guest did not finish (qemu exit $qrc, timeout ${timeout_s}s); console in $log"
	exit 1
fi
say "guest tests exit $rc (console in $log)"
exit "$rc"
