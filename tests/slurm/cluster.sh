#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for tests/integration/test_slurm.py (a
# `judge score --shard auto` job array, merged and compared with a one-machine run).
#
# Idempotent: installs Debian's slurm-wlm and munge when missing (only as root with
# apt-get), makes a munge key when there is none, writes a minimal slurm.conf (no cgroups,
# no accounting, one node called localhost with this machine's CPUs), starts munged,
# slurmctld and slurmd as plain daemons when they are not running (no systemd needed), and
# waits until `sinfo` shows the node idle. Run again, it finds everything up and returns.
#
# It never fails: when a cluster cannot be had here (not root, no apt-get, a daemon that
# will not start) it says why and exits 0, and the test skips with its own reason.
#
#   tests/slurm/cluster.sh          # set up (or check) the cluster
#   tests/slurm/stop.sh             # stop the daemons this script started
#
# Environment: SLURM_SETUP_WAIT_S (default 60): how long to wait for the node to be idle.

set -u
export PATH="/usr/sbin:/sbin:/usr/bin:/bin:$PATH"

MARK="# Written by tests/slurm/cluster.sh (judge's single-node test cluster)."
CONF_DIR=/etc/slurm
CONF="$CONF_DIR/slurm.conf"
STATE_DIR=/var/spool/slurmctld
SPOOL_DIR=/var/spool/slurmd
LOG_DIR=/var/log/slurm
CTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid
MUNGE_KEY=/etc/munge/munge.key
NODE=localhost
WAIT_S="${SLURM_SETUP_WAIT_S:-60}"

say() { echo "slurm: $*"; }

# No cluster here: say why, and exit 0 (the test skips with the reason it finds).
give_up() {
	say "$*; the Slurm test will be skipped"
	exit 0
}

is_root() { [ "$(id -u)" = 0 ]; }

# The node's state as sinfo shows it (idle, mix, alloc, down*, ...; empty: no answer).
node_state() { sinfo -h -N -n "$NODE" -o '%t' 2>/dev/null | head -n 1; }

node_idle() { [ "$(node_state)" = idle ]; }

# Whether the process named in pid file $1 is alive.
pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# ---------------------------------------------------------------------------------------
# The slurm.conf this machine wants: one node with its CPUs and a modest share of memory.
cpus="$(nproc)"
mem_mb="$(awk '/^MemTotal:/ { print int($2 / 1024 / 2) }' /proc/meminfo)"
[ "${mem_mb:-0}" -gt 1024 ] && mem_mb=1024
[ "${mem_mb:-0}" -lt 100 ] && mem_mb=100

wanted="$MARK
ClusterName=judgetest
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MailProg=/bin/true
StateSaveLocation=$STATE_DIR
SlurmdSpoolDir=$SPOOL_DIR
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=60
KillWait=5
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP"

# Already up on that slurm.conf (or on one someone else wrote): nothing to do. (sinfo is
# not asked when our own slurmctld is not running: it would wait ~10 s for it.)
ours() { grep -qxF "$MARK" "$CONF" 2>/dev/null; }
current() { ! ours || [ "$(cat "$CONF")" = "$wanted" ]; }
if command -v sinfo >/dev/null 2>&1 && current && ! { ours && ! pid_alive "$CTLD_PID"; } &&
	node_idle; then
	say "node $NODE is idle (already set up)"
	exit 0
fi

# ---------------------------------------------------------------------------------------
# Packages.
missing=""
for cmd in slurmctld slurmd sbatch sinfo scontrol munged munge unmunge; do
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $cmd"
done
if [ -n "$missing" ]; then
	if ! is_root; then
		give_up "missing:$missing, and installing them needs root"
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		give_up "missing:$missing, and there is no apt-get to install Debian's slurm-wlm and munge"
	fi
	say "installing Debian's slurm-wlm and munge (missing:$missing)"
	# Services are started below, by hand: in a container apt's own start-up is refused.
	if ! { apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			slurm-wlm munge >/dev/null; }; then
		give_up "apt-get could not install slurm-wlm and munge"
	fi
