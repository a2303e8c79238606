#!/bin/bash
# make install DESTDIR=... from the build tree puts everything where
# configure said (daemons in sbin, the CLI in bin, the units in the unit
# directory with those paths in them, the example configs in
# $(sysconfdir)/cohort, man pages and completion when the tree has them);
# systemd-analyze verify accepts the installed units as they are; a
# second install keeps an operator's edited config (the example goes
# next to it as .example); make uninstall removes everything else.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

command -v systemd-analyze >/dev/null 2>&1 ||
	{ echo "SKIP: no systemd-analyze (Debian package systemd)"; exit 77; }
systemd-analyze --version >/dev/null 2>&1 ||
	{ echo "SKIP: systemd-analyze cannot run here"; exit 77; }

R=$T/root
# The install directories as this build's Makefile has them.
printf 'hi-dirs:\n\t@echo "$(bindir) $(sbindir) $(sysconfdir) $(mandir) $(systemdsystemunitdir) $(datadir)"\n' >"$T/dirs.mk"
read -r bindir sbindir sysconfdir mandir unitdir datadir < <(
	make -s --no-print-directory -C "$top_builddir" -f Makefile -f "$T/dirs.mk" hi-dirs) ||
	fail "cannot read the install directories from $top_builddir/Makefile"
[ -n "$unitdir" ] || { echo "SKIP: configured --with-systemdsystemunitdir=no"; exit 77; }
log() { echo "t720: $*"; }
log "bindir=$bindir sbindir=$sbindir sysconfdir=$sysconfdir unitdir=$unitdir"

make -s --no-print-directory -C "$top_builddir" install DESTDIR="$R" \
	>"$T/install.out" 2>&1 || fail "make install: $(tail -20 "$T/install.out")"

for f in "$bindir/cohort" "$bindir/cohort-local" "$bindir/cohort-pki" \
	"$sbindir/cohortd" "$sbindir/cohort-agent"; do
	[ -x "$R$f" ] || fail "$f was not installed"
done
for c in cohortd.conf cohort-agent.conf client.conf topology.conf; do
	cmp -s "$top_srcdir/etc/$c" "$R$sysconfdir/cohort/$c" ||
		fail "$sysconfdir/cohort/$c is not the example etc/$c"
done
# The example agent config must not make a real server report fake GPUs.
grep -qx 'source = auto' "$R$sysconfdir/cohort/cohort-agent.conf" ||
	fail "the installed cohort-agent.conf does not say source = auto"

# The units, with configure's paths substituted and nothing left over.
for u in cohortd cohort-agent; do
	f=$R$unitdir/$u.service
	[ -r "$f" ] || fail "$unitdir/$u.service was not installed"
	! grep -n '@[a-z]*@' "$f" || fail "$u.service has unsubstituted @...@"
	grep -qx "ExecStart=$sbindir/$u -f -c $sysconfdir/cohort/$u.conf" "$f" ||
		fail "$u.service: ExecStart is not $sbindir/$u -f -c $sysconfdir/cohort/$u.conf: $(grep ExecStart= "$f")"
	grep -q "^Documentation=man:$u(8)" "$f" || fail "$u.service names no man:$u(8)"
done

