package io.spraynic.datapath.port;

import java.util.ArrayList;
import java.util.List;

/**
 * Network namespaces, veth pairs and bridges that one test creates for itself, and removes again: on
 * {@link #close()}, when the JVM is killed (a shutdown hook: a surefire time-out), and before it creates them (the
 * leftovers of an earlier run in a JVM with the same pid). Names end in this JVM's pid, so parallel test JVMs never
 * meet; every command is bounded in time ({@link DpdkTestSupport#run(boolean, String...)}) and fails with its output.
 * Deleting a namespace takes the links inside it, and a veth goes with either end; links this test made in its own
 * (root) namespace are deleted by name. Needs root: {@link #create} skips the test otherwise.
 * <pre>{@code
 * network = TestNetwork.create("a veth pair", NS_A, NS_B); // in @BeforeAll; network.close() in @AfterAll
 * network.veth(NS_A, VETH_A, NS_B, VETH_B).address(NS_B, VETH_B, "10.99.0.2/24");
 * }</pre>
 */
public final class TestNetwork implements AutoCloseable
{
    /** What every name ends in: this JVM's pid, shortened so that an interface name stays within 15 characters. */
    public static final long ID = ProcessHandle.current().pid() % 100_000;

    private static final int INTERFACE_NAME_MAX = 15; // IFNAMSIZ - 1

    private final List<String> namespaces;
    private final List<String> rootLinks = new ArrayList<>();
    private final Thread cleanupHook;

    private TestNetwork(final List<String> namespaces)
    {
        this.namespaces = namespaces;
        this.cleanupHook = new Thread(this::remove, "test-network-cleanup");
    }

    /**
     * @param prefix a few letters that say which test, e.g. {@code sptxa}.
     * @return {@code prefix} and {@link #ID}: unique to this JVM, short enough for an interface name.
     */
    public static String name(final String prefix)
    {
        final String name = prefix + ID;
        if (name.length() > INTERFACE_NAME_MAX)
        {
            throw new IllegalArgumentException(name + " is longer than an interface name may be (15)");
        }
        return name;
    }

    /**
     * Skips the test when not root; removes what an earlier run left; creates the namespaces (loopback down, as
     * {@code ip netns add} leaves it: a spraynic process started in a namespace with loopback up took over 30 s to
     * start on a loaded host; {@link #loopbackUp} where a test needs it).
     *
     * @param needs what the test builds, for the skip message: "... needs root".
     */
    public static TestNetwork create(final String needs, final String... namespaces)
    {
        DpdkTestSupport.assumeRoot(needs);
        final TestNetwork network = new TestNetwork(List.of(namespaces));
        network.remove();
        Runtime.getRuntime().addShutdownHook(network.cleanupHook);
        try
        {
            for (final String ns : namespaces)
            {
                DpdkTestSupport.run("ip", "netns", "add", ns);
            }
        }
        catch (final RuntimeException ex)
        {
            network.close();
            throw ex;
        }
        return network;
    }

    /** Brings the namespaces' loopback up. */
    public TestNetwork loopbackUp(final String... inNamespaces)
    {
        for (final String ns : inNamespaces)
        {
            in(ns, "ip", "link", "set", "lo", "up");
        }
        return this;
    }

    /**
     * Turns IPv6 off in the namespaces (all and default), so that their kernels send nothing on their own: no router
     * solicitations, no duplicate address detection, only what the test sends.
     */
    public TestNetwork disableIpv6(final String... inNamespaces)
    {
        for (final String ns : inNamespaces)
        {
            in(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1");
        }
        return this;
    }

    /**
     * Joins two namespaces with a veth pair, both ends up.
     *
     * @param nsA the namespace of end {@code a}, or null for this test's own namespace (then {@code a} is deleted on
     *            close, and keeps quiet: no IPv6 on it).
     */
    public TestNetwork veth(final String nsA, final String a, final String nsB, final String b)
    {
        if (null == nsA)
        {
            rootLinks.add(a);
            DpdkTestSupport.run(false, "ip", "link", "del", a); // left by an earlier run with this pid
            DpdkTestSupport.run("ip", "link", "add", a, "type", "veth", "peer", "name", b, "netns", nsB);
            DpdkTestSupport.run(false, "sysctl", "-qw", "net.ipv6.conf." + a + ".disable_ipv6=1");
        }
        else
        {
            DpdkTestSupport.run("ip", "link", "add", a, "netns", nsA, "type", "veth", "peer", "name", b, "netns", nsB);
        }
        in(nsA, "ip", "link", "set", a, "up");
        in(nsB, "ip", "link", "set", b, "up");
        return this;
    }

    /**
     * Creates a bridge in {@code ns}, up, with the given member links (which must be there already) and options
     * (e.g. {@code mcast_snooping 0}). Bridged frames skip the namespace's netfilter, as on a plain wire.
     */
    public TestNetwork bridge(final String ns, final String bridge, final List<String> members, final String... options)
    {
        final List<String> add = new ArrayList<>(List.of("ip", "link", "add", bridge, "type", "bridge"));
        add.addAll(List.of(options));
        in(ns, add.toArray(String[]::new));
        // br_netfilter (where loaded) would check and track bridged frames as if routed
        DpdkTestSupport.run(false, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=0",
            "net.bridge.bridge-nf-call-ip6tables=0", "net.bridge.bridge-nf-call-arptables=0");
        for (final String member : members)
        {
            in(ns, "ip", "link", "set", member, "master", bridge);
        }
        in(ns, "ip", "link", "set", bridge, "up");
        return this;
    }

    /** Gives {@code dev} in {@code ns} an address, IPv4 or IPv6 ({@code fd00::1/64}: usable at once, no DAD). */
    public TestNetwork address(final String ns, final String dev, final String cidr)
    {
        if (cidr.indexOf(':') >= 0)
        {
            in(ns, "ip", "-6", "addr", "add", cidr, "dev", dev, "nodad");
        }
        else
        {
            in(ns, "ip", "addr", "add", cidr, "dev", dev);
        }
        return this;
    }

    /** Sets a sysctl, e.g. {@code net.ipv4.ip_forward=1}, in {@code ns}. */
    public TestNetwork sysctl(final String ns, final String... settings)
    {
        final String[] command = new String[settings.length + 2];
        command[0] = "sysctl";
        command[1] = "-qw";
        System.arraycopy(settings, 0, command, 2, settings.length);
        in(ns, command);
        return this;
    }

    /**
     * Runs a command in {@code ns} (null: in this test's own namespace), bounded in time.
     *
     * @return its output; throws with it when the command fails.
     */
    public String in(final String ns, final String... command)
    {
        return null == ns ? DpdkTestSupport.run(command) : DpdkTestSupport.runIn(ns, command);
    }

    /** Removes every namespace and link this network made, whatever is left of them. */
    @Override
    public void close()
    {
        remove();
        try
        {
            Runtime.getRuntime().removeShutdownHook(cleanupHook);
        }
        catch (final IllegalStateException ignored)
        {
            // the JVM is shutting down: the hook runs (or ran) anyway
        }
    }

    private void remove()
    {
        for (final String link : rootLinks)
        {
            DpdkTestSupport.run(false, "ip", "link", "del", link);
        }
        for (final String ns : namespaces)
        {
            DpdkTestSupport.run(false, "ip", "netns", "del", ns);
        }
    }
}
