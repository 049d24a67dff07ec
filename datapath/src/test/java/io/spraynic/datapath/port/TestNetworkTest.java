package io.spraynic.datapath.port;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The namespaces and links tests build: made as asked, and gone afterwards, also when building fails. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TestNetworkTest
{
    private static final String NS_A = TestNetwork.name("sptna");
    private static final String NS_B = TestNetwork.name("sptnb");
    private static final String LOCAL = TestNetwork.name("sptnl");

    @Test
    void shouldBuildAPairOfNamespacesWithAddressesAndRemoveEverythingOnClose()
    {
        try (TestNetwork network = TestNetwork.create("namespaces and veth pairs", NS_A, NS_B))
        {
            network.disableIpv6(NS_A).veth(NS_A, "a0", NS_B, "b0").veth(null, LOCAL, NS_B, "b1")
                .address(NS_A, "a0", "10.123.0.1/24").address(NS_B, "b0", "10.123.0.2/24")
                .address(NS_B, "b1", "fd00:123::2/64");
            assertTrue(namespaces().containsAll(List.of(NS_A, NS_B)));
            assertTrue(network.in(NS_A, "ip", "-br", "addr", "show", "a0").contains("10.123.0.1/24"));
            assertTrue(network.in(NS_B, "ip", "-br", "addr", "show", "b1").contains("fd00:123::2/64"));
            assertEquals("1", network.in(NS_A, "sysctl", "-n", "net.ipv6.conf.all.disable_ipv6").trim());
            assertTrue(network.in(null, "ip", "-br", "link", "show", LOCAL).contains("UP"), "both ends up");
            assertTrue(network.in(NS_A, "ip", "link", "show", "a0").contains("LOWER_UP"), "a carrier: the peer is up");
            assertFalse(network.in(NS_B, "ip", "link", "show", "lo").contains(",UP"), "loopback left down");
            network.loopbackUp(NS_B);
            assertTrue(network.in(NS_B, "ip", "link", "show", "lo").contains(",UP"), "loopback up when asked");
        }
        assertFalse(namespaces().contains(NS_A) || namespaces().contains(NS_B), namespaces().toString());
        assertFalse(linkExists(LOCAL), "the end in the test's own namespace is deleted too");
    }

    @Test
    void shouldRemoveWhatAnEarlierRunLeftBeforeCreating()
    {
        DpdkTestSupport.assumeRoot("network namespaces");
        DpdkTestSupport.run(false, "ip", "netns", "add", NS_A); // a run killed before its clean-up
        try (TestNetwork network = TestNetwork.create("network namespaces", NS_A))
        {
            assertEquals(List.of(NS_A), namespaces().stream().filter(NS_A::equals).toList());
            network.in(NS_A, "true");
        }
        assertFalse(namespaces().contains(NS_A));
    }

    @Test
    void shouldCleanUpWhenBuildingFails()
    {
        final IllegalStateException failed = assertThrows(IllegalStateException.class, () ->
        {
            try (TestNetwork network = TestNetwork.create("network namespaces", NS_A, NS_B))
            {
                network.veth(NS_A, "a0", NS_B, "b0").veth(NS_A, "a0", NS_B, "b9"); // a0 twice: ip refuses
            }
        });
        assertTrue(failed.getMessage().contains("ip link add a0"), failed.getMessage());
        assertFalse(namespaces().contains(NS_A) || namespaces().contains(NS_B), namespaces().toString());
    }

    @Test
    void shouldRefuseANameLongerThanAnInterfaceNameMayBe()
    {
        assertTrue(TestNetwork.name("x").endsWith(Long.toString(TestNetwork.ID)));
        final IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
            () -> TestNetwork.name("averylongprefix"));
        assertTrue(tooLong.getMessage().contains("15"), tooLong.getMessage());
    }

    private static List<String> namespaces()
    {
        return DpdkTestSupport.run("ip", "netns", "list").lines().map(l -> l.split(" ")[0]).toList();
    }

    private static boolean linkExists(final String link)
    {
        return DpdkTestSupport.run(false, "ip", "link", "show", link).contains("state");
    }
}
