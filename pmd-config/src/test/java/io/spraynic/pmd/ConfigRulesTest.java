package io.spraynic.pmd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Every rule, each broken once, with the exact message: the key, the value, what is allowed, and the fix.
 */
class ConfigRulesTest
{
    private static final String NULL_PORT = """
        [[port]]
        name = "p0"
        kind = "vdev"
        device = "net_null0"
        """;

    private static final String AF_PACKET_PORT = """
        [[port]]
        name = "p0"
        kind = "vdev"
        device = "net_af_packet0"
        """;
    private static final String AF_XDP_PORT = """
        [[port]]
        name = "x0"
        kind = "vdev"
        device = "net_af_xdp0"
        args = { iface = "veth0" }
        """;
    private static final String HUGEPAGES = """
        [eal]
        no_huge = false
        no_pci = false
        """;

    static Stream<Arguments> brokenRules()
    {
        return Stream.of(
            // port kinds: kernel UDP sockets or DPDK, not both
            broken(NULL_PORT + "[[port]]\nname = \"u1\"\nkind = \"udp\"\ndevice = \"127.0.0.1\"\n",
                "port[1].kind = \"udp\": must be a DPDK kind like port[0]'s (\"vdev\"): a NIC runs either on kernel UDP " +
                "sockets or on DPDK (fix: give every plane a port of the same kind)"),
            broken("[[port]]\nname = \"u0\"\nkind = \"udp\"\ndevice = \"127.0.0.1\"\n" + NULL_PORT.replace("p0", "p1"),
                "port[1].kind = \"vdev\": must be \"udp\" like port[0]'s (\"udp\"): a NIC runs either on kernel UDP " +
                "sockets or on DPDK (fix: give every plane a port of the same kind)"),
            // [eal]
            broken("[eal]\nprogram = \" \"\n" + NULL_PORT,
                "eal.program = \" \": must not be blank (fix: use \"spraynic\")"),
            broken("[eal]\nlcores = \"zero\"\n" + NULL_PORT,
                "eal.lcores = \"zero\": must be a core list such as \"0\" or \"0-3,8\", or an lcore map such as " +
                "\"0@(0-1)\" or \"(0-3)@(4-7)\""),
            broken("[eal]\nmemory_mb = 32\n" + NULL_PORT,
                "eal.memory_mb = 32: must be 0 (let EAL decide) or an integer between 64 and 1048576 (fix: use 64)"),
            broken("[eal]\nin_memory = true\n" + NULL_PORT,
                "eal.in_memory = true: must be false when eal.no_huge = true: --in-memory together with --no-huge " +
                "is refused (fix: remove in_memory, or set no_huge = false to use hugepages)"),
            broken("[eal]\nextra_args = [\"--no-telemetry\", \"--in-memory\"]\n" + NULL_PORT,
                "eal.extra_args[1] = \"--in-memory\": must not repeat an EAL option that has its own key " +
                "(fix: use eal.in_memory)"),
            broken("[eal]\nextra_args = [\"-m1024\"]\n" + NULL_PORT,
                "eal.extra_args[0] = \"-m1024\": must not repeat an EAL option that has its own key " +
                "(fix: use eal.memory_mb)"),
            broken("[eal]\nextra_args = [\"--vdev=net_tap0\"]\n" + NULL_PORT,
                "eal.extra_args[0] = \"--vdev=net_tap0\": must not repeat an EAL option that has its own key " +
                "(fix: use a [[port]] with kind = \"vdev\")"),
            broken("[eal]\nextra_args = [\" \"]\n" + NULL_PORT,
                "eal.extra_args[0] = \" \": must not be blank"),
            broken("[eal]\nsocket_mem = [1024]\n" + NULL_PORT,
                "eal.socket_mem = [1024]: must be empty when eal.no_huge = true: --socket-mem reserves hugepages " +
                "(fix: size the memory with memory_mb instead)"),
            broken("[eal]\nhuge_dir = \"/dev/hugepages\"\n" + NULL_PORT,
                "eal.huge_dir = \"/dev/hugepages\": must be empty when eal.no_huge = true: there are no hugepages " +
                "to find (fix: remove huge_dir, or set no_huge = false)"),
            broken(HUGEPAGES + "memory_mb = 1024\nsocket_mem = [1024, 0]\n" + NULL_PORT,
                "eal.socket_mem = [1024, 0]: must be empty when eal.memory_mb is set: EAL refuses -m together with " +
                "--socket-mem (fix: set memory_mb = 0, or remove socket_mem)"),
            broken(HUGEPAGES + "socket_mem = [0, 0]\n" + NULL_PORT,
                "eal.socket_mem = [0, 0]: must reserve memory on at least one socket, e.g. [1024, 0]"),
            broken(HUGEPAGES + "socket_mem = [1024, -1]\n" + NULL_PORT,
                "eal.socket_mem[1] = -1: must be an integer between 0 and 1048576 (fix: use 0)"),
            broken(HUGEPAGES + "huge_dir = \"hugepages\"\n" + NULL_PORT,
                "eal.huge_dir = \"hugepages\": must be an absolute path to a hugetlbfs mount " +
                "(fix: use \"/dev/hugepages\")"),
            broken("[eal]\nfile_prefix = \"a/b\"\n" + NULL_PORT,
                "eal.file_prefix = \"a/b\": must be 1 to 64 letters, digits, '_', '-' or '.': it names a directory " +
                "under /var/run/dpdk"),
            broken("[eal]\niova_mode = \"VA\"\n" + NULL_PORT,
                "eal.iova_mode = \"VA\": must be \"pa\" or \"va\", or left out for EAL's choice (fix: use \"va\")"),
            broken("[eal]\nlog_level = [\"notice\", \"pmd.net.tap:loud\"]\n" + NULL_PORT,
                "eal.log_level[1] = \"pmd.net.tap:loud\": must be a level, or a pattern and a level such as " +
                "\"pmd.net.tap:debug\"; levels: emergency, alert, critical, error, warning, notice, info, debug " +
                "or 1 to 8"),

            // [mempool]
            broken("[mempool]\nname = \"a_mempool_name_that_is_too_long\"\n" + NULL_PORT,
                "mempool.name = \"a_mempool_name_that_is_too_long\": must be 1 to 25 letters, digits, '_' or '-': " +
                "DPDK names the pool's ring \"MP_<name>\" in 29 bytes"),
            broken("[mempool]\nmbufs = 10\n" + NULL_PORT,
                "mempool.mbufs = 10: must be an integer between 64 and 16777215 (fix: use 64)"),
            broken("[mempool]\ncache = 600\n" + NULL_PORT,
                "mempool.cache = 600: must be an integer between 0 and 512 (fix: use 512)"),
            broken("[mempool]\nmbufs = 300\n" + NULL_PORT,
                "mempool.cache = 256: must be at most mempool.mbufs / 1.5 (= 200), as rte_mempool_create requires " +
                "(fix: use 200)"),
            broken("[mempool]\ndata_room = 100\n" + NULL_PORT,
                "mempool.data_room = 100: must be an integer between 256 and 65535 (fix: use 256)"),
            broken("[mempool]\npriv_size = 12\n" + NULL_PORT,
                "mempool.priv_size = 12: must be a multiple of 8 between 0 and 65528 (fix: use 8)"),
            broken("[mempool]\nsocket_id = 40\n" + NULL_PORT,
                "mempool.socket_id = 40: must be an integer between -1 and 31 (fix: use 31)"),
            broken("[mempool]\nmbufs = 2047\n" + NULL_PORT,
                "mempool.mbufs = 2047: must be at least 2304 to fill every port's RX and TX rings (2048) plus one " +
                "lcore cache (256) (fix: use 4095)"),
            broken("[mempool]\nmbufs = 300000\n" + NULL_PORT,
                "mempool.mbufs = 300000: must fit in the 512 MiB reserved by eal.memory_mb: 300000 mbufs of 4672 B " +
                "need 1337 MiB (fix: reserve more memory, or use 114912)"),
            broken(HUGEPAGES + "socket_mem = [16, 0]\n" + NULL_PORT,
                "mempool.mbufs = 8191: must fit in the 16 MiB reserved by eal.socket_mem: 8191 mbufs of 4672 B " +
                "need 37 MiB (fix: reserve more memory, or use 3591)"),
            broken("[eal]\nmemory_mb = 0\n" + NULL_PORT + "rx_descriptors = 16384\n",
                "mempool.mbufs = 8191: must be at least 17664 to fill every port's RX and TX rings (17408) plus one " +
                "lcore cache (256) (fix: use 32767)"),
            broken("[eal]\nmemory_mb = 0\n[mempool]\nmbufs = 32767\n" + NULL_PORT + "rx_descriptors = 16384\n",
                "mempool.mbufs = 32767: must fit in the 64 MiB reserved by EAL's --no-huge default: 32767 mbufs of " +
                "4672 B need 146 MiB (fix: reserve more memory, or use 14364)"),

            // [[port]]
            broken("",
                "port = (missing): must declare at least one [[port]] table"),
            broken(NULL_PORT.repeat(33),
                "port = (33 tables): must declare at most 32 [[port]] tables (RTE_MAX_ETHPORTS)"),
            broken(NULL_PORT.replace("\"p0\"", "\"my port\""),
                "port[0].name = \"my port\": must be 1 to 32 letters, digits, '_' or '-'"),
            broken(NULL_PORT + "rx_queues = 0\n",
                "port[0].rx_queues = 0: must be an integer between 1 and 64 (fix: use 1)"),
            broken(NULL_PORT + "tx_queues = 65\n",
                "port[0].tx_queues = 65: must be an integer between 1 and 64 (fix: use 64)"),
            broken(NULL_PORT + "rx_descriptors = 1000\n",
                "port[0].rx_descriptors = 1000: must be a power of two between 64 and 32768 (fix: use 1024)"),
            broken(NULL_PORT + "tx_descriptors = 65536\n",
                "port[0].tx_descriptors = 65536: must be a power of two between 64 and 32768 (fix: use 32768)"),
            broken(NULL_PORT + "tx_descriptors = 3000\n",
                "port[0].tx_descriptors = 3000: must be a power of two between 64 and 32768 (fix: use 2048)"),
            broken(NULL_PORT + "mtu = 67\n",
                "port[0].mtu = 67: must be an integer between 68 and 9600 (fix: use 68)"),
            broken(NULL_PORT + "mtu = 9000\n",
                "port[0].mtu = 9000: must fit one mbuf: mtu + 18 (Ethernet header and CRC) must be at most " +
                "mempool.data_room - 128 (= 4352) (fix: set mempool.data_room = 9146, or use 4334)"),
            broken(AF_PACKET_PORT + "args = { iface = \"veth0\", framesz = \"8192\", blocksz = \"8192\" }\n",
                "port[0].args.framesz = 8192: must fit one mbuf: framesz - 32 (the packet header) must be at most " +
                "mempool.data_room - 128 (= 4352) (fix: use framesz=4384 or less (4352 with blocksz=69632 holds a 4 KiB-MTU " +
                "frame), or raise mempool.data_room)"),
            broken(AF_PACKET_PORT + "args = { iface = \"veth0\", framesz = \"4390\" }\n",
                "port[0].args.framesz = 4390: must be a multiple of 16 (TPACKET_ALIGNMENT) above 92 (fix: use framesz=4400)"),
            broken(AF_PACKET_PORT + "args = { iface = \"veth0\", framesz = \"4384\" }\n",
                "port[0].args.blocksz = 4096: must be a multiple of both the 4096 B page and framesz (4384): " +
                "net_af_packet lays its ring frames back to back (fix: use blocksz=561152)"),
            broken(AF_PACKET_PORT + "args = { iface = \"veth0\", framesz = \"4352\", blocksz = \"8192\" }\n",
                "port[0].args.blocksz = 8192: must be a multiple of both the 4096 B page and framesz (4352): " +
                "net_af_packet lays its ring frames back to back (fix: use blocksz=69632)"),
            broken(AF_PACKET_PORT + "args = { iface = \"veth0\", framesz = \"big\" }\n",
                "port[0].args.framesz = \"big\": must be an integer between 1 and 1048576"),
            // net_af_xdp: one mbuf per UMEM chunk, a chunk at most a page (the default 4480 B data room is too big)
            broken(AF_XDP_PORT,
                "mempool.data_room = 4480: must be at most 3904 when port[0] (\"x0\") is net_af_xdp: its UMEM chunk " +
                "is one mbuf (128 B header + mempool.priv_size + data_room + 64 B object header = 4672 B), and the " +
                "kernel takes at most one 4096 B page (fix: set mempool.data_room = 2176 (2 KiB frames, as the " +
                "net_af_xdp preset does), at most 3904, and the ports' mtu to fit it)"),
            broken("[mempool]\ndata_room = 3905\n" + AF_XDP_PORT,
                "mempool.data_room = 3905: must be at most 3904 when port[0] (\"x0\") is net_af_xdp: its UMEM chunk " +
                "is one mbuf (128 B header + mempool.priv_size + data_room + 64 B object header = 4097 B), and the " +
                "kernel takes at most one 4096 B page (fix: set mempool.data_room = 2176 (2 KiB frames, as the " +
                "net_af_xdp preset does), at most 3904, and the ports' mtu to fit it)"),
            broken("[mempool]\ndata_room = 3904\npriv_size = 8\n" + AF_XDP_PORT,
                "mempool.data_room = 3904: must be at most 3896 when port[0] (\"x0\") is net_af_xdp: its UMEM chunk " +
                "is one mbuf (128 B header + mempool.priv_size + data_room + 64 B object header = 4104 B), and the " +
                "kernel takes at most one 4096 B page (fix: set mempool.data_room = 2176 (2 KiB frames, as the " +
                "net_af_xdp preset does), at most 3896, and the ports' mtu to fit it)"),
            broken(NULL_PORT + "mac = \"01:00:5e:00:00:01\"\n",
                "port[0].mac = \"01:00:5e:00:00:01\": must be a unicast address that is not all zeros (the first " +
                "octet even) (fix: use a locally administered address such as \"02:00:00:00:00:01\")"),
            broken(NULL_PORT + "mac = \"02:00:00:00:01\"\n",
                "port[0].mac = \"02:00:00:00:01\": must be a MAC address of six hex octets separated by ':', e.g. " +
                "\"02:00:00:00:00:01\""),
            broken(NULL_PORT + "ip = \"10.0.1.300/24\"\n",
                "port[0].ip = \"10.0.1.300/24\": '10.0.1.300' is not an IPv4 address: write four numbers 0-255, e.g. 10.0.0.1"),
            broken(NULL_PORT + "ip = \"10.0.1.10/33\"\n",
                "port[0].ip = \"10.0.1.10/33\": '10.0.1.10/33' has no valid prefix length: write /0 to /32 after the " +
                "address, e.g. 10.0.1.10/24"),
            broken(NULL_PORT + "ip = \"fd00::10/64\"\ngateway = \"fd00:2::1\"\n",
                "port[0].gateway = \"fd00:2::1\": gateway fd00:2::1 is neither inside fd00::10/64 nor link-local " +
                "(fe80::/10): give the router's address on the plane's own link"),
            broken(NULL_PORT + "ip = \"fd00::10/129\"\n",
                "port[0].ip = \"fd00::10/129\": 'fd00::10/129' has no valid prefix length: write /0 to /128 after the " +
                "address, e.g. fd00:1::10/64"),
            broken(NULL_PORT + "ip = \"224.0.0.1/24\"\n",
                "port[0].ip = \"224.0.0.1/24\": address 224.0.0.1 is not a unicast address: give one like 10.0.1.10"),
            broken(NULL_PORT + "ip = \"10.0.1.10/24\"\ngateway = \"10.0.2.1\"\n",
                "port[0].gateway = \"10.0.2.1\": gateway 10.0.2.1 is not inside 10.0.1.10/24: give a gateway on the " +
                "plane's own subnet"),
            broken(NULL_PORT + "ip = \"10.0.1.10\"\ngateway = \"10.0.1.1\"\n",
                "port[0].gateway = \"10.0.1.1\": gateway 10.0.1.1 needs a prefix on the address, e.g. 10.0.1.10/24: " +
                "without one every destination is on-link"),
            broken(NULL_PORT + "gateway = \"10.0.1.1\"\n",
                "port[0].gateway = \"10.0.1.1\": needs the plane's address beside it (fix: add ip = \"10.0.1.10/24\" " +
                "to the port)"),
            broken(NULL_PORT + NULL_PORT.replace("net_null0", "net_null1"),
                "port[1].name = \"p0\": must be unique; port[0] has the same name"),
            broken(NULL_PORT + NULL_PORT.replace("\"p0\"", "\"p1\""),
                "port[1].device = \"net_null0\": must be unique; port[0] (\"p0\") already uses it"),
            broken(pci("0000:3B:00.0") + pci("3b:00.0").replace("\"nic\"", "\"nic1\""),
                "port[1].device = \"3b:00.0\": must be unique; port[0] (\"nic\") already uses it"),
            broken(NULL_PORT.replace("net_null0", "net_nul0"),
                "port[0].device = \"net_nul0\": must be a DPDK virtual device: a driver name followed by an instance " +
                "id, e.g. \"net_null0\"; drivers: net_af_packet, net_af_xdp, net_bonding, net_failsafe, net_kni, " +
                "net_memif, net_null, net_pcap, net_ring, net_softnic, net_tap, net_tun, net_vdev_netvsc, " +
                "net_vhost, net_virtio_user (fix: use \"net_null0\")"),
            broken(NULL_PORT.replace("net_null0", "0000:3b:00.0"),
                "port[0].device = \"0000:3b:00.0\": must be a virtual device name for kind = \"vdev\", e.g. " +
                "\"net_null0\" (fix: set kind = \"pci\")"),
            broken("[eal]\nno_pci = false\n" + NULL_PORT.replace("\"vdev\"", "\"pci\""),
                "port[0].device = \"net_null0\": must be a PCI address domain:bus:device.function for kind = " +
                "\"pci\", e.g. \"0000:3b:00.0\" (fix: set kind = \"vdev\")"),
            broken("[eal]\nno_pci = true\n" + pci("0000:3b:00.0"),
                "eal.no_pci = true: must be false when port[0] (\"nic\") is a PCI port (fix: set no_pci = false)"),
            broken(NULL_PORT + "peer = \"p1\"\n",
                "port[0].peer = \"p1\": must be left out: only ring_pair ports have a peer " +
                "(fix: remove peer, or set kind = \"ring_pair\")"),
            broken(NULL_PORT + "args = \"size=64,,copy=1\"\n",
                "port[0].args = \"size=64,,copy=1\": must be key=value pairs separated by commas, e.g. " +
                "\"iface=veth0,qpairs=1\"; \"\" is not one"),
            broken(NULL_PORT + "args = \"size=[64\"\n",
                "port[0].args = \"size=[64\": must have balanced [brackets]"),
            broken(NULL_PORT + "args = { size = \"64,128\" }\n",
                "port[0].args.size = \"64,128\": must not contain a comma outside [brackets]: EAL splits driver " +
                "arguments on commas"),
            broken(NULL_PORT + "args = { size = \"\" }\n",
                "port[0].args.size = \"\": must not be empty"),
            broken(NULL_PORT + "args = { copy = true }\n",
                "port[0].args.copy = true: must be a string or an integer: drivers spell flags differently, so " +
                "write what the driver expects, e.g. \"yes\" or 1 (fix: write \"yes\"/\"no\" or 1/0, as the driver " +
                "documents)"),
            broken(NULL_PORT + "args = { \"a b\" = 1 }\n",
                "port[0].args.\"a b\" = \"a b\": is not a driver argument name: use letters, digits, '_', '-' or '.'"),

            // ring pairs
            broken(ring("r0", "") + ring("r1", "r0"),
                "port[0].peer = (missing): must name the other ring_pair port of the crossed pair"),
            broken(ring("r0", "r0"),
                "port[0].peer = \"r0\": must name another port: a net_ring vdev already receives its own transmits, " +
                "a ring pair is two ports"),
            broken(ring("r0", "r2") + ring("r1", "r0"),
                "port[0].peer = \"r2\": must name another [[port]] of kind \"ring_pair\"; ring_pair ports: r1"),
            broken(ring("r0", "p0") + NULL_PORT,
                "port[0].peer = \"p0\": must name another [[port]] of kind \"ring_pair\"; there is none: declare " +
                "both sides of the pair"),
            broken(ring("r0", "r1") + ring("r1", "r2") + ring("r2", "r1"),
                "port[1].peer = \"r2\": must be \"r0\", because port[0] names \"r1\" as its peer: a pair is crossed " +
                "both ways (fix: set peer = \"r0\")"),
            broken(ring("r0", "r1") + "tx_queues = 2\n" + ring("r1", "r0"),
                "port[0].tx_queues = 2: must equal port[1].rx_queues (1): a ring pair's TX rings are its peer's RX " +
                "rings (fix: use 1)"),
            broken(ring("r0", "r1") + ring("r1", "r0") + "tx_descriptors = 512\n",
                "port[1].tx_descriptors = 512: must equal port[0].rx_descriptors (1024): one ring carries both " +
                "(fix: use 1024)"),
            broken(ring("r0", "r1") + "args = \"x=1\"\n" + ring("r1", "r0"),
                "port[0].args = \"x=1\": must be left out for a ring_pair port: rte_eth_from_rings takes no driver " +
                "arguments"),
            broken(ring("r0", "r1") + "device = \"ring 0\"\n" + ring("r1", "r0"),
                "port[0].device = \"ring 0\": must be 1 to 63 letters, digits, '_' or '-': the ethdev name given to " +
                "rte_eth_from_rings (fix: leave device out to use the port name)"),

            // driver arguments
            broken(memif("role = \"master\""),
                "port[0].args.role = \"master\": must be \"server\" or \"client\""),
            broken(memif("zero-copy = \"on\""),
                "port[0].args.zero-copy = \"on\": must be \"yes\" or \"no\""),
            broken(memif("role = \"client\", zero-copy = \"yes\""),
                "eal.single_file_segments = false: must be true when port[0] (\"m0\") uses memif zero-copy: the " +
                "client maps the memory one file per segment list (fix: set single_file_segments = true)"),
            broken(afPacket("qpairs = 1") + "rx_queues = 2\n",
                "port[0].rx_queues = 2: must be at most args.qpairs (1): net_af_packet opens one socket per queue " +
                "pair (fix: set args.qpairs = 2, or use 1)"),
            broken(afPacket("qpairs = \"many\""),
                "port[0].args.qpairs = \"many\": must be an integer between 1 and 64"),
            broken(NULL_PORT.replace("net_null0", "net_af_packet0"),
                "port[0].args.iface = (missing): must name the kernel interface net_af_packet binds to, e.g. " +
                "iface = \"veth0\""));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("brokenRules")
    void shouldNameTheKeyTheValueAndWhatIsAllowed(final String toml, final String expected)
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> NicConfig.parse(toml, "t.toml"));

