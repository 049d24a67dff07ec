package io.spraynic.pmd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NicConfigTest
{
    private static final String NULL_PORT = """
        [[port]]
        name = "p0"
        kind = "vdev"
        device = "net_null0"
        """;

    @Test
    void shouldFillEveryDefaultForAMinimalFile()
    {
        final NicConfig config = NicConfig.parse(NULL_PORT, "t.toml");

        assertEquals("", config.description());
        assertEquals(EalConfig.DEFAULT, config.eal());
        assertEquals(MempoolConfig.DEFAULT, config.mempool());
        assertEquals(List.of(PortConfig.vdev("p0", "net_null0", "")), config.ports());
        assertEquals(List.of("spraynic", "-l", "0", "--no-huge", "-m", "512", "--no-pci", "--vdev=net_null0"),
            config.ealArguments());
    }

    @Test
    void shouldDefaultToThePciBusOnWhenAPortIsPci()
    {
        final NicConfig config = NicConfig.parse(
            "[[port]]\nname = \"nic\"\nkind = \"pci\"\ndevice = \"0000:3b:00.0\"\nargs = \"mprq_en=1\"\n", "t.toml");

        assertFalse(config.eal().noPci());
        assertEquals(List.of("spraynic", "-l", "0", "--no-huge", "-m", "512", "-a", "0000:3b:00.0,mprq_en=1"),
            config.ealArguments());
    }

    @Test
    void shouldLeaveMemoryToEalWithHugepagesUnlessSized()
    {
        final NicConfig config = NicConfig.parse("[eal]\nno_huge = false\nno_pci = true\n" + NULL_PORT, "t.toml");

        assertEquals(EalConfig.MEMORY_UNSET, config.eal().memoryMb());
        assertEquals(List.of("spraynic", "-l", "0", "--no-pci", "--vdev=net_null0"), config.ealArguments());
    }

    @Test
    void shouldReadTheFullExampleWithEveryKey() throws IOException
    {
        final NicConfig config = NicConfig.parse(fullExample(), "full-example.toml");

        assertEquals(List.of("spraynic-node", "--lcores=0@(0-1),1@2", "--no-huge", "-m", "1024",
            "--single-file-segments", "--no-pci", "--file-prefix=node-a", "--iova-mode=va", "--log-level=notice",
            "--log-level=pmd.net.af_packet:debug",
            "--vdev=net_af_packet0,iface=veth0,qpairs=2,blocksz=4096,framesz=2048,framecnt=512",
            "--vdev=net_pcap0,rx_pcap=/tmp/in0.pcap,rx_pcap=/tmp/in1.pcap,tx_pcap=/tmp/out0.pcap,tx_pcap=/tmp/out1.pcap",
            "--no-telemetry"), config.ealArguments());
        assertEquals(new MempoolConfig("node_a_mbufs", 16383, 128, 9344, 64, 0), config.mempool());
        assertEquals(new PortConfig("wire", PortKind.VDEV, "net_af_packet0",
            "iface=veth0,qpairs=2,blocksz=4096,framesz=2048,framecnt=512", "", 2, 2, 1024, 1024, 1500, true,
            "02:53:4e:00:00:0a", "", ""), config.ports().get(0));
        assertEquals(new PortConfig("left", PortKind.RING_PAIR, "ring_left", "", "right", 1, 1, 512, 512, 4200, false,
            "", "", ""), config.ports().get(2));
        assertEquals("right", config.ports().get(3).device());
    }

    @Test
    void shouldRoundTripTheFullExample() throws IOException
    {
        final NicConfig config = NicConfig.parse(fullExample(), "full-example.toml");
        final String written = config.toToml();

        assertEquals(config, NicConfig.parse(written, "written"));
        assertEquals(written, NicConfig.parse(written, "written").toToml());
    }

    @Test
    void shouldParseTheExampleInTheReadme() throws IOException
    {
        final String readme = Files.readString(Path.of("README.md"));
        final int start = readme.indexOf("```toml\n") + "```toml\n".length();
        final String example = readme.substring(start, readme.indexOf("```", start));

        final NicConfig config = NicConfig.parse(example, "README.md");
        assertEquals(List.of("spraynic", "-l", "0", "--no-huge", "-m", "512", "--no-pci", "--file-prefix=node-a",
            "--log-level=notice", "--log-level=pmd.net.af_packet:debug", "--vdev=net_af_packet0,iface=veth0,qpairs=2",
            "--no-telemetry"), config.ealArguments());
        assertEquals(List.of("wire", "left", "right"), config.ports().stream().map(PortConfig::name).toList());
    }

    static Stream<Arguments> presets()
    {
        return PmdConfigs.presetNames().stream().map(name -> Arguments.of(name));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void shouldRoundTripEveryPreset(final String preset)
    {
        final boolean realNic = PmdConfigs.presetTemplate(preset).parameters().stream().anyMatch(p -> p.name().equals("pci"));
        final NicConfig config = PmdConfigs.preset(preset, realNic ? Map.of("pci", "0000:01:00.0") : Map.of());

        assertEquals(config, NicConfig.parse(config.toToml(), preset));
    }

    @Test
    void shouldReadAPlaneAddressWithPrefixAndGatewayAndWriteItBack()
    {
        final NicConfig config = NicConfig.parse(NULL_PORT + "ip = \"10.0.1.10/24\"\ngateway = \"10.0.1.1\"\n", "t");
        final PortConfig port = config.ports().get(0);
        final InterfaceAddress address = port.interfaceAddress();
        assertEquals(new InterfaceAddress(0x0A00010A, 24, 0x0A000101), address);
        assertEquals(0x0A000114, address.nextHop(0x0A000114), "on-link: the peer itself");
        assertEquals(0x0A000101, address.nextHop(0x0A000214), "off-link: the gateway");
        assertEquals("10.0.1.10/24 via 10.0.1.1", address.toString());
        assertEquals(config, NicConfig.parse(config.toToml(), "t"));
        assertTrue(config.describe().contains("ip 10.0.1.10/24 via 10.0.1.1"), config.describe());
    }

    @Test
    void shouldTakeAnAddressWithoutPrefixAsEverythingOnLink()
    {
        final InterfaceAddress address = InterfaceAddress.parse("10.0.0.1", "");
        assertEquals(0, address.prefixLength());
        assertEquals(0x0B000001, address.nextHop(0x0B000001));
        assertEquals(0, InterfaceAddress.parse("10.0.1.10/24", null).nextHop(0x0A000201), "off-link without a gateway");
    }

    @Test
    void shouldWriteEveryEffectiveValueAsToml()
    {
        final NicConfig config = NicConfig.parse(NULL_PORT + "args = { size = 128 }\nmac = \"02:00:00:00:00:01\"\n", "t");

        assertEquals("""
            [eal]
            program = "spraynic"
            lcores = "0"
            no_huge = true
            memory_mb = 512
            in_memory = false
            single_file_segments = false
            no_pci = true

            [mempool]
            name = "spraynic_mbufs"
            mbufs = 8191
            cache = 256
            data_room = 4480
            priv_size = 0
            socket_id = -1

            [[port]]
            name = "p0"
            kind = "vdev"
            device = "net_null0"
            args = "size=128"
            rx_queues = 1
            tx_queues = 1
            rx_descriptors = 1024
            tx_descriptors = 1024
            mtu = 1500
            promiscuous = false
            mac = "02:00:00:00:00:01"
            """, config.toToml());
    }

    @Test
    void shouldDescribeTheEffectiveConfigurationForADryRun()
    {
        final NicConfig config = PmdConfigs.preset("net_ring", Map.of("lcores", "0@(0-1)"));

        assertEquals("""
            net_ring: a crossed pair of ring ports in one process, ring0 <-> ring1
            eal: spraynic '--lcores=0@(0-1)' --no-huge -m 512 --no-pci --file-prefix=spraynic
            mempool spraynic_mbufs: 8191 mbufs of 4672 B (~37 MiB), cache 256, data room 4480, priv 0, socket any
            port[0] ring0: ring_pair ring0 <-> ring1 (rte_eth_from_rings), rx 1x1024, tx 1x1024, mtu 4200, promiscuous off
            port[1] ring1: ring_pair ring1 <-> ring0 (rte_eth_from_rings), rx 1x1024, tx 1x1024, mtu 4200, promiscuous off
            """, config.describe());
    }

    @Test
    void shouldQuoteArgumentsThatAShellWouldSplitOrExpand()
    {
        assertEquals("spraynic -l 0 '--vdev=net_pcap0,tx_pcap=/tmp/a b.pcap' 'it'\\''s'",
            NicConfig.shellCommand(List.of("spraynic", "-l", "0", "--vdev=net_pcap0,tx_pcap=/tmp/a b.pcap", "it's")));
    }

    @Test
    void shouldCheckEveryWithCopyAgainstTheSameRules()
    {
        final NicConfig config = NicConfig.parse(NULL_PORT, "t.toml");

        final ConfigException inMemory = assertThrows(ConfigException.class,
            () -> config.withEal(config.eal().withInMemory(true)));
        assertEquals("eal.in_memory = true: must be false when eal.no_huge = true: --in-memory together with " +
            "--no-huge is refused (fix: remove in_memory, or set no_huge = false to use hugepages)",
            inMemory.getMessage());

        final ConfigException descriptors = assertThrows(ConfigException.class,
            () -> config.withPort(config.ports().getFirst().withDescriptors(1000, 1024)));
        assertEquals("port[0].rx_descriptors = 1000: must be a power of two between 64 and 32768 (fix: use 1024)",
            descriptors.getMessage());
        assertEquals("", descriptors.source());
    }

    @Test
    void shouldReplaceAPortByNameOrAddANewOne()
    {
        final NicConfig config = NicConfig.parse(NULL_PORT, "t.toml");

        final NicConfig replaced = config.withPort(config.ports().getFirst().withQueues(4, 2).withMtu(1400));
        assertEquals(1, replaced.ports().size());
        assertEquals(4, replaced.port("p0").orElseThrow().rxQueues());
        assertEquals(2, replaced.port("p0").orElseThrow().txQueues());
        assertEquals(1400, replaced.port("p0").orElseThrow().mtu());

        final NicConfig added = config.withPort(PortConfig.vdev("tap", "net_tap0", "iface=sn-tap1"));
        assertEquals(List.of("p0", "tap"), added.ports().stream().map(PortConfig::name).toList());
        assertEquals("--vdev=net_tap0,iface=sn-tap1", added.ealArguments().getLast());
        assertTrue(added.port("absent").isEmpty());
    }

    @Test
    void shouldBuildARingPairInCode()
    {
        final NicConfig config = NicConfig.of(EalConfig.DEFAULT.withFilePrefix("pair").withLcores("2"),
            MempoolConfig.DEFAULT, List.of(PortConfig.ringPair("a", "b"), PortConfig.ringPair("b", "a")));

        assertEquals(List.of("spraynic", "-l", "2", "--no-huge", "-m", "512", "--no-pci", "--file-prefix=pair"),
            config.ealArguments());
        assertNotEquals(config, config.withDescription("pair"));
    }

    @Test
    void shouldPutEveryEalOptionInItsDocumentedOrder()
    {
        final EalConfig eal = new EalConfig("prog", "1-2", false, EalConfig.MEMORY_UNSET, List.of(512, 512),
            "/mnt/huge", true, true, false, "x", "pa", List.of("info"), List.of("--no-telemetry", "-b", "0000:00:1f.6"));

        assertEquals(List.of("prog", "-l", "1-2", "--socket-mem=512,512", "--huge-dir=/mnt/huge", "--in-memory",
            "--single-file-segments", "--file-prefix=x", "--iova-mode=pa", "--log-level=info",
            "--vdev=net_null0", "-a", "0000:3b:00.0", "--no-telemetry", "-b", "0000:00:1f.6"),
            eal.toArguments(List.of(PortConfig.vdev("n", "net_null0", ""), PortConfig.pci("x", "0000:3b:00.0", ""),
                PortConfig.ringPair("r", "s"))));
    }

    static Stream<Arguments> wrongTypesAndKeys()
    {
        return Stream.of(
            Arguments.of("[eal]\nno_hugepages = true\n" + NULL_PORT,
                "eal.no_hugepages = true: is not a key of [eal]; allowed keys: program, lcores, no_huge, memory_mb, " +
                "socket_mem, huge_dir, in_memory, single_file_segments, no_pci, file_prefix, iova_mode, log_level, " +
                "extra_args (fix: did you mean no_huge?)"),
            Arguments.of("[mempool]\nmbuf = 4095\n" + NULL_PORT,
                "mempool.mbuf = 4095: is not a key of [mempool]; allowed keys: name, mbufs, cache, data_room, " +
                "priv_size, socket_id (fix: did you mean mbufs?)"),
            Arguments.of(NULL_PORT + "rx_queue = 2\n",
                "port[0].rx_queue = 2: is not a key of [[port]]; allowed keys: name, kind, device, args, peer, " +
                "rx_queues, tx_queues, rx_descriptors, tx_descriptors, mtu, promiscuous, mac, ip, gateway " +
                "(fix: did you mean rx_queues?)"),
            Arguments.of(NULL_PORT.replace("[[port]]", "[[ports]]"),
                "ports = [{ name = \"p0\", kind = \"vdev\", device = \"net_null0\" }]: is not a key of the top level; " +
                "allowed keys: description, capture, eal, mempool, port, dcqcn (fix: did you mean port?)"),
            Arguments.of("[eal.extra]\nx = 1\n" + NULL_PORT,
                "eal.extra = { x = 1 }: is not a key of [eal]; allowed keys: program, lcores, no_huge, memory_mb, " +
                "socket_mem, huge_dir, in_memory, single_file_segments, no_pci, file_prefix, iova_mode, log_level, " +
                "extra_args (fix: did you mean extra_args?)"),
            Arguments.of("unrelated = 1\n" + NULL_PORT,
                "unrelated = 1: is not a key of the top level; allowed keys: description, capture, eal, mempool, port, dcqcn"),
            Arguments.of("eal = \"fast\"\n" + NULL_PORT,
                "eal = \"fast\": must be a table: write [eal] on a line of its own, then its keys"),
            Arguments.of("[port]\nname = \"p0\"\n",
                "port = { name = \"p0\" }: must be an array of tables: write [[port]], not [port] " +
                "(fix: write [[port]])"),
            Arguments.of("port = [1]\n",
                "port[0] = 1: must be a table: write [[port]]"),
            Arguments.of("[eal]\nno_huge = \"true\"\n" + NULL_PORT,
                "eal.no_huge = \"true\": must be true or false (fix: write true without quotes)"),
            Arguments.of("[eal]\nlcores = 0\n" + NULL_PORT,
                "eal.lcores = 0: must be a string (fix: write \"0\")"),
            Arguments.of("[eal]\nfile_prefix = \"\"\n" + NULL_PORT,
                "eal.file_prefix = \"\": must not be empty (fix: leave file_prefix out)"),
            Arguments.of("[eal]\nsocket_mem = \"1024,0\"\n" + NULL_PORT,
                "eal.socket_mem = \"1024,0\": must be an array of MiB per NUMA socket, e.g. [1024, 0] " +
                "(fix: write [1024, 0])"),
            Arguments.of("[eal]\nextra_args = \"--no-telemetry\"\n" + NULL_PORT,
                "eal.extra_args = \"--no-telemetry\": must be an array of strings, one argument each, e.g. " +
                "[\"--no-telemetry\"] (fix: write [\"--no-telemetry\"])"),
            Arguments.of("[eal]\nlog_level = [7]\n" + NULL_PORT,
                "eal.log_level[0] = 7: must be a string (fix: write \"7\")"),
            Arguments.of("[eal]\nmemory_mb = 1e3\n" + NULL_PORT,
                "eal.memory_mb = 1000.0: must be 0 (let EAL decide) or an integer between 64 and 1048576 " +
                "(fix: write 1000)"),
            Arguments.of(NULL_PORT + "rx_queues = \"2\"\n",
                "port[0].rx_queues = \"2\": must be an integer between 1 and 64 (fix: write 2 without quotes)"),
            Arguments.of(NULL_PORT + "mtu = 99999999999999999999\n",
                "port[0].mtu = 99999999999999999999: must be an integer between 68 and 9600 (fix: use 9600)"),
            Arguments.of(NULL_PORT + "rx_descriptors = 4294967296\n",
                "port[0].rx_descriptors = 4294967296: must be a power of two between 64 and 32768 (fix: use 32768)"),
            Arguments.of(NULL_PORT + "args = [\"size=64\"]\n",
                "port[0].args = [\"size=64\"]: must be a table such as { iface = \"veth0\", qpairs = 1 } or a string " +
                "such as \"iface=veth0,qpairs=1\""),
            Arguments.of(NULL_PORT + "args = { size = { bytes = 64 } }\n",
                "port[0].args.size = { bytes = 64 }: must be a string or an integer: drivers spell flags " +
                "differently, so write what the driver expects, e.g. \"yes\" or 1"),
            Arguments.of("[[port]]\nname = \"p0\"\ndevice = \"net_null0\"\n",
                "port[0].kind = (missing): must be one of \"vdev\", \"pci\", \"ring_pair\", \"udp\""),
            Arguments.of(NULL_PORT.replace("\"vdev\"", "\"vdv\""),
                "port[0].kind = \"vdv\": must be one of \"vdev\", \"pci\", \"ring_pair\", \"udp\" (fix: use \"vdev\")"),
            Arguments.of("[[port]]\nname = \"p0\"\nkind = \"vdev\"\n",
                "port[0].device = (missing): must be the virtual device to create, e.g. \"net_null0\""),
            Arguments.of("[[port]]\nname = \"p0\"\nkind = \"pci\"\n",
                "port[0].device = (missing): must be the PCI address of the port, e.g. \"0000:3b:00.0\""),
            Arguments.of("[[port]]\nkind = \"vdev\"\n",
                "port[0].name = (missing): must be the port's name, e.g. \"port0\""),
            Arguments.of(NULL_PORT + "mtu = 1500\nmtu = 1400\n",
                "line 6 = \"mtu = 1400\": must be valid TOML: Duplicate key"),
            Arguments.of("[eal\n" + NULL_PORT,
                "line 1 = \"[eal\": must be valid TOML: Newline not permitted here"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("wrongTypesAndKeys")
    void shouldRefuseUnknownKeysAndWrongTypesNamingWhatIsAllowed(final String toml, final String expected)
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> NicConfig.parse(toml, "t.toml"));

        assertEquals("t.toml: " + expected, ex.getMessage());
    }

    private static String fullExample() throws IOException
    {
        try (InputStream in = NicConfigTest.class.getResourceAsStream("full-example.toml"))
        {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
