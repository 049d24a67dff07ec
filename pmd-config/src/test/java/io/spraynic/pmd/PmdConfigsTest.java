package io.spraynic.pmd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PmdConfigsTest
{
    private static final List<String> NO_HUGE = List.of("spraynic", "-l", "0", "--no-huge", "-m", "512");

    static Stream<Arguments> presetsWithTheirArguments()
    {
        return Stream.of(
            Arguments.of("net_null", Map.of(),
                plus(NO_HUGE, "--no-pci", "--file-prefix=spraynic", "--vdev=net_null0,size=64")),
            Arguments.of("net_ring", Map.of(),
                plus(NO_HUGE, "--no-pci", "--file-prefix=spraynic")),
            Arguments.of("net_tap", Map.of(),
                plus(NO_HUGE, "--no-pci", "--file-prefix=spraynic", "--vdev=net_tap0,iface=sn-tap0")),
            Arguments.of("net_af_packet", Map.of(),
                plus(NO_HUGE, "--no-pci", "--file-prefix=spraynic", "--vdev=net_af_packet0,iface=veth0,qpairs=1,framesz=4352,blocksz=69632,qdisc_bypass=0")),
            Arguments.of("net_af_xdp", Map.of(),
                plus(NO_HUGE, "--no-pci", "--file-prefix=spraynic",
                    "--vdev=net_af_xdp0,iface=veth0,start_queue=0,queue_count=1,busy_budget=0")),
            Arguments.of("net_memif", Map.of(),
                plus(NO_HUGE, "--single-file-segments", "--no-pci", "--file-prefix=spraynic-memif-server",
                    "--vdev=net_memif0,role=server,id=0,socket=/tmp/spraynic-memif.sock,zero-copy=no")),
            Arguments.of("net_pcap", Map.of(),
                plus(NO_HUGE, "--no-pci", "--file-prefix=spraynic", "--vdev=net_pcap0,tx_pcap=/tmp/spraynic-tx.pcap")),
            Arguments.of("udp", Map.of(),
                plus(NO_HUGE, "--no-pci", "--file-prefix=spraynic")),
            Arguments.of("mlx5-bifurcated", Map.of("pci", "0000:3b:00.0"),
                List.of("spraynic", "-l", "0-1", "-m", "1024", "--file-prefix=spraynic", "--iova-mode=va",
                    "-a", "0000:3b:00.0")),
            Arguments.of("vfio-pci-hugepages", Map.of("pci", "0000:01:00.0"),
                List.of("spraynic", "-l", "0-1", "--socket-mem=1024", "--huge-dir=/dev/hugepages",
                    "--file-prefix=spraynic", "--iova-mode=va", "-a", "0000:01:00.0")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presetsWithTheirArguments")
    void shouldLoadEveryPresetWithItsExactEalArguments(
        final String preset, final Map<String, String> params, final List<String> expected)
    {
        assertEquals(expected, PmdConfigs.preset(preset, params).ealArguments());
        assertEquals(expected, PmdConfigs.load(preset, params).ealArguments());
    }

    @Test
    void shouldCoverEveryPresetFileInTheTests() throws IOException
    {
        final Path directory = Path.of("src/main/resources/io/spraynic/pmd/presets");
        try (Stream<Path> files = Files.list(directory))
        {
            final List<String> names = files.map(f -> f.getFileName().toString().replace(".toml", "")).sorted().toList();
            assertEquals(PmdConfigs.presetNames().stream().sorted().toList(), names);
        }
        assertEquals(PmdConfigs.presetNames(), presetsWithTheirArguments().map(a -> a.get()[0]).toList());
    }

    @Test
    void shouldDescribeTheRingPairPresetAsTwoCrossedPorts()
    {
        final NicConfig config = PmdConfigs.preset("net_ring", Map.of());

        assertEquals(List.of(PortKind.RING_PAIR, PortKind.RING_PAIR), config.ports().stream().map(PortConfig::kind).toList());
        assertEquals("ring1", config.port("ring0").orElseThrow().peer());
        assertEquals("ring0", config.port("ring1").orElseThrow().peer());
        assertEquals(List.of(), config.port("ring0").orElseThrow().ealArguments());
    }

    @Test
    void shouldSubstituteAfPacketParametersIntoDevargsAndQueues()
    {
        final NicConfig config = PmdConfigs.preset("net_af_packet", Map.of("iface", "veth1", "queues", "2"));
        final PortConfig port = config.ports().getFirst();

        assertEquals("net_af_packet0,iface=veth1,qpairs=2,framesz=4352,blocksz=69632,qdisc_bypass=0", port.devargs());
        assertEquals(2, port.rxQueues());
        assertEquals(2, port.txQueues());
        assertTrue(port.promiscuous());
    }

    @Test
    void shouldGiveTheMemifClientItsOwnFilePrefixAndZeroCopy()
    {
        final NicConfig config = PmdConfigs.preset("net_memif",
            Map.of("role", "client", "zero_copy", "yes", "socket", "/run/sn/memif.sock", "id", "7"));

        assertEquals(plus(NO_HUGE, "--single-file-segments", "--no-pci", "--file-prefix=spraynic-memif-client",
            "--vdev=net_memif0,role=client,id=7,socket=/run/sn/memif.sock,zero-copy=yes"), config.ealArguments());
    }

    @Test
    void shouldRefuseMemifZeroCopyOnTheServer()
    {
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> PmdConfigs.preset("net_memif", Map.of("zero_copy", "yes")));

        assertEquals("preset net_memif: port[0].args.zero-copy = \"yes\": must be \"no\" unless role = \"client\": " +
            "only a memif client maps the server's buffers (fix: set role = \"client\", or zero-copy = \"no\")",
            ex.getMessage());
        assertEquals("preset net_memif", ex.source());
        assertEquals("port[0].args.zero-copy", ex.key());
        assertEquals("\"yes\"", ex.value());
    }

    @Test
    void shouldSubstituteCommonParametersIntoEveryVirtualDevicePreset()
    {
        final NicConfig config = PmdConfigs.preset("net_pcap",
            Map.of("pcap", "/var/tmp/out.pcap", "lcores", "0@(0-1)", "memory_mb", "256", "file_prefix", "node-b"));

        assertEquals(List.of("spraynic", "--lcores=0@(0-1)", "--no-huge", "-m", "256", "--no-pci",
            "--file-prefix=node-b", "--vdev=net_pcap0,tx_pcap=/var/tmp/out.pcap"), config.ealArguments());
    }

    @Test
    void shouldTurnACommaSeparatedSocketMemParameterIntoOneEntryPerSocket()
    {
        final NicConfig config = PmdConfigs.preset("vfio-pci-hugepages",
            Map.of("pci", "01:00.1", "socket_mem", "0,2048", "iova_mode", "pa", "queues", "4"));

        assertEquals(List.of("spraynic", "-l", "0-1", "--socket-mem=0,2048", "--huge-dir=/dev/hugepages",
            "--file-prefix=spraynic", "--iova-mode=pa", "-a", "01:00.1"), config.ealArguments());
        assertEquals(4, config.ports().getFirst().rxQueues());
    }

    @Test
    void shouldRequireThePciAddressOfARealNic()
    {
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> PmdConfigs.preset("mlx5-bifurcated", Map.of()));

        assertEquals("preset mlx5-bifurcated: ${pci} = (missing): is a required parameter: it has no default " +
            "(fix: pass pci=<value>)", ex.getMessage());
    }

    @Test
    void shouldRefuseAnUnknownParameterNamingTheParameters()
    {
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> PmdConfigs.preset("net_tap", Map.of("ifac", "tap9")));

        assertEquals("preset net_tap: ${ifac} = \"tap9\": is not a parameter of this configuration; " +
            "parameters: lcores, memory_mb, file_prefix, iface (fix: did you mean iface?)", ex.getMessage());
    }

    @Test
    void shouldRefuseAnUnknownPresetNamingThePresets()
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> PmdConfigs.load("net_nul", Map.of()));

        assertEquals("preset = \"net_nul\": must be one of net_null, net_ring, net_tap, net_af_packet, net_af_xdp, " +
            "net_memif, net_pcap, udp, mlx5-bifurcated, vfio-pci-hugepages, or a path to a .toml file (fix: did you mean net_null?)",
            ex.getMessage());
        assertEquals("preset", ex.key());
    }

    @Test
    void shouldReportAParameterThatBreaksANumberAsATomlErrorOnItsLine()
    {
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> PmdConfigs.preset("net_null", Map.of("queues", "two")));

        assertEquals("preset net_null", ex.source());
        assertEquals("line 27", ex.key());
        assertEquals("\"rx_queues = two\"", ex.value());
        assertTrue(ex.allowed().startsWith("must be valid TOML: "), ex.allowed());
    }

    @Test
    void shouldTellPresetNamesFromPaths()
    {
        assertTrue(PmdConfigs.isPresetName("net_null"));
        assertTrue(PmdConfigs.isPresetName("mlx5-bifurcated"));
        assertFalse(PmdConfigs.isPresetName("./net_null"));
        assertFalse(PmdConfigs.isPresetName("my-nic.toml"));
        assertFalse(PmdConfigs.isPresetName("/etc/spraynic/nic"));
    }

    @Test
    void shouldLoadAFileWithParametersAndNameItInErrors(@TempDir final Path dir) throws IOException
    {
        final Path file = dir.resolve("nic.toml");
        Files.writeString(file, """
            [[port]]
            name = "p0"
            kind = "vdev"
            device = "net_tap${n:-0}"
            rx_queues = ${q}
            """);

        assertEquals("--vdev=net_tap3", PmdConfigs.load(file.toString(), Map.of("n", "3", "q", "1")).ealArguments().getLast());
        assertEquals("net_tap0", PmdConfigs.file(file, Map.of("q", "2")).ports().getFirst().device());

        final ConfigException ex = assertThrows(ConfigException.class,
            () -> PmdConfigs.file(file, Map.of("q", "0")));
        assertEquals(file + ": port[0].rx_queues = 0: must be an integer between 1 and 64 (fix: use 1)",
            ex.getMessage());
    }

    @Test
    void shouldNameAMissingFile(@TempDir final Path dir)
    {
        final Path missing = dir.resolve("absent.toml");
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> PmdConfigs.load(missing.toString(), Map.of()));

        assertEquals("file = \"" + missing + "\": must be a readable UTF-8 TOML file (NoSuchFileException)",
            ex.getMessage());
    }

    @Test
    void shouldListEachPresetsParametersWithTheirDefaults()
    {
        assertEquals(List.of("lcores=0", "memory_mb=512", "role=server", "instance=", "id=0",
                "socket=/tmp/spraynic-memif.sock", "zero_copy=no"),
            PmdConfigs.presetTemplate("net_memif").parameters().stream().map(Object::toString).toList());
        assertEquals(List.of("lcores=0-1", "memory_mb=1024", "file_prefix=spraynic", "pci (required)", "queues=1"),
            PmdConfigs.presetTemplate("mlx5-bifurcated").parameters().stream().map(Object::toString).toList());
    }

    private static List<String> plus(final List<String> head, final String... tail)
    {
        return Stream.concat(head.stream(), Stream.of(tail)).toList();
    }
}