        assertEquals("t.toml: " + expected, ex.getMessage());
        assertEquals(expected, ex.key() + " = " + ex.value() + ": " + ex.allowed() +
            (ex.fix().isEmpty() ? "" : " (fix: " + ex.fix() + ")"));
    }

    @Test
    void shouldTakeAnAfXdpPortWhoseMbufFillsExactlyOnePage()
    {
        final NicConfig config = NicConfig.parse("[mempool]\ndata_room = 3904\n" + AF_XDP_PORT, "t.toml");

        assertEquals(4096, config.mempool().objectSize());
    }

    private static Arguments broken(final String toml, final String message)
    {
        return Arguments.of(toml, message);
    }

    private static String pci(final String address)
    {
        return "[[port]]\nname = \"nic\"\nkind = \"pci\"\ndevice = \"" + address + "\"\n";
    }

    private static String ring(final String name, final String peer)
    {
        return "[[port]]\nname = \"" + name + "\"\nkind = \"ring_pair\"\n" + (peer.isEmpty() ? "" : "peer = \"" + peer + "\"\n");
    }

    private static String memif(final String args)
    {
        return "[[port]]\nname = \"m0\"\nkind = \"vdev\"\ndevice = \"net_memif0\"\nargs = { " + args + " }\n";
    }

    private static String afPacket(final String args)
    {
        return "[[port]]\nname = \"a0\"\nkind = \"vdev\"\ndevice = \"net_af_packet0\"\nargs = { iface = \"veth0\", " +
            args + " }\n";
    }
}
