"""A throw-away one-node Slurm cluster for strata's Slurm tests.

    python3 tests/slurm/slurm_cluster.py start DIR   # prints: export SLURM_CONF=DIR/slurm.conf
    python3 tests/slurm/slurm_cluster.py stop DIR

or, from Python:

    with SlurmCluster(DIR) as cluster:        # start() ... stop(), whatever happens
        subprocess.run(["sbatch", ...], env=cluster.env())

    with Cluster(2) as nodes, SlurmCluster(DIR, nodes=nodes) as cluster:
        cluster.run(["sbatch", "--nodes=2", ...])   # one slurmd per simulated node

With nodes (a tests/cluster/cluster.py Cluster), every simulated node runs
a slurmd of its own inside its namespaces (NodeName n0, n1, ...,
NodeHostname its hostname, NodeAddr its address; spool, pid file, log and
TmpFS named by %n), and
slurmctld runs inside node 0, the head node that also computes, where the
batch scripts start: every slurmd reaches it over the simulated network.
Client commands (cluster.run) run inside node 0 too. One munged serves them
all: its socket is a file, and the nodes share the file system. The daemons
enter the node with nsenter (not `ip netns exec`, which mounts a fresh
/sys without /sys/fs/cgroup, where slurmd 22.05 refuses to start).

Everything lives in DIR: a fresh munge key and munged socket, slurm.conf,
the controller's state, slurmd's spool, logs and pid files. Nothing of the
system's own munge or Slurm set-up is read or changed (no /etc/munge,
/etc/slurm, /run, systemd), so it works in a clean CI container as root and
beside any other Slurm on the machine (the ports are picked free).

The daemons run in the foreground (-F, -D) as children of whoever starts
them, their pids recorded in DIR/pids.json, and stop() ends exactly those
(by pid, after checking that each still is ours), after cancelling every job.
Started from a test (attach=True), each daemon also gets PR_SET_PDEATHSIG, so
even a test killed with SIGKILL (ctest's timeout) does not leave them behind.
Each daemon carries STRATA_SLURM_CLUSTER=DIR in its environment, and so do
the slurmstepd processes slurmd starts: stop() sweeps those up too.

Needs root (slurmd runs jobs as their submitter; SlurmUser=root). Installs
slurm-wlm, munge and the PMIx pieces with scripts/lib.sh when missing.
"""

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.environ.get("STRATA_SOURCE_DIR") or os.path.join(HERE, os.pardir, os.pardir))

MARKER = "STRATA_SLURM_CLUSTER"
DAEMONS = ("slurmctld", "munged")  # stop order after every slurmd-*: controller, then munge
# Seconds to wait for a daemon to come up, the node to turn idle, or a
# daemon to exit after SIGTERM; generous for a loaded 2-core CI runner.
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 20


class ClusterError(RuntimeError):
    pass


