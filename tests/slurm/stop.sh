#!/usr/bin/env bash
# Stop the daemons tests/slurm/cluster.sh started (slurmd, slurmctld, munged), each by the
# pid in its pid file; the packages, the munge key and slurm.conf stay, so the next
# cluster.sh only starts them again.

set -u

# Stop the process named in pid file $1 (called $2), and wait for it to be gone.
stop() {
	local pid
	[ -s "$1" ] || return 0
	pid="$(cat "$1")"
	kill -0 "$pid" 2>/dev/null || return 0
	echo "slurm: stopping $2 (pid $pid)"
	kill "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "slurm: $2 (pid $pid) is still running after 10 s"
}

stop /run/slurmd.pid slurmd
stop /run/slurmctld.pid slurmctld
stop /run/munge/munged.pid munged
exit 0
