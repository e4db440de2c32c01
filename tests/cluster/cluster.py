"""A simulated cluster of N nodes on one machine, for strata's multi-node tests.

    with Cluster(2) as cluster:                        # two nodes, torn down whatever happens
        res = cluster.run(2, [STRATA_BIN, "run", "in.toml"], cwd=tmp, timeout=120)
        # 4 ranks: 0-1 on node 0 (10.77.0.1), 2-3 on node 1 (10.77.0.2)

Every node is a network namespace of its own with a UTS namespace (its own
hostname) and a mount namespace (a private /dev/shm); all nodes share the
file system, as the nodes of a real cluster share a parallel file system.
A bridge, in a network namespace of its own, joins one veth per node: node i
has the address 10.77.0.<i+1>/24 on its eth0. Nothing of it lives in the
machine's own network namespace, so any number of clusters (parallel ctest
jobs) coexist with the same addresses, and no route or interface of the host
changes.

Open MPI's mpirun runs inside node 0 and starts its daemons (orted) on the
other nodes through an rsh agent that enters the node's namespaces instead of
logging in. Between nodes, ranks talk over TCP only (--mca btl
self,vader,tcp: the shared-memory transport vader never connects ranks of
different hostnames, and each node's /dev/shm is its own); the TCP transport
and Open MPI's own out-of-band channel are pinned to the cluster's subnet,
so a cut link (cut_link) or a killed node (kill_node) is felt as on a real
cluster.

Each node keeps one holder process (sleep) that owns its UTS and mount
namespaces; kill_node kills every other process of the node, like a machine
whose processes all died, and the node can run again afterwards.

Needs root, ip (iproute2), nsenter and unshare (util-linux), and tc for
limit(); skip_unless_possible() exits 77 with the reason where they are
missing. Names: every namespace is strata-c<PID>-<SEQ>-..., PID the process
that made it; a new Cluster first removes those whose process is gone.
"""

import atexit
import glob
import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SUBNET = "10.77.0.0/24"
PREFIX = "strata-c"
_STALE = re.compile(rf"^{PREFIX}(\d+)-")
# Open MPI's session directories, TMPDIR/ompi.HOSTNAME.UID: a node's
# hostname starts with its cluster's PREFIX and pid.
_SESSION_DIR = re.compile(rf"^ompi\.{PREFIX}(\d+)-")
# Seconds to wait for a node's holder to come up, or for killed processes
# to be gone; generous for a loaded CI machine.
SETTLE_S = 20

_seq = itertools.count()
_live = []          # Clusters not torn down yet, for atexit and SIGTERM
_paths = []         # folders to remove with them (remove_on_exit)
_lock = threading.Lock()


class ClusterError(RuntimeError):
    pass