def ensure_packages():
    """slurm-wlm, munge and Slurm's PMIx plugin, through scripts/lib.sh (apt-get as root)."""
    lib = os.path.join(SOURCE_DIR, "scripts", "lib.sh")
    cmd = f'source "{lib}" && strata_ensure_packages "${{STRATA_SLURM_PACKAGES[@]}}"'
    proc = subprocess.run(["bash", "-c", cmd], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ClusterError(f"could not install the Slurm packages:\n{proc.stdout}{proc.stderr}")


def _free_ports(n):
    """n TCP ports free right now (the kernel's choice; a small race is accepted)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent():
    """preexec_fn: SIGTERM this child when the process that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _become_subreaper():
    """Orphans below this process (slurmstepd, which slurmd double-forks) become
    its children rather than init's, so stop() can reap them: no zombie is
    left for a container's init that may never reap."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_CHILD_SUBREAPER = 36
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1)


def _reap_zombie_children():
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == me:
            try:
                os.waitpid(int(entry), os.WNOHANG)
            except ChildProcessError:
                pass


def _process_table():
    """{pid: (ppid, state)} of every process."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            table[int(entry)] = (int(fields[1]), fields[0])
    return table


def _environ_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return None


def _comm_of(pid):
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def _node_hardware():
    """slurmd -C: (this machine's NodeName, its CPUs, sockets, cores, threads and memory as slurm.conf says them)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("NodeName="))
    fields = dict(f.split("=", 1) for f in line.split())
    keep = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory")
    return fields["NodeName"], " ".join(f"{k}={fields[k]}" for k in keep if k in fields)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class SlurmCluster:
    def __init__(self, root, attach=True, nodes=None):
        self.root = os.path.abspath(root)
        self.attach = attach
        self.nodes = nodes
        self.conf = os.path.join(self.root, "slurm.conf")
        self.munge_socket = os.path.join(self.root, "munge", "munge.socket.2")
        self.log_dir = os.path.join(self.root, "log")
        self.pids_file = os.path.join(self.root, "pids.json")
        self.node = None           # the (first) node's NodeName
        self.node_names = []
        self._procs = {}

    # --- environment for clients ------------------------------------------

    def env(self, extra=None):
        env = dict(os.environ)
        env["SLURM_CONF"] = self.conf
        # Jobs inherit the submitter's environment: keep a caller's own
        # Slurm job (if the tests run inside one) from leaking into ours.
        for key in list(env):
            if key.startswith(("SLURM_JOB", "SLURM_STEP", "SLURM_ARRAY", "SBATCH_", "SRUN_", "SALLOC_")):
                env.pop(key)
        env.update(extra or {})
        return env

    def client_command(self, args):
        """args as run where the cluster's clients run: on the head node, for simulated nodes."""
        return self.nodes.exec_command(0, args) if self.nodes else list(args)

    def run(self, args, check=True, timeout=60, **kw):
        """Runs a Slurm client command against this cluster; returns CompletedProcess."""
        proc = subprocess.run(self.client_command(args), env=self.env(kw.pop("env", None)), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, **kw)
        if check and proc.returncode != 0:
            raise ClusterError(f"{' '.join(args)}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}")
        return proc

    # --- start ---------------------------------------------------------------

    def start(self):
        if os.geteuid() != 0:
            raise ClusterError("the test cluster needs root (slurmd runs jobs as their submitter)")
        ensure_packages()
        for sub in ("munge", "log", "state", "spool", "run", "tmp"):
            os.makedirs(os.path.join(self.root, sub), exist_ok=True)
        # Short NodeNames for simulated nodes (n0, n1, ...): slurmstepd's
        # sockets are SPOOL/NODE/NODE_JOB.STEP, and a Unix socket's path has
        # at most 108 bytes.
        self.node_names = [f"n{n.index}" for n in self.nodes.nodes] if self.nodes else [_node_hardware()[0]]
        self.node = self.node_names[0]
        for name in self.node_names:  # %n in slurm.conf: each slurmd's own
            os.makedirs(os.path.join(self.root, "spool", name), exist_ok=True)
            os.makedirs(os.path.join(self.root, "tmp", name), exist_ok=True)
        if self.attach:
            _become_subreaper()
            # Jobs outlive slurmd; if this process is killed (ctest's timeout),
            # the watchdog, told by PR_SET_PDEATHSIG, ends them and the daemons.
            self._start("watchdog", [sys.executable, os.path.abspath(__file__), "watchdog", self.root],
                        marker=False)
        # munged refuses keys and sockets in directories others can write.
        os.chmod(self.root, 0o755)
        os.chmod(os.path.join(self.root, "munge"), 0o755)
        try:
            self._write_munge_key()
            self._start_munged()
            self._write_conf()
            self._start("slurmctld", self._on_node(0, ["slurmctld", "-D", "-f", self.conf]))
            self._wait(lambda: self.run(["scontrol", "ping"], check=False).stdout.count("is UP") > 0,
                       "slurmctld to answer scontrol ping")
            for i, name in enumerate(self.node_names):
                self._start(f"slurmd-{name}", self._on_node(i, ["slurmd", "-D", "-f", self.conf, "-N", name]))
            self._wait(self._nodes_idle, f"node(s) {','.join(self.node_names)} to be idle")
        except BaseException:
            self.stop()
            raise
        return self

    def start_for_test(self, what="cluster"):
        """start() from a test's setUpClass: a failure to start fails the
        test (AssertionError, with the reason), and the time it took goes
        to stderr."""
        began = time.monotonic()
        try:
            self.start()
        except ClusterError as err:
            raise AssertionError(f"could not start the test cluster: {err}") from err
        print(f"\n{what} up in {time.monotonic() - began:.1f} s ({self.root})", file=sys.stderr)

    def _write_munge_key(self):
        key = os.path.join(self.root, "munge", "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(1024))

    def _start_munged(self):
        m = os.path.join(self.root, "munge")
        self._start("munged", [
            "munged", "--foreground", "--force",
            f"--socket={self.munge_socket}", f"--key-file={m}/munge.key",
            f"--pid-file={m}/munged.pid", f"--seed-file={m}/munged.seed",
            f"--log-file={self.log_dir}/munged.log"])
        self._wait(lambda: subprocess.run(["munge", "-n", "-S", self.munge_socket], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL).returncode == 0,
                   "munged to answer on its socket")

    def _on_node(self, i, argv):
        """argv run inside simulated node i, or as it is without simulated nodes."""
        return self.nodes.exec_command(i, argv) if self.nodes else argv

    def _node_lines(self, hardware):
        if not self.nodes:
            return f"NodeName={self.node} NodeAddr=127.0.0.1 {hardware} State=UNKNOWN\n"
        # Every simulated node has the machine's hardware (they share it).
        return "".join(f"NodeName={name} NodeAddr={n.address} NodeHostname={n.hostname} {hardware} State=UNKNOWN\n"
                       for name, n in zip(self.node_names, self.nodes.nodes))

    def _write_conf(self):
        node_hw = _node_hardware()[1]
        ctld_port, slurmd_port = _free_ports(2)
        # slurmctld starts only on the host SlurmctldHost names (its hostname).
        ctld_host = self.nodes.nodes[0].hostname if self.nodes else self.node
        ctld_addr = self.nodes.nodes[0].address if self.nodes else "127.0.0.1"
        r = self.root
        conf = f"""\
# Generated by tests/slurm/slurm_cluster.py for one test run; everything in {r}.
# %n is the NodeName of the slurmd reading it: each has its own spool, pid
# file, log and TmpFS (PMIx's per-step directories), though all share one
# file system.
ClusterName=strata-test
SlurmctldHost={ctld_host}({ctld_addr})
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire also sets how long a requeued job waits before it may start
# again (120 s by default): 10 s keeps the requeue tests short.
AuthInfo=socket={self.munge_socket},cred_expire=10
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool/%n
SlurmctldPidFile={r}/run/slurmctld.pid
SlurmdPidFile={r}/run/slurmd-%n.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS={r}/tmp/%n
# No cgroups in a container: track processes by parentage, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
# Debian's Open MPI starts under srun through PMIx only (pmi2 fails in OPAL).
MpiDefault=pmix
ReturnToService=2
JobRequeue=1
# Time between SIGTERM and SIGKILL: long enough for a checkpoint at the next step.
KillWait=15
# Keep finished jobs visible to scontrol/squeue for the whole test (no accounting).
MinJobAge=600
InactiveLimit=0
SchedulerType=sched/backfill
# Schedule every 2 s (default: on events, main loop every 60 s, backfill every
# 30 s), so a requeued job starts as soon as it may.
SchedulerParameters=sched_interval=2,bf_interval=2
{self._node_lines(node_hw)}PartitionName=debug Nodes={",".join(self.node_names)} Default=YES MaxTime=INFINITE State=UP
"""
        with open(self.conf, "w", encoding="utf-8") as f:
            f.write(conf)

    def _start(self, name, cmd, marker=True):
        env = dict(os.environ)
        if marker:
            env[MARKER] = self.root
        env["SLURM_CONF"] = self.conf
        log = open(os.path.join(self.log_dir, f"{name}.stdout"), "ab")
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    cwd=self.root, start_new_session=True,
                                    preexec_fn=_die_with_parent if self.attach else None)
        finally:
            log.close()
        self._procs[name] = proc
        self._save_pids()
        # A daemon that dies at once (bad conf, port taken) says why in its log.
        time.sleep(0.2)
        if proc.poll() is not None:
            raise ClusterError(f"{name} exited at once with {proc.returncode}\n{self.logs()}")

    def _save_pids(self):
        pids = {name: p.pid for name, p in self._procs.items()}
        tmp = self.pids_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(pids, f)
        os.replace(tmp, self.pids_file)

    def _wait(self, ready, what, timeout=START_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, p in self._procs.items():
                if p.poll() is not None:
                    raise ClusterError(f"{name} exited with {p.returncode} while waiting for {what}\n{self.logs()}")
            try:
                if ready():
                    return
            except (subprocess.SubprocessError, OSError):
                pass
            time.sleep(0.3)
        raise ClusterError(f"timed out after {timeout} s waiting for {what}\n{self.logs()}")

    def _nodes_idle(self):
        out = self.run(["sinfo", "-h", "-N", "-o", "%t"], check=False).stdout.split()
        return out == ["idle"] * len(self.node_names)

    # --- stop ---------------------------------------------------------------

    def stop(self):
        """Cancels every job, then ends exactly the daemons started here. Idempotent."""
        pids = self._load_pids()
        if not pids:
            return
        if pids.get("slurmctld") and self._ours(pids["slurmctld"]):
            self._cancel_all_jobs()
        slurmds = sorted(name for name in pids if name.startswith("slurmd-"))
        for name in slurmds + list(DAEMONS):
            pid = pids.get(name)
            if pid and self._ours(pid):
                self._terminate(pid)
        # What scancel and slurmd left: slurmstepd and the jobs below them.
        self.kill_strays()
        if pids.get("watchdog") and _alive(pids["watchdog"]):
            self._terminate(pids["watchdog"])
        for p in self._procs.values():
            try:
                p.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self._procs = {}
        if self.attach:
            _reap_zombie_children()
        try:
            os.remove(self.pids_file)
        except FileNotFoundError:
            pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def daemon_pids(self):
        """{name: pid} of the processes started here (munged, slurmctld, slurmd, watchdog)."""
        return dict(self._load_pids())

    def _load_pids(self):
        if self._procs:
            return {name: p.pid for name, p in self._procs.items()}
        try:
            with open(self.pids_file, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def _ours(self, pid):
        """Whether pid still is a process of this cluster (not a recycled pid)."""
        env = _environ_of(pid)
        if env is None or not _alive(pid):
            return False
        if f"{MARKER}={self.root}".encode() in env:
            return True
        # slurmd starts slurmstepd with an empty environment; it keeps
        # slurmd's working directory, which is this cluster's root.
        if (_comm_of(pid) or "").startswith("slurmstepd"):
            try:
                return os.readlink(f"/proc/{pid}/cwd") == self.root
            except OSError:
                return False
        return False

    def _cancel_all_jobs(self):
        try:
            jobs = self.run(["squeue", "-h", "-o", "%A"], check=False, timeout=20).stdout.split()
            if jobs:
                self.run(["scancel"] + jobs, check=False, timeout=20)
                deadline = time.monotonic() + STOP_TIMEOUT_S
                while time.monotonic() < deadline:
                    if not self.run(["squeue", "-h", "-o", "%A"], check=False, timeout=20).stdout.split():
                        break
                    time.sleep(0.5)
        except (subprocess.SubprocessError, OSError):
            pass  # the daemons go anyway; stray steps are swept below

    def _terminate(self, pid):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            self._reap(pid)
            if not _alive(pid):
                return
            time.sleep(0.1)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.2)
        self._reap(pid)

    def _reap(self, pid):
        for p in self._procs.values():
            if p.pid == pid:
                p.poll()

    def stray_processes(self):
        """Live processes of this cluster: the daemons, slurmstepd, and every
        process below them (the jobs), this one excepted."""
        me = os.getpid()
        table = _process_table()
        found = {pid for pid in table if pid != me and self._ours(pid)}
        grew = True
        while grew:  # add descendants until none is new
            new = {pid for pid, (ppid, state) in table.items()
                   if ppid in found and pid not in found and pid != me and state != "Z"}
            found |= new
            grew = bool(new)
        return sorted(found)

    def kill_strays(self):
        """SIGKILL to every stray process; returns what is still alive after a moment."""
        for pid in self.stray_processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self.attach:
                _reap_zombie_children()
            left = self.stray_processes()
            if not left:
                return []
            time.sleep(0.1)
        return left

    # --- diagnostics --------------------------------------------------------

    def logs(self, tail_lines=60):
        """The last lines of every daemon log, for failure messages."""
        parts = []
        if not os.path.isdir(self.log_dir):
            return ""
        for name in sorted(os.listdir(self.log_dir)):
            path = os.path.join(self.log_dir, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.readlines()[-tail_lines:]
            except OSError:
                continue
            if lines:
                parts.append(f"--- {path} (last {len(lines)} lines) ---\n{''.join(lines)}")
        return "\n".join(parts)


def read_text(path):
    """A file's text for a failure message, or why it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as err:
        return f"({path}: {err})"


def watchdog(root):
    """Waits for SIGTERM (PR_SET_PDEATHSIG: the test died), then ends whatever
    of the cluster is left: daemons, slurmstepd, jobs."""
    cluster = SlurmCluster(root, attach=False)

    def sweep(*_):
        cluster.kill_strays()
        sys.exit(0)
    signal.signal(signal.SIGTERM, sweep)
    while True:
        signal.pause()


def main(argv):
    if len(argv) == 3 and argv[1] == "watchdog":
        watchdog(argv[2])
        return 0
    if len(argv) != 3 or argv[1] not in ("start", "stop"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cluster = SlurmCluster(argv[2], attach=False)
    try:
        if argv[1] == "start":
            os.makedirs(cluster.root, exist_ok=True)
            cluster.start()
            print(f"export SLURM_CONF={cluster.conf}")
        else:
            cluster.stop()
            left = cluster.stray_processes()
            if left:
                print(f"still running: {left}", file=sys.stderr)
                return 1
    except ClusterError as err:
        print(f"slurm_cluster: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