fi
if ! is_root; then
	give_up "the cluster is not running, and starting its daemons needs root"
fi

# ---------------------------------------------------------------------------------------
# munge: a key readable by the munge user only, and munged running as that user.
id munge >/dev/null 2>&1 || give_up "there is no munge user (the munge package did not create it)"
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s "$MUNGE_KEY" ]; then
	say "creating a munge key in $MUNGE_KEY"
	if command -v mungekey >/dev/null 2>&1; then
		mungekey --create --keyfile="$MUNGE_KEY" --force >/dev/null ||
			give_up "mungekey could not create $MUNGE_KEY"
	else
		(umask 077 && dd if=/dev/urandom of="$MUNGE_KEY" bs=1024 count=1 status=none) ||
			give_up "could not write $MUNGE_KEY"
	fi
fi
chown munge:munge "$MUNGE_KEY"
chmod 0400 "$MUNGE_KEY"

munge_works() { munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; }

if ! munge_works; then
	say "starting munged"
	runuser -u munge -- munged
	for _ in $(seq 50); do
		munge_works && break
		sleep 0.1
	done
	munge_works || give_up "munged does not answer (see /var/log/munge/munged.log)"
fi

# ---------------------------------------------------------------------------------------
# slurm.conf: written (and rewritten when it differs from the wanted one) only when ours.
restart=""
if [ -e "$CONF" ] && ! ours; then
	say "$CONF was not written by this script: using it as it is"
elif [ "$(cat "$CONF" 2>/dev/null)" != "$wanted" ]; then
	say "writing $CONF ($cpus CPUs, ${mem_mb} MB)"
	install -d -m 0755 "$CONF_DIR"
	printf '%s\n' "$wanted" >"$CONF.tmp" && mv "$CONF.tmp" "$CONF"
	restart=1
fi
install -d -m 0755 "$STATE_DIR" "$SPOOL_DIR" "$LOG_DIR"

# A daemon of ours still running on an old slurm.conf is stopped, to start on the new one.
stop_pid() {
	local pid
	pid_alive "$1" || return 0
	pid="$(cat "$1")"
	say "restarting $2 (pid $pid) on the new slurm.conf"
	kill "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
}
if [ -n "$restart" ]; then
	stop_pid "$SLURMD_PID" slurmd
	stop_pid "$CTLD_PID" slurmctld
fi

# ---------------------------------------------------------------------------------------
# The daemons (each forks into the background itself).
if ! pid_alive "$CTLD_PID"; then
	say "starting slurmctld"
	slurmctld || give_up "slurmctld did not start (see $LOG_DIR/slurmctld.log)"
fi
for _ in $(seq 100); do
	scontrol ping 2>/dev/null | grep -q 'is UP' && break
	sleep 0.1
done
if ! pid_alive "$SLURMD_PID"; then
	say "starting slurmd"
	slurmd -N "$NODE" || give_up "slurmd did not start (see $LOG_DIR/slurmd.log)"
fi

# ---------------------------------------------------------------------------------------
# Bounded wait for the node. A node left down or drained by an earlier life is resumed once.
resumed=""
deadline=$((SECONDS + WAIT_S))
while [ "$SECONDS" -lt "$deadline" ]; do
	state="$(node_state)"
	case "$state" in
	idle)
		say "node $NODE is idle"
		exit 0
		;;
	down* | drain* | drng* | fail*)
		if [ -z "$resumed" ]; then
			scontrol update nodename="$NODE" state=resume >/dev/null 2>&1
			resumed=1
		fi
		;;
	esac
	sleep 0.5
done
say "slurmctld log (last lines):"
tail -n 5 "$LOG_DIR/slurmctld.log" 2>/dev/null | sed 's/^/slurm:   /'
say "slurmd log (last lines):"
tail -n 5 "$LOG_DIR/slurmd.log" 2>/dev/null | sed 's/^/slurm:   /'
give_up "node $NODE is not idle after ${WAIT_S}s (state: ${state:-none})"