def _run(argv, check=True, quiet=False):
    """Runs a set-up command; ClusterError with its output when it fails."""
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise ClusterError(f"{shlex.join(argv)} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    if not quiet and proc.returncode != 0:
        print(f"cluster: {shlex.join(argv)}: {proc.stderr.strip()}", file=sys.stderr)
    return proc


def _netns_list():
    proc = _run(["ip", "netns", "list"], check=False, quiet=True)
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def _netns_pids(ns):
    proc = _run(["ip", "netns", "pids", ns], check=False, quiet=True)
    return [int(p) for p in proc.stdout.split()]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_all_in(ns, spare=()):
    """SIGKILLs every process in network namespace ns (but `spare`) until none
    is left: a process may fork while we kill."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        pids = [p for p in _netns_pids(ns) if p not in spare]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            raise ClusterError(f"processes {pids} of {ns} survive SIGKILL")
        time.sleep(0.05)


def _delete_namespaces(names):
    for ns in names:
        _kill_all_in(ns)
    for ns in names:
        _run(["ip", "netns", "delete", ns], check=False, quiet=True)


def remove_stale():
    """Removes the namespaces (and their processes) and temporary
    directories of clusters whose process is gone: what a test killed by
    SIGKILL left behind."""
    stale = []
    for ns in _netns_list():
        m = _STALE.match(ns)
        if m and not _alive(int(m.group(1))):
            stale.append(ns)
    _delete_namespaces(stale)
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        m = _STALE.match(name) or _SESSION_DIR.match(name)
        if m and not _alive(int(m.group(1))):
            shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)


def skip_unless_possible():
    """Exits 77 (ctest: skipped), saying why, unless this process can make
    a cluster: root, the tools, and a network namespace with a veth pair."""
    def skip(why):
        print(f"skipped: a simulated cluster needs {why}", file=sys.stderr)
        sys.exit(77)

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        skip("root (network namespaces and veth pairs)")
    for tool in ("ip", "nsenter", "unshare", "tc"):
        if not shutil.which(tool):
            skip(f"{tool} (Debian: iproute2, util-linux)")
    name = f"{PREFIX}{os.getpid()}-probe"
    try:
        _run(["ip", "netns", "add", name])
        _run(["ip", "-n", name, "link", "add", "name", "probe0", "type", "veth", "peer", "name", "probe1"])
        _run(["nsenter", f"--net=/run/netns/{name}", "unshare", "--uts", "--mount", "true"])
    except ClusterError as err:
        skip(f"network, UTS and mount namespaces and veth pairs, which this machine refuses ({err})")
    finally:
        _run(["ip", "netns", "delete", name], check=False, quiet=True)


class Node:
    """One node: its name, hostname, address and network namespace."""

    def __init__(self, index, prefix):
        self.index = index
        self.name = f"node{index}"
        self.netns = f"{prefix}-n{index}"
        self.hostname = f"{prefix}-n{index}"[:63]
        self.address = f"10.77.0.{index + 1}"
        self.holder = None       # subprocess.Popen owning the UTS and mount namespaces

    def __repr__(self):
        return f"Node({self.name}, {self.hostname}, {self.address})"


_AGENT = r"""#!/bin/sh
# The rsh agent of a simulated cluster: Open MPI runs `AGENT [OPTIONS] HOST
# COMMAND...` as it would run ssh; this enters HOST's namespaces instead and
# runs COMMAND there with sh, as a remote login shell would.
while [ $# -gt 0 ]; do
  case $1 in
    -*) shift ;;
    *) break ;;
  esac
done
host=$1
shift
case $host in
@CASES@
  *) echo "cluster agent: unknown host $host" >&2; exit 255 ;;
esac
exec nsenter --target "$pid" --net --uts --mount -- /bin/sh -c "$*"
"""


def _rate_bytes(rate):
    """Bytes per second of a tc rate like 100mbit, 1gbit, 500kbit."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)bit", rate.strip().lower())
    if not m:
        raise ValueError(f"rate {rate!r}: expected NUMBER[k|m|g]bit, e.g. 100mbit")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return float(m.group(1)) * scale / 8