# Man pages and bash completion, as far as the tree has them.
nman=0
for m in "$top_srcdir"/man/*.[1-8] "$top_srcdir"/man/*.[1-8].in; do
	[ -e "$m" ] || continue
	b=$(basename "${m%.in}")
	[ -r "$R$mandir/man${b##*.}/$b" ] || fail "man page $b was not installed in $mandir/man${b##*.}"
	nman=$((nman + 1))
done
log "$nman man pages installed"
man_opt=--man=no
if [ -r "$R$mandir/man8/cohortd.8" ] && [ -r "$R$mandir/man8/cohort-agent.8" ] &&
	command -v man >/dev/null 2>&1; then
	# systemd-analyze asks man(1) for the units' Documentation= pages.
	man_opt=--man=yes
	export MANPATH="$R$mandir:"
fi
# HD's bash completion: wherever the tree keeps it (a name with
# "completion" in it), it must land in a completions/ directory.
ncomp=$(find "$top_srcdir" -maxdepth 3 -path "$top_srcdir/build" -prune -o \
	-path "$top_srcdir/.git" -prune -o -type f -name '*completion*' -print | grep -v '\.\(c\|h\|o\)$' | wc -l)
if [ "$ncomp" -gt 0 ]; then
	[ -n "$(find "$R" -path '*completions/cohort*' -type f)" ] ||
		fail "the tree has bash completion but none was installed under completions/"
fi
log "bash completion files in the tree: $ncomp"

# systemd-analyze verify on the installed files: --root makes it find the
# ExecStart programs inside DESTDIR; the units they depend on
# (network-online.target, ...) and /bin/kill (ExecReload) come from this
# machine, as they would on a real one.
mkdir -p "$R/lib/systemd" "$R/bin"
cp -r /lib/systemd/system "$R/lib/systemd/" || fail "cannot copy /lib/systemd/system"
cp /bin/kill "$R/bin/kill" || fail "cannot copy /bin/kill"
# Under --root, systemd finds units only in its own directories: units
# installed elsewhere (a --prefix such as make distcheck's) are verified
# as copies in /etc/systemd/system of the root.
vdir=$unitdir
case $unitdir in
/etc/systemd/system | /usr/local/lib/systemd/system | /usr/lib/systemd/system | /lib/systemd/system) ;;
*)
	vdir=/etc/systemd/system
	mkdir -p "$R$vdir"
	cp "$R$unitdir/cohortd.service" "$R$unitdir/cohort-agent.service" "$R$vdir/" ||
		fail "cannot copy the units to $vdir"
	;;
esac
rc=0
systemd-analyze verify --root="$R" "$man_opt" "$R$vdir/cohortd.service" \
	"$R$vdir/cohort-agent.service" >"$T/verify.out" 2>&1 || rc=$?
log "systemd-analyze verify $man_opt (exit $rc):"
sed 's/^/  /' "$T/verify.out"
[ "$rc" -eq 0 ] || fail "systemd-analyze verify failed"
[ ! -s "$T/verify.out" ] || fail "systemd-analyze verify complained"
rm -rf "$R/lib/systemd/system" "$R/bin/kill"
[ "$vdir" = "$unitdir" ] || rm -f "$R$vdir/cohortd.service" "$R$vdir/cohort-agent.service"
rmdir "$R/bin" "$R/lib/systemd" 2>/dev/null || true

# Without -c the daemons read $(sysconfdir)/cohort/NAME.conf, and say so
# when it is missing (this machine has no such file unless installed).
if [ ! -e "$sysconfdir/cohort/cohortd.conf" ]; then
	expect_exit 1 "$R$sbindir/cohortd" -f
	grep -qF "cohortd: no configuration file at $sysconfdir/cohort/cohortd.conf (the default); give one with -c FILE" "$ERR" ||
		fail "cohortd without -c: $(cat "$ERR")"
fi

# The installed example agent config on a machine without NVIDIA's
# driver: the agent refuses to start and says why, instead of
# registering made-up GPUs.
if ! { ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; }; then
	expect_exit 1 timeout 10 "$R$sbindir/cohort-agent" -f -c "$R$sysconfdir/cohort/cohort-agent.conf"
	grep -qF "inventory: source = auto: no GPUs found through NVML (libnvidia-ml.so.1)" "$ERR" &&
		grep -qF "'source = simulated'" "$ERR" ||
		fail "the example agent config without NVML: $(cat "$ERR")"
fi

# An operator's config survives a second install and the uninstall.
conf=$R$sysconfdir/cohort/cohortd.conf
echo '# edited by the operator' >>"$conf"
make -s --no-print-directory -C "$top_builddir" install DESTDIR="$R" \
	>"$T/install2.out" 2>&1 || fail "second make install: $(tail -20 "$T/install2.out")"
tail -1 "$conf" | grep -qx '# edited by the operator' || fail "make install overwrote $sysconfdir/cohort/cohortd.conf"
cmp -s "$top_srcdir/etc/cohortd.conf" "$conf.example" || fail "no cohortd.conf.example next to the edited config"
make -s --no-print-directory -C "$top_builddir" uninstall DESTDIR="$R" \
	>"$T/uninstall.out" 2>&1 || fail "make uninstall: $(tail -20 "$T/uninstall.out")"
[ -r "$conf" ] || fail "make uninstall removed the operator's edited cohortd.conf"
rm -f "$conf"
left=$(find "$R" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"
log "install, verify, reinstall over an edited config, uninstall: ok"
exit 0
