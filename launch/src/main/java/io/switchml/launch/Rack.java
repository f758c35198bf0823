package io.switchml.launch;

import io.switchml.protocol.LeafRanks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The emulated rack of docs/ARCHITECTURE.md section 7, built from Java with {@code ip}, {@code tc} and {@code nft} (the same
 * topology as {@code bench/rack/rack.sh}): one network namespace per worker and one for the switch, joined by veth
 * pairs to a Linux bridge in the switch namespace (a flat L2 segment, so worker-to-worker traffic crosses the
 * sender's uplink and the receiver's downlink). Both ends of every veth are shaped with tbf at the line rate, with a
 * burst of max(rate x 1 ms, 128 KiB) (so a GSO send of up to 64 KiB crosses it whole), and receives with GRO as a NIC
 * does ({@link #VETH_GRO}), 20 ms of queue on the worker side (a NIC pushes back rather than drops) and
 * 5 ms on a switch port. With switch hosts (a software switch on a server, not the switch chip), the switch process
 * runs in a namespace of its own behind one more veth pair to the bridge, shaped like a worker's link, so all n
 * workers' packets cross that one link (docs/ARCHITECTURE.md section 7). Optionally every receiving side (each worker, the switch's own address) drops a fraction of
 * incoming UDP packets with nftables ({@code numgen random}). Names are unique per run (the JVM's pid and a counter),
 * every command is checked, and {@link #close()} (also run by a JVM shutdown hook, so Ctrl-C cleans up) kills what
 * still runs in the namespaces and deletes them, which removes their veth ends too. Needs root.
 */
public final class Rack implements AutoCloseable {
    /** The subnet of the rack: worker i is {@code .(i+1)}, the switch {@code .254}. */
    static final String SUBNET = "10.77.0";
    /** The switch's address inside the rack. */
    public static final String SWITCH_ADDRESS = SUBNET + ".254";
    /** A host namespace's one link to the fabric (what {@code GLOO_SOCKET_IFNAME} names for PyTorch's Gloo). */
    public static final String HOST_INTERFACE = "eth0";
    /** Queue latency of a worker's NIC and of a switch port (docs/ARCHITECTURE.md section 7). */
    static final String WORKER_LATENCY = "20ms";
    static final String SWITCH_LATENCY = "5ms";
    /**
     * Whether every veth end receives with GRO, as a NIC does by default (system property {@code switchml.rack.vethGro},
     * {@code on} unless {@code off}): packets of one flow that arrive back to back are coalesced before the stack, UDP
     * ones only for a socket that asked for UDP GRO (and, with {@code rx-udp-gro-forwarding}, for forwarding), TCP
     * segments for every socket. GSO sends cross veth, bridge and tbf whole either way.
     */
    static final boolean VETH_GRO = !"off".equalsIgnoreCase(System.getProperty("switchml.rack.vethGro", "on"));
    /** The smallest tbf burst that keeps GSO sends whole. */
    static final long MIN_BURST_BYTES = 128 << 10;
    /** Resolution of the nftables drop rule: {@code numgen random mod 1000000 < p x 1e6}. */
    static final int DROP_RESOLUTION = 1_000_000;
    static final int MAX_WORKERS = 200;
    /** Switch hosts the rack can build (a sharded switch's shards), at .254 downwards, above the workers' addresses. */
    static final int MAX_SWITCH_HOSTS = 16;
    /** Leaf racks under a spine (docs/ARCHITECTURE.md section 9); two digits keep the uplinks' veth names short. */
    static final int MAX_LEAVES = 50;
    /** With leaves: rack i's subnet is {@code 10.77.i.0/24} (its leaf {@code .254}), uplink i's {@code 10.78.i.0/24}. */
    static final String LEAF_SUBNETS = "10.77";
    static final String UPLINK_SUBNETS = "10.78";

    private static final AtomicInteger RUNS = new AtomicInteger();
    private static final Pattern RATE = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)([kmg]?)(bit|bps)?");

    /**
     * How to build a rack.
     *
     * @param workers         worker namespaces, 1..200
     * @param rateBps         line rate of every link, in bit/s
     * @param mtu             MTU of every link and the bridge
     * @param dropProbability probability that each UDP packet is dropped on each receiving side (0: no nftables)
     * @param switchHosts     0: the switch process sits on the bridge (the fabric, as SwitchML's switch chip); K >= 1:
     *                        it runs on K servers of its own, each behind one link at the line rate (K >= 2: one
     *                        switch sharded over them, docs/ARCHITECTURE.md section 10)
     * @param leaves          0: one rack; L: L racks, each with its bridge and its leaf switch on it, rank r in the
     *                        rack of the leaf that serves it, every leaf joined to a spine namespace by one link at
     *                        the line rate (docs/ARCHITECTURE.md section 9)
     * @param ranksPerHost    1: a namespace per worker; R > 1: hosts of R workers each (the workers' namespace is the
     *                        host's), whose ranks sum through one agent and send one contribution over the host's
     *                        link to the switch on the fabric (docs/ARCHITECTURE.md section 16)
     */
    public record Spec(int workers, long rateBps, int mtu, double dropProbability, int switchHosts, int leaves,
                       int ranksPerHost) {
        /** A namespace per worker. */
        public Spec(int workers, long rateBps, int mtu, double dropProbability, int switchHosts, int leaves) {
            this(workers, rateBps, mtu, dropProbability, switchHosts, leaves, 1);
        }

        /** The switch on the fabric. */
        public Spec(int workers, long rateBps, int mtu, double dropProbability) {
            this(workers, rateBps, mtu, dropProbability, 0);
        }

        /** One rack. */
        public Spec(int workers, long rateBps, int mtu, double dropProbability, int switchHosts) {
            this(workers, rateBps, mtu, dropProbability, switchHosts, 0);
        }

        public Spec {
            if (ranksPerHost < 1) {
                throw new IllegalArgumentException("--ranks-per-host must be at least 1, not " + ranksPerHost);
            }
            if (ranksPerHost > 1 && (leaves > 0 || switchHosts > 0)) {
                throw new IllegalArgumentException("--ranks-per-host sends one contribution per host, through its agent, to"
                        + " the switch on the fabric; leave out --leaves and --switch-hosts");
            }
            if (workers % ranksPerHost != 0) {
                throw new IllegalArgumentException(workers + " workers do not fill hosts of " + ranksPerHost + " ranks");
            }
            if (leaves < 0 || leaves > MAX_LEAVES) {
                throw new IllegalArgumentException("--leaves " + leaves + " is outside 1.." + MAX_LEAVES);
            }
            if (leaves > 0 && switchHosts > 0) {
                throw new IllegalArgumentException("--leaves puts a leaf switch on each rack's fabric and a spine on a host"
                        + " of its own; leave out --switch-hosts");
            }
            if (leaves > workers) {
                throw new IllegalArgumentException("--leaves " + leaves + " needs at least one worker per leaf, not "
                        + workers + " workers");
            }
            if (switchHosts < 0) {
                throw new IllegalArgumentException("the number of switch hosts must be at least 1 (or 0 for the switch on"
                        + " the fabric), not " + switchHosts);
            }
            if (switchHosts > MAX_SWITCH_HOSTS) {
                throw new IllegalArgumentException("--switch-hosts " + switchHosts + ": the rack shards the switch over at"
                        + " most " + MAX_SWITCH_HOSTS + " hosts");
            }
            if (workers < 1 || workers > MAX_WORKERS) {
                throw new IllegalArgumentException("a rack has 1.." + MAX_WORKERS + " workers, not " + workers);
            }
            if (rateBps < 8_000) {
                throw new IllegalArgumentException("the rack's rate must be at least 8kbit, not " + rateBps + " bit/s");
            }
            if (mtu < 1280 || mtu > 65_535) {
                throw new IllegalArgumentException("the rack's MTU must be in 1280..65535, not " + mtu);
            }
            if (!(dropProbability >= 0 && dropProbability < 1)) {
                throw new IllegalArgumentException("the rack's drop probability must be in [0, 1), not " + dropProbability);
            }
            if (dropProbability > 0 && Math.round(dropProbability * DROP_RESOLUTION) == 0) {
                throw new IllegalArgumentException("the rack's drop probability " + dropProbability + " is below its"
                        + " resolution, " + 1.0 / DROP_RESOLUTION);
            }
        }

        /** The tbf burst: max(rate x 1 ms, 128 KiB), in bytes. */
        public long burstBytes() {
            return Math.max(rateBps / 8 / 1000, MIN_BURST_BYTES);
        }

        public Spec withWorkers(int n) {
            return new Spec(n, rateBps, mtu, dropProbability, switchHosts, leaves, ranksPerHost);
        }

        /** Worker namespaces: one per host of {@link #ranksPerHost} ranks. */
        public int hosts() {
            return workers / ranksPerHost;
        }

        /**
         * Where the switch sits, as rows print it: {@code fabric}, {@code K-host} for K switch servers, or
         * {@code L-leaves} for L leaf racks under a spine.
         */
        public String topology() {
            return ranksPerHost > 1 ? hosts() + "x" + ranksPerHost + "-agent-per-host"
                    : leaves > 0 ? leaves + "-leaves" : switchHosts == 0 ? "fabric" : switchHosts + "-host";
        }

        public String describe() {
            return workers + " workers, links " + rateBps + " bit/s (tbf burst " + burstBytes() + " B), MTU " + mtu
                    + (VETH_GRO ? ", veth GRO on" : ", veth GRO off")
                    + (ranksPerHost > 1 ? ", " + hosts() + " hosts of " + ranksPerHost + " ranks behind one link each, a"
                    + " host's ranks summing through one agent, the switch on the fabric"
                    : leaves > 0 ? ", " + leaves + " racks with a leaf switch on each fabric, under a spine behind one"
                    + " link per leaf" : switchHosts == 0 ? ", switch on the fabric" : ", switch on " + switchHosts
                    + " server(s) behind one link each")
                    + (dropProbability > 0 ? ", UDP drop probability " + dropProbability + " per receiving side" : "");
        }
    }

    private final Spec spec;
    private final String prefix;
    private final List<String> namespaces = new ArrayList<>();
    private final Thread hook;
    private boolean closed;

    private Rack(Spec spec, String prefix) {
        this.spec = spec;
        this.prefix = prefix;
        this.hook = new Thread(this::close, "switchml-rack-cleanup");
    }

    /** A tc rate ({@code 500mbit}, {@code 1gbit}, {@code 100mbps} = bytes/s, a plain number = bit/s) in bit/s. */
    public static long parseRate(String rate) {
        Matcher m = rate == null ? null : RATE.matcher(rate.trim().toLowerCase(Locale.ROOT));
        if (m == null || !m.matches()) {
            throw new IllegalArgumentException("cannot read the rate '" + rate + "'; write e.g. 500mbit, 1gbit or 100mbps"
                    + " (bytes/s)");
        }
        double v = Double.parseDouble(m.group(1)) * switch (m.group(2)) {
            case "k" -> 1e3;
            case "m" -> 1e6;
            case "g" -> 1e9;
            default -> 1;
        };
        return Math.round("bps".equals(m.group(3)) ? v * 8 : v);
    }

    /** Fails with a clear message unless {@code euid} is root's. */
    public static void requireRoot(long euid) {
        if (euid != 0) {
            throw new LaunchException("the emulated rack (--rack) needs root to create network namespaces, veth pairs and"
                    + " tc/nftables rules; this process runs as uid " + euid + " (try sudo)");
        }
    }

    /** This process's effective uid, from /proc/self/status; -1 when unknown. */
    public static long effectiveUid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return Long.parseLong(line.substring(4).trim().split("\\s+")[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or unreadable: unknown
        }
        return -1;
    }

    /** Checks root and the tools, then builds the rack; on any failure removes what it built. */
    public static Rack create(Spec spec) {
        requireRoot(effectiveUid());
        requireTool("ip", "iproute2", "-V");
        requireTool("tc", "iproute2", "-V");
        if (spec.dropProbability() > 0) {
            requireTool("nft", "nftables", "--version");
        }
        if (VETH_GRO) {
            requireTool("ethtool", "ethtool", "--version");
        }
        int run = RUNS.getAndIncrement();
        String prefix = "sml" + ProcessHandle.current().pid() + (char) ('a' + run % 26);
        Rack rack = new Rack(spec, prefix);
        Runtime.getRuntime().addShutdownHook(rack.hook);
        try {
            rack.build();
            return rack;
        } catch (RuntimeException e) {
            rack.close();
            throw e;
        }
    }

    private static void requireTool(String tool, String pkg, String versionFlag) {
        try {
            Process p = new ProcessBuilder(tool, versionFlag).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new LaunchException("the emulated rack needs '" + tool + "', which is missing (apt-get install " + pkg
                    + "): " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LaunchException("interrupted while looking for " + tool);
        }
    }

    private void build() {
        if (spec.leaves() > 0) {
            buildLeaves();
            return;
        }
        String fabric = fabricNamespace();
        addNamespace(fabric);
        run("ip", "-n", fabric, "link", "set", "lo", "up");
        run("ip", "-n", fabric, "link", "add", "br0", "type", "bridge");
        run("ip", "-n", fabric, "link", "set", "br0", "mtu", String.valueOf(spec.mtu()), "up");
        if (spec.switchHosts() == 0) {
            run("ip", "-n", fabric, "addr", "add", SWITCH_ADDRESS + "/24", "dev", "br0");
            dropUdp(fabric);
        } else {
            for (int i = 0; i < spec.switchHosts(); i++) {
                String host = switchNamespace(i);
                attach(host, "s", i, switchAddress(i));
                dropUdp(host);
            }
        }
        for (int h = 0; h < spec.hosts(); h++) {
            int rank = h * spec.ranksPerHost();
            String ns = workerNamespace(rank);
            attach(ns, "p", h, workerAddress(rank));
            dropUdp(ns);
        }
    }

    /**
     * L racks under a spine: rack i's fabric namespace has its bridge at {@link #leafAddress}, where its leaf switch
     * runs, and one uplink to the spine's namespace (a subnet of its own); rank r sits in its leaf's rack.
     */
    private void buildLeaves() {
        String spine = spineNamespace();
        addNamespace(spine);
        run("ip", "-n", spine, "link", "set", "lo", "up");
        dropUdp(spine);
        for (int i = 0; i < spec.leaves(); i++) {
            String fabric = leafNamespace(i);
            addNamespace(fabric);
            run("ip", "-n", fabric, "link", "set", "lo", "up");
            run("ip", "-n", fabric, "link", "add", "br0", "type", "bridge");
            run("ip", "-n", fabric, "link", "set", "br0", "mtu", String.valueOf(spec.mtu()), "up");
            run("ip", "-n", fabric, "addr", "add", leafAddress(i) + "/24", "dev", "br0");
            dropUdp(fabric);
            uplink(i);
        }
        for (int r = 0; r < spec.workers(); r++) {
            String ns = workerNamespace(r);
            attach(leafNamespace(LeafRanks.leafOf(r, spec.leaves(), spec.workers())), ns, "p", r, workerAddress(r));
            dropUdp(ns);
        }
    }

    /** Leaf i's link to the spine: {@code up0} in the leaf's namespace, {@code l<i>} in the spine's, both shaped. */
    private void uplink(int leaf) {
        String fabric = leafNamespace(leaf);
        String spine = spineNamespace();
        String a = prefix + "au" + leaf;
        String b = prefix + "bu" + leaf;
        String spinePort = "l" + leaf;
        vethPair(a, fabric, b, spine);
        run("ip", "-n", fabric, "link", "set", a, "name", "up0");
        run("ip", "-n", spine, "link", "set", b, "name", spinePort);
        run("ip", "-n", fabric, "addr", "add", leafUplinkAddress(leaf) + "/24", "dev", "up0");
        run("ip", "-n", spine, "addr", "add", spineAddress(leaf) + "/24", "dev", spinePort);
        run("ip", "-n", fabric, "link", "set", "up0", "up");
        run("ip", "-n", spine, "link", "set", spinePort, "up");
        shape(fabric, "up0", SWITCH_LATENCY);
        shape(spine, spinePort, SWITCH_LATENCY);
    }

    /**
     * A host: namespace {@code ns} with {@code eth0} at {@code address}, on bridge port {@code port + index} of the
     * fabric; both ends shaped (the host's NIC with a deep queue, the bridge port with a switch port's).
     */
    private void attach(String ns, String port, int index, String address) {
        attach(fabricNamespace(), ns, port, index, address);
    }

    /** As {@link #attach(String, String, int, String)}, on the bridge of namespace {@code fabric}. */
    private void attach(String fabric, String ns, String port, int index, String address) {
        // Temporary names have at most 15 characters: "sml" + pid (<= 7 digits) + run letter + "a" + tag (<= 3).
        String tag = port.equals("p") ? String.valueOf(index) : port + index;
        String a = prefix + "a" + tag;
        String b = prefix + "b" + tag;
        addNamespace(ns);
        run("ip", "-n", ns, "link", "set", "lo", "up");
        vethPair(a, ns, b, fabric);
        run("ip", "-n", ns, "link", "set", a, "name", HOST_INTERFACE);
        run("ip", "-n", fabric, "link", "set", b, "name", port + index);
        run("ip", "-n", ns, "addr", "add", address + "/24", "dev", HOST_INTERFACE);
        run("ip", "-n", ns, "link", "set", HOST_INTERFACE, "up");
        run("ip", "-n", fabric, "link", "set", port + index, "master", "br0", "up");
        shape(ns, HOST_INTERFACE, WORKER_LATENCY);
        shape(fabric, port + index, SWITCH_LATENCY);
    }

    /** A veth pair at the rack's MTU, end {@code a} moved into namespace {@code nsA} and {@code b} into {@code nsB}. */
    private void vethPair(String a, String nsA, String b, String nsB) {
        try {
            run("ip", "link", "add", a, "mtu", String.valueOf(spec.mtu()), "type", "veth", "peer", "name", b, "mtu",
                    String.valueOf(spec.mtu()));
            run("ip", "link", "set", a, "netns", nsA);
            run("ip", "link", "set", b, "netns", nsB);
            if (VETH_GRO) {
                run("ip", "netns", "exec", nsA, "ethtool", "-K", a, "gro", "on", "rx-udp-gro-forwarding", "on");
                run("ip", "netns", "exec", nsB, "ethtool", "-K", b, "gro", "on", "rx-udp-gro-forwarding", "on");
            }
        } catch (RuntimeException e) {
            runQuietly("ip", "link", "del", a); // still in this namespace: no namespace deletion would remove it
            throw e;
        }
    }

    private void addNamespace(String ns) {
        run("ip", "netns", "add", ns);
        namespaces.add(ns);
    }

    private void shape(String ns, String dev, String latency) {
        run("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", spec.rateBps() + "bit",
                "burst", String.valueOf(spec.burstBytes()), "latency", latency);
    }

    private void dropUdp(String ns) {
        if (spec.dropProbability() <= 0) {
            return;
        }
        long threshold = Math.round(spec.dropProbability() * DROP_RESOLUTION);
        String rules = "table inet rack {\n  chain input {\n    type filter hook input priority 0; policy accept;\n"
                + "    meta l4proto udp numgen random mod " + DROP_RESOLUTION + " < " + threshold + " drop\n  }\n}\n";
        runWithInput(rules, "ip", "netns", "exec", ns, "nft", "-f", "-");
    }

    public Spec spec() {
        return spec;
    }

    /** What every namespace and temporary interface name of this rack starts with. */
    public String prefix() {
        return prefix;
    }

    /** The namespace of the (first) switch process: the fabric's, or the first switch host's. */
    public String switchNamespace() {
        return switchNamespace(0);
    }

    /** The namespace of switch process {@code index}: the fabric's, or switch host {@code index}'s. */
    public String switchNamespace(int index) {
        checkSwitchHost(index);
        return spec.switchHosts() == 0 ? fabricNamespace() : prefix + "-sh" + index;
    }

    /** The address of switch process {@code index}: {@link #SWITCH_ADDRESS} for the first, then downwards. */
    public String switchAddress(int index) {
        checkSwitchHost(index);
        return SUBNET + "." + (254 - index);
    }

    /** How many switch processes the rack runs: its switch hosts, or the one on the fabric. */
    public int switchProcesses() {
        return Math.max(1, spec.switchHosts());
    }

    private void checkSwitchHost(int index) {
        if (index < 0 || index >= switchProcesses()) {
            throw new IllegalArgumentException("switch " + index + " outside the rack's 0.." + (switchProcesses() - 1));
        }
    }

    /** The namespace of the bridge that joins every host. */
    public String fabricNamespace() {
        return prefix + "-sw";
    }

    /** Rank r's namespace: its own, or its host's ({@code r / ranksPerHost}). */
    public String workerNamespace(int rank) {
        checkRank(rank);
        return prefix + "-w" + rank / spec.ranksPerHost();
    }

    public String workerAddress(int rank) {
        checkRank(rank);
        if (spec.leaves() > 0) {
            int leaf = LeafRanks.leafOf(rank, spec.leaves(), spec.workers());
            return LEAF_SUBNETS + "." + leaf + "." + (rank - LeafRanks.firstRank(leaf, spec.leaves(), spec.workers()) + 1);
        }
        return SUBNET + "." + (rank / spec.ranksPerHost() + 1);
    }

    /** With leaves: the namespace of rack i's bridge, where its leaf switch runs. */
    public String leafNamespace(int leaf) {
        checkLeaf(leaf);
        return prefix + "-l" + leaf;
    }

    /** With leaves: the spine switch's namespace. */
    public String spineNamespace() {
        return prefix + "-sp";
    }

    /** With leaves: leaf i's address in its rack, where its workers reach it. */
    public String leafAddress(int leaf) {
        checkLeaf(leaf);
        return LEAF_SUBNETS + "." + leaf + ".254";
    }

    /** With leaves: leaf i's address on its uplink, as the spine sees it. */
    public String leafUplinkAddress(int leaf) {
        checkLeaf(leaf);
        return UPLINK_SUBNETS + "." + leaf + ".1";
    }

    /** With leaves: the spine's address on leaf i's uplink. */
    public String spineAddress(int leaf) {
        checkLeaf(leaf);
        return UPLINK_SUBNETS + "." + leaf + ".254";
    }

    private void checkLeaf(int leaf) {
        if (leaf < 0 || leaf >= spec.leaves()) {
            throw new IllegalArgumentException("leaf " + leaf + " outside the rack's 0.." + (spec.leaves() - 1));
        }
    }

    /** The command prefix that runs a program inside a namespace. */
    public static List<String> inNamespace(String ns) {
        return List.of("ip", "netns", "exec", ns);
    }

    private void checkRank(int rank) {
        if (rank < 0 || rank >= spec.workers()) {
            throw new IllegalArgumentException("rank " + rank + " outside the rack's 0.." + (spec.workers() - 1));
        }
    }

    /** Kills every process still in the rack's namespaces and deletes them (their veth ends go with them). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = namespaces.size() - 1; i >= 0; i--) {
            String ns = namespaces.get(i);
            String pids = runQuietly("ip", "netns", "pids", ns);
            for (String pid : pids.split("\\s+")) {
                if (!pid.isBlank()) {
                    try {
                        ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(ProcessHandle::destroyForcibly);
                    } catch (NumberFormatException ignored) {
                        // not a pid
                    }
                }
            }
            runQuietly("ip", "netns", "del", ns);
        }
        namespaces.clear();
        if (Thread.currentThread() != hook) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // the JVM is shutting down: the hook runs (or ran) this anyway
            }
        }
    }

    private static String run(String... command) {
        return runWithInput(null, command);
    }

    /** Runs a command (with {@code input} on its standard input, if any); its output, or an error naming it. */
    private static String runWithInput(String input, String... command) {
        Result r = exec(input, command);
        if (r.code != 0) {
            throw new LaunchException("rack: '" + String.join(" ", command) + "' failed with exit code " + r.code
                    + (r.error.isBlank() ? "" : ": " + r.error.strip()));
        }
        return r.output;
    }

    private static String runQuietly(String... command) {
        try {
            return exec(null, command).output;
        } catch (RuntimeException e) {
            return "";
        }
    }

    private record Result(int code, String output, String error) {
    }

    private static Result exec(String input, String... command) {
        try {
            Process p = new ProcessBuilder(command).start();
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
            try (var in = p.getOutputStream()) {
                if (input != null) {
                    in.write(input.getBytes(StandardCharsets.UTF_8));
                }
            }
            String out = read(p.getInputStream());
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new LaunchException("rack: '" + String.join(" ", command) + "' did not finish within 60 s");
            }
            return new Result(p.exitValue(), out, err.join());
        } catch (IOException e) {
            throw new LaunchException("rack: cannot run '" + String.join(" ", command) + "': " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LaunchException("rack: interrupted while running '" + String.join(" ", command) + "'");
        }
    }

    private static String read(InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