class Cluster:
    """N nodes joined by a bridge; see the module's text. A context manager:
    torn down on exit, at interpreter exit and on SIGTERM (idempotent)."""

    def __init__(self, nodes, rate=None, tag=None):
        if int(nodes) < 1:
            raise ValueError("a cluster needs at least one node")
        if int(nodes) > 250:
            raise ValueError("at most 250 nodes on one /24")
        remove_stale()
        self.prefix = f"{PREFIX}{os.getpid()}-{next(_seq)}" + (f"-{tag}" if tag else "")
        self.bridge_ns = f"{self.prefix}-br"
        self.nodes = [Node(i, self.prefix) for i in range(int(nodes))]
        self.tmp = tempfile.mkdtemp(prefix=f"{self.prefix}-")
        self.agent = os.path.join(self.tmp, "agent")
        self._down = False
        with _lock:
            _live.append(self)
        _install_handlers()
        try:
            self._build()
            if rate:
                self.limit(rate)
        except BaseException:
            self.close()
            raise

    # --- building and tearing down ------------------------------------------------

    def _build(self):
        _run(["ip", "netns", "add", self.bridge_ns])
        br = ["ip", "-n", self.bridge_ns]
        _run(br + ["link", "add", "name", "br0", "type", "bridge"])
        _run(br + ["link", "set", "br0", "up"])
        for node in self.nodes:
            self._add_node(node)
        self._write_agent()

    def _add_node(self, node):
        _run(["ip", "netns", "add", node.netns])
        port = f"n{node.index}"
        _run(["ip", "-n", self.bridge_ns, "link", "add", "name", port, "type", "veth", "peer", "name", "eth0",
              "netns", node.netns])
        _run(["ip", "-n", self.bridge_ns, "link", "set", port, "master", "br0", "up"])
        nn = ["ip", "-n", node.netns]
        _run(nn + ["addr", "add", f"{node.address}/24", "dev", "eth0"])
        _run(nn + ["link", "set", "eth0", "up"])
        _run(nn + ["link", "set", "lo", "up"])
        # The holder: a UTS namespace (hostname) and a mount namespace with a
        # /dev/shm of its own, inside the node's network namespace; it
        # prints "ready" once both are set and then sleeps until killed.
        setup = (f"hostname {shlex.quote(node.hostname)} && mount -t tmpfs -o size=256m,mode=1777 "
                 f"strata-shm /dev/shm && echo ready && exec sleep infinity")
        node.holder = subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{node.netns}", "unshare", "--uts", "--mount", "--propagation",
             "private", "/bin/sh", "-c", setup],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        line = node.holder.stdout.readline().decode().strip()
        if line != "ready":
            node.holder.kill()
            err = node.holder.communicate()[1].decode()
            raise ClusterError(f"{node.name}: its namespaces did not come up: {err.strip()}")
        # The pid whose namespaces the node is: sh exec'd sleep, the same pid
        # as unshare's child (unshare forks only with --fork).
        node.holder_pid = node.holder.pid

    def _write_agent(self):
        cases = "\n".join(f"  {n.address}|{n.hostname}) pid={n.holder_pid} ;;" for n in self.nodes)
        with open(self.agent, "w", encoding="utf-8") as f:
            f.write(_AGENT.replace("@CASES@", cases))
        os.chmod(self.agent, 0o755)

    def close(self):
        """Kills every process of every node and removes the namespaces
        (their veths go with them) and the temporary directory. Idempotent."""
        if self._down:
            return
        self._down = True
        with _lock:
            if self in _live:
                _live.remove(self)
        names = [n.netns for n in self.nodes] + [self.bridge_ns]
        _delete_namespaces([ns for ns in names if ns in _netns_list()])
        for node in self.nodes:
            if node.holder is not None:
                try:
                    node.holder.kill()
                except ProcessLookupError:
                    pass
                node.holder.wait()
                node.holder.stdout.close()
                node.holder.stderr.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        # A daemon killed with its node leaves its session directory.
        for node in self.nodes:
            for path in glob.glob(os.path.join(tempfile.gettempdir(), f"ompi.{glob.escape(node.hostname)}.*")):
                shutil.rmtree(path, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # --- running --------------------------------------------------------------------

    def exec_command(self, i, argv):
        """argv run inside node i (its network, hostname and /dev/shm), in
        the caller's working directory."""
        node = self.nodes[i]
        return ["nsenter", f"--target={node.holder_pid}", "--net", "--uts", "--mount", "--wd=."] + \
            [str(a) for a in argv]

    def mpirun_command(self, ranks_per_node, args, mpirun_flags=()):
        """The argv that runs `args` on ranks_per_node ranks on every node,
        node-major (ranks 0..k-1 on node 0, ...), mpirun itself in node 0."""
        k = int(ranks_per_node)
        hosts = ",".join(f"{n.address}:{k}" for n in self.nodes)
        mpirun = shutil.which("mpirun") or "mpirun"
        flags = [
            "--host", hosts, "-np", str(k * len(self.nodes)), "--map-by", "slot", "--bind-to", "none",
            "--mca", "plm_rsh_agent", self.agent,
            # Node 0 starts every daemon itself: the agent works from there.
            "--mca", "plm_rsh_no_tree_spawn", "1",
            "--mca", "btl", "self,vader,tcp",
            # The nodes share this machine's cores: a rank waiting in MPI
            # yields its core rather than spin against the others.
            "--mca", "mpi_yield_when_idle", "1",
            "--mca", "btl_tcp_if_include", SUBNET,
            "--mca", "oob_tcp_if_include", SUBNET,
        ]
        return self.exec_command(0, [mpirun] + flags + [str(f) for f in mpirun_flags] + [str(a) for a in args])

    def _env(self, env):
        full = dict(os.environ)
        if os.geteuid() == 0:
            full.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            full.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        # Open MPI's --oversubscribe default of the test environment would
        # let it place ranks beyond the slots named per host.
        full.pop("OMPI_MCA_rmaps_base_oversubscribe", None)
        for key, value in (env or {}).items():
            if value is None:
                full.pop(key, None)
            else:
                full[key] = str(value)
        return full

    def popen(self, ranks_per_node, args, cwd, env=None, mpirun_flags=()):
        """mpirun_command(...) started in its own session (kill its process
        group to end it), stdout and stderr piped."""
        return subprocess.Popen(self.mpirun_command(ranks_per_node, args, mpirun_flags), cwd=cwd,
                                env=self._env(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)

    def run(self, ranks_per_node, args, cwd, timeout, env=None, mpirun_flags=()):
        """Runs mpirun_command(...) to its end: a subprocess.CompletedProcess
        (bytes output). On timeout kills the job on every node and raises
        subprocess.TimeoutExpired."""
        proc = self.popen(ranks_per_node, args, cwd, env, mpirun_flags)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_jobs(proc)
            out, err = proc.communicate()
            raise subprocess.TimeoutExpired(proc.args, timeout, out, err)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def kill_jobs(self, proc=None):
        """SIGKILLs proc's process group and every process on every node."""
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for i in range(len(self.nodes)):
            self.kill_node(i)

    # --- faults ----------------------------------------------------------------------

    def kill_node(self, i):
        """SIGKILLs every process running in node i (its holder excepted,
        so that the node can run again): a node lost with all its ranks."""
        node = self.nodes[i]
        _kill_all_in(node.netns, spare=(node.holder_pid,))

    def node_pids(self, i):
        """The pids of the processes running in node i, its holder excepted."""
        node = self.nodes[i]
        return [p for p in _netns_pids(node.netns) if p != node.holder_pid]

    def _port(self, i):
        return f"n{self.nodes[i].index}"

    def cut_link(self, i):
        """Takes node i's link down (its bridge port): nothing reaches it."""
        _run(["ip", "-n", self.bridge_ns, "link", "set", self._port(i), "down"])

    def restore_link(self, i):
        """Brings node i's link back. The neighbour entries that failed
        while it was down are flushed on every node, or connections would
        see "no route to host" for seconds more."""
        _run(["ip", "-n", self.bridge_ns, "link", "set", self._port(i), "up"])
        for node in self.nodes:
            _run(["ip", "-n", node.netns, "neigh", "flush", "all"], check=False, quiet=True)

    def limit(self, rate, burst_s=0.01):
        """Limits every node's link to `rate` (a tc rate such as 100mbit) in
        both directions with a token bucket; limit(None) removes it.
        burst_s: the seconds of traffic at `rate` the bucket holds, which
        pass at the link's full speed after a pause; a benchmark whose
        messages come in bursts shorter than that wants it small (1 ms)."""
        for node in self.nodes:
            for ns, dev in ((node.netns, "eth0"), (self.bridge_ns, self._port(node.index))):
                if rate is None:
                    _run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root"],
                         check=False, quiet=True)
                    continue
                # The bucket holds at least 10 ms of traffic by default (tbf
                # needs more than one timer tick's worth where the kernel
                # has no high-resolution timers) and never under 64 KiB
                # (one GSO packet of the veth).
                burst = max(65536, int(_rate_bytes(rate) * burst_s))
                _run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf",
                      "rate", rate, "burst", str(burst), "latency", "100ms"])


def remove_on_exit(path):
    """Has `path` (a test's temporary folder) removed with the clusters at
    exit or on SIGTERM, when a test's own clean-up does not run."""
    _install_handlers()
    with _lock:
        _paths.append(path)


def _teardown_all():
    with _lock:
        live = list(_live)
        paths = list(_paths)
        _paths.clear()
    for cluster in live:
        try:
            cluster.close()
        except Exception as err:  # noqa: BLE001  (tear down the others too)
            print(f"cluster: teardown of {cluster.prefix} failed: {err}", file=sys.stderr)
    if not os.environ.get("STRATA_KEEP_TMP"):
        for path in paths:
            shutil.rmtree(path, ignore_errors=True)


_installed = False


def _on_sigterm(signum, frame):
    _teardown_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_handlers():
    """atexit always; SIGTERM (ctest's timeout) where nobody else handles
    it and this is the main thread."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(_teardown_all)
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _on_sigterm)


if __name__ == "__main__":
    # A smoke check by hand: python3 cluster.py [NODES] prints each node's
    # hostname as mpirun sees it.
    skip_unless_possible()
    with Cluster(int(sys.argv[1]) if len(sys.argv) > 1 else 2) as c:
        res = c.run(1, ["hostname"], cwd=c.tmp, timeout=60)
        sys.stdout.write(res.stdout.decode() + res.stderr.decode())
        sys.exit(res.returncode)
